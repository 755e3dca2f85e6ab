// Events: wait, fulfil (from tasks, foreign threads, signal handlers), counts, weft_event_test,
// over-fulfilment (WEFT_ERR_EVENT_FULFILLED), weft_event_bind (successors, taskwait and taskgroup of
// a bound task see it complete only once its events are fulfilled; WEFT_ERR_EVENT_BOUND), misuse,
// and random task graphs where tasks wait on / bind events fulfilled by tasks that are not their
// predecessors, checked against a sequential execution. Each with 1, 2 and 8 workers.
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "suspension_common.h"
#include "random.h"
#include "weft_test.h"

namespace {
using weft_test::mix;
using weft_test::rng;

using susp::spawn_flags;
using susp::stamp;

class Events : public susp::workers_fixture {};

// --- 4. fulfilled from a foreign thread ----------------------------------------------------------
TEST_P(Events, FulfilledFromForeignThread) {
  const int n = 100;
  std::vector<weft_event_t*> ev(n);
  for (auto& e : ev) {
    e = weft_event_create(1);
    ASSERT_NE(e, nullptr);
  }
  std::vector<long> value(n, 0);
  std::atomic<int> started{0}, woke{0};
  weft_test::error_log errors;
  for (int i = 0; i < n; ++i)
    weft::spawn([&, i] {
      started++;
      if (weft_event_wait(ev[i]) != WEFT_OK) errors.add("wait failed");
      if (value[i] != i * 3 + 1) errors.add("task " + std::to_string(i) + " sees " + std::to_string(value[i]));
      woke++;
    });
  std::atomic<int> thread_errors{0};
  std::thread fulfiller([&] {
    if (weft_worker_id() != -1) thread_errors++;
    // Mostly after the tasks started waiting (not required: on one worker the main program only
    // runs them in its taskwait below, so do not wait for them forever).
    susp::eventually([&] { return started.load() == n; }, 0.2);
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(7));
    for (int k = 0; k < n; ++k) {
      int i = order[k];
      value[i] = i * 3 + 1;
      if (weft_event_fulfill(ev[i]) != WEFT_OK) thread_errors++;
      if (k % 10 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  fulfiller.join();
  EXPECT_EQ(woke.load(), n);
  EXPECT_EQ(thread_errors.load(), 0);
  EXPECT_EQ(errors.count(), 0) << errors.str();
  for (auto& e : ev) {
    EXPECT_EQ(weft_event_test(e), 1);
    EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
  }
}

// The main program itself waits on an event: fulfilled by a foreign thread, then by a task.
TEST_P(Events, MainProgramWaits) {
  const int rounds = weft_test::scaled(50, 10);
  for (int r = 0; r < rounds; ++r) {
    weft_event_t* e = weft_event_create(1);
    ASSERT_NE(e, nullptr);
    std::atomic<uint64_t> fulfilled_at{0};
    std::thread th([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(r % 3 == 0 ? 0 : 300));
      fulfilled_at = stamp();
      weft_event_fulfill(e);
    });
    ASSERT_EQ(weft_event_wait(e), WEFT_OK);
    uint64_t after = stamp();
    th.join();
    EXPECT_GT(after, fulfilled_at.load());
    EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
  }
  for (int r = 0; r < rounds; ++r) {
    weft_event_t* e = weft_event_create(1);
    std::atomic<uint64_t> fulfilled_at{0};
    weft::spawn([&] {
      weft_test::spin(1000);
      fulfilled_at = stamp();
      weft_event_fulfill(e);
    });
    ASSERT_EQ(weft_event_wait(e), WEFT_OK);  // on one worker, the task can only run in this wait
    EXPECT_GT(stamp(), fulfilled_at.load());
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
  }
}

// --- over-fulfilment and counts --------------------------------------------------------------------
TEST_P(Events, FulfilTwice) {
  weft_event_t* e = weft_event_create(1);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(weft_event_test(e), 0);
  EXPECT_EQ(weft_event_fulfill(e), WEFT_OK);
  EXPECT_EQ(weft_event_test(e), 1);
  EXPECT_EQ(weft_event_fulfill(e), WEFT_ERR_EVENT_FULFILLED);
  EXPECT_EQ(weft_last_error(), WEFT_ERR_EVENT_FULFILLED);
  EXPECT_EQ(weft_event_fulfill(e), WEFT_ERR_EVENT_FULFILLED);
  EXPECT_EQ(weft_event_test(e), 1);
  // Waiting on a fulfilled event returns at once.
  EXPECT_EQ(weft_event_wait(e), WEFT_OK);
  // From a task and a foreign thread too.
  std::atomic<int> task_rc{-1}, thread_rc{-1};
  weft::spawn([&] { task_rc = weft_event_fulfill(e); });
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  std::thread([&] { thread_rc = weft_event_fulfill(e); }).join();
  EXPECT_EQ(task_rc.load(), WEFT_ERR_EVENT_FULFILLED);
  EXPECT_EQ(thread_rc.load(), WEFT_ERR_EVENT_FULFILLED);
  EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
}

// An event of count 3 is fulfilled by the third call only; a task waiting on it does not resume
// before; a fourth call fails.
TEST_P(Events, CountAboveOne) {
  const int rounds = weft_test::scaled(20, 5);
  for (int r = 0; r < rounds; ++r) {
    weft_event_t* e = weft_event_create(3);
    ASSERT_NE(e, nullptr);
    std::atomic<int> resumed{0};
    std::atomic<int> calls{0};
    std::atomic<int> seen_calls{-1};
    weft::spawn([&] {
      weft_event_wait(e);
      seen_calls = calls.load();
      resumed = 1;
    });
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(weft_event_test(e), 0) << "after " << k << " of 3 fulfilments";
      // Give the waiter a chance to (wrongly) resume.
      if (r % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      EXPECT_EQ(resumed.load(), 0) << "the waiter resumed after " << k << " of 3 fulfilments";
      calls = k + 1;
      if (k == 1 && r % 2) {
        std::thread([&] { EXPECT_EQ(weft_event_fulfill(e), WEFT_OK); }).join();
      } else {
        EXPECT_EQ(weft_event_fulfill(e), WEFT_OK);
      }
    }
    EXPECT_EQ(weft_event_test(e), 1);
    EXPECT_EQ(weft_event_fulfill(e), WEFT_ERR_EVENT_FULFILLED);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    EXPECT_EQ(resumed.load(), 1);
    EXPECT_EQ(seen_calls.load(), 3);
    EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
  }
}

// Several foreign threads fulfil one counted event concurrently while several tasks wait on it:
// exactly `count` calls succeed, the calls past the count fail, every waiter resumes once and sees
// the event fulfilled.
TEST_P(Events, ConcurrentFulfilmentsAndSeveralWaiters) {
  const int rounds = weft_test::scaled(20, 4);
  for (int r = 0; r < rounds; ++r) {
    const int threads = 4, per_thread = 250, count = threads * per_thread;
    weft_event_t* e = weft_event_create(count);
    ASSERT_NE(e, nullptr);
    std::atomic<int> ok{0}, over{0}, other{0}, resumed{0}, wrong{0};
    const int waiters = 10;
    for (int i = 0; i < waiters; ++i)
      weft::spawn([&] {
        weft_event_wait(e);
        if (weft_event_test(e) != 1) wrong++;
        resumed++;
      });
    auto fulfil_n = [&](int calls) {
      for (int k = 0; k < calls; ++k) {
        int rc = weft_event_fulfill(e);
        if (rc == WEFT_OK) {
          ok++;
        } else if (rc == WEFT_ERR_EVENT_FULFILLED) {
          over++;
        } else {
          other++;
        }
      }
    };
    std::vector<std::thread> ths;
    for (int t = 0; t < threads; ++t) ths.emplace_back(fulfil_n, per_thread);
    for (auto& th : ths) th.join();
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    EXPECT_EQ(ok.load(), count);
    EXPECT_EQ(over.load(), 0);
    EXPECT_EQ(other.load(), 0);
    EXPECT_EQ(resumed.load(), waiters);
    EXPECT_EQ(wrong.load(), 0) << "a waiter resumed while weft_event_test still said 0";
    // Past the count, concurrently: every call fails.
    ths.clear();
    for (int t = 0; t < threads; ++t) ths.emplace_back(fulfil_n, 5);
    for (auto& th : ths) th.join();
    EXPECT_EQ(ok.load(), count);
    EXPECT_EQ(over.load(), threads * 5);
    EXPECT_EQ(weft_event_test(e), 1);
    EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
  }
}

// Once fulfilled, an event stays fulfilled: weft_event_test never says 0 again, also while other
// threads call weft_event_fulfill past the count (which must fail without effect).
TEST(EventsExtra, TestStaysOneDuringExtraFulfilments) {
  susp::clear_suspension_variables();
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
  ASSERT_TRUE(rt.ok());
  weft_event_t* e = weft_event_create(1);
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(weft_event_fulfill(e), WEFT_OK);
  std::atomic<bool> stop{false};
  std::atomic<long> extra{0}, unexpected{0};
  std::vector<std::thread> ths;
  for (int t = 0; t < 2; ++t)
    ths.emplace_back([&] {
      while (!stop.load()) {
        if (weft_event_fulfill(e) != WEFT_ERR_EVENT_FULFILLED) unexpected++;
        extra++;
      }
    });
  // Read until enough batches of reads overlapped extra calls (on a loaded machine the threads may
  // seldom run at the same time), or half a second passed.
  long zeros = 0, reads = 0, overlapping = 0;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (overlapping < 20 && std::chrono::steady_clock::now() < until) {
    long before = extra.load();
    for (int i = 0; i < 1000; ++i, ++reads)
      if (weft_event_test(e) != 1) ++zeros;
    if (extra.load() != before) ++overlapping;
  }
  stop = true;
  for (auto& th : ths) th.join();
  EXPECT_EQ(unexpected.load(), 0);
  std::printf("[ info     ] %ld reads, %ld batches of 1000 overlapping extra fulfilments\n", reads, overlapping);
  EXPECT_EQ(zeros, 0) << "weft_event_test said 'not fulfilled' " << zeros << " times in " << reads
                      << " reads of a fulfilled event while " << extra.load()
                      << " extra weft_event_fulfill calls ran (each returned WEFT_ERR_EVENT_FULFILLED)";
  EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
}

// A task binds an already fulfilled event while another thread calls weft_event_fulfill on it past
// its count: the bind must still see the event fulfilled, and the task complete. (One worker and one
// extra thread: no more threads than the two cores of the CI machine, so that they really overlap.)
TEST(EventsExtra, BindFulfilledEventDuringExtraFulfilments) {
  susp::clear_suspension_variables();
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "1"}});
  ASSERT_TRUE(rt.ok());
  weft_test::watchdog dog("BindFulfilledEventDuringExtraFulfilments", 10);
  // The thread keeps calling weft_event_fulfill on the event of the current round. It publishes the
  // event it is about to use (in_use) and checks that it is still current (seq_cst, both sides):
  // once `current` is cleared and in_use is not the old event, no call on it is in flight.
  std::atomic<weft_event_t*> current{nullptr}, in_use{nullptr};
  std::atomic<bool> quit{false};
  std::atomic<long> extra_calls{0};
  std::thread hammer([&] {
    while (!quit.load()) {
      weft_event_t* e = current.load();
      if (!e) {
        weft_test::spin(20);
        continue;
      }
      in_use = e;
      if (current.load() == e && weft_event_fulfill(e) == WEFT_ERR_EVENT_FULFILLED) extra_calls++;
      in_use = nullptr;
    }
  });
  // Rounds until a count or a time is reached (a loaded machine runs the thread rarely).
  const int rounds = weft_test::scaled(3000, 300);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  int failures = 0, done = 0;
  for (int r = 0; r < rounds && failures == 0 && std::chrono::steady_clock::now() < until; ++r, ++done) {
    dog.step("round " + std::to_string(r) +
             ": a task bound to a fulfilled event never completed (its bind raced with an extra weft_event_fulfill)");
    weft_event_t* e = weft_event_create(1);
    ASSERT_EQ(weft_event_fulfill(e), WEFT_OK);
    current = e;
    // The extra calls are under way before the bind.
    long seen = extra_calls.load();
    while (extra_calls.load() < seen + 2) weft_test::spin(20);
    std::atomic<int> rc{-1};
    weft::spawn([&] { rc = weft_event_bind(e); });
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    current = nullptr;
    while (in_use.load() == e) weft_test::spin(20);
    if (rc.load() != WEFT_OK) ++failures;
    EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
  }
  quit = true;
  hammer.join();
  EXPECT_EQ(failures, 0);
  EXPECT_GT(extra_calls.load(), 0);
  std::printf("[ info     ] %d rounds, %ld extra fulfilments\n", done, extra_calls.load());
}

