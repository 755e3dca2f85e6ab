// Pollers: functions workers call at scheduling points and while idle, never two at once; used here
// to fulfil events (deadlines, flags). weft_poller_unregister returns only when the function is not
// running, and it is never called afterwards. Registering NULL fails; registration works before
// weft_init; at most 64 pollers. With 1, 2 and 8 workers.
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "suspension_common.h"
#include "weft_test.h"

namespace {

using clock_type = std::chrono::steady_clock;

class Pollers : public susp::workers_fixture {};

// Detects two workers inside the function at once, and calls after unregistration.
struct probe {
  std::atomic<int> inflight{0}, overlaps{0};
  std::atomic<long> calls{0}, after_unregister{0};
  std::atomic<bool> unregistered{false};
  unsigned spin = 200;
};

int probe_fn(void* arg) {
  auto* p = static_cast<probe*>(arg);
  if (p->unregistered.load()) p->after_unregister++;
  if (p->inflight.fetch_add(1) != 0) p->overlaps++;
  weft_test::spin(p->spin);
  p->calls++;
  p->inflight.fetch_sub(1);
  return 0;
}

// --- events fulfilled by a poller ---------------------------------------------------------------
// Tasks wait on (or bind) events that a poller fulfils: half of the events once a deadline passed,
// the other half once a flag is set by a task created after every waiter. The poller is the only
// fulfiller; it also checks that it never runs on two workers at once.
struct deadline_poller {
  struct entry {
    weft_event_t* event = nullptr;
    clock_type::time_point deadline;  // used when by_flag is false
    bool by_flag = false;
    std::atomic<int> flag{0};
    std::atomic<int> fulfilled{0};
  };
  std::vector<entry> entries;
  std::atomic<int> inflight{0}, overlaps{0}, errors{0};
  std::atomic<long> calls{0}, progress{0};
  explicit deadline_poller(int n) : entries(n) {}
};

int deadline_poll(void* arg) {
  auto* d = static_cast<deadline_poller*>(arg);
  if (d->inflight.fetch_add(1) != 0) d->overlaps++;
  d->calls++;
  int progressed = 0;
  auto now = clock_type::now();
  for (auto& e : d->entries) {
    if (e.fulfilled.load(std::memory_order_relaxed)) continue;
    bool due = e.by_flag ? e.flag.load() != 0 : now >= e.deadline;
    if (!due) continue;
    e.fulfilled.store(1);
    if (weft_event_fulfill(e.event) != WEFT_OK) d->errors++;
    ++progressed;
  }
  d->progress += progressed;
  d->inflight.fetch_sub(1);
  return progressed;
}

TEST_P(Pollers, PollerFulfilsEvents) {
  const int n = 100;
  deadline_poller d(n);
  auto start = clock_type::now();
  for (int i = 0; i < n; ++i) {
    auto& e = d.entries[i];
    e.event = weft_event_create(1);
    ASSERT_NE(e.event, nullptr);
    e.by_flag = i % 2 == 1;
    e.deadline = start + std::chrono::microseconds(100 * (i % 20));
  }
  weft_poller_t* poller = weft_poller_register(&deadline_poll, &d);
  ASSERT_NE(poller, nullptr);
  weft_test::error_log errors;
  std::atomic<int> woke{0};
  std::vector<long> token(n, 0);
  auto check = [&d, &errors](int i, const char* who) {
    auto& e = d.entries[i];
    if (!e.by_flag && clock_type::now() < e.deadline) errors.add(std::string(who) + " before the deadline");
    if (e.by_flag && e.flag.load() == 0) errors.add(std::string(who) + " before the flag was set");
    if (e.fulfilled.load() != 1) errors.add(std::string(who) + " before the poller fulfilled the event");
  };
  for (int i = 0; i < n; ++i) {
    if (i % 4 == 2) {
      // Bound instead of waited on: the successor must wait for the poller's fulfilment.
      weft::spawn(
          [&, i] {
            token[i] = 1;
            if (weft_event_bind(d.entries[i].event) != WEFT_OK) errors.add("bind failed");
          },
          weft::out(token[i]));
      weft::spawn(
          [&, i] {
            check(i, "successor of a bound task started");
            if (token[i] != 1) errors.add("successor does not see the bound task's write");
            woke++;
          },
          weft::in(token[i]));
      continue;
    }
    weft::spawn([&, i] {
      if (weft_event_wait(d.entries[i].event) != WEFT_OK) errors.add("wait failed");
      check(i, "resumed");
      woke++;
    });
  }
  for (int i = 1; i < n; i += 2)
    weft::spawn([&, i] {
      weft_test::spin(100);
      d.entries[i].flag = 1;
    });
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  ASSERT_EQ(weft_poller_unregister(poller), WEFT_OK);
  EXPECT_EQ(woke.load(), n);
  EXPECT_EQ(errors.count(), 0) << errors.str();
  EXPECT_EQ(d.overlaps.load(), 0) << "the poller ran on two workers at once";
  EXPECT_EQ(d.errors.load(), 0);
  EXPECT_EQ(d.progress.load(), n);
  std::printf("[ info     ] %d workers: poller called %ld times\n", workers(), d.calls.load());
  for (auto& e : d.entries) EXPECT_EQ(weft_event_destroy(e.event), WEFT_OK);
}

// --- never two at once; stopped by unregister -------------------------------------------------------
// Several pollers, busy workers (short tasks, waits, idle periods): no poller overlaps itself.
TEST_P(Pollers, NeverTwoWorkersAtOnce) {
  probe probes[3];
  weft_poller_t* handles[3];
  for (int k = 0; k < 3; ++k) {
    probes[k].spin = 100u * static_cast<unsigned>(k + 1);
    handles[k] = weft_poller_register(&probe_fn, &probes[k]);
    ASSERT_NE(handles[k], nullptr);
  }
  const int rounds = weft_test::scaled(30, 5);
  for (int r = 0; r < rounds; ++r) {
    // Waiters released by a foreign thread: workers go idle (and poll) meanwhile.
    const int n = 20;
    std::vector<weft_event_t*> ev(n);
    for (auto& e : ev) e = weft_event_create(1);
    std::atomic<int> started{0};
    for (int i = 0; i < n; ++i) {
      weft_event_t* e = ev[i];
      weft::spawn([e, &started] {
        started++;
        weft_event_wait(e);
      });
      for (int k = 0; k < 5; ++k) weft::spawn([] { weft_test::spin(300); });
    }
    std::thread th([&] {
      // Once every waiter waits (so that contexts park and the loops run), plus a little.
      susp::eventually([&] { return started.load() == n; }, 10);
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      for (auto e : ev) weft_event_fulfill(e);
    });
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    th.join();
    for (auto e : ev) weft_event_destroy(e);
  }
  for (int k = 0; k < 3; ++k) {
    ASSERT_EQ(weft_poller_unregister(handles[k]), WEFT_OK);
    EXPECT_EQ(probes[k].overlaps.load(), 0) << "poller " << k << " ran on two workers at once";
    EXPECT_GT(probes[k].calls.load(), 0) << "poller " << k << " never called";
  }
}

// A slow call is running when another thread unregisters: unregister returns only after it
// returned, and the poller is not called again.
struct slow_probe {
  std::atomic<int> in_call{0}, finished_calls{0};
  std::atomic<long> calls{0}, after_unregister{0};
  std::atomic<bool> unregistered{false};
};

int slow_fn(void* arg) {
  auto* p = static_cast<slow_probe*>(arg);
  if (p->unregistered.load()) p->after_unregister++;
  p->calls++;
  p->in_call = 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  p->finished_calls++;
  p->in_call = 0;
  return 0;
}

TEST_P(Pollers, UnregisterWaitsForARunningCall) {
  const int rounds = weft_test::scaled(5, 2);
  for (int r = 0; r < rounds; ++r) {
    slow_probe p;
    weft_poller_t* handle = weft_poller_register(&slow_fn, &p);
    ASSERT_NE(handle, nullptr);
    weft_event_t* done = weft_event_create(1);
    std::atomic<int> unregister_rc{-1}, running_at_return{-1};
    std::atomic<long> calls_at_return{-1};
    std::thread th([&] {
      // Wait until a worker is inside the function, then unregister.
      if (!susp::eventually([&] { return p.in_call.load() == 1; }, 30)) {
        unregister_rc = -2;
      } else {
        unregister_rc = weft_poller_unregister(handle);
        running_at_return = p.in_call.load();
        calls_at_return = p.calls.load();
        p.unregistered = true;
      }
      weft_event_fulfill(done);
    });
    // The main program waits: on one worker, its idle loop is what calls the poller.
    ASSERT_EQ(weft_event_wait(done), WEFT_OK);
    th.join();
    ASSERT_EQ(unregister_rc.load(), WEFT_OK);
    EXPECT_EQ(running_at_return.load(), 0) << "weft_poller_unregister returned while the function was running";
    EXPECT_EQ(p.finished_calls.load(), calls_at_return.load());
    // More scheduling points and idleness: the function must not be called again.
    for (int i = 0; i < 50; ++i) weft::spawn([] { weft_test::spin(100); });
    weft_event_t* e = weft_event_create(1);
    weft::spawn([e] { weft_event_wait(e); });
    std::thread([e] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      weft_event_fulfill(e);
    }).join();
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(p.after_unregister.load(), 0) << "the poller was called after weft_poller_unregister returned";
    EXPECT_EQ(p.calls.load(), calls_at_return.load());
    weft_event_destroy(e);
    weft_event_destroy(done);
  }
}

