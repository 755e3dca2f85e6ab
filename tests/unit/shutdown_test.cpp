// Shutdown: weft_finalize waits for pending tasks (also nested ones); init/finalize cycles; a
// program that exits with tasks still queued reports them on stderr and exits cleanly (checked by
// running a helper program in a child process).
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "weft_test.h"

namespace {

TEST(Shutdown, FinalizeWaitsForQueuedTasks) {
  for (int workers : {1, 2, 4}) {
    std::atomic<int> ran{0};
    std::vector<int> chain_log;
    long token = 0;
    {
      weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", std::to_string(workers)}});
      ASSERT_TRUE(rt.ok());
      for (int i = 0; i < 200; ++i) weft::spawn([&] { ran++; });
      for (int i = 0; i < 200; ++i) weft::spawn([&chain_log, i] { chain_log.push_back(i); }, weft::inout(token));
      // Nested work nobody waits for: finalize must wait for it too.
      for (int i = 0; i < 20; ++i)
        weft::spawn([&] {
          for (int k = 0; k < 10; ++k)
            weft::spawn([&] {
              weft_test::spin(200);
              ran++;
            });
        });
      ASSERT_EQ(weft_finalize(), WEFT_OK);
      EXPECT_FALSE(weft_initialized());
    }
    EXPECT_EQ(ran.load(), 200 + 200) << "workers=" << workers;
    ASSERT_EQ(chain_log.size(), 200u) << "workers=" << workers;
    for (int i = 0; i < 200; ++i) ASSERT_EQ(chain_log[static_cast<size_t>(i)], i);
  }
}

TEST(Shutdown, InitFinalizeCycles) {
  const char* schedules[] = {"depth", "fifo", "priority"};
  const char* steals[] = {"random", "history", "hybrid"};
  for (int cycle = 0; cycle < 20; ++cycle) {
    const int workers = 1 + cycle % 5;
    weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", std::to_string(workers)},
                                                                 {"WEFT_SCHEDULE", schedules[cycle % 3]},
                                                                 {"WEFT_STEAL", steals[(cycle / 3) % 3]}});
    ASSERT_TRUE(rt.ok()) << "cycle " << cycle;
    ASSERT_TRUE(weft_initialized());
    ASSERT_EQ(weft_num_workers(), workers) << "cycle " << cycle << ": the environment of this init applies";
    ASSERT_EQ(weft_worker_id(), 0);
    ASSERT_EQ(weft_reset_stats(), WEFT_OK);
    long x = 0;
    std::atomic<int> readers_ok{0};
    for (int i = 0; i < 50; ++i) {
      weft::spawn([&x, i] { x = i + 1; }, weft::out(x));
      for (int r = 0; r < 3; ++r)
        weft::spawn(
            [&x, &readers_ok, i] {
              if (x == i + 1) readers_ok++;
            },
            weft::in(x));
    }
    weft::taskwait();
    EXPECT_EQ(readers_ok.load(), 150) << "cycle " << cycle;
    weft_stats_t s = weft_test::stats();
    EXPECT_EQ(s.tasks_created, 200u) << "cycle " << cycle << ": " << weft_test::format_stats(s);
    ASSERT_EQ(weft_finalize(), WEFT_OK);
    ASSERT_FALSE(weft_initialized());
    EXPECT_EQ(weft_worker_id(), -1) << "after finalize the main thread is no worker";
  }
}

// A foreign thread's fulfilment lets the last task complete, and the program finalizes at once,
// while that thread may still be waking a worker or dropping its reference to the event. Finalize
// must wait for it (under the sanitizers, a read of the freed worker table is reported otherwise).
TEST(Shutdown, FinalizeRightAfterForeignFulfilment) {
  for (int cycle = 0; cycle < 100; ++cycle) {
    const int workers = 1 + cycle % 3;
    std::vector<std::thread> fulfillers;
    std::mutex fulfillers_lock;
    std::atomic<int> resumed{0};
    {
      weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", std::to_string(workers)}});
      ASSERT_TRUE(rt.ok());
      for (int i = 0; i < 4; ++i)
        weft::spawn([&, i] {
          weft_event_t* e = weft_event_create(1);
          if (!e) return;
          auto armed = std::make_shared<std::atomic<bool>>(false);
          {
            std::lock_guard<std::mutex> g(fulfillers_lock);
            fulfillers.emplace_back([e, armed] {
              while (!armed->load()) std::this_thread::yield();
              weft_event_fulfill(e);
            });
          }
          if (i % 2 == 0) {
            weft_event_bind(e);  // the task completes when the thread fulfils
            weft_event_destroy(e);
            armed->store(true);
          } else {
            armed->store(true);
            weft_event_wait(e);  // the task suspends until the thread fulfils
            weft_event_destroy(e);
            resumed++;
          }
        });
      ASSERT_EQ(weft_finalize(), WEFT_OK) << "cycle " << cycle;
    }
    for (auto& t : fulfillers) t.join();
    EXPECT_EQ(resumed.load(), 2) << "cycle " << cycle;
  }
}

