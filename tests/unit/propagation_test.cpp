// Priority propagation toward predecessors (weft_set_priority_propagation), the engine side of the
// communication-aware policies of task-aware MPI. Every task here sits behind a gate task, so that
// none is ready while the graph is built; each body records the priority it runs at.
//  - On random DAGs, the priorities equal Algorithm 1 computed by hand (depth) or its binary form
//    (path) over the same edges.
//  - A marked send-task and its predecessor run before unrelated ready work.
//  - none: every task at 0. detect: send-tasks recognised by profile, both when they are created
//    after the report and, by an idle worker, when they were waiting already.
#include <weft/weft.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "weft_test.h"

namespace {

struct run_log {
  std::vector<int> priority;  // per task id, the level it ran at (-1: did not run)
  std::vector<int> order;     // ids in run order
  std::mutex order_lock;
  std::atomic<int> ran{0};
};

struct body_args {
  run_log* log;
  int id;
  int report;  // call weft_task_report_send from the body
};

void record_body(void* p) {
  auto* a = static_cast<body_args*>(p);
  a->log->priority[static_cast<std::size_t>(a->id)] = weft_task_get_priority(weft_task_self());
  {
    std::lock_guard<std::mutex> hold(a->log->order_lock);
    a->log->order.push_back(a->id);
  }
  if (a->report) weft_task_report_send(weft_task_self());
  a->log->ran.fetch_add(1, std::memory_order_relaxed);
}
// A second function: the profile of send-tasks in the detect tests.
void send_body(void* p) { record_body(p); }

void gate_body(void* p) { weft_event_wait(*static_cast<weft_event_t**>(p)); }

// The gate: a task writing `gate_word` that waits for `event` (fulfilled once the graph is built).
void submit_gate(weft_event_t** event, const void* gate_word) {
  weft_task_t* g = weft_task_create(&gate_body, event, sizeof *event, 0);
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(weft_task_depend(g, WEFT_DEP_OUT, gate_word, 1), WEFT_OK);
  ASSERT_EQ(weft_task_submit(g), WEFT_OK);
}

weft_task_t* make(weft_task_fn fn, run_log& log, int id, std::initializer_list<const void*> inputs,
                  const void* output, int priority = 0, int report = 0) {
  body_args a{&log, id, report};
  weft_task_t* t = weft_task_create(fn, &a, sizeof a, 0);
  EXPECT_NE(t, nullptr);
  for (const void* in : inputs) EXPECT_EQ(weft_task_depend(t, WEFT_DEP_IN, in, 1), WEFT_OK);
  if (output) {
    EXPECT_EQ(weft_task_depend(t, WEFT_DEP_OUT, output, 1), WEFT_OK);
  }
  if (priority) {
    EXPECT_EQ(weft_task_set_priority(t, priority), WEFT_OK);
  }
  return t;
}

class Propagation : public ::testing::Test {
 protected:
  void start(int workers, int mode) {
    rt_ = std::make_unique<weft_test::runtime_config>(
        weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", std::to_string(workers)}, {"WEFT_MAX_PRIORITY", "8"}});
    ASSERT_TRUE(rt_->ok());
    ASSERT_EQ(weft_set_priority_propagation(mode), WEFT_OK);
    ASSERT_EQ(weft_priority_propagation(), mode);
    top_ = weft_max_priority();
  }
  void TearDown() override {
    rt_.reset();
    weft_set_priority_propagation(WEFT_PRIORITY_AS_GIVEN);
  }
  std::unique_ptr<weft_test::runtime_config> rt_;
  int top_ = 0;
};

// A DAG over n tasks: preds[i] lists earlier tasks (each task reads their outputs).
struct dag {
  int n = 0;
  std::vector<std::vector<int>> preds;
  std::vector<bool> marked;
};

dag random_dag(std::mt19937& rng) {
  dag d;
  d.n = std::uniform_int_distribution<int>(2, 40)(rng);
  d.preds.resize(static_cast<std::size_t>(d.n));
  d.marked.resize(static_cast<std::size_t>(d.n));
  for (int i = 0; i < d.n; ++i) {
    // Mostly up to 3 predecessors; one task in 8 up to 30 (more than one report block holds).
    int most = std::uniform_int_distribution<int>(0, 7)(rng) == 0 ? 30 : 3;
    int k = i == 0 ? 0 : std::uniform_int_distribution<int>(0, std::min(i, most))(rng);
    std::vector<int>& p = d.preds[static_cast<std::size_t>(i)];
    while (static_cast<int>(p.size()) < k) {
      int j = std::uniform_int_distribution<int>(0, i - 1)(rng);
      if (std::find(p.begin(), p.end(), j) == p.end()) p.push_back(j);
    }
    d.marked[static_cast<std::size_t>(i)] = std::uniform_int_distribution<int>(0, 9)(rng) == 0;
  }
  return d;
}

// Algorithm 1 (by hand, from the successors): a send-task gets top; another task the highest
// level among its successors minus one, 0 without successors or when that is 0. path: the binary
// form (1 when a send-task is reachable).
std::vector<int> algorithm1(const dag& d, int top, bool path) {
  std::vector<std::vector<int>> succ(static_cast<std::size_t>(d.n));
  for (int i = 0; i < d.n; ++i)
    for (int p : d.preds[static_cast<std::size_t>(i)]) succ[static_cast<std::size_t>(p)].push_back(i);
  std::vector<int> level(static_cast<std::size_t>(d.n), 0);
  for (int i = d.n - 1; i >= 0; --i) {  // successors have larger ids
    auto u = static_cast<std::size_t>(i);
    if (d.marked[u]) {
      level[u] = path ? 1 : top;
      continue;
    }
    int m = 0;
    for (int s : succ[u]) m = std::max(m, level[static_cast<std::size_t>(s)]);
    level[u] = path ? m : std::max(0, m - 1);
  }
  return level;
}

void check_random_graphs(int mode, int top) {
  std::mt19937 rng(20261123u + static_cast<unsigned>(mode));
  int graphs = weft_test::scaled(400, 20);
  for (int g = 0; g < graphs; ++g) {
    dag d = random_dag(rng);
    run_log log;
    log.priority.assign(static_cast<std::size_t>(d.n), -1);
    std::vector<char> words(static_cast<std::size_t>(d.n) + 1);
    const void* gate_word = &words.back();
    weft_event_t* event = weft_event_create(1);
    submit_gate(&event, gate_word);
    for (int i = 0; i < d.n; ++i) {
      auto u = static_cast<std::size_t>(i);
      weft_task_t* t = make(&record_body, log, i, {gate_word}, &words[u], d.marked[u] ? 1 : 0);
      for (int p : d.preds[u]) ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &words[static_cast<std::size_t>(p)], 1), WEFT_OK);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    }
    ASSERT_EQ(weft_event_fulfill(event), WEFT_OK);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    weft_event_destroy(event);
    std::vector<int> expected = algorithm1(d, top, mode == WEFT_PRIORITY_PATH);
    if (log.priority != expected) {
      std::string s = "graph " + std::to_string(g) + " (" + std::to_string(d.n) + " tasks):\n";
      for (int i = 0; i < d.n; ++i) {
        auto u = static_cast<std::size_t>(i);
        s += "  task " + std::to_string(i) + (d.marked[u] ? " (send)" : "") + " preds";
        for (int p : d.preds[u]) s += " " + std::to_string(p);
        s += ": ran at " + std::to_string(log.priority[u]) + ", Algorithm 1 gives " + std::to_string(expected[u]) + "\n";
      }
      FAIL() << s;
    }
  }
}