// Unregister stops a fast poller that is being called continuously by idle workers.
TEST_P(Pollers, NotCalledAfterUnregister) {
  const int rounds = weft_test::scaled(20, 4);
  for (int r = 0; r < rounds; ++r) {
    probe p;
    p.spin = 50;
    weft_poller_t* handle = weft_poller_register(&probe_fn, &p);
    ASSERT_NE(handle, nullptr);
    // Keep the workers at scheduling points for a while.
    weft_event_t* e = weft_event_create(1);
    weft::spawn([e] { weft_event_wait(e); });
    std::thread th([&] {
      susp::eventually([&] { return p.calls.load() > 0; }, 30);
      EXPECT_EQ(weft_poller_unregister(handle), WEFT_OK);
      p.unregistered = true;
      weft_event_fulfill(e);
    });
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    th.join();
    for (int i = 0; i < 20; ++i) weft::spawn([] {});
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_EQ(p.after_unregister.load(), 0);
    EXPECT_EQ(p.overlaps.load(), 0);
    weft_event_destroy(e);
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, Pollers, ::testing::Values(1, 2, 8), susp::worker_name);

// --- registration -------------------------------------------------------------------------------------
int nothing_fn(void*) {
  return 0;
}

TEST(PollerRegistration, NullFails) {
  susp::clear_suspension_variables();
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
  ASSERT_TRUE(rt.ok());
  int x = 0;
  EXPECT_EQ(weft_poller_register(nullptr, &x), nullptr);
  EXPECT_EQ(weft_poller_register(nullptr, nullptr), nullptr);
  EXPECT_NE(weft_poller_unregister(nullptr), WEFT_OK);
  EXPECT_EQ(weft_poller_set_pending(nullptr, 1), WEFT_ERR_INVALID_ARGUMENT);
}

// A poller that says it expects completions is still called, and still stops being called once
// unregistered while pending (the hint is dropped with it).
TEST(PollerRegistration, PendingHint) {
  susp::clear_suspension_variables();
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
  ASSERT_TRUE(rt.ok());
  probe p;
  weft_poller_t* handle = weft_poller_register(&probe_fn, &p);
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(weft_poller_set_pending(handle, 1), WEFT_OK);
  EXPECT_EQ(weft_poller_set_pending(handle, 1), WEFT_OK);  // idempotent
  long before = p.calls.load();
  EXPECT_TRUE(susp::eventually([&] { return p.calls.load() > before + 100; }, 10))
      << "idle workers stopped calling a pending poller";
  EXPECT_EQ(weft_poller_set_pending(handle, 0), WEFT_OK);
  EXPECT_EQ(weft_poller_set_pending(handle, 1), WEFT_OK);
  EXPECT_EQ(weft_poller_unregister(handle), WEFT_OK);
  p.unregistered.store(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(p.after_unregister.load(), 0);
}

TEST(PollerRegistration, AtMost64) {
  susp::clear_suspension_variables();
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
  ASSERT_TRUE(rt.ok());
  std::vector<weft_poller_t*> handles;
  for (int i = 0; i < 64; ++i) {
    weft_poller_t* h = weft_poller_register(&nothing_fn, nullptr);
    EXPECT_NE(h, nullptr) << "registration " << i << " of 64 failed";
    if (h) handles.push_back(h);
  }
  EXPECT_EQ(weft_poller_register(&nothing_fn, nullptr), nullptr) << "a 65th poller was registered";
  // A freed slot can be used again.
  ASSERT_FALSE(handles.empty());
  EXPECT_EQ(weft_poller_unregister(handles.back()), WEFT_OK);
  handles.pop_back();
  weft_poller_t* again = weft_poller_register(&nothing_fn, nullptr);
  EXPECT_NE(again, nullptr);
  if (again) handles.push_back(again);
  for (auto* h : handles) EXPECT_EQ(weft_poller_unregister(h), WEFT_OK);
}

// Registered before weft_init: idle workers call it once the runtime runs.
TEST(PollerRegistration, BeforeInit) {
  if (weft_initialized()) {
    ASSERT_EQ(weft_finalize(), WEFT_OK);
  }
  susp::clear_suspension_variables();
  probe p;
  weft_poller_t* handle = weft_poller_register(&probe_fn, &p);
  ASSERT_NE(handle, nullptr);
  {
    weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
    ASSERT_TRUE(rt.ok());
    EXPECT_TRUE(susp::eventually([&] { return p.calls.load() > 0; }, 10))
        << "a poller registered before weft_init is never called by the idle workers";
    EXPECT_EQ(weft_poller_unregister(handle), WEFT_OK);
  }
  // Before weft_init, registering and unregistering alone work too.
  weft_poller_t* h2 = weft_poller_register(&nothing_fn, nullptr);
  ASSERT_NE(h2, nullptr);
  EXPECT_EQ(weft_poller_unregister(h2), WEFT_OK);
}

// Registered on a runtime whose idle workers have gone to sleep (with no poller, a pooled worker
// sleeps without a timeout): the registration wakes them, or they would never call it. A TSan CI
// run of SurvivesARestart hit this when its worker fell asleep before the registration.
TEST(PollerRegistration, WakesSleepingWorkers) {
  susp::clear_suspension_variables();
  probe p;
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
  ASSERT_TRUE(rt.ok());
  // Long past the idle workers' spinning and yielding (well under a millisecond each).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  weft_poller_t* handle = weft_poller_register(&probe_fn, &p);
  ASSERT_NE(handle, nullptr);
  EXPECT_TRUE(susp::eventually([&] { return p.calls.load() > 0; }, 10))
      << "a poller registered while the workers sleep is never called";
  EXPECT_EQ(weft_poller_unregister(handle), WEFT_OK);
}

// A layer registers its poller once per process (libweft-cuda on first use, libweft-mpi at
// MPI_Init): it stays registered, and is called, across weft_finalize and a later weft_init.
TEST(PollerRegistration, SurvivesARestart) {
  susp::clear_suspension_variables();
  probe p;
  weft_poller_t* handle = nullptr;
  {
    weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
    ASSERT_TRUE(rt.ok());
    handle = weft_poller_register(&probe_fn, &p);
    ASSERT_NE(handle, nullptr);
    EXPECT_TRUE(susp::eventually([&] { return p.calls.load() > 0; }, 10));
  }
  ASSERT_FALSE(weft_initialized());
  long before = p.calls.load();
  {
    weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
    ASSERT_TRUE(rt.ok());
    EXPECT_TRUE(susp::eventually([&] { return p.calls.load() > before; }, 10))
        << "the poller was dropped by weft_finalize";
    EXPECT_EQ(weft_poller_unregister(handle), WEFT_OK);
  }
}

}  // namespace