TEST(Shutdown, FinalizeFromAnotherThreadThanInit) {
  // Not required to work, but must not hang or crash: a named error or a clean stop.
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
  ASSERT_TRUE(rt.ok());
  int status = -1;
  std::thread th([&] { status = weft_finalize(); });
  th.join();
  EXPECT_TRUE(status == WEFT_OK || status == WEFT_ERR_NOT_A_WORKER || status == WEFT_ERR_BUSY) << status;
  if (status == WEFT_OK) {
    EXPECT_FALSE(weft_initialized());
  } else {
    EXPECT_TRUE(weft_initialized());
  }
}

// --- the helper program --------------------------------------------------------------------------
using outcome = weft_test::child_outcome;
using weft_test::describe;

outcome run_helper(const char* program, const char* mode, int workers) {
  return weft_test::run_child(program, mode, {"WEFT_NUM_THREADS=" + std::to_string(workers)}, 60);
}

bool mentions_pending(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text.find("pending") != std::string::npos;
}

struct helper_case {
  const char* program;
  const char* label;
};

void PrintTo(const helper_case& h, std::ostream* os) {
  *os << h.label << " (" << h.program << ")";
}

class ExitWithPending : public ::testing::TestWithParam<helper_case> {};

TEST_P(ExitWithPending, ExitReportsPendingTasks) {
  for (const char* mode : {"exit-pending", "return-pending"}) {
    outcome o = run_helper(GetParam().program, mode, 1);
    EXPECT_TRUE(o.exited && o.status == 0) << mode << ": " << describe(o);
    EXPECT_TRUE(mentions_pending(o.err)) << mode << ": stderr does not report the pending tasks\n" << describe(o);
    EXPECT_NE(o.out.find("submitted=20"), std::string::npos) << mode << ": " << describe(o);
  }
}

TEST_P(ExitWithPending, CleanExitReportsNothing) {
  outcome o = run_helper(GetParam().program, "exit-clean", 1);
  EXPECT_TRUE(o.exited && o.status == 0) << describe(o);
  EXPECT_FALSE(mentions_pending(o.err)) << describe(o);
  EXPECT_NE(o.out.find("ran=20 submitted=20"), std::string::npos) << describe(o);
  o = run_helper(GetParam().program, "exit-clean", 2);
  EXPECT_TRUE(o.exited && o.status == 0) << describe(o);
  EXPECT_FALSE(mentions_pending(o.err)) << describe(o);
}

TEST_P(ExitWithPending, FinalizeRunsPendingTasks) {
  for (int workers : {1, 2}) {
    outcome o = run_helper(GetParam().program, "finalize-pending", workers);
    EXPECT_TRUE(o.exited && o.status == 0) << "workers=" << workers << ": " << describe(o);
    EXPECT_NE(o.out.find("ran=20 submitted=20"), std::string::npos) << describe(o);
    EXPECT_FALSE(mentions_pending(o.err)) << describe(o);
  }
}

TEST_P(ExitWithPending, ExitFromInsideATask) {
  for (int workers : {1, 2}) {
    outcome o = run_helper(GetParam().program, "exit-in-task", workers);
    EXPECT_FALSE(o.hung) << "workers=" << workers << ": " << describe(o);
    EXPECT_TRUE(o.exited && o.status == 0) << "workers=" << workers << ": " << describe(o);
  }
}

INSTANTIATE_TEST_SUITE_P(Linkage, ExitWithPending,
                         ::testing::Values(helper_case{WEFT_SHUTDOWN_HELPER, "shared"},
                                           helper_case{WEFT_SHUTDOWN_HELPER_STATIC, "static"}),
                         [](const ::testing::TestParamInfo<helper_case>& info) {
                           return std::string(info.param.label);
                         });

}  // namespace
