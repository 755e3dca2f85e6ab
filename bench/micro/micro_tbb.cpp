// micro_tbb: the micro-benchmark patterns as oneTBB flow graphs.
//
// Each run builds the whole graph first (one continue_node per task, an edge per dependence that
// the OpenMP version of the pattern implies, duplicates dropped), then puts a message into every
// node without predecessors and waits. The time covers build + run together, as Task Bench measures
// flow graphs; the graph's destruction is outside it. Workers: tbb::global_control (-p).
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <vector>

#include "common.h"

namespace {

namespace flow = oneapi::tbb::flow;
using node = flow::continue_node<flow::continue_msg>;
using msg = flow::continue_msg;

struct graph_run {
  flow::graph g;
  std::deque<node> nodes;  // a deque never moves its elements
  std::vector<node*> roots;

  template <class Body>
  node& add(Body body) {
    return nodes.emplace_back(g, [body](const msg&) { body(); });
  }
  // Fires the roots and waits for the whole graph.
  void run() {
    for (node* r : roots) r->try_put(msg());
    g.wait_for_all();
  }
};

// The returned time is computed before the graph's destructor runs.
double run_indep(long n) {
  double t0 = bench_now_ns();
  graph_run gr;
  for (long i = 0; i < n; ++i) gr.roots.push_back(&gr.add([] { bench_indep_body(); }));
  gr.run();
  return bench_now_ns() - t0;
}

double run_chain(long n) {
  double t0 = bench_now_ns();
  graph_run gr;
  node* prev = nullptr;
  for (long i = 0; i < n; ++i) {
    node& cur = gr.add([i] { bench_chain_body(i); });
    if (prev) flow::make_edge(*prev, cur);
    else gr.roots.push_back(&cur);
    prev = &cur;
  }
  gr.run();
  return bench_now_ns() - t0;
}

// Task (s, c) writes cell c of field s%2 and reads cells c-1..c+1 of the other field: it follows the
// writers of those cells at step s-1 (read after write), which are also the readers at step s-1 of
// the cell it overwrites (write after read). The write after write on (s-2, c) is implied.
double run_stencil(int w, long steps, unsigned long iterations) {
  double t0 = bench_now_ns();
  graph_run gr;
  std::vector<node*> prev(static_cast<size_t>(w)), cur(static_cast<size_t>(w));
  for (long s = 0; s < steps; ++s) {
    for (int c = 0; c < w; ++c) {
      node& nd = gr.add([s, c, w, iterations] {
        if (iterations) bench_spin(iterations);
        bench_stencil_body(s, c, w);
      });
      cur[static_cast<size_t>(c)] = &nd;
      if (s == 0) {
        gr.roots.push_back(&nd);
        continue;
      }
      int l = bench_left(c), r = bench_right(c, w);
      for (int p = l; p <= r; ++p) flow::make_edge(*prev[static_cast<size_t>(p)], nd);
    }
    std::swap(prev, cur);
  }
  gr.run();
  return bench_now_ns() - t0;
}

// inoutset has no flow-graph counterpart: the members of a round join into one empty node that
// releases the readers (m + k edges, what weft's redirect node does), the readers join into the
// round's out node, which releases the next round's members.
double run_inoutset(long rounds, int members, int readers) {
  double t0 = bench_now_ns();
  graph_run gr;
  node* close = nullptr;
  for (long r = 0; r < rounds; ++r) {
    node& join = gr.add([] {});
    node& out = gr.add([r] { bench_close_body(r); });
    for (int i = 0; i < members; ++i) {
      node& m = gr.add([r] { bench_member_body(r); });
      if (close) flow::make_edge(*close, m);
      else gr.roots.push_back(&m);
      flow::make_edge(m, join);
    }
    for (int i = 0; i < readers; ++i) {
      node& rd = gr.add([r] { bench_reader_body(r); });
      flow::make_edge(join, rd);
      flow::make_edge(rd, out);
    }
    if (readers == 0) flow::make_edge(join, out);
    close = &out;
  }
  gr.run();
  return bench_now_ns() - t0;
}

// A flow graph holds every task before it runs: the memory of one node with its one in-edge (from
// the gate; the write to the task's own cell orders nothing, so it costs no edge).
double run_pending(long n, long* rss_before, long* rss_after, int* held) {
  graph_run gr;
  bench_is_producer = 1;
  node& gate = gr.add([] { bench_gate_body(); });
  gr.roots.push_back(&gate);
  *rss_before = bench_rss_bytes();
  double t0 = bench_now_ns();
  for (long i = 0; i < n; ++i) flow::make_edge(gate, gr.add([] { bench_pending_body(); }));
  double t1 = bench_now_ns();
  *rss_after = bench_rss_bytes();
  *held = 1;  // nothing runs before run(): the graph held every task
  bench_gate_open();
  gr.run();
  bench_is_producer = 0;
  return t1 - t0;
}

}  // namespace

int main(int argc, char** argv) {
  bench_options o;
  bench_parse(argc, argv, &o);
  int threads = o.threads > 0 ? o.threads : oneapi::tbb::info::default_concurrency();
  oneapi::tbb::global_control limit(oneapi::tbb::global_control::max_allowed_parallelism,
                                    static_cast<size_t>(threads));
  threads = static_cast<int>(
      oneapi::tbb::global_control::active_value(oneapi::tbb::global_control::max_allowed_parallelism));
  const char* runtime = "tbb";
  run_indep(1000);  // warm-up: starts the workers

  bench_extra e{};
  char param[64] = "-";
  double wall = 0;
  long n = 0;
  bench_verify = o.verify;
  const bench_runners runners = {run_indep, run_chain, run_stencil, run_inoutset, run_pending};
  int ran = bench_run(&o, &runners, runtime, threads, &e, &n, &wall, param, sizeof param);
  if (ran < 0) return 1;
  if (ran == 2) {
    return 0;
  }
  int status = bench_verify_result(&e, n);
  bench_print(&o, runtime, threads, n, param, wall / static_cast<double>(n), &e);
  return status;
}
