// Tracing (WEFT_TRACE): the file holds exactly what ran — counts checked against known graphs and
// against the runtime's own statistics, times in order, labels, intervals from foreign threads,
// persistent-graph rounds, dropped events reported, and tracing off leaves nothing behind.
#include <gtest/gtest.h>
#include <unistd.h>
#include <weft/weft.h>

#include <weft/weft.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "random.h"
#include "trace_file.h"
#include "weft_test.h"

namespace {

using weft_test::read_trace;
using weft_test::trace_file;

enum : std::uint16_t {
  ev_create = 1, ev_submit, ev_ready, ev_start, ev_end, ev_suspend, ev_resume, ev_edge, ev_label, ev_idle_begin,
  ev_idle_end, ev_steal, ev_poll, ev_interval_begin, ev_interval_end, ev_mark, ev_graph_instance, ev_graph_edge
};

std::string trace_path(const char* name) {
  return "/tmp/weft_trace_test_" + std::to_string(getpid()) + "_" + name + ".trace";
}

// Runs body on a runtime tracing into a fresh file, stops the runtime, and returns the file read.
template <class Body>
trace_file traced_run(const char* name, weft_test::runtime_config::vars vars, Body&& body) {
  std::string path = trace_path(name);
  std::remove(path.c_str());
  vars.push_back({"WEFT_TRACE", path});
  {
    weft_test::runtime_config rt(vars);
    EXPECT_TRUE(rt.ok());
    EXPECT_EQ(weft_trace_enabled(), 1);
    body();
  }
  trace_file t = read_trace(path);
  EXPECT_TRUE(t.ok) << t.error;
  std::remove(path.c_str());
  return t;
}

long cells[64];

void chain_body(void* args) { cells[*static_cast<int*>(args) % 64] += 1; }
void empty_body(void*) {}

void spawn(int i, weft_dep_type type, const void* address) {
  weft_task_t* t = weft_task_create(&chain_body, &i, sizeof i, WEFT_TASK_DEFAULT);
  ASSERT_NE(t, nullptr);
  if (address) {
    ASSERT_EQ(weft_task_depend(t, type, address, sizeof(long)), WEFT_OK);
  }
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
}

// Every event of a worker's buffer comes no earlier than the one before it.
void expect_times_in_order(const trace_file& t) {
  std::map<std::uint32_t, std::uint64_t> last;
  for (const auto& e : t.events) {
    if (e.buffer == 0xFFFFFFFFu) continue;
    EXPECT_GE(e.time, last[e.buffer]) << "worker " << e.buffer;
    last[e.buffer] = e.time;
    EXPECT_LE(e.time, t.end_ns);
  }
}

TEST(Trace, ChainOnOneWorkerHasExactCounts) {
  constexpr int n = 200;
  trace_file t = traced_run("chain", {{"WEFT_NUM_THREADS", "1"}, {"WEFT_MAX_TASKS", "1000"}}, [] {
    // One worker with a window above n: the main program creates every task before any runs, so
    // no edge is pruned.
    for (int i = 0; i < n; ++i) spawn(i, WEFT_DEP_INOUT, &cells[0]);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
  });
  EXPECT_EQ(t.version, 1u);
  EXPECT_EQ(t.workers, 1u);
  EXPECT_EQ(t.buffers, 2u);
  EXPECT_EQ(t.dropped, 0u);
  EXPECT_EQ(t.count(ev_create), std::size_t{n});
  EXPECT_EQ(t.count(ev_submit), std::size_t{n});
  EXPECT_EQ(t.count(ev_ready), std::size_t{n});
  EXPECT_EQ(t.count(ev_start), std::size_t{n});
  EXPECT_EQ(t.count(ev_end), std::size_t{n});
  EXPECT_EQ(t.count(ev_edge), std::size_t{n - 1});
  expect_times_in_order(t);
  // Task i's successor is task i+1: the edges form one chain through the creation order.
  std::vector<std::uint64_t> created;
  for (const auto& e : t.events)
    if (e.type == ev_create) {
      created.push_back(e.a);
      EXPECT_EQ(e.b, 0u) << "children of the main program have no parent task";
      EXPECT_TRUE(t.kinds.count(e.c));
      EXPECT_NE(t.kinds.at(e.c).name.find("chain_body"), std::string::npos) << t.kinds.at(e.c).name;
      EXPECT_EQ(t.kinds.at(e.c).category, 0);
    }
  int k = 0;
  for (const auto& e : t.events)
    if (e.type == ev_edge) {
      ++k;
      // Descriptors are recycled only after their task is gone; with 200 live tasks none is.
      EXPECT_EQ(e.a, created[k - 1]);
      EXPECT_EQ(e.b, created[k]);
    }
}

class TraceWorkers : public ::testing::TestWithParam<int> {};

// On random graphs with several workers the trace agrees with the runtime's own counters exactly:
// every created task, redirect node and edge is there, and every task that ran started and ended
// once, after it was made ready.
TEST_P(TraceWorkers, AgreesWithStatisticsOnRandomGraphs) {
  const int workers = GetParam();
  weft_stats_t stats{};
  trace_file t = traced_run("random", {{"WEFT_NUM_THREADS", std::to_string(workers)}}, [&] {
    ASSERT_EQ(weft_reset_stats(), WEFT_OK);
    weft_test::rng r(0x7ace0000u + static_cast<unsigned>(workers));
    for (int graph = 0; graph < weft_test::scaled(20); ++graph) {
      for (int i = 0; i < 300; ++i) {
        static const weft_dep_type types[] = {WEFT_DEP_IN, WEFT_DEP_OUT, WEFT_DEP_INOUT, WEFT_DEP_INOUTSET,
                                              WEFT_DEP_MUTEXINOUTSET};
        weft_task_t* task = weft_task_create(&empty_body, nullptr, 0, WEFT_TASK_DEFAULT);
        ASSERT_NE(task, nullptr);
        int accesses = static_cast<int>(r.range(0, 3));
        for (int a = 0; a < accesses; ++a)
          ASSERT_EQ(weft_task_depend(task, types[r.range(0, 4)], &cells[r.range(0, 7)], sizeof(long)), WEFT_OK);
        ASSERT_EQ(weft_task_submit(task), WEFT_OK);
      }
      ASSERT_EQ(weft_taskwait(), WEFT_OK);
    }
    stats = weft_test::stats();
  });
  std::size_t redirects = 0, tasks = 0;
  for (const auto& e : t.events)
    if (e.type == ev_create) ++((e.d & 2) ? redirects : tasks);
  EXPECT_EQ(tasks, stats.tasks_created);
  EXPECT_EQ(redirects, stats.redirect_nodes);
  EXPECT_EQ(t.count(ev_edge), stats.edges_created);
  EXPECT_EQ(t.count(ev_start), stats.tasks_completed);
  EXPECT_EQ(t.count(ev_end), stats.tasks_completed);
  EXPECT_EQ(t.count(ev_steal), stats.steals);
  expect_times_in_order(t);

  // Each task: ready no later than its start, start no later than its end (one clock for all).
  std::map<std::uint64_t, std::uint64_t> ready_at, started_at;
  std::size_t runs = 0;
  // Buffers hold one worker each; times put the workers' events in one order.
  std::vector<weft_test::trace_event> by_time = t.events;
  std::stable_sort(by_time.begin(), by_time.end(), [](const auto& x, const auto& y) { return x.time < y.time; });
  for (const auto& e : by_time) {
    if (e.type == ev_create) ready_at.erase(e.a), started_at.erase(e.a);
    if (e.type == ev_ready) ready_at[e.a] = e.time;
    if (e.type == ev_start) {
      ASSERT_TRUE(ready_at.count(e.a)) << "a task started without being made ready";
      started_at[e.a] = e.time;
    }
    if (e.type == ev_end) {
      ASSERT_TRUE(started_at.count(e.a)) << "a task ended without starting";
      ++runs;
    }
  }
  EXPECT_EQ(runs, stats.tasks_completed);

  // Idle intervals alternate begin, end on each worker.
  std::map<std::uint32_t, bool> idle;
  for (const auto& e : t.events) {
    if (e.type == ev_idle_begin) {
      EXPECT_FALSE(idle[e.buffer]);
      idle[e.buffer] = true;
    }
    if (e.type == ev_idle_end) {
      EXPECT_TRUE(idle[e.buffer]);
      idle[e.buffer] = false;
    }
  }
  for (const auto& [w, open] : idle) EXPECT_FALSE(open) << "worker " << w << " ends the trace idle";
}

INSTANTIATE_TEST_SUITE_P(Workers, TraceWorkers, ::testing::Values(1, 2, 4),
                         [](const ::testing::TestParamInfo<int>& p) { return "w" + std::to_string(p.param); });

TEST(Trace, LabelsKindsAndIntervalsFromAnyThread) {
  std::uint32_t comm = 0, user = 0;
  trace_file t = traced_run("labels", {{"WEFT_NUM_THREADS", "2"}}, [&] {
    comm = weft_trace_kind("MPI_Isend", WEFT_TRACE_COMMUNICATION);
    user = weft_trace_kind("phase", WEFT_TRACE_USER);
    ASSERT_NE(comm, 0u);
    ASSERT_NE(user, 0u);
    EXPECT_EQ(weft_trace_kind("MPI_Isend", WEFT_TRACE_COMMUNICATION), comm) << "the same name, the same kind";
    EXPECT_EQ(weft_trace_kind(nullptr, WEFT_TRACE_USER), 0u);
    EXPECT_EQ(weft_trace_kind("x", static_cast<weft_trace_category>(9)), 0u);
    weft_trace_begin(comm, 42, 1024);  // posted by the main program...
    std::thread other([comm] { weft_trace_end(comm, 42, 1024); });  // ...completed by another thread
    other.join();
    weft_trace_mark(user, 7);
    int i = 1;
    weft_task_t* task = weft_task_create(&chain_body, &i, sizeof i, WEFT_TASK_DEFAULT);
    ASSERT_EQ(weft_task_set_label(task, "relabelled"), WEFT_OK);
    ASSERT_EQ(weft_task_submit(task), WEFT_OK);
    EXPECT_EQ(weft_task_set_label(task, "late"), WEFT_ERR_ALREADY_SUBMITTED);
    EXPECT_EQ(weft_task_set_label(nullptr, "x"), WEFT_ERR_INVALID_ARGUMENT);
    weft::spawn([] {}, weft::label("cpp-labelled"));
    weft::taskwait();
  });
  ASSERT_NE(t.kind_named("MPI_Isend"), 0u);
  EXPECT_EQ(t.kinds[t.kind_named("MPI_Isend")].category, 1);
  EXPECT_EQ(t.kinds[t.kind_named("phase")].category, 3);
  EXPECT_NE(t.kind_named("relabelled"), 0u);
  EXPECT_NE(t.kind_named("cpp-labelled"), 0u);
  EXPECT_EQ(t.count(ev_label), 2u);
  int begins = 0, ends_foreign = 0, marks = 0;
  for (const auto& e : t.events) {
    if (e.type == ev_interval_begin && e.c == comm && e.a == 42 && e.b == 1024) begins += e.buffer == 0;
    if (e.type == ev_interval_end && e.c == comm && e.a == 42) ends_foreign += e.buffer == 0xFFFFFFFFu;
    if (e.type == ev_mark && e.c == user && e.a == 7) ++marks;
  }
  EXPECT_EQ(begins, 1);
  EXPECT_EQ(ends_foreign, 1) << "the end comes from a thread that is not a worker";
  EXPECT_EQ(marks, 1);
}

// One loop iteration of the graph tests: task i reads cell i-1 (around a ring) and updates cell i.
void create_ring_step(int width) {
  for (int i = 0; i < width; ++i) {
    weft_task_t* task = weft_task_create(&chain_body, &i, sizeof i, WEFT_TASK_DEFAULT);
    ASSERT_EQ(weft_task_depend(task, WEFT_DEP_IN, &cells[(i + width - 1) % width], sizeof(long)), WEFT_OK);
    ASSERT_EQ(weft_task_depend(task, WEFT_DEP_INOUT, &cells[i], sizeof(long)), WEFT_OK);
    ASSERT_EQ(weft_task_submit(task), WEFT_OK);
  }
}

TEST(Trace, PersistentGraphRoundsAndEdges) {
  constexpr int width = 6, iterations = 5;
  trace_file t = traced_run("graph", {{"WEFT_NUM_THREADS", "1"}}, [] {
    ASSERT_EQ(weft_graph_begin(), WEFT_OK);
    for (int it = 0; it < iterations; ++it) {
      ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
      create_ring_step(width);
    }
    ASSERT_EQ(weft_graph_end(), WEFT_OK);
  });
  std::map<std::uint64_t, int> per_round;
  std::set<std::uint16_t> serials;
  for (const auto& e : t.events)
    if (e.type == ev_graph_instance) {
      ++per_round[e.b];
      serials.insert(e.d);
      EXPECT_LT(e.c, static_cast<std::uint32_t>(width));
    }
  ASSERT_EQ(per_round.size(), std::size_t{iterations});
  for (const auto& [round, n] : per_round) EXPECT_EQ(n, width) << "round " << round;
  ASSERT_EQ(serials.size(), 1u);
  std::size_t replayed = 0;
  for (const auto& e : t.events) replayed += e.type == ev_create && (e.d & 4);
  EXPECT_EQ(replayed, std::size_t{width * (iterations - 1)});
  // Round 0 ran through the dependency domain on one worker (nothing pruned): its edges are the
  // recording's edges within a round.
  std::size_t same = 0, cyclic = 0;
  for (const auto& e : t.events)
    if (e.type == ev_graph_edge) {
      EXPECT_EQ(e.a, *serials.begin());
      ++(e.c ? cyclic : same);
    }
  EXPECT_EQ(same, t.count(ev_edge));
  EXPECT_GT(cyclic, 0u);
  EXPECT_EQ(t.count(ev_start), std::size_t{width * iterations});
}

// One worker runs taskiter rounds inline (no queue): each replayed task is still traced as made
// ready, after the task before it ended and before it starts.
TEST(Trace, InlineTaskiterRoundsMarkEachTaskReady) {
  constexpr int width = 6, iterations = 5;
  trace_file t = traced_run("inline", {{"WEFT_NUM_THREADS", "1"}}, [] {
    weft_graph_options_t o{};
    o.mode = WEFT_GRAPH_TASKITER;
    o.iterations = iterations;
    ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK);
    ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
    create_ring_step(width);
    ASSERT_EQ(weft_graph_end(), WEFT_OK);
  });
  std::map<std::uint64_t, std::uint64_t> ready_at;
  std::uint64_t last_end = 0;
  std::size_t starts = 0;
  for (const auto& e : t.events) {  // one worker: one buffer, in order
    if (e.type == ev_create) ready_at.erase(e.a);
    if (e.type == ev_ready) ready_at[e.a] = e.time;
    if (e.type == ev_start) {
      ++starts;
      ASSERT_TRUE(ready_at.count(e.a)) << "task start " << starts << " without being made ready";
      EXPECT_GE(ready_at[e.a], last_end) << "task start " << starts << ": ready before the task before it ended";
    }
    if (e.type == ev_end) last_end = e.time;
  }
  EXPECT_EQ(starts, std::size_t{width * iterations});
}