TEST_F(Propagation, DepthEqualsAlgorithm1OnRandomGraphs) {
  start(1, WEFT_PRIORITY_DEPTH);
  check_random_graphs(WEFT_PRIORITY_DEPTH, top_);
}

TEST_F(Propagation, PathMarksEveryPredecessorOfASend) {
  start(1, WEFT_PRIORITY_PATH);
  check_random_graphs(WEFT_PRIORITY_PATH, top_);
}

// The same graphs on 2 workers: tasks may become ready while their priorities are raised, so
// only completion and the send-tasks' own level are checked (the races are TSan's part).
TEST_F(Propagation, DepthOnTwoWorkersCompletes) {
  start(2, WEFT_PRIORITY_DEPTH);
  std::mt19937 rng(7);
  for (int g = 0; g < weft_test::scaled(200, 20); ++g) {
    dag d = random_dag(rng);
    run_log log;
    log.priority.assign(static_cast<std::size_t>(d.n), -1);
    std::vector<char> words(static_cast<std::size_t>(d.n));
    for (int i = 0; i < d.n; ++i) {
      auto u = static_cast<std::size_t>(i);
      body_args a{&log, i, 0};
      weft_task_t* t = weft_task_create(&send_body, &a, sizeof a, 0);
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &words[u], 1), WEFT_OK);
      for (int p : d.preds[u]) ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &words[static_cast<std::size_t>(p)], 1), WEFT_OK);
      if (d.marked[u]) {
        ASSERT_EQ(weft_task_set_priority(t, 1), WEFT_OK);
      }
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    }
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    ASSERT_EQ(log.ran.load(), d.n);
    for (int i = 0; i < d.n; ++i)
      if (d.marked[static_cast<std::size_t>(i)]) {
        ASSERT_EQ(log.priority[static_cast<std::size_t>(i)], top_);
      }
  }
}

