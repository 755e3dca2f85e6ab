// Edge accounting (weft_get_stats) on 1 worker, where the producer runs nothing before it waits, so
// every predecessor is still alive when its successors are created and the counts are exact.
#include <weft/weft.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "weft_test.h"

namespace {

// Each task appends its id to a log when it runs (1 worker: no concurrency).
struct order_log {
  std::vector<int> ran;
};
struct log_args {
  order_log* log;
  int id;
};
void log_body(void* p) {
  auto* a = static_cast<log_args*>(p);
  a->log->ran.push_back(a->id);
}

struct dep {
  weft_dep_type type;
  const void* address;
};

void submit(order_log& log, int id, std::initializer_list<dep> deps) {
  log_args args{&log, id};
  weft_task_t* t = weft_task_create(&log_body, &args, sizeof args, WEFT_TASK_DEFAULT);
  ASSERT_NE(t, nullptr) << weft_strerror(weft_last_error());
  for (const dep& d : deps) ASSERT_EQ(weft_task_depend(t, d.type, d.address, 8), WEFT_OK);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
}

int position(const order_log& log, int id) {
  for (size_t i = 0; i < log.ran.size(); ++i)
    if (log.ran[i] == id) return static_cast<int>(i);
  return -1;
}

class Edges : public ::testing::Test {
 protected:
  weft_test::runtime_config rt{{{"WEFT_NUM_THREADS", "1"}}};
  void SetUp() override {
    ASSERT_TRUE(rt.ok());
    ASSERT_EQ(weft_num_workers(), 1);
    ASSERT_EQ(weft_reset_stats(), WEFT_OK);
  }
};

TEST_F(Edges, ResetStatsZeroesCounters) {
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.tasks_created, 0u);
  EXPECT_EQ(s.tasks_completed, 0u);
  EXPECT_EQ(s.edges_created, 0u);
  EXPECT_EQ(s.edges_elided, 0u);
  EXPECT_EQ(s.edges_pruned, 0u);
  EXPECT_EQ(s.redirect_nodes, 0u);
  EXPECT_EQ(s.throttle_waits, 0u);
  EXPECT_GT(s.task_bytes, 0u) << "task_bytes is the size of a descriptor, not a counter";
}