TEST(Trace, SuspendedTasksResume) {
  trace_file t = traced_run("suspend", {{"WEFT_NUM_THREADS", "2"}}, [] {
    for (int p = 0; p < 20; ++p)
      weft::spawn([] {
        for (int c = 0; c < 8; ++c) weft::spawn([] { weft_test::spin(20000); });
        weft::taskwait();
      });
    weft::taskwait();
  });
  std::map<std::uint64_t, int> balance;
  for (const auto& e : t.events) {
    if (e.type == ev_suspend) ++balance[e.a];
    if (e.type == ev_resume) --balance[e.a];
  }
  for (const auto& [task, b] : balance) EXPECT_EQ(b, 0) << "every suspension is followed by a resume";
  EXPECT_EQ(t.count(ev_end), 20u * 9u);
}

TEST(Trace, FullBufferDropsAndSaysSo) {
  testing::internal::CaptureStderr();
  trace_file t = traced_run("dropped", {{"WEFT_NUM_THREADS", "1"}, {"WEFT_TRACE_BUFFER", "64K"}}, [] {
    for (int i = 0; i < 20000; ++i) spawn(i, WEFT_DEP_INOUT, nullptr);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
  });
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_GT(t.dropped, 0u);
  std::uint64_t sum = 0;
  for (auto d : t.buffer_dropped) sum += d;
  EXPECT_EQ(sum, t.dropped);
  EXPECT_EQ(t.events.size(), 65536u / 32u) << "a full buffer keeps its oldest events";
  EXPECT_NE(err.find("lost"), std::string::npos) << err;
  EXPECT_NE(err.find("WEFT_TRACE_BUFFER"), std::string::npos) << err;
}

