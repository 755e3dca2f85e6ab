// taskwait and taskgroup semantics under nesting, and deep recursion.
//   taskwait waits for the children of the current task (not for grandchildren);
//   a taskgroup waits for every descendant of the tasks created inside it; groups nest;
//   a waiting worker runs other work, so deep recursion completes on any number of workers.
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "weft_test.h"

namespace {

class Nesting : public weft_test::workers_test {};

TEST_P(Nesting, EmptyWaitsReturnAtOnce) {
  EXPECT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(weft_taskgroup_begin(), WEFT_OK);
  EXPECT_EQ(weft_taskgroup_end(), WEFT_OK);
  std::atomic<int> bad{0};
  weft::spawn([&] {
    if (weft_taskwait() != WEFT_OK) bad++;
    if (weft_taskgroup_begin() != WEFT_OK) bad++;
    if (weft_taskgroup_end() != WEFT_OK) bad++;
  });
  weft::taskwait();
  EXPECT_EQ(bad.load(), 0);
}

TEST_P(Nesting, TaskwaitMakesChildEffectsVisible) {
  const int rounds = weft_test::scaled(2000, 100);
  long value = 0;
  for (int i = 0; i < rounds; ++i) {
    weft::spawn([&value, i] {
      weft_test::spin(static_cast<unsigned>(i % 7) * 20);
      value = i + 1;
    });
    weft::taskwait();
    ASSERT_EQ(value, i + 1) << "round " << i;
  }
}

// A taskgroup waits for grandchildren and great-grandchildren that nobody else waits for.
TEST_P(Nesting, TaskgroupWaitsForAllDescendants) {
  const int rounds = weft_test::scaled(200, 10);
  for (int r = 0; r < rounds; ++r) {
    std::atomic<int> done{0};
    const int children = 4, grandchildren = 3, great = 2;
    {
      weft::taskgroup group;
      for (int c = 0; c < children; ++c)
        weft::spawn([&] {
          for (int g = 0; g < grandchildren; ++g)
            weft::spawn([&] {
              for (int x = 0; x < great; ++x)
                weft::spawn([&] {
                  weft_test::spin(300);
                  done.fetch_add(1);
                });
              weft_test::spin(100);
              done.fetch_add(1);
            });
          done.fetch_add(1);
        });
      group.wait();
    }
    ASSERT_EQ(done.load(), children + children * grandchildren + children * grandchildren * great) << "round " << r;
  }
}

// The same from inside a task, with the C API, and groups nested three deep.
TEST_P(Nesting, NestedTaskgroupsInsideTasks) {
  const int rounds = weft_test::scaled(100, 5);
  for (int r = 0; r < rounds; ++r) {
    std::atomic<int> failures{0}, leaves{0};
    weft::spawn([&] {
      std::atomic<int> inner_done{0}, middle_done{0}, outer_done{0};
      auto leaf_tree = [&leaves](std::atomic<int>& counter) {
        weft::spawn([&leaves, &counter] {
          weft::spawn([&leaves, &counter] {
            weft_test::spin(200);
            leaves.fetch_add(1);
            counter.fetch_add(1);
          });
          counter.fetch_add(1);
        });
      };
      if (weft_taskgroup_begin() != WEFT_OK) failures++;
      leaf_tree(outer_done);
      if (weft_taskgroup_begin() != WEFT_OK) failures++;
      leaf_tree(middle_done);
      if (weft_taskgroup_begin() != WEFT_OK) failures++;
      leaf_tree(inner_done);
      if (weft_taskgroup_end() != WEFT_OK) failures++;
      if (inner_done.load() != 2) failures++;
      if (weft_taskgroup_end() != WEFT_OK) failures++;
      if (middle_done.load() != 2) failures++;
      if (weft_taskgroup_end() != WEFT_OK) failures++;
      if (outer_done.load() != 2) failures++;
    });
    weft::taskwait();
    ASSERT_EQ(failures.load(), 0) << "round " << r;
    ASSERT_EQ(leaves.load(), 3) << "round " << r;
  }
}

// A taskwait inside a taskgroup waits for the children; the group end for everything.
TEST_P(Nesting, TaskwaitInsideTaskgroup) {
  std::atomic<int> children{0}, grandchildren{0};
  int children_at_wait = -1;
  {
    weft::taskgroup group;
    for (int c = 0; c < 8; ++c)
      weft::spawn([&] {
        weft::spawn([&] {
          weft_test::spin(500);
          grandchildren.fetch_add(1);
        });
        children.fetch_add(1);
      });
    weft::taskwait();
    children_at_wait = children.load();
    group.wait();
  }
  EXPECT_EQ(children_at_wait, 8);
  EXPECT_EQ(grandchildren.load(), 8);
}

// taskwait waits for children only: a parent's taskwait can return while a grandchild still runs.
// The grandchild waits for a flag the parent raises after its taskwait. A runtime may legally run
// that grandchild inside the taskwait on the waiting worker, where it could never see the flag, so
// the grandchild gives up after a while and the attempt does not count; some attempt must observe
// the taskwait returning first, and in every attempt the child itself must have ended.
TEST(TaskwaitScope, DoesNotWaitForGrandchildren) {
  int conclusive = 0, attempts = 0;
  for (int workers : {2, 4}) {
    weft_test::runtime_config rt({{"WEFT_NUM_THREADS", std::to_string(workers)}});
    ASSERT_TRUE(rt.ok());
    for (int a = 0; a < 3 && conclusive == 0; ++a) {
      ++attempts;
      std::atomic<bool> release{false}, grandchild_done{false}, gave_up{false}, child_done{false};
      bool child_done_at_wait = false, grandchild_done_at_wait = true;
      {
        weft::taskgroup all;  // collects the grandchild too
        weft::spawn([&] {
          weft::spawn([&] {
            weft::spawn([&] {
              auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
              while (!release.load()) {
                if (std::chrono::steady_clock::now() > deadline) {
                  gave_up = true;
                  break;
                }
                std::this_thread::yield();
              }
              grandchild_done = true;
            });
            child_done = true;
          });
          weft::taskwait();
          child_done_at_wait = child_done.load();
          grandchild_done_at_wait = grandchild_done.load();
          release = true;
        });
        all.wait();
      }
      EXPECT_TRUE(grandchild_done.load()) << "taskgroup end returned before the grandchild ended";
      EXPECT_TRUE(child_done_at_wait) << "taskwait returned before its child ended (workers=" << workers << ")";
      if (!grandchild_done_at_wait) {
        ++conclusive;
      } else {
        EXPECT_TRUE(gave_up.load()) << "grandchild ended before the parent's taskwait returned, without giving up";
      }
    }
  }
  EXPECT_GT(conclusive, 0) << "in " << attempts
                           << " attempts the parent's taskwait never returned before its grandchild ended: "
                              "taskwait seems to wait for grandchildren";
}


TEST_P(Nesting, Fibonacci20) {
  ASSERT_EQ(weft_reset_stats(), WEFT_OK);
  EXPECT_EQ(weft_test::fib(20), 6765);
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.tasks_created, 21890u) << weft_test::format_stats(s);  // 2 * (fib calls of n >= 2)
  EXPECT_EQ(s.tasks_completed, s.tasks_created) << weft_test::format_stats(s);
}

