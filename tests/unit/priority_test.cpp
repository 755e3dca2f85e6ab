// Priorities on 1 worker, where the producer runs nothing before it waits: every task created
// before the wait is ready at once, and they must run in non-increasing priority order, whatever the
// schedule policy. Priorities above weft_max_priority() are clamped to it.
#include <weft/weft.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "weft_test.h"

namespace {

struct ran_log {
  std::vector<int> priorities;  // effective priority of each task, in run order
  std::vector<int> ids;
};
struct prio_args {
  ran_log* log;
  int effective;
  int id;
};
void prio_body(void* p) {
  auto* a = static_cast<prio_args*>(p);
  a->log->priorities.push_back(a->effective);
  a->log->ids.push_back(a->id);
}

int g_max_priority = 0;

void submit(ran_log& log, int id, int priority,
            std::initializer_list<std::pair<weft_dep_type, const void*>> deps = {}) {
  prio_args args{&log, std::min(priority, g_max_priority), id};
  weft_task_t* t = weft_task_create(&prio_body, &args, sizeof args, 0);
  ASSERT_NE(t, nullptr);
  for (auto [type, address] : deps) ASSERT_EQ(weft_task_depend(t, type, address, 8), WEFT_OK);
  ASSERT_EQ(weft_task_set_priority(t, priority), WEFT_OK);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
}

std::string show(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += std::to_string(x) + " ";
  return s;
}

class Priorities : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    weft_test::runtime_config::vars vars = {{"WEFT_NUM_THREADS", "1"}, {"WEFT_MAX_PRIORITY", "16"}};
    if (std::string(GetParam()) != "default") vars.push_back({"WEFT_SCHEDULE", GetParam()});
    rt_ = std::make_unique<weft_test::runtime_config>(vars);
    ASSERT_TRUE(rt_->ok());
    ASSERT_EQ(weft_max_priority(), 16);
    g_max_priority = weft_max_priority();
  }
  void TearDown() override { rt_.reset(); }
  std::unique_ptr<weft_test::runtime_config> rt_;
};

TEST_P(Priorities, ReadyTasksRunInNonIncreasingOrder) {
  for (int round = 0; round < 20; ++round) {
    ran_log log;
    std::vector<int> prios;
    for (int p = 0; p <= 16; ++p)
      for (int k = 0; k < 3; ++k) prios.push_back(p);
    prios.push_back(17);
    prios.push_back(1000);  // clamped to 16
    uint64_t state = 0x1234567ull + static_cast<uint64_t>(round);
    for (size_t i = prios.size(); i > 1; --i) {  // deterministic shuffle
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      std::swap(prios[i - 1], prios[(state >> 33) % i]);
    }
    for (size_t i = 0; i < prios.size(); ++i) submit(log, static_cast<int>(i), prios[i]);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    ASSERT_EQ(log.priorities.size(), prios.size());
    EXPECT_TRUE(std::is_sorted(log.priorities.rbegin(), log.priorities.rend()))
        << "schedule=" << GetParam() << " round " << round
        << ": effective priorities in run order: " << show(log.priorities);
  }
}

// A ready task of higher priority runs before a lower one, also when the lower one has just been
// released by the task that completed (depth-first hand-off must not bypass priorities).
TEST_P(Priorities, ReleasedSuccessorDoesNotOvertakeHigherPriority) {
  ran_log log;
  long x = 0;
  submit(log, 0, 16, {{WEFT_DEP_OUT, &x}});  // runs first
  submit(log, 1, 0, {{WEFT_DEP_IN, &x}});    // released by 0, lowest priority
  submit(log, 2, 5);                         // ready all along
  submit(log, 3, 3);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(log.ids, (std::vector<int>{0, 2, 3, 1})) << "schedule=" << GetParam();
}

// A high-priority task still waits for its predecessor of low priority.
TEST_P(Priorities, DependencesBeatPriorities) {
  ran_log log;
  long x = 0;
  submit(log, 0, 0, {{WEFT_DEP_OUT, &x}});
  submit(log, 1, 16, {{WEFT_DEP_IN, &x}});
  submit(log, 2, 5);
  submit(log, 3, 3);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(log.ids, (std::vector<int>{2, 3, 0, 1})) << "schedule=" << GetParam();
}

// Nested: inside a task, its own children follow the same rule.
TEST_P(Priorities, ChildrenInsideATask) {
  static ran_log log;
  log = {};
  weft_task_t* t = weft_task_create(
      [](void*) {
        for (int p : {3, 9, 0, 16, 7, 7, 12, 1}) submit(log, p, p);
        weft_taskwait();
      },
      nullptr, 0, 0);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  ASSERT_EQ(log.priorities.size(), 8u);
  EXPECT_TRUE(std::is_sorted(log.priorities.rbegin(), log.priorities.rend()))
      << "schedule=" << GetParam() << ": " << show(log.priorities);
}

INSTANTIATE_TEST_SUITE_P(Schedules, Priorities, ::testing::Values("default", "depth", "fifo", "priority"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// WEFT_MAX_PRIORITY=0: every priority is clamped to 0 and everything still runs.
TEST(PrioritiesClamp, MaxPriorityZero) {
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}, {"WEFT_MAX_PRIORITY", "0"}});
  ASSERT_TRUE(rt.ok());
  EXPECT_EQ(weft_max_priority(), 0);
  g_max_priority = 0;
  ran_log log;
  long x = 0;
  for (int i = 0; i < 50; ++i) submit(log, i, i % 5, {{WEFT_DEP_INOUT, &x}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  std::vector<int> expected(50);
  for (int i = 0; i < 50; ++i) expected[static_cast<size_t>(i)] = i;
  EXPECT_EQ(log.ids, expected);
}

}  // namespace