// Unrelated ready work U0..U9 and a chain A -> S with S marked, all released by the gate at once.
std::vector<int> chain_order(int mode, int& top) {
  weft_test::runtime_config rt({{"WEFT_NUM_THREADS", "1"}, {"WEFT_MAX_PRIORITY", "8"}});
  EXPECT_TRUE(rt.ok());
  weft_set_priority_propagation(mode);
  top = weft_max_priority();
  run_log log;
  log.priority.assign(12, -1);
  char gate_word = 0, a_word = 0, s_word = 0;
  std::vector<char> u_words(10);
  weft_event_t* event = weft_event_create(1);
  submit_gate(&event, &gate_word);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(weft_task_submit(make(&record_body, log, i, {&gate_word}, &u_words[static_cast<std::size_t>(i)])), WEFT_OK);
  EXPECT_EQ(weft_task_submit(make(&record_body, log, 10, {&gate_word}, &a_word)), WEFT_OK);        // A
  EXPECT_EQ(weft_task_submit(make(&record_body, log, 11, {&a_word}, &s_word, 1)), WEFT_OK);        // S
  weft_event_fulfill(event);
  weft_taskwait();
  weft_event_destroy(event);
  weft_set_priority_propagation(WEFT_PRIORITY_AS_GIVEN);
  return log.order;
}

TEST(PropagationOrder, SendTaskAndItsPredecessorRunBeforeUnrelatedWork) {
  int top = 0;
  for (int mode : {WEFT_PRIORITY_DEPTH, WEFT_PRIORITY_PATH}) {
    std::vector<int> order = chain_order(mode, top);
    ASSERT_EQ(order.size(), 12u);
    EXPECT_EQ(order[0], 10) << "mode " << mode << ": the send-task's predecessor first";
    EXPECT_EQ(order[1], 11) << "mode " << mode << ": then the send-task";
  }
  // As given, only S has a priority: A waits behind unrelated work.
  std::vector<int> order = chain_order(WEFT_PRIORITY_AS_GIVEN, top);
  ASSERT_EQ(order.size(), 12u);
  EXPECT_NE(order[0], 10);
}

TEST_F(Propagation, NoneRunsEveryTaskAtZero) {
  start(1, WEFT_PRIORITY_NONE);
  run_log log;
  log.priority.assign(3, -1);
  char w0 = 0, w1 = 0;
  ASSERT_EQ(weft_task_submit(make(&record_body, log, 0, {}, &w0, 5)), WEFT_OK);
  ASSERT_EQ(weft_task_submit(make(&record_body, log, 1, {&w0}, &w1, 8)), WEFT_OK);
  ASSERT_EQ(weft_task_submit(make(&record_body, log, 2, {&w1}, nullptr, 1)), WEFT_OK);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(log.priority, (std::vector<int>{0, 0, 0}));
}