TEST_F(Edges, DuplicateEdgeBetweenSamePairIsElided) {
  order_log log;
  long x = 0, y = 0;
  submit(log, 0, {{WEFT_DEP_OUT, &x}, {WEFT_DEP_OUT, &y}});
  submit(log, 1, {{WEFT_DEP_IN, &x}, {WEFT_DEP_IN, &y}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.tasks_created, 2u) << weft_test::format_stats(s);
  EXPECT_EQ(s.tasks_completed, 2u) << weft_test::format_stats(s);
  EXPECT_EQ(s.edges_created, 1u) << weft_test::format_stats(s);
  EXPECT_EQ(s.edges_elided, 1u) << weft_test::format_stats(s);
  EXPECT_EQ(s.redirect_nodes, 0u) << weft_test::format_stats(s);
  EXPECT_EQ(log.ran, (std::vector<int>{0, 1}));
}

TEST_F(Edges, ReadersOfOneWriterShareNoEdges) {
  order_log log;
  long x = 0;
  submit(log, 0, {{WEFT_DEP_IN, &x}});
  submit(log, 1, {{WEFT_DEP_IN, &x}});
  submit(log, 2, {{WEFT_DEP_IN, &x}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.edges_created, 0u) << weft_test::format_stats(s);
  EXPECT_EQ(s.tasks_completed, 3u) << weft_test::format_stats(s);
}

TEST_F(Edges, DisjointAddressesShareNoEdges) {
  order_log log;
  long a[4] = {};
  for (int i = 0; i < 4; ++i) submit(log, i, {{WEFT_DEP_INOUT, &a[i]}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.edges_created, 0u) << "adjacent addresses must not alias: " << weft_test::format_stats(s);
}

TEST_F(Edges, WriterThenReadersOneEdgeEach) {
  order_log log;
  long x = 0;
  submit(log, 0, {{WEFT_DEP_OUT, &x}});
  for (int i = 1; i <= 5; ++i) submit(log, i, {{WEFT_DEP_IN, &x}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.edges_created, 5u) << weft_test::format_stats(s);
  EXPECT_EQ(position(log, 0), 0);
}

// Duplicate accesses in one task are ordered like one: in+out on x acts as an inout (the task's edge
// to itself is dropped), so one edge to the reader, whose second in on x is elided as a duplicate
// edge. Task 0's last in keeps it a reader after being the writer: the writer 2 links to it twice
// over (0 -> 2 besides 0 -> 1 -> 2), a redundant edge that the merge scan this replaced avoided.
TEST_F(Edges, DuplicateAccessesInOneTaskOrderLikeOne) {
  order_log log;
  long x = 0;
  submit(log, 0, {{WEFT_DEP_IN, &x}, {WEFT_DEP_OUT, &x}, {WEFT_DEP_IN, &x}});
  submit(log, 1, {{WEFT_DEP_IN, &x}, {WEFT_DEP_IN, &x}});
  submit(log, 2, {{WEFT_DEP_OUT, &x}, {WEFT_DEP_IN, &x}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.edges_created, 3u) << weft_test::format_stats(s);  // 0 -> 1, 0 -> 2, 1 -> 2
  EXPECT_EQ(s.edges_elided, 2u) << weft_test::format_stats(s);   // 1's second in, 2's second 1 -> 2
  EXPECT_EQ(log.ran, (std::vector<int>{0, 1, 2}));
}

// Repeated inoutset and mutexinoutset accesses are merged before the domain sees them (a set the
// task joined twice would make it follow its own group's node).
TEST_F(Edges, DuplicateSetAccessesMerge) {
  order_log log;
  long x = 0, y = 0;
  submit(log, 0, {{WEFT_DEP_INOUTSET, &x}, {WEFT_DEP_IN, &x}, {WEFT_DEP_MUTEXINOUTSET, &y}, {WEFT_DEP_MUTEXINOUTSET, &y}});
  submit(log, 1, {{WEFT_DEP_INOUTSET, &x}, {WEFT_DEP_INOUTSET, &x}});
  submit(log, 2, {{WEFT_DEP_IN, &x}, {WEFT_DEP_IN, &y}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(log.ran, (std::vector<int>{0, 1, 2}));
}

// m inoutset members followed by n readers: one redirect node, m + n edges (not m * n).
class InoutsetRedirect : public Edges, public ::testing::WithParamInterface<std::pair<int, int>> {};

TEST_P(InoutsetRedirect, JoinsSetThroughOneNode) {
  const auto [m, n] = GetParam();
  order_log log;
  long x = 0;
  for (int i = 0; i < m; ++i) submit(log, i, {{WEFT_DEP_INOUTSET, &x}});
  for (int j = 0; j < n; ++j) submit(log, 100 + j, {{WEFT_DEP_IN, &x}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.redirect_nodes, 1u) << "m=" << m << " n=" << n << ": " << weft_test::format_stats(s);
  EXPECT_EQ(s.edges_created, static_cast<uint64_t>(m + n))
      << "m=" << m << " n=" << n << ": " << weft_test::format_stats(s);
  ASSERT_EQ(log.ran.size(), static_cast<size_t>(m + n));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      EXPECT_LT(position(log, i), position(log, 100 + j)) << "member " << i << " reader " << j;
}

INSTANTIATE_TEST_SUITE_P(Sizes, InoutsetRedirect,
                         ::testing::Values(std::pair{2, 2}, std::pair{3, 4}, std::pair{6, 6}, std::pair{8, 5},
                                           std::pair{16, 16}),
                         [](const auto& info) {
                           return "m" + std::to_string(info.param.first) + "_n" + std::to_string(info.param.second);
                         });

// Members of an inoutset set share no edges among themselves.
TEST_F(Edges, InoutsetMembersShareNoEdges) {
  order_log log;
  long x = 0;
  for (int i = 0; i < 6; ++i) submit(log, i, {{WEFT_DEP_INOUTSET, &x}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.edges_created, 0u) << weft_test::format_stats(s);
}

// No edge to a predecessor that has already completed.
TEST_F(Edges, NoEdgeToCompletedPredecessor) {
  order_log log;
  long x = 0;
  submit(log, 0, {{WEFT_DEP_OUT, &x}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  ASSERT_EQ(log.ran.size(), 1u);
  submit(log, 1, {{WEFT_DEP_IN, &x}});
  submit(log, 2, {{WEFT_DEP_INOUT, &x}});  // after 1 (alive): one edge
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.edges_created, 1u) << "only 1 -> 2; 0 had completed: " << weft_test::format_stats(s);
  EXPECT_EQ(log.ran, (std::vector<int>{0, 1, 2}));
}

// A discarded task never runs and holds up nobody.
TEST_F(Edges, DiscardedTaskIsNoPredecessor) {
  order_log log;
  long x = 0;
  log_args args{&log, 0};
  weft_task_t* t = weft_task_create(&log_body, &args, sizeof args, WEFT_TASK_DEFAULT);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(weft_task_depend(t, WEFT_DEP_OUT, &x, sizeof x), WEFT_OK);
  ASSERT_EQ(weft_task_discard(t), WEFT_OK);
  submit(log, 1, {{WEFT_DEP_IN, &x}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(log.ran, (std::vector<int>{1}));
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.edges_created, 0u) << weft_test::format_stats(s);
}

// The counters behave across many tasks: created == completed, edges of a chain == length - 1.
TEST_F(Edges, ChainCountsExactly) {
  order_log log;
  long x = 0;
  const int n = 1000;
  for (int i = 0; i < n; ++i) submit(log, i, {{WEFT_DEP_INOUT, &x}});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.tasks_created, static_cast<uint64_t>(n)) << weft_test::format_stats(s);
  EXPECT_EQ(s.tasks_completed, static_cast<uint64_t>(n)) << weft_test::format_stats(s);
  if (s.throttle_waits == 0) {  // without throttling every predecessor was alive
    EXPECT_EQ(s.edges_created, static_cast<uint64_t>(n - 1)) << weft_test::format_stats(s);
  } else {
    EXPECT_EQ(s.edges_created + s.edges_pruned, static_cast<uint64_t>(n - 1)) << weft_test::format_stats(s);
  }
  EXPECT_GE(s.max_live_tasks, 1u);
  ASSERT_EQ(log.ran.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(log.ran[static_cast<size_t>(i)], i);
}

}  // namespace

namespace {

// The counters are exact once no task runs: after a taskwait or a taskgroup end returned, every
// task that wait covered is counted as completed (also when other workers completed them).
class StatsAfterWait : public ::testing::TestWithParam<int> {};

TEST_P(StatsAfterWait, CompletedEqualsCreated) {
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", std::to_string(GetParam())}});
  ASSERT_TRUE(rt.ok());
  const int rounds = weft_test::scaled(2000, 100);
  int mismatches = 0;
  weft_stats_t first_bad{};
  for (int r = 0; r < rounds; ++r) {
    ASSERT_EQ(weft_reset_stats(), WEFT_OK);
    const bool group = r % 2 == 0;
    if (group) {
      ASSERT_EQ(weft_taskgroup_begin(), WEFT_OK);
    }
    for (int i = 0; i < 8; ++i) {
      weft_task_t* t = weft_task_create([](void*) { weft_test::spin(100); }, nullptr, 0, 0);
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    }
    ASSERT_EQ(group ? weft_taskgroup_end() : weft_taskwait(), WEFT_OK);
    weft_stats_t s = weft_test::stats();
    if (s.tasks_completed != s.tasks_created || s.tasks_created != 8) {
      if (mismatches++ == 0) first_bad = s;
    }
    if (!group) continue;
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
  }
  EXPECT_EQ(mismatches, 0) << "in " << rounds << " rounds; first: " << weft_test::format_stats(first_bad);
}

INSTANTIATE_TEST_SUITE_P(Workers, StatsAfterWait, ::testing::Values(2, 4),
                         [](const ::testing::TestParamInfo<int>& info) { return "w" + std::to_string(info.param); });

}  // namespace

namespace {

// A group member that has finished when a later member arrives is dropped from the group (the
// list stays proportional to the live tasks), so later accesses get no edge from it; they must
// still follow it, and its effects must reach them (the dropping load acquires, like a pruned
// edge's: ThreadSanitizer found the race when it was relaxed, in the persistent-graph random
// suites). The first member runs on the other worker, the rest and the writer undeferred here.
struct member_args {
  std::uint64_t* cell;
  std::atomic<int>* done;  // first member only: set when its access is done
  bool reader;
};

void member_body(void* p) {
  auto* a = static_cast<member_args*>(p);
  if (a->reader) {
    volatile std::uint64_t v = *a->cell;  // a plain read: a later writer must follow it
    (void)v;
  } else {
    std::atomic_ref<std::uint64_t>(*a->cell).fetch_add(1, std::memory_order_relaxed);
  }
  // Relaxed: the test must not create the ordering it checks.
  if (a->done) a->done->store(1, std::memory_order_relaxed);
}

void writer_body(void* p) {
  auto* cell = *static_cast<std::uint64_t**>(p);
  *cell = *cell * 3 + 1;  // plain: ordered after every member, or a race
}

class DroppedMembers : public ::testing::TestWithParam<weft_dep_type> {};

TEST_P(DroppedMembers, StillOrderLaterAccesses) {
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
  ASSERT_TRUE(rt.ok());
  const weft_dep_type type = GetParam();
  const bool reader = type == WEFT_DEP_IN;
  for (int round = 0; round < weft_test::scaled(50, 10); ++round) {
    std::uint64_t cell = 1;
    std::atomic<int> done{0};
    member_args first{&cell, &done, reader};
    weft_task_t* t = weft_task_create(&member_body, &first, sizeof first, WEFT_TASK_DEFAULT);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(weft_task_depend(t, type, &cell, sizeof cell), WEFT_OK);
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    while (done.load(std::memory_order_relaxed) == 0) weft_test::spin(50);
    weft_test::spin(20000);  // let it finish its release too: it must be dropped, not linked
    // More members than a group keeps inline: the full list drops the finished first member.
    for (int i = 0; i < 6; ++i) {
      member_args more{&cell, nullptr, reader};
      t = weft_task_create(&member_body, &more, sizeof more, WEFT_TASK_UNDEFERRED);
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(weft_task_depend(t, type, &cell, sizeof cell), WEFT_OK);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    }
    std::uint64_t* address = &cell;
    t = weft_task_create(&writer_body, &address, sizeof address, WEFT_TASK_UNDEFERRED);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &cell, sizeof cell), WEFT_OK);
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    EXPECT_EQ(cell, reader ? 4u : 25u);  // inoutset: (1 + 7 adds) * 3 + 1
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, DroppedMembers, ::testing::Values(WEFT_DEP_IN, WEFT_DEP_INOUTSET),
                         [](const ::testing::TestParamInfo<weft_dep_type>& info) {
                           return info.param == WEFT_DEP_IN ? std::string("in") : std::string("inoutset");
                         });

}  // namespace
