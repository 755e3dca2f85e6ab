// Task suspension: a task that waits (an event, taskwait with children still running, an undeferred
// child waiting for its predecessors) gives its core back; its stack is set aside and the worker
// runs other tasks. Every case runs with 1 and 2 workers, and 8 workers (more than the cores of the
// CI machine) as a stress variant:
//   - many tasks wait on events that tasks created after them fulfil (fewer workers than waiters);
//   - producer/consumer through events: a token ring of stages passing values, consumers fed by
//     producers created after them through counted events;
//   - recursive taskwait 100,000 deep, and a deep recursion where each level also waits on an event
//     its child fulfils (every level parks);
//   - tied tasks resume on the worker they started on, untied ones may move (counted, printed);
//   - weft_taskyield loops that only end when every yielding task has run (1 worker included);
//   - an undeferred child waiting for a predecessor that waits on an event;
//   - a taskwait does not run unrelated tasks on its stack;
//   - the suspensions / resumes / fibers statistics.
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "suspension_common.h"
#include "weft_test.h"

namespace {

using susp::spawn_flags;

class Suspension : public susp::workers_fixture {};

// --- 1. many waiters, each fulfilled by a task created later -------------------------------------
// Every waiter first counts itself into `all_started` (an event of count n); every fulfiller waits
// for that event before fulfilling its waiter's event. On one worker each waiter therefore waits
// before its event can be fulfilled, and a runtime that does not give the core back deadlocks.
TEST_P(Suspension, ManyWaitersFulfilledByLaterTasks) {
  const int n = 200;
  struct state {
    std::vector<weft_event_t*> ev;
    weft_event_t* all_started = nullptr;
    std::vector<long> value;
    std::vector<std::atomic<int>> fulfilled;
    std::atomic<int> woke{0};
    weft_test::error_log errors;
    explicit state(int n) : ev(n), value(n, 0), fulfilled(n) {}
  } s(n);
  for (int i = 0; i < n; ++i) {
    s.ev[i] = weft_event_create(1);
    ASSERT_NE(s.ev[i], nullptr);
  }
  s.all_started = weft_event_create(n);
  ASSERT_NE(s.all_started, nullptr);
  for (int i = 0; i < n; ++i)
    weft::spawn([&s, i] {
      if (int rc = weft_event_fulfill(s.all_started); rc != WEFT_OK) s.errors.add("fulfil all_started: " + std::to_string(rc));
      if (int rc = weft_event_wait(s.ev[i]); rc != WEFT_OK) s.errors.add("wait: " + std::to_string(rc));
      if (s.fulfilled[i].load() != 1) s.errors.add("waiter " + std::to_string(i) + " resumed before its fulfilment");
      if (s.value[i] != 1000 + i) s.errors.add("waiter " + std::to_string(i) + " sees value " + std::to_string(s.value[i]));
      if (weft_event_test(s.ev[i]) != 1) s.errors.add("weft_event_test after the wait is not 1");
      s.woke++;
    });
  for (int i = n - 1; i >= 0; --i)
    weft::spawn([&s, i] {
      if (int rc = weft_event_wait(s.all_started); rc != WEFT_OK) s.errors.add("wait all_started: " + std::to_string(rc));
      s.value[i] = 1000 + i;
      s.fulfilled[i] = 1;
      if (int rc = weft_event_fulfill(s.ev[i]); rc != WEFT_OK) s.errors.add("fulfil: " + std::to_string(rc));
    });
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(s.woke.load(), n);
  EXPECT_EQ(s.errors.count(), 0) << s.errors.str();
  for (int i = 0; i < n; ++i) EXPECT_EQ(weft_event_destroy(s.ev[i]), WEFT_OK);
  EXPECT_EQ(weft_event_destroy(s.all_started), WEFT_OK);
  susp::expect_parked_and_resumed("many waiters");
  weft_stats_t st = weft_test::stats();
  if (workers() == 1) {
    EXPECT_GE(st.suspensions, static_cast<uint64_t>(n)) << "on one worker every waiter parks: " << susp::stats_text(st);
  }
}

// --- 2. producer / consumer -------------------------------------------------------------------------
// A ring of K stages (more than the workers), each a task looping over R rounds: wait for its event
// of this round, check the token, add its share, pass it on by fulfilling the next stage's event. The
// token is injected by a task created after every stage.
TEST_P(Suspension, TokenRingThroughEvents) {
  const int k = 16, rounds = weft_test::scaled(100, 10);
  const long seed = 12345, per_round = static_cast<long>(k) * (k + 1) / 2;
  struct state {
    std::vector<std::vector<weft_event_t*>> ev;  // [round][stage]
    std::vector<long> slot;                      // the token entering each stage
    long final_token = 0;
    std::atomic<int> steps{0};
    weft_test::error_log errors;
  } s;
  s.ev.assign(rounds, std::vector<weft_event_t*>(k));
  s.slot.assign(k, 0);
  for (auto& round : s.ev)
    for (auto& e : round) {
      e = weft_event_create(1);
      ASSERT_NE(e, nullptr);
    }
  for (int i = 0; i < k; ++i)
    weft::spawn([&s, i, k, rounds, seed, per_round] {
      long expect = seed + static_cast<long>(i) * (i + 1) / 2;  // sum of (s+1) for s < i
      for (int r = 0; r < rounds; ++r) {
        if (weft_event_wait(s.ev[r][i]) != WEFT_OK) s.errors.add("wait failed");
        long token = s.slot[i];
        if (token != expect + r * per_round)
          s.errors.add("stage " + std::to_string(i) + " round " + std::to_string(r) + ": token " +
                       std::to_string(token) + ", expected " + std::to_string(expect + r * per_round));
        token += i + 1;
        s.steps++;
        if (i + 1 < k) {
          s.slot[i + 1] = token;
          weft_event_fulfill(s.ev[r][i + 1]);
        } else if (r + 1 < rounds) {
          s.slot[0] = token;
          weft_event_fulfill(s.ev[r + 1][0]);
        } else {
          s.final_token = token;
        }
      }
    });
  weft::spawn([&s, seed] {
    s.slot[0] = seed;
    weft_event_fulfill(s.ev[0][0]);
  });
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(s.errors.count(), 0) << s.errors.str();
  EXPECT_EQ(s.steps.load(), k * rounds);
  EXPECT_EQ(s.final_token, seed + rounds * per_round);
  for (auto& round : s.ev)
    for (auto& e : round) EXPECT_EQ(weft_event_destroy(e), WEFT_OK);
  susp::expect_parked_and_resumed("token ring");
}

// Consumers created first, each waiting for an event of count P that P producers (created after
// every consumer, in a shuffled order) fulfil after writing their part of the consumer's message.
TEST_P(Suspension, ConsumersFedByLaterProducers) {
  const int consumers = 64, parts = 3;
  struct state {
    std::vector<weft_event_t*> ev;
    std::vector<std::vector<long>> part;
    std::vector<long> got;
    std::atomic<int> consumed{0};
    weft_test::error_log errors;
  } s;
  s.ev.resize(consumers);
  s.part.assign(consumers, std::vector<long>(parts, -1));
  s.got.assign(consumers, -1);
  for (auto& e : s.ev) {
    e = weft_event_create(parts);
    ASSERT_NE(e, nullptr);
  }
  auto expected_part = [](int c, int p) { return static_cast<long>(c) * 1000 + p * 7 + 1; };
  for (int c = 0; c < consumers; ++c)
    weft::spawn([&s, c, parts, expected_part] {
      weft_event_wait(s.ev[c]);
      long sum = 0;
      for (int p = 0; p < parts; ++p) {
        if (s.part[c][p] != expected_part(c, p))
          s.errors.add("consumer " + std::to_string(c) + " part " + std::to_string(p) + " = " +
                       std::to_string(s.part[c][p]));
        sum += s.part[c][p];
      }
      s.got[c] = sum;
      s.consumed++;
    });
  std::vector<std::pair<int, int>> order;
  for (int c = 0; c < consumers; ++c)
    for (int p = 0; p < parts; ++p) order.push_back({c, p});
  std::shuffle(order.begin(), order.end(), std::mt19937(42));
  for (auto [c, p] : order)
    weft::spawn([&s, c, p, expected_part] {
      s.part[c][p] = expected_part(c, p);
      if (weft_event_fulfill(s.ev[c]) != WEFT_OK) s.errors.add("fulfil failed");
    });
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(s.errors.count(), 0) << s.errors.str();
  EXPECT_EQ(s.consumed.load(), consumers);
  for (int c = 0; c < consumers; ++c) {
    long sum = 0;
    for (int p = 0; p < parts; ++p) sum += expected_part(c, p);
    EXPECT_EQ(s.got[c], sum) << "consumer " << c;
    EXPECT_EQ(weft_event_fulfill(s.ev[c]), WEFT_ERR_EVENT_FULFILLED);
    EXPECT_EQ(weft_event_destroy(s.ev[c]), WEFT_OK);
  }
}

// --- 3. deep recursion ---------------------------------------------------------------------------------
struct deep_state {
  std::vector<unsigned char> done;
  std::atomic<int> deepest{0};
  std::atomic<int> bad{0};
};
struct deep_args {
  int depth;
  int limit;
  deep_state* s;
};

// Spawns one child, waits for it: 100,000 nested taskwaits. The stack of the waiting chain runs
// out long before the bottom; the waits must then park instead of overflowing or deadlocking.
void deep_taskwait(void* p) {
  deep_args a = *static_cast<deep_args*>(p);
  if (a.depth < a.limit) {
    deep_args child{a.depth + 1, a.limit, a.s};
    weft_task_t* t = weft_task_create(&deep_taskwait, &child, sizeof child, 0);
    if (!t || weft_task_submit(t) != WEFT_OK) {
      a.s->bad++;
    } else if (weft_taskwait() != WEFT_OK || !a.s->done[static_cast<size_t>(a.depth) + 1]) {
      a.s->bad++;
    }
  } else {
    a.s->deepest = a.depth;
  }
  a.s->done[static_cast<size_t>(a.depth)] = 1;
}

TEST_P(Suspension, RecursiveTaskwait100kDeep) {
  // 100,000 normally; fewer under the sanitizers (WEFT_TEST_SCALE=0.1 gives 10,000).
  const int depth = weft_test::scaled(100000, 1000);
  deep_state s;
  s.done.assign(static_cast<size_t>(depth) + 1, 0);
  deep_args root{0, depth, &s};
  auto t0 = std::chrono::steady_clock::now();
  weft_task_t* t = weft_task_create(&deep_taskwait, &root, sizeof root, 0);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(s.deepest.load(), depth);
  EXPECT_EQ(s.bad.load(), 0);
  EXPECT_EQ(std::count(s.done.begin(), s.done.end(), 1), depth + 1);
  weft_stats_t st = weft_test::stats();
  std::printf("[ info     ] depth %d, %d workers: %.2f s, %s\n", depth, workers(), seconds, susp::stats_text(st).c_str());
  EXPECT_EQ(st.tasks_created, static_cast<uint64_t>(depth) + 1) << susp::stats_text(st);
  EXPECT_EQ(st.tasks_completed, st.tasks_created) << susp::stats_text(st);
  EXPECT_EQ(st.resumes, st.suspensions) << susp::stats_text(st);
  if (depth >= 50000) {
    // No stack holds 50,000 nested waits: the chain must have been set aside on fibers.
    EXPECT_GT(st.suspensions, 0u) << susp::stats_text(st);
    EXPECT_GT(st.fibers, 0u) << susp::stats_text(st);
  }
}

// Each level creates an event, spawns its child, waits for the event (which the child fulfils at
// its very end, after its own wait), then taskwaits. Every level is parked at once at the bottom.
struct event_chain_state {
  std::vector<unsigned char> fulfilled;
  std::atomic<int> deepest{0};
  weft_test::error_log errors;
};
struct event_chain_args {
  int depth;
  int limit;
  weft_event_t* parent_event;
  event_chain_state* s;
};

void deep_event_chain(void* p) {
  event_chain_args a = *static_cast<event_chain_args*>(p);
  if (a.depth < a.limit) {
    weft_event_t* mine = weft_event_create(1);
    if (!mine) {
      a.s->errors.add("weft_event_create failed");
      return;
    }
    event_chain_args child{a.depth + 1, a.limit, mine, a.s};
    weft_task_t* t = weft_task_create(&deep_event_chain, &child, sizeof child, 0);
    if (!t || weft_task_submit(t) != WEFT_OK) a.s->errors.add("submit failed");
    if (weft_event_wait(mine) != WEFT_OK) a.s->errors.add("wait failed");
    if (!a.s->fulfilled[static_cast<size_t>(a.depth) + 1])
      a.s->errors.add("level " + std::to_string(a.depth) + " resumed before its child fulfilled the event");
    if (weft_taskwait() != WEFT_OK) a.s->errors.add("taskwait failed");
    weft_event_destroy(mine);
  } else {
    a.s->deepest = a.depth;
  }
  a.s->fulfilled[static_cast<size_t>(a.depth)] = 1;
  if (a.parent_event && weft_event_fulfill(a.parent_event) != WEFT_OK) a.s->errors.add("fulfil failed");
}

TEST_P(Suspension, DeepRecursionWaitingOnEventsFromChildren) {
  const int depth = weft_test::scaled(5000, 300);
  event_chain_state s;
  s.fulfilled.assign(static_cast<size_t>(depth) + 1, 0);
  event_chain_args root{0, depth, nullptr, &s};
  weft_task_t* t = weft_task_create(&deep_event_chain, &root, sizeof root, 0);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(s.deepest.load(), depth);
  EXPECT_EQ(s.errors.count(), 0) << s.errors.str();
  EXPECT_EQ(std::count(s.fulfilled.begin(), s.fulfilled.end(), 1), depth + 1);
  susp::expect_parked_and_resumed("deep event chain");
  weft_stats_t st = weft_test::stats();
  if (workers() == 1) {
    // Every level but the last waits before its child can run.
    EXPECT_GE(st.suspensions, static_cast<uint64_t>(depth)) << susp::stats_text(st);
  }
}

// --- 6. tied and untied tasks ------------------------------------------------------------------------
// Batches of waiting tasks; the tasks that release them are created after them and run wherever.
// Three ways to wait: an event, a taskwait for a child that waits on an event, a taskyield.
struct placement {
  std::atomic<int> trials{0}, moved{0}, bad{0};
  weft_test::error_log errors;
};

void run_placement_trials(unsigned flags, int trials, placement& pl) {
  const int batch = 16;
  for (int done = 0; done < trials; done += batch) {
    std::vector<weft_event_t*> ev(batch);
    for (auto& e : ev) e = weft_event_create(1);
    for (int i = 0; i < batch; ++i) {
      weft_event_t* e = ev[i];
      int kind = i % 3;
      spawn_flags(flags, [&pl, e, kind] {
        int before = weft_worker_id();
        if (kind == 0) {
          if (weft_event_wait(e) != WEFT_OK) pl.errors.add("event wait failed");
        } else if (kind == 1) {
          weft::spawn([e] { weft_event_wait(e); });
          if (weft_taskwait() != WEFT_OK) pl.errors.add("taskwait failed");
        } else {
          while (weft_event_test(e) != 1)
            if (weft_taskyield() != WEFT_OK) pl.errors.add("taskyield failed");
        }
        int after = weft_worker_id();
        if (before < 0 || after < 0) pl.errors.add("weft_worker_id() is -1 inside a task");
        pl.trials++;
        if (before != after) pl.moved++;
      });
    }
    for (int i = batch - 1; i >= 0; --i) {
      weft_event_t* e = ev[i];
      weft::spawn([e, i] {
        weft_test::spin(200u * static_cast<unsigned>(i % 4));
        weft_event_fulfill(e);
      });
    }
    weft::taskwait();
    for (auto& e : ev) weft_event_destroy(e);
  }
}

TEST_P(Suspension, TiedTasksResumeOnTheirWorker) {
  const int trials = weft_test::scaled(1500, 150);
  placement pl;
  run_placement_trials(WEFT_TASK_TIED, trials, pl);
  EXPECT_EQ(pl.errors.count(), 0) << pl.errors.str();
  EXPECT_GE(pl.trials.load(), trials);
  EXPECT_EQ(pl.moved.load(), 0) << "of " << pl.trials.load() << " WEFT_TASK_TIED tasks that waited, "
                                << pl.moved.load() << " resumed on another worker than the one they started on";
  std::printf("[ info     ] tied, %d workers: %d trials, %d resumed elsewhere\n", workers(), pl.trials.load(),
              pl.moved.load());
}

TEST_P(Suspension, UntiedTasksMayResumeElsewhere) {
  const int trials = weft_test::scaled(1500, 150);
  placement pl;
  run_placement_trials(WEFT_TASK_DEFAULT, trials, pl);
  EXPECT_EQ(pl.errors.count(), 0) << pl.errors.str();
  EXPECT_GE(pl.trials.load(), trials);
  if (workers() == 1) {
    EXPECT_EQ(pl.moved.load(), 0);
  }
  // Not required: printed only.
  std::printf("[ info     ] untied, %d workers: %d trials, %d resumed on another worker\n", workers(),
              pl.trials.load(), pl.moved.load());
}

// A tied task whose waits are nested (a taskwait whose child runs on the tied task's stack and
// waits) stays on its worker too, and so does the whole stack it runs on.
TEST_P(Suspension, TiedTaskNestedWaits) {
  const int n = weft_test::scaled(200, 40);
  std::atomic<int> moved{0}, ran{0};
  std::vector<weft_event_t*> ev(n);
  for (auto& e : ev) e = weft_event_create(1);
  for (int i = 0; i < n; ++i) {
    weft_event_t* e = ev[i];
    spawn_flags(WEFT_TASK_TIED, [&moved, &ran, e] {
      int before = weft_worker_id();
      spawn_flags(WEFT_TASK_TIED, [&moved, e] {
        int b = weft_worker_id();
        weft_event_wait(e);
        if (weft_worker_id() != b) moved++;
      });
      weft::spawn([e] { weft_event_wait(e); });
      weft::taskwait();
      if (weft_worker_id() != before) moved++;
      ran++;
    });
  }
  for (int i = 0; i < n; ++i) {
    weft_event_t* e = ev[i];
    weft::spawn([e] { weft_event_fulfill(e); });
  }
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(ran.load(), n);
  EXPECT_EQ(moved.load(), 0);
  for (auto& e : ev) weft_event_destroy(e);
}

// --- 7. taskyield ----------------------------------------------------------------------------------------
// Each task arrives, then yields until every task has arrived: on one worker this only ends if a
// yield lets the tasks that have not started yet run.
TEST_P(Suspension, TaskyieldUntilAllArrived) {
  const int n = weft_test::scaled(300, 50);
  weft_test::watchdog dog("TaskyieldUntilAllArrived (livelock: a yield that never lets the others run)", 60);
  std::atomic<int> arrived{0}, left{0}, bad{0};
  std::atomic<long> yields{0};
  for (int i = 0; i < n; ++i)
    weft::spawn([&, n] {
      arrived++;
      while (arrived.load() < n) {
        if (weft_taskyield() != WEFT_OK) bad++;
        yields++;
      }
      left++;
    });
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(arrived.load(), n);
  EXPECT_EQ(left.load(), n);
  EXPECT_EQ(bad.load(), 0);
  weft_stats_t st = weft_test::stats();
  std::printf("[ info     ] %d workers: %ld yields; %s\n", workers(), yields.load(), susp::stats_text(st).c_str());
  EXPECT_EQ(st.resumes, st.suspensions) << susp::stats_text(st);
  if (workers() == 1) {
    EXPECT_GT(st.suspensions, 0u) << susp::stats_text(st);
  }
}

// Yield rounds: every task does R rounds of (arrive at round r, yield until all arrived at r). From
// round 1 on, the tasks still to arrive are not new tasks but contexts that yielded earlier: a yield
// must let them run too (on one worker nothing else can).
TEST_P(Suspension, TaskyieldRounds) {
  const int n = 24, rounds = weft_test::scaled(50, 5);
  weft_test::watchdog dog("TaskyieldRounds (livelock: a yield that never lets the other yielded tasks run)", 30);
  std::vector<std::atomic<int>> arrived(rounds);
  std::atomic<int> finished{0}, out_of_order{0};
  for (int i = 0; i < n; ++i)
    weft::spawn([&, n, rounds] {
      for (int r = 0; r < rounds; ++r) {
        if (r > 0 && arrived[r - 1].load() != n) out_of_order++;
        arrived[r]++;
        while (arrived[r].load() < n) weft_taskyield();
      }
      finished++;
    });
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(finished.load(), n);
  EXPECT_EQ(out_of_order.load(), 0);
}

// The main program yields until tasks it created have run: on one worker they can only run inside
// its weft_taskyield.
TEST_P(Suspension, MainProgramYields) {
  const int n = 100;
  std::atomic<int> ran{0};
  for (int i = 0; i < n; ++i) weft::spawn([&ran] { ran++; });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (ran.load() < n && std::chrono::steady_clock::now() < deadline) ASSERT_EQ(weft_taskyield(), WEFT_OK);
  EXPECT_EQ(ran.load(), n) << "weft_taskyield in the main program never let its ready children run";
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
}

// --- undeferred children wait for predecessors that wait on events ------------------------------------
TEST_P(Suspension, UndeferredChildWaitsForParkedPredecessor) {
  const int parents = weft_test::scaled(100, 20);
  weft_test::error_log errors;
  std::vector<weft_event_t*> ev(parents);
  for (auto& e : ev) e = weft_event_create(1);
  std::atomic<int> checked{0};
  for (int i = 0; i < parents; ++i) {
    weft_event_t* e = ev[i];
    weft::spawn([&errors, &checked, e] {
      long x = 0;
      std::atomic<uint64_t> pred_end{0}, undeferred_start{0};
      std::thread::id undeferred_thread;
      // The predecessor waits for the event, which a sibling created after it fulfils.
      weft::spawn(
          [&x, &pred_end, e] {
            weft_event_wait(e);
            x = 1;
            pred_end = susp::stamp();
          },
          weft::out(x));
      weft::spawn([e] { weft_event_fulfill(e); });
      bool ran = false;
      spawn_flags(
          WEFT_TASK_UNDEFERRED,
          [&] {
            undeferred_start = susp::stamp();
            undeferred_thread = std::this_thread::get_id();
            if (x != 1) errors.add("undeferred task ran before its predecessor wrote x");
            ran = true;
          },
          weft::in(x));
      if (!ran) errors.add("submit of an undeferred task returned before it ran");
      if (undeferred_start.load() < pred_end.load()) errors.add("undeferred task started before its predecessor ended");
      if (undeferred_thread != std::this_thread::get_id())
        errors.add("undeferred task ran on another thread than the one its submit returned on");
      weft::taskwait();
      checked++;
    });
  }
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(checked.load(), parents);
  EXPECT_EQ(errors.count(), 0) << errors.str();
  for (auto& e : ev) weft_event_destroy(e);
}

// --- a taskwait runs only its own children on its stack -----------------------------------------------
// A waits (taskwait) for child C, which waits on e1. B, unrelated, fulfils e1 and then waits on e2,
// which A fulfils only after its taskwait returned. If B ran on A's stack (above A's taskwait), A
// could not return before B, and B waits for A: a deadlock. Each round is a fresh pair.
TEST_P(Suspension, TaskwaitDoesNotRunUnrelatedTasksOnItsStack) {
  const int rounds = weft_test::scaled(200, 20);
  weft_test::watchdog dog("TaskwaitDoesNotRunUnrelatedTasksOnItsStack", 60);
  for (int r = 0; r < rounds; ++r) {
    weft_event_t* e1 = weft_event_create(1);
    weft_event_t* e2 = weft_event_create(1);
    std::atomic<int> a_done{0}, b_done{0};
    weft::spawn([e1, e2, &b_done] {  // B: created first
      weft_event_fulfill(e1);
      weft_event_wait(e2);
      b_done = 1;
    });
    weft::spawn([e1, e2, &a_done] {  // A
      weft::spawn([e1] { weft_event_wait(e1); });
      weft::taskwait();
      weft_event_fulfill(e2);
      a_done = 1;
    });
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    ASSERT_EQ(a_done.load() + b_done.load(), 2);
    weft_event_destroy(e1);
    weft_event_destroy(e2);
  }
}

// --- 10. statistics ------------------------------------------------------------------------------------
TEST_P(Suspension, StatsCountParking) {
  // Tasks that never wait, on one worker: nothing is set aside but a throttled producer (the main
  // program yields when it creates more ready tasks than WEFT_MAX_READY; 100 stays below it).
  for (int i = 0; i < 100; ++i) weft::spawn([] {});
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  weft_stats_t quiet = weft_test::stats();
  if (workers() == 1) {
    EXPECT_LE(quiet.suspensions, quiet.throttle_waits) << "no task waited: " << susp::stats_text(quiet);
  }
  EXPECT_EQ(quiet.resumes, quiet.suspensions) << susp::stats_text(quiet);

  // One task waits on an event that a foreign thread fulfils only once something was set aside
  // (the waiting task, or the main program's taskwait for it): parking is certain.
  ASSERT_EQ(weft_reset_stats(), WEFT_OK);
  weft_event_t* e = weft_event_create(1);
  weft::spawn([e] { weft_event_wait(e); });
  std::atomic<bool> saw_suspension{false};
  std::thread th([&] {
    saw_suspension = susp::eventually(
        [] {
          weft_stats_t now{};
          return weft_get_stats(&now) == WEFT_OK && now.suspensions > 0;
        },
        30);
    weft_event_fulfill(e);
  });
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  th.join();
  EXPECT_TRUE(saw_suspension.load()) << "no suspension counted while a task waited on an unfulfilled event";
  weft_event_destroy(e);
  susp::expect_parked_and_resumed("one wait");
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.tasks_created, 1u) << susp::stats_text(s);
  std::printf("[ info     ] %d workers: %s\n", workers(), susp::stats_text(s).c_str());

  // weft_reset_stats clears the counters of suspensions and resumes (fibers counts stacks made).
  ASSERT_EQ(weft_reset_stats(), WEFT_OK);
  weft_stats_t z = weft_test::stats();
  EXPECT_EQ(z.suspensions, 0u);
  EXPECT_EQ(z.resumes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Workers, Suspension, ::testing::Values(1, 2, 8), susp::worker_name);

}  // namespace