TEST_F(Propagation, BadArguments) {
  start(1, WEFT_PRIORITY_AS_GIVEN);
  EXPECT_EQ(weft_set_priority_propagation(-1), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_set_priority_propagation(5), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_priority_propagation(), WEFT_PRIORITY_AS_GIVEN);
  EXPECT_EQ(weft_task_get_priority(nullptr), -1);
  EXPECT_EQ(weft_last_error(), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_task_report_send(nullptr), WEFT_ERR_INVALID_ARGUMENT);
  // Outside a task, or for a task that is not the caller's.
  weft_task_t* t = weft_task_create(&record_body, nullptr, sizeof(body_args), 0);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(weft_task_report_send(t), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_task_get_priority(t), 0);
  ASSERT_EQ(weft_task_set_priority(t, 3), WEFT_OK);
  EXPECT_EQ(weft_task_get_priority(t), 3);
  EXPECT_EQ(weft_task_discard(t), WEFT_OK);
}

int no_progress(void*) { return 0; }

// detect: R (send_body, one predecessor) reports a send. S0..S3 (send_body, one predecessor each)
// are already waiting behind a gate: an idle worker recognises them (Algorithm 2) and raises
// them and their predecessors P0..P3. T (send_body, one predecessor) created after the report
// is recognised at creation. Tasks of another profile (P, record_body) are not marked.
TEST_F(Propagation, DetectRecognisesSendTasksByProfile) {
  start(2, WEFT_PRIORITY_DETECT);
  // A poller expecting completions keeps the idle worker polling, as MPI requests in flight do.
  weft_poller_t* poller = weft_poller_register(&no_progress, nullptr);
  ASSERT_NE(poller, nullptr);
  ASSERT_EQ(weft_poller_set_pending(poller, 1), WEFT_OK);
  run_log log;
  log.priority.assign(12, -1);
  char q_word = 0, gate_word = 0, t_word = 0;
  std::vector<char> p_words(4);
  weft_event_t* q_event = weft_event_create(1);
  weft_event_t* gate_event = weft_event_create(1);
  submit_gate(&q_event, &q_word);                                                        // Q
  ASSERT_EQ(weft_task_submit(make(&send_body, log, 0, {&q_word}, nullptr, 0, 1)), WEFT_OK);  // R
  submit_gate(&gate_event, &gate_word);
  std::vector<weft_task_t*> sends;
  for (int i = 0; i < 4; ++i) {
    auto u = static_cast<std::size_t>(i);
    ASSERT_EQ(weft_task_submit(make(&record_body, log, 1 + i, {&gate_word}, &p_words[u])), WEFT_OK);  // Pi
    weft_task_t* s = make(&send_body, log, 5 + i, {&p_words[u]}, nullptr);                          // Si
    sends.push_back(s);
    ASSERT_EQ(weft_task_submit(s), WEFT_OK);
  }
  ASSERT_EQ(weft_event_fulfill(q_event), WEFT_OK);  // Q ends, R runs and reports
  // White box: S0..S3 wait behind the gate, so their descriptors are alive; wait until the idle
  // worker has raised them (bounded: a broken matcher fails here, not by a hang).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto all_raised = [&] {
    for (weft_task_t* s : sends)
      if (weft_task_get_priority(s) != top_) return false;
    return true;
  };
  while (!all_raised() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(all_raised()) << "the idle worker did not recognise the waiting send-tasks";
  // Created after the report: recognised when its submission is processed, by the producer or,
  // when an idle worker holds the role, by that worker a moment later: wait for it (bounded)
  // before the gate opens, as for S0..S3.
  weft_task_t* pred_of_t = make(&record_body, log, 9, {&gate_word}, &t_word);
  weft_task_t* t = make(&send_body, log, 10, {&t_word}, nullptr);
  ASSERT_EQ(weft_task_submit(pred_of_t), WEFT_OK);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto t_raised = [&] { return weft_task_get_priority(t) == top_ && weft_task_get_priority(pred_of_t) == top_ - 1; };
  while (!t_raised() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(t_raised()) << "a send-task created after the report was not recognised";
  // Another profile (two predecessors), with a priority of its own (no hint under detect): not a
  // send-task, and at 0.
  ASSERT_EQ(weft_task_submit(make(&send_body, log, 11, {&t_word, &p_words[0]}, nullptr, 5)), WEFT_OK);
  ASSERT_EQ(weft_event_fulfill(gate_event), WEFT_OK);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  weft_poller_set_pending(poller, 0);
  weft_poller_unregister(poller);
  weft_event_destroy(q_event);
  weft_event_destroy(gate_event);
  EXPECT_EQ(log.priority[0], 0) << "R itself was not recognised (its report came from its body)";
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(log.priority[static_cast<std::size_t>(1 + i)], top_ - 1) << "P" << i;
    EXPECT_EQ(log.priority[static_cast<std::size_t>(5 + i)], top_) << "S" << i;
  }
  EXPECT_EQ(log.priority[9], top_ - 1) << "predecessor of the send-task created after the report";
  EXPECT_EQ(log.priority[10], top_) << "send-task created after the report";
  EXPECT_EQ(log.priority[11], 0) << "a task of another profile, its own priority ignored";
}