// --- fulfilled from a signal handler -------------------------------------------------------------
std::atomic<weft_event_t*> signal_event{nullptr};
volatile sig_atomic_t signal_status = -1;

void on_signal(int) {
  signal_status = weft_event_fulfill_from_signal(signal_event.load());
}

class SignalHandler {
 public:
  SignalHandler() {
    struct sigaction sa {};
    sa.sa_handler = &on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, &old_);
  }
  ~SignalHandler() { sigaction(SIGUSR1, &old_, nullptr); }

 private:
  struct sigaction old_ {};
};

TEST_P(Events, FulfilledFromSignalHandler) {
  SignalHandler handler;
  const int rounds = weft_test::scaled(30, 6);
  weft_test::error_log errors;
  for (int r = 0; r < rounds; ++r) {
    // (a) a task waits; the signal is delivered on a foreign thread
    // (b) a task binds; its successor must wait for the signal
    // (c) a task raises the signal itself (the handler runs on a worker) for a waiting sibling
    for (int how = 0; how < 3; ++how) {
      weft_event_t* e = weft_event_create(1);
      signal_event = e;
      signal_status = -1;
      long x = 0;
      std::atomic<uint64_t> raised_at{0}, after_at{0};
      std::atomic<int> bound{0};
      if (how == 0) {
        weft::spawn([&] {
          weft_event_wait(e);
          after_at = stamp();
        });
        std::thread th([&] {
          raised_at = stamp();
          raise(SIGUSR1);
        });
        th.join();
      } else if (how == 1) {
        weft::spawn(
            [&] {
              x = 5;
              if (weft_event_bind(e) != WEFT_OK) errors.add("bind failed");
              bound = 1;
            },
            weft::out(x));
        weft::spawn(
            [&] {
              after_at = stamp();
              if (x != 5) errors.add("successor of the bound task does not see its write");
            },
            weft::in(x));
        std::thread th([&] {
          susp::eventually([&] { return bound.load() == 1; }, 0.005);
          raised_at = stamp();
          raise(SIGUSR1);
        });
        th.join();
      } else {
        weft::spawn([&] {
          weft_event_wait(e);
          after_at = stamp();
        });
        weft::spawn([&] {
          raised_at = stamp();
          raise(SIGUSR1);
        });
      }
      ASSERT_EQ(weft_taskwait(), WEFT_OK) << "round " << r << " case " << how;
      EXPECT_EQ(signal_status, WEFT_OK) << "round " << r << " case " << how;
      EXPECT_GT(after_at.load(), raised_at.load()) << "round " << r << " case " << how;
      EXPECT_EQ(weft_event_test(e), 1);
      EXPECT_EQ(weft_event_fulfill_from_signal(e), WEFT_ERR_EVENT_FULFILLED);
      signal_event = nullptr;
      EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
    }
  }
  EXPECT_EQ(errors.count(), 0) << errors.str();
}