// A chain of nested tasks, each spawning one child and waiting for it, deeper than any sensible
// bound on nested waits.
void descend(int depth, int limit, std::atomic<int>& deepest) {
  if (depth == limit) {
    deepest = depth;
    return;
  }
  weft::spawn([depth, limit, &deepest] { descend(depth + 1, limit, deepest); });
  weft::taskwait();
}

TEST_P(Nesting, DeepNestedChain) {
  std::atomic<int> deepest{0};
  descend(0, 300, deepest);
  EXPECT_EQ(deepest.load(), 300);
}

// Wide and deep at once: every task spawns children with dependences among them and waits.
TEST_P(Nesting, RecursiveWithDependences) {
  std::atomic<int> wrong{0};
  std::function<void(int)> level = [&](int depth) {
    if (depth == 0) return;
    long x = 0;
    for (int i = 0; i < 4; ++i)
      weft::spawn(
          [&, i, depth] {
            if (x != i) wrong++;
            level(depth - 1);
            x = i + 1;
          },
          weft::inout(x));
    weft::taskwait();
    if (x != 4) wrong++;
  };
  level(5);
  EXPECT_EQ(wrong.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Workers, Nesting, ::testing::Values(1, 2, 4, 8),
                         [](const ::testing::TestParamInfo<int>& info) { return "w" + std::to_string(info.param); });

}  // namespace