// Persistent graphs: replayed tasks follow their node's level (Algorithm 1 over the recording).
// Each of 12 iterations: U0..U3 independent, A -> S. depth: S is marked by its priority; detect:
// S reports a send from its body (replayed instances mark their node, levels are recomputed at the
// next round).
struct graph_log {
  int priority[12][6];
};
struct graph_args {
  graph_log* log;
  int iteration, id, report;
};
void graph_body(void* p) {
  auto* a = static_cast<graph_args*>(p);
  a->log->priority[a->iteration][a->id] = weft_task_get_priority(weft_task_self());
  if (a->report) weft_task_report_send(weft_task_self());
}
void graph_send_body(void* p) { graph_body(p); }

void run_graph(graph_log& log, bool mark, bool report) {
  std::vector<char> words(6);
  ASSERT_EQ(weft_graph_begin(), WEFT_OK);
  for (int it = 0; it < 12; ++it) {
    ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
    for (int id = 0; id < 6; ++id) {
      graph_args a{&log, it, id, report && id == 5};
      weft_task_t* t = weft_task_create(id == 5 ? &graph_send_body : &graph_body, &a, sizeof a, 0);
      ASSERT_NE(t, nullptr);
      if (id == 5) {
        ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &words[4], 1), WEFT_OK);  // S after A
        if (mark) {
          ASSERT_EQ(weft_task_set_priority(t, 1), WEFT_OK);
        }
      }
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &words[static_cast<std::size_t>(id)], 1), WEFT_OK);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    }
  }
  ASSERT_EQ(weft_graph_end(), WEFT_OK);
}

TEST_F(Propagation, PersistentGraphReplaysAtTheRecordedLevels) {
  start(2, WEFT_PRIORITY_DEPTH);
  graph_log log{};
  run_graph(log, true, false);
  for (int it = 1; it < 12; ++it) {  // the replayed iterations
    for (int id = 0; id < 4; ++id) EXPECT_EQ(log.priority[it][id], 0) << "iteration " << it << " U" << id;
    EXPECT_EQ(log.priority[it][4], top_ - 1) << "iteration " << it << ": A, the send-task's predecessor";
    EXPECT_EQ(log.priority[it][5], top_) << "iteration " << it << ": S";
  }
}

TEST_F(Propagation, PersistentGraphDetectsSendsByNode) {
  start(2, WEFT_PRIORITY_DETECT);
  graph_log log{};
  run_graph(log, false, true);
  // S reports from the first iterations on; a few rounds later every round runs at the levels.
  for (int it = 8; it < 12; ++it) {
    for (int id = 0; id < 4; ++id) EXPECT_EQ(log.priority[it][id], 0) << "iteration " << it << " U" << id;
    EXPECT_EQ(log.priority[it][4], top_ - 1) << "iteration " << it << ": A";
    EXPECT_EQ(log.priority[it][5], top_) << "iteration " << it << ": S";
  }
}

TEST_F(Propagation, PersistentGraphUnderNoneRunsAtZero) {
  start(1, WEFT_PRIORITY_NONE);
  graph_log log{};
  run_graph(log, true, false);
  for (int it = 0; it < 12; ++it)
    for (int id = 0; id < 6; ++id) EXPECT_EQ(log.priority[it][id], 0) << "iteration " << it << " task " << id;
}

}  // namespace