// --- 5. weft_event_bind ------------------------------------------------------------------------------
// A task writes x, binds e and returns at once; its successor (in x) and the main program's taskwait
// must not get past it before e is fulfilled, by a task created later (case 0) or a foreign thread
// (case 1). The fulfiller starts only after the binder's body has returned.
TEST_P(Events, BindDelaysSuccessorAndTaskwait) {
  const int rounds = weft_test::scaled(100, 10);
  weft_test::error_log errors;
  int early_successor = 0, early_taskwait = 0, late_return = 0;
  for (int r = 0; r < rounds; ++r) {
    const bool by_thread = r % 2 == 1;
    long x = 0;
    weft_event_t* e = weft_event_create(1);
    weft_event_t* returned = weft_event_create(1);
    std::atomic<uint64_t> binder_end{0}, fulfil_at{0}, successor_start{0};
    std::atomic<int> bind_rc{-1}, successor_saw{-1};
    weft::spawn(
        [&] {
          x = 42;
          bind_rc = weft_event_bind(e);
          binder_end = stamp();
          weft_event_fulfill(returned);  // the body's last step
        },
        weft::out(x));
    weft::spawn(
        [&] {
          successor_start = stamp();
          successor_saw = static_cast<int>(x);
        },
        weft::in(x));
    std::thread th;
    if (by_thread) {
      th = std::thread([&] {
        if (!susp::eventually([&] { return weft_event_test(returned) == 1; }, 30)) errors.add("binder never ran");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        fulfil_at = stamp();
        weft_event_fulfill(e);
      });
    } else {
      weft::spawn([&] {
        weft_event_wait(returned);
        weft_test::spin(2000);
        fulfil_at = stamp();
        weft_event_fulfill(e);
      });
    }
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    uint64_t waited_at = stamp();
    if (th.joinable()) th.join();
    EXPECT_EQ(bind_rc.load(), WEFT_OK);
    EXPECT_EQ(successor_saw.load(), 42);
    if (successor_start.load() < fulfil_at.load()) ++early_successor;
    if (waited_at < fulfil_at.load()) ++early_taskwait;
    if (binder_end.load() > fulfil_at.load()) ++late_return;
    EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
    EXPECT_EQ(weft_event_destroy(returned), WEFT_OK);
  }
  EXPECT_EQ(early_successor, 0) << "the successor of a bound task started before its event was fulfilled";
  EXPECT_EQ(early_taskwait, 0) << "taskwait returned before the bound child's event was fulfilled";
  EXPECT_EQ(late_return, 0);
  EXPECT_EQ(errors.count(), 0) << errors.str();
}

