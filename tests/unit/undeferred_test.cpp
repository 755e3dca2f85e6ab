// WEFT_TASK_UNDEFERRED: "run at submit on the submitting thread once its dependences are met".
// weft_task_submit returns only after the task has ended, and the task ran on the thread that
// submitted it, also when it had to wait for predecessors that other workers were running.
#include <weft/weft.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "weft_test.h"

namespace {

struct record {
  std::thread::id ran_on;
  std::atomic<bool> done{false};
};

void record_body(void* p) {
  record* r = *static_cast<record**>(p);
  r->ran_on = std::this_thread::get_id();
  r->done = true;
}

void slow_body(void*) {
  weft_test::spin(5000);
}

class Undeferred : public weft_test::workers_test {};

TEST_P(Undeferred, NoDependences) {
  for (int i = 0; i < 100; ++i) {
    record r;
    record* p = &r;
    weft_task_t* t = weft_task_create(&record_body, &p, sizeof p, WEFT_TASK_UNDEFERRED);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    ASSERT_TRUE(r.done.load()) << "submit returned before the undeferred task ran";
    ASSERT_EQ(r.ran_on, std::this_thread::get_id()) << "iteration " << i;
  }
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
}

// The undeferred task waits for a slow predecessor; when the predecessor completes, the undeferred
// task must still run on the submitting thread.
TEST_P(Undeferred, AfterPredecessors) {
  const int rounds = weft_test::scaled(100, 10);
  int wrong_thread = 0;
  for (int i = 0; i < rounds; ++i) {
    long x = 0;
    for (int k = 0; k < 3; ++k) {
      weft_task_t* pred = weft_task_create(&slow_body, nullptr, 0, 0);
      ASSERT_NE(pred, nullptr);
      ASSERT_EQ(weft_task_depend(pred, k == 0 ? WEFT_DEP_OUT : WEFT_DEP_INOUT, &x, sizeof x), WEFT_OK);
      ASSERT_EQ(weft_task_submit(pred), WEFT_OK);
    }
    record r;
    record* p = &r;
    weft_task_t* t = weft_task_create(&record_body, &p, sizeof p, WEFT_TASK_UNDEFERRED);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &x, sizeof x), WEFT_OK);
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    ASSERT_TRUE(r.done.load()) << "submit returned before the undeferred task ran";
    if (r.ran_on != std::this_thread::get_id()) ++wrong_thread;
  }
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(wrong_thread, 0) << "of " << rounds << " undeferred tasks with predecessors, " << wrong_thread
                             << " ran on another thread than the submitting one";
}

// The predecessor surely runs on another worker and completes while the submitting thread waits in
// weft_task_submit: the release of the undeferred task happens on that other worker.
struct remote_pred {
  std::atomic<bool> started{false}, submitting{false};
};
void remote_pred_body(void* p) {
  remote_pred* s = *static_cast<remote_pred**>(p);
  s->started = true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!s->submitting.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  weft_test::spin(50000);  // let the submitter link the undeferred task to us
}

TEST_P(Undeferred, ReleasedByAnotherWorker) {
  if (GetParam() < 2) GTEST_SKIP() << "needs a second worker";
  const int rounds = weft_test::scaled(50, 10);
  int wrong_thread = 0, remote = 0;
  for (int i = 0; i < rounds; ++i) {
    long x = 0;
    remote_pred state;
    remote_pred* sp = &state;
    weft_task_t* pred = weft_task_create(&remote_pred_body, &sp, sizeof sp, 0);
    ASSERT_NE(pred, nullptr);
    ASSERT_EQ(weft_task_depend(pred, WEFT_DEP_OUT, &x, sizeof x), WEFT_OK);
    ASSERT_EQ(weft_task_submit(pred), WEFT_OK);
    // The main thread runs no task here, so only another worker can start the predecessor.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!state.started.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    if (state.started.load()) ++remote;
    record r;
    record* p = &r;
    weft_task_t* t = weft_task_create(&record_body, &p, sizeof p, WEFT_TASK_UNDEFERRED);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &x, sizeof x), WEFT_OK);
    state.submitting = true;
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    ASSERT_TRUE(r.done.load()) << "submit returned before the undeferred task ran";
    if (r.ran_on != std::this_thread::get_id()) ++wrong_thread;
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
  }
  EXPECT_GT(remote, 0) << "no idle worker ever took the predecessor";
  EXPECT_EQ(wrong_thread, 0) << "of " << rounds << " undeferred tasks released by another worker, " << wrong_thread
                             << " ran on that worker instead of the submitting thread";
}

// Inside a task (on whatever worker runs it), the same holds.
TEST_P(Undeferred, InsideTasks) {
  static std::atomic<int> wrong{0}, not_done{0};
  wrong = 0;
  not_done = 0;
  const int parents = weft_test::scaled(100, 10);
  for (int i = 0; i < parents; ++i) {
    weft_task_t* parent = weft_task_create(
        [](void*) {
          long y = 0;
          weft_task_t* pred = weft_task_create(&slow_body, nullptr, 0, 0);
          weft_task_depend(pred, WEFT_DEP_OUT, &y, sizeof y);
          weft_task_submit(pred);
          record r;
          record* p = &r;
          weft_task_t* t = weft_task_create(&record_body, &p, sizeof p, WEFT_TASK_UNDEFERRED);
          weft_task_depend(t, WEFT_DEP_IN, &y, sizeof y);
          weft_task_submit(t);
          if (!r.done.load()) not_done++;
          if (r.ran_on != std::this_thread::get_id()) wrong++;
          weft_taskwait();
        },
        nullptr, 0, 0);
    ASSERT_NE(parent, nullptr);
    ASSERT_EQ(weft_task_submit(parent), WEFT_OK);
  }
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(not_done.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Workers, Undeferred, ::testing::Values(1, 2, 4),
                         [](const ::testing::TestParamInfo<int>& info) { return "w" + std::to_string(info.param); });

}  // namespace