// Hardware counters: recorded per task where the machine has them (PAPI installed and the counter
// exposed), else one message naming the variable and the reason, and the trace goes on without.
TEST(Trace, CountersAreRecordedOrExplained) {
  testing::internal::CaptureStderr();
  trace_file t = traced_run("counters", {{"WEFT_NUM_THREADS", "1"}, {"WEFT_TRACE_COUNTERS", "PAPI_TOT_INS"}}, [] {
    for (int i = 0; i < 50; ++i) spawn(i, WEFT_DEP_INOUT, &cells[0]);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
  });
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(t.count(ev_end), 50u);
  std::uint32_t kind = t.kind_named("counter:PAPI_TOT_INS");
  std::size_t counted = 0;
  for (const auto& e : t.events)
    if (e.type == 19) {
      EXPECT_EQ(e.c, kind);
      EXPECT_GT(e.b, 0u) << "a task body executes instructions";
      ++counted;
    }
  if (counted == 0) {
    EXPECT_NE(err.find("WEFT_TRACE_COUNTERS"), std::string::npos) << "no counts and no message: " << err;
  } else {
    EXPECT_EQ(counted, 50u);
    EXPECT_EQ(t.kinds[kind].category, 4);
  }
}

TEST(Trace, OffRecordsNothing) {
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "1"}});
  ASSERT_TRUE(rt.ok());
  EXPECT_EQ(weft_trace_enabled(), 0);
  EXPECT_EQ(weft_trace_kind("MPI_Isend", WEFT_TRACE_COMMUNICATION), 0u);
  weft_trace_begin(1, 1, 1);  // harmless
  weft_trace_mark(1, 1);
  int i = 0;
  weft_task_t* task = weft_task_create(&chain_body, &i, sizeof i, WEFT_TASK_DEFAULT);
  EXPECT_EQ(weft_task_set_label(task, "ignored"), WEFT_OK);
  EXPECT_EQ(weft_task_submit(task), WEFT_OK);
  EXPECT_EQ(weft_taskwait(), WEFT_OK);
}

TEST(Trace, BadSettingsAreNamed) {
  testing::internal::CaptureStderr();
  for (const auto& n : weft_test::runtime_variables()) unsetenv(n.c_str());
  setenv("WEFT_TRACE", trace_path("bad").c_str(), 1);
  setenv("WEFT_TRACE_BUFFER", "lots", 1);
  EXPECT_EQ(weft_init(), WEFT_ERR_INVALID_ARGUMENT);
  unsetenv("WEFT_TRACE_BUFFER");
  unsetenv("WEFT_TRACE");
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("WEFT_TRACE_BUFFER='lots'"), std::string::npos) << err;
}

TEST(Trace, UnwritableFileIsReportedNotFatal) {
  testing::internal::CaptureStderr();
  {
    weft_test::runtime_config rt(
        weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "1"}, {"WEFT_TRACE", "/nonexistent-dir/x.trace"}});
    ASSERT_TRUE(rt.ok());
    spawn(0, WEFT_DEP_INOUT, &cells[0]);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
  }
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("/nonexistent-dir/x.trace"), std::string::npos) << err;
}

}  // namespace