// A task's taskwait for a binding child, and a taskgroup holding a binding grandchild, end only
// after the event is fulfilled.
TEST_P(Events, BindDelaysParentTaskwaitAndTaskgroup) {
  const int rounds = weft_test::scaled(60, 10);
  int early_wait = 0, early_group = 0;
  for (int r = 0; r < rounds; ++r) {
    weft_event_t* e = weft_event_create(1);
    weft_event_t* bound = weft_event_create(1);
    std::atomic<uint64_t> fulfil_at{0}, parent_after_wait{0};
    weft::spawn([&] {
      weft::spawn([&] {
        weft_event_bind(e);
        weft_event_fulfill(bound);
      });
      weft::taskwait();
      parent_after_wait = stamp();
    });
    weft::spawn([&] {  // a later sibling of the parent fulfils
      weft_event_wait(bound);
      weft_test::spin(1000);
      fulfil_at = stamp();
      weft_event_fulfill(e);
    });
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    if (parent_after_wait.load() < fulfil_at.load()) ++early_wait;
    weft_event_destroy(e);
    weft_event_destroy(bound);

    // taskgroup in the main program; the binding task is a grandchild; a foreign thread fulfils.
    e = weft_event_create(1);
    bound = weft_event_create(1);
    ASSERT_EQ(weft_taskgroup_begin(), WEFT_OK);
    weft::spawn([&] {
      weft::spawn([&] {
        weft_event_bind(e);
        weft_event_fulfill(bound);
      });
    });
    std::thread th([&] {
      susp::eventually([&] { return weft_event_test(bound) == 1; }, 30);
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      fulfil_at = stamp();
      weft_event_fulfill(e);
    });
    ASSERT_EQ(weft_taskgroup_end(), WEFT_OK);
    uint64_t group_end = stamp();
    th.join();
    if (group_end < fulfil_at.load()) ++early_group;
    weft_event_destroy(e);
    weft_event_destroy(bound);
  }
  EXPECT_EQ(early_wait, 0) << "a task's taskwait returned before its bound child's event was fulfilled";
  EXPECT_EQ(early_group, 0) << "taskgroup end returned before a bound descendant's event was fulfilled";
}

// Binding an event twice (by the same task, or by another task) fails with WEFT_ERR_EVENT_BOUND.
TEST_P(Events, BindTwice) {
  weft_event_t* e = weft_event_create(1);
  weft_event_t* a_bound = weft_event_create(1);
  std::atomic<int> first{-1}, again{-1}, other{-1};
  std::atomic<uint64_t> fulfil_at{0}, successor_start{0};
  long x = 0;
  weft::spawn(
      [&] {
        first = weft_event_bind(e);
        again = weft_event_bind(e);
        weft_event_fulfill(a_bound);
      },
      weft::out(x));
  weft::spawn([&] {
    weft_event_wait(a_bound);
    other = weft_event_bind(e);
    EXPECT_EQ(weft_last_error(), WEFT_ERR_EVENT_BOUND);
    fulfil_at = stamp();
    weft_event_fulfill(e);
  });
  weft::spawn([&] { successor_start = stamp(); }, weft::in(x));
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(first.load(), WEFT_OK);
  EXPECT_EQ(again.load(), WEFT_ERR_EVENT_BOUND);
  EXPECT_EQ(other.load(), WEFT_ERR_EVENT_BOUND);
  EXPECT_GT(successor_start.load(), fulfil_at.load());
  weft_event_destroy(e);
  weft_event_destroy(a_bound);
}

// A task that binds several events completes once all are fulfilled (one of count 2).
TEST_P(Events, BindSeveralEvents) {
  const int rounds = weft_test::scaled(40, 8);
  int early = 0;
  for (int r = 0; r < rounds; ++r) {
    weft_event_t* e1 = weft_event_create(1);
    weft_event_t* e2 = weft_event_create(2);
    std::atomic<int> bound{0};
    std::atomic<uint64_t> last_fulfil{0}, successor_start{0};
    long x = 0;
    weft::spawn(
        [&] {
          EXPECT_EQ(weft_event_bind(e1), WEFT_OK);
          EXPECT_EQ(weft_event_bind(e2), WEFT_OK);
          bound = 1;
        },
        weft::inout(x));
    weft::spawn([&] { successor_start = stamp(); }, weft::inout(x));
    std::thread th([&] {
      susp::eventually([&] { return bound.load() == 1; }, 30);
      weft_event_fulfill(e2);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      weft_event_fulfill(e1);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      last_fulfil = stamp();
      weft_event_fulfill(e2);
    });
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    th.join();
    if (successor_start.load() < last_fulfil.load()) ++early;
    weft_event_destroy(e1);
    weft_event_destroy(e2);
  }
  EXPECT_EQ(early, 0) << "the successor of a task bound to two events started before the last fulfilment";
}

// Binding an event that is already fulfilled holds nothing.
TEST_P(Events, BindFulfilledEvent) {
  weft_event_t* e = weft_event_create(1);
  ASSERT_EQ(weft_event_fulfill(e), WEFT_OK);
  long x = 0;
  std::atomic<int> rc{-1}, successor_ran{0};
  weft::spawn([&] { rc = weft_event_bind(e); }, weft::out(x));
  weft::spawn([&] { successor_ran = 1; }, weft::in(x));
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(rc.load(), WEFT_OK);
  EXPECT_EQ(successor_ran.load(), 1);
  EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
}

// --- misuse ---------------------------------------------------------------------------------------
TEST_P(Events, Misuse) {
  EXPECT_EQ(weft_event_create(0), nullptr);
  EXPECT_EQ(weft_last_error(), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_event_fulfill(nullptr), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_event_fulfill_from_signal(nullptr), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_event_wait(nullptr), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_event_bind(nullptr), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_event_destroy(nullptr), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_LT(weft_event_test(nullptr), 0);
  weft_event_t* e = weft_event_create(1);
  ASSERT_NE(e, nullptr);
  // The main program is no task: there is nothing to bind.
  EXPECT_EQ(weft_event_bind(e), WEFT_ERR_INVALID_ARGUMENT);
  // A foreign thread may fulfil but not wait, yield or create.
  std::atomic<int> wait_rc{-1}, yield_rc{-1}, create_err{-1};
  std::thread([&] {
    wait_rc = weft_event_wait(e);
    yield_rc = weft_taskyield();
    weft_event_t* x = weft_event_create(1);
    create_err = x ? -2 : weft_last_error();
  }).join();
  EXPECT_EQ(wait_rc.load(), WEFT_ERR_NOT_A_WORKER);
  EXPECT_EQ(yield_rc.load(), WEFT_ERR_NOT_A_WORKER);
  EXPECT_EQ(create_err.load(), WEFT_ERR_NOT_A_WORKER);
  EXPECT_EQ(weft_event_test(e), 0);
  EXPECT_EQ(weft_event_fulfill(e), WEFT_OK);
  EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
  // The creator may destroy an event before it is fulfilled: a task binds it and releases it at
  // once; a foreign thread fulfils it later (the event is freed then, by a worker).
  for (int r = 0; r < 20; ++r) {
    e = weft_event_create(2);
    ASSERT_NE(e, nullptr);
    std::atomic<int> bound{0}, successor_ran{0};
    long x = 0;
    weft::spawn(
        [&] {
          if (weft_event_bind(e) != WEFT_OK) bound = -1;
          if (weft_event_destroy(e) != WEFT_OK) bound = -1;
          if (bound.load() == 0) bound = 1;
        },
        weft::out(x));
    weft::spawn([&] { successor_ran = 1; }, weft::in(x));
    std::thread th([&] {
      susp::eventually([&] { return bound.load() != 0; }, 30);
      weft_event_fulfill(e);
      weft_event_fulfill(e);  // the last use of e
    });
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    th.join();
    EXPECT_EQ(bound.load(), 1);
    EXPECT_EQ(successor_ran.load(), 1);
  }
}

// The C++ API: weft::event, weft::tied, weft::taskyield.
TEST_P(Events, CppApi) {
  const int rounds = weft_test::scaled(50, 10);
  int moved_tied = 0;
  for (int r = 0; r < rounds; ++r) {
    weft::event e;
    weft::event gate(2);
    std::atomic<int> order{0}, waited_at{-1};
    long x = 0;
    weft::spawn(
        [&] {
          int before = weft::worker_id();
          gate.fulfill();
          e.wait();
          if (weft::worker_id() != before) ++moved_tied;  // only this task writes it
          waited_at = order++;
        },
        weft::tied);
    weft::spawn(
        [&] {
          x = 1;
          gate.fulfill();
          e.bind();  // the successor below runs only after e is fulfilled
        },
        weft::out(x));
    std::atomic<int> successor_at{-1};
    weft::spawn([&] { successor_at = order++; }, weft::in(x));
    weft::spawn([&] {
      gate.wait();
      while (!gate.fulfilled()) weft::taskyield();
      order++;  // 0: before any waiter of e
      e.fulfill();
    });
    weft::taskwait();
    EXPECT_TRUE(e.fulfilled());
    EXPECT_GT(waited_at.load(), 0);
    EXPECT_GT(successor_at.load(), 0);
    try {
      e.fulfill();
      ADD_FAILURE() << "a second fulfill did not throw";
    } catch (const weft::error& err) {
      EXPECT_EQ(err.status(), WEFT_ERR_EVENT_FULFILLED);
    }
    EXPECT_THROW(weft::event(0), weft::error);
  }
  EXPECT_EQ(moved_tied, 0) << "a weft::tied task resumed on another worker";
  // A weft::event may go out of scope before it is fulfilled, once its waiters and binders have it.
  std::atomic<int> bound{0}, successor{0};
  long y = 0;
  weft_event_t* raw = nullptr;
  {
    auto* e = new weft::event;
    raw = e->handle();
    weft::spawn(
        [e, &bound] {
          e->bind();
          bound = 1;
          delete e;  // the bound task keeps the event alive
        },
        weft::out(y));
  }
  weft::spawn([&] { successor = 1; }, weft::in(y));
  std::thread th([&] {
    susp::eventually([&] { return bound.load() == 1; }, 30);
    weft_event_fulfill(raw);
  });
  weft::taskwait();
  th.join();
  EXPECT_EQ(successor.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(Workers, Events, ::testing::Values(1, 2, 8), susp::worker_name);

// --- 11. random graphs with events -----------------------------------------------------------------
// A random sibling set (in / out / inout accesses on a few addresses, values computed from what each
// task reads) where some tasks wait on an event, or bind one, fulfilled by 1-3 other tasks (created
// before or after them, never ones that depend on them) or by the main program after it submitted
// every task. Checked: every task's reads and the final values equal a sequential execution in
// creation order; conflicting tasks did not overlap; a waiter resumed after its event's last
// fulfilment; a bound task's conflicting successors started after it; undeferred tasks ended
// before their submit returned.
constexpr int main_bit = 63;  // "the main program, after submitting every task"

struct gevent {
  std::vector<int> fulfillers;  // task indices
  bool by_main = false;
  int consumer = -1;
  bool bind = false;  // the consumer binds it (else waits on it)
  weft_event_t* handle = nullptr;
  std::atomic<uint64_t> last_fulfil{0};
};

struct gtask {
  std::vector<std::pair<int, weft_dep_type>> accesses;
  int wait_event = -1, bind_event = -1;
  bool wait_early = false;      // wait before reading its inputs (else between reads and writes)
  bool fulfil_early = false;    // fulfil its events at the start (else at the end)
  std::vector<int> fulfils;
  bool undeferred = false;
  uint64_t seed = 0;
  // observed
  std::atomic<int> runs{0};
  uint64_t acc = 0, start = 0, end = 0, after_wait = 0;
};

struct egraph {
  std::vector<std::unique_ptr<gtask>> tasks;
  std::vector<std::unique_ptr<gevent>> events;
  std::vector<uint64_t> values;  // the addresses
  std::vector<uint64_t> expected_acc, expected_values;
  std::atomic<uint64_t> seq{1};
  weft_test::error_log errors;
  uint64_t stamp() { return seq.fetch_add(1); }
};

bool conflicts(weft_dep_type a, weft_dep_type b) { return !(a == WEFT_DEP_IN && b == WEFT_DEP_IN); }

std::unique_ptr<egraph> generate(uint64_t seed) {
  auto g = std::make_unique<egraph>();
  rng r(seed);
  const int n = r.range(4, 48), slots = r.range(1, 6);
  g->values.assign(static_cast<size_t>(slots), 0);
  for (int i = 0; i < n; ++i) {
    auto t = std::make_unique<gtask>();
    t->seed = r.next();
    int k = r.range(0, std::min(3, slots));
    std::vector<int> chosen;
    while (static_cast<int>(chosen.size()) < k) {
      int s = r.range(0, slots - 1);
      if (std::find(chosen.begin(), chosen.end(), s) == chosen.end()) chosen.push_back(s);
    }
    for (int s : chosen) t->accesses.push_back({s, static_cast<weft_dep_type>(r.range(1, 3))});
    t->wait_early = r.chance(0.5);
    t->fulfil_early = r.chance(0.3);
    g->tasks.push_back(std::move(t));
  }
  // anc[i]: every task (and main_bit) that i transitively waits for. Dependences first.
  std::vector<uint64_t> anc(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i)
    for (int p = 0; p < i; ++p) {
      bool c = false;
      for (auto& [si, ti] : g->tasks[i]->accesses)
        for (auto& [sp, tp] : g->tasks[p]->accesses)
          if (si == sp && conflicts(ti, tp)) c = true;
      if (c) anc[i] |= anc[p] | (1ull << p);
    }
  auto add_edge = [&](uint64_t from_bits, int to) {  // `to` waits for everything in from_bits
    for (int x = 0; x < n; ++x)
      if (x == to || (anc[x] >> to & 1)) anc[x] |= from_bits;
  };
  // Events: each with one consumer (waiting or binding) and 1-3 fulfillers that do not depend on it.
  for (int i = 0; i < n; ++i) {
    for (int kind = 0; kind < 2; ++kind) {
      if (!r.chance(kind == 0 ? 0.3 : 0.12)) continue;
      auto ev = std::make_unique<gevent>();
      ev->consumer = i;
      ev->bind = kind == 1;
      int want = r.range(1, 3);
      for (int tries = 0; tries < 20 && static_cast<int>(ev->fulfillers.size()) < want; ++tries) {
        int j = r.range(0, n - 1);
        if (j == i || (anc[j] >> i & 1)) continue;
        if (std::find(ev->fulfillers.begin(), ev->fulfillers.end(), j) != ev->fulfillers.end()) continue;
        ev->fulfillers.push_back(j);
        add_edge(anc[j] | (1ull << j), i);
      }
      if (ev->fulfillers.empty() || r.chance(0.1)) {
        ev->by_main = true;
        add_edge(1ull << main_bit, i);
      }
      int id = static_cast<int>(g->events.size());
      for (int j : ev->fulfillers) g->tasks[j]->fulfils.push_back(id);
      (kind == 0 ? g->tasks[i]->wait_event : g->tasks[i]->bind_event) = id;
      g->events.push_back(std::move(ev));
    }
  }
  // Undeferred: only tasks that wait (transitively) for earlier tasks alone, or the main program
  // would block in their submit on a task it has not created yet.
  for (int i = 0; i < n; ++i) {
    uint64_t later = i >= 63 ? 0 : ~((1ull << i) - 1);
    if ((anc[i] & later) == 0 && r.chance(0.15)) g->tasks[i]->undeferred = true;
  }
  // The sequential reference.
  std::vector<uint64_t> v(static_cast<size_t>(slots), 0);
  for (int i = 0; i < n; ++i) {
    gtask& t = *g->tasks[i];
    uint64_t acc = t.seed;
    for (auto& [s, type] : t.accesses)
      if (type != WEFT_DEP_OUT) acc = mix(acc, v[s]);
    for (auto& [s, type] : t.accesses)
      if (type != WEFT_DEP_IN) v[s] = mix(acc, static_cast<uint64_t>(s));
    g->expected_acc.push_back(acc);
  }
  g->expected_values = v;
  return g;
}

struct graph_task_args {
  egraph* g;
  int index;
};

void fulfil_events_of(egraph& g, gtask& t) {
  for (int id : t.fulfils) {
    gevent& ev = *g.events[id];
    uint64_t s = g.stamp();
    uint64_t prev = ev.last_fulfil.load();
    while (prev < s && !ev.last_fulfil.compare_exchange_weak(prev, s)) {
    }
    int rc = weft_event_fulfill(ev.handle);
    if (rc != WEFT_OK) g.errors.add("fulfil returned " + std::to_string(rc));
  }
}

void graph_task(void* p) {
  auto a = *static_cast<graph_task_args*>(p);
  egraph& g = *a.g;
  gtask& t = *g.tasks[a.index];
  t.runs++;
  t.start = g.stamp();
  if (t.fulfil_early) fulfil_events_of(g, t);
  auto wait = [&] {
    if (t.wait_event < 0) return;
    if (weft_event_wait(g.events[t.wait_event]->handle) != WEFT_OK) g.errors.add("wait failed");
    t.after_wait = g.stamp();
  };
  if (t.wait_early) wait();
  uint64_t acc = t.seed;
  for (auto& [s, type] : t.accesses)
    if (type != WEFT_DEP_OUT) acc = mix(acc, g.values[s]);
  if (!t.wait_early) wait();
  for (auto& [s, type] : t.accesses)
    if (type != WEFT_DEP_IN) g.values[s] = mix(acc, static_cast<uint64_t>(s));
  t.acc = acc;
  if (t.bind_event >= 0 && weft_event_bind(g.events[t.bind_event]->handle) != WEFT_OK) g.errors.add("bind failed");
  if (!t.fulfil_early) fulfil_events_of(g, t);
  t.end = g.stamp();
}

std::string describe(const egraph& g) {
  std::ostringstream o;
  const char* names[] = {"?", "in", "out", "inout"};
  for (size_t i = 0; i < g.tasks.size(); ++i) {
    const gtask& t = *g.tasks[i];
    o << "  task " << i << (t.undeferred ? " undeferred" : "") << ":";
    for (auto& [s, type] : t.accesses) o << " " << names[type] << "(" << s << ")";
    if (t.wait_event >= 0) o << " waits e" << t.wait_event << (t.wait_early ? " early" : " late");
    if (t.bind_event >= 0) o << " binds e" << t.bind_event;
    if (!t.fulfils.empty()) {
      o << " fulfils";
      for (int id : t.fulfils) o << " e" << id;
      o << (t.fulfil_early ? " early" : " late");
    }
    o << "  [start " << t.start << " end " << t.end << " after_wait " << t.after_wait << "]\n";
  }
  for (size_t k = 0; k < g.events.size(); ++k) {
    const gevent& e = *g.events[k];
    o << "  e" << k << ": count " << e.fulfillers.size() + (e.by_main ? 1 : 0) << (e.by_main ? " (main)" : "")
      << ", last fulfilment " << e.last_fulfil.load() << "\n";
  }
  return o.str();
}

std::string run_event_graph(uint64_t seed, uint64_t& tasks_run) {
  auto gp = generate(seed);
  egraph& g = *gp;
  const int n = static_cast<int>(g.tasks.size());
  for (auto& ev : g.events) {
    ev->handle = weft_event_create(static_cast<unsigned>(ev->fulfillers.size() + (ev->by_main ? 1 : 0)));
    if (!ev->handle) return "weft_event_create failed";
  }
  std::vector<int> late_undeferred;
  for (int i = 0; i < n; ++i) {
    gtask& t = *g.tasks[i];
    graph_task_args args{&g, i};
    weft_task_t* task = weft_task_create(&graph_task, &args, sizeof args, t.undeferred ? WEFT_TASK_UNDEFERRED : 0);
    if (!task) return "weft_task_create failed";
    for (auto& [s, type] : t.accesses) weft_task_depend(task, type, &g.values[s], sizeof(uint64_t));
    if (weft_task_submit(task) != WEFT_OK) return "weft_task_submit failed";
    if (t.undeferred && (t.runs.load() != 1 || t.end == 0)) late_undeferred.push_back(i);
  }
  std::vector<uint64_t> main_stamps;
  for (auto& ev : g.events)
    if (ev->by_main) {
      uint64_t s = g.stamp();
      uint64_t prev = ev->last_fulfil.load();
      while (prev < s && !ev->last_fulfil.compare_exchange_weak(prev, s)) {
      }
      if (weft_event_fulfill(ev->handle) != WEFT_OK) g.errors.add("main's fulfil failed");
    }
  if (weft_taskwait() != WEFT_OK) return "weft_taskwait failed";
  uint64_t waited = g.stamp();
  tasks_run += static_cast<uint64_t>(n);

  std::ostringstream bad;
  if (g.errors.count()) bad << "errors in tasks:\n" << g.errors.str();
  for (int i : late_undeferred) bad << "undeferred task " << i << " had not ended when its submit returned\n";
  for (int i = 0; i < n; ++i) {
    gtask& t = *g.tasks[i];
    if (t.runs.load() != 1) bad << "task " << i << " ran " << t.runs.load() << " times\n";
    if (t.acc != g.expected_acc[i]) bad << "task " << i << " read other values than in a sequential execution\n";
    if (t.end > waited) bad << "task " << i << " ended after the taskwait returned\n";
    if (t.wait_event >= 0 && t.after_wait < g.events[t.wait_event]->last_fulfil.load())
      bad << "task " << i << " resumed (" << t.after_wait << ") before the last fulfilment of e" << t.wait_event << "\n";
    for (int k = i + 1; k < n; ++k) {
      gtask& u = *g.tasks[k];
      bool c = false;
      for (auto& [si, ti] : t.accesses)
        for (auto& [sk, tk] : u.accesses)
          if (si == sk && conflicts(ti, tk)) c = true;
      if (!c) continue;
      if (u.start < t.end) bad << "tasks " << i << " and " << k << " conflict but overlapped or ran out of order\n";
      if (t.bind_event >= 0 && u.start < g.events[t.bind_event]->last_fulfil.load())
        bad << "task " << k << " started before the event bound by its predecessor " << i << " was fulfilled\n";
    }
  }
  for (size_t s = 0; s < g.values.size(); ++s)
    if (g.values[s] != g.expected_values[s]) bad << "final value of address " << s << " differs\n";
  for (size_t k = 0; k < g.events.size(); ++k) {
    if (weft_event_test(g.events[k]->handle) != 1) bad << "e" << k << " not fulfilled at the end\n";
    weft_event_destroy(g.events[k]->handle);
  }
  if (!bad.str().empty()) return bad.str() + "graph:\n" + describe(g);
  return "";
}

class EventGraphs : public susp::workers_fixture {};

TEST_P(EventGraphs, MatchSequentialExecution) {
  int count = weft_test::scaled(300, 30);
  std::vector<uint64_t> seeds;
  if (auto s = weft_test::env_u64("WEFT_TEST_SEED")) {
    seeds.push_back(*s);
  } else {
    for (int i = 0; i < count; ++i) seeds.push_back(mix(0xe7e47ull + static_cast<uint64_t>(workers()), static_cast<uint64_t>(i)));
  }
  weft_test::watchdog dog("EventGraphs w" + std::to_string(workers()), 60);
  uint64_t tasks = 0;
  for (uint64_t seed : seeds) {
    std::ostringstream step;
    step << "graph seed=0x" << std::hex << seed << " -- reproduce with WEFT_TEST_SEED=0x" << seed;
    dog.step(step.str());
    std::string failure = run_event_graph(seed, tasks);
    ASSERT_TRUE(failure.empty()) << "workers " << workers() << ", reproduce: WEFT_TEST_SEED=0x" << std::hex << seed
                                 << std::dec << " ./events_test --gtest_filter='*EventGraphs*w" << workers() << "'\n"
                                 << failure;
  }
  weft_stats_t s = weft_test::stats();
  std::printf("[ info     ] %d workers: %zu graphs, %llu tasks; %s\n", workers(), seeds.size(),
              static_cast<unsigned long long>(tasks), susp::stats_text(s).c_str());
  EXPECT_EQ(s.tasks_completed, s.tasks_created) << susp::stats_text(s);
  EXPECT_GT(s.suspensions, 0u) << susp::stats_text(s);
  EXPECT_EQ(s.resumes, s.suspensions) << susp::stats_text(s);
}

INSTANTIATE_TEST_SUITE_P(Workers, EventGraphs, ::testing::Values(1, 2, 8), susp::worker_name);

}  // namespace
