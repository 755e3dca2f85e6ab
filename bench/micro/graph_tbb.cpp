// graph_tbb: the persistent-graph peer on oneTBB: micro_graph's width-W stencil as a flow graph
// built once and run again (a continue_node graph resets its counters after each run, so putting a
// message into the roots again replays the whole graph: no node or edge is made twice).
//
//   graph_tbb stencil -w 8 -t T [-p P] [--verify]     ns per task of a rerun of the prebuilt graph
//   graph_tbb metg    -w 8 -t T [--max-ns D --min-ns D --factor F] [-p P]
//                                                       METG(50%) of reruns (bodies spin a duration
//                                                       read from one variable: the graph is built once)
//
// The graph has every task of the T steps (one continue_node each, edges from the writers of the
// 3 cells read at step s-1, as micro_tbb's stencil), built outside the timed region: the result is
// what replaying a recorded graph costs TBB. The line also carries build_ns_per_task (building the
// graph) and first_ns_per_task (its first run). Workers: tbb::global_control (-p).
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>

#include <deque>
#include <string>
#include <vector>

#include "common.h"

namespace {

namespace flow = oneapi::tbb::flow;
using msg = flow::continue_msg;
using node = flow::continue_node<msg>;

unsigned long g_spin = 0;  // read by every body; set before a run, never during one
long* field[2];
long verify_errors = 0, verify_ran = 0;

// The stamp check of graph_weft.cpp: no step number needed (the same node runs every rerun).
inline void body(int parity, int c, int w) {
  unsigned long spin = BENCH_LOAD(&g_spin);
  if (spin) bench_spin(spin);
  if (bench_verify) {
    const long* in = field[parity ^ 1];
    long* out = field[parity];
    long s = BENCH_LOAD(&out[c]) + 2;
    if (!(BENCH_LOAD(&in[bench_left(c)]) == s - 1 && BENCH_LOAD(&in[c]) == s - 1 &&
          BENCH_LOAD(&in[bench_right(c, w)]) == s - 1))
      BENCH_ADD(&verify_errors, 1);
    BENCH_STORE(&out[c], s);
    BENCH_ADD(&verify_ran, 1);
  }
}

void setup_fields(int w) {
  for (int f = 0; f < 2; ++f) {
    free(field[f]);
    field[f] = static_cast<long*>(malloc(sizeof(long) * static_cast<size_t>(w)));
    if (!field[f]) exit(1);
    for (int c = 0; c < w; ++c) field[f][c] = f == 0 ? -2 : -1;
  }
}

struct stencil_graph {
  flow::graph g;
  std::deque<node> nodes;
  std::vector<node*> roots;

  stencil_graph(int w, long steps) {
    std::vector<node*> prev(static_cast<size_t>(w)), cur(static_cast<size_t>(w));
    for (long s = 0; s < steps; ++s) {
      const int parity = static_cast<int>(s & 1);
      for (int c = 0; c < w; ++c) {
        node& nd = nodes.emplace_back(g, [parity, c, w](const msg&) { body(parity, c, w); });
        cur[static_cast<size_t>(c)] = &nd;
        if (s == 0) roots.push_back(&nd);
        else
          for (int p = bench_left(c); p <= bench_right(c, w); ++p) flow::make_edge(*prev[static_cast<size_t>(p)], nd);
      }
      std::swap(prev, cur);
    }
  }
  double run() {
    double t0 = bench_now_ns();
    for (node* r : roots) r->try_put(msg());
    g.wait_for_all();
    return bench_now_ns() - t0;
  }
};

double metg_runner(void* ctx, int, long, unsigned long spin) {
  BENCH_STORE(&g_spin, spin);
  return static_cast<stencil_graph*>(ctx)->run();
}

[[noreturn]] void usage(const char* msg) {
  fprintf(stderr,
          "graph_tbb: %s\nusage: graph_tbb stencil|metg [-w W] [-t T] [-p P] [--max-ns D] [--min-ns D] "
          "[--factor F] [--verify]\n",
          msg);
  exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage("no pattern");
  std::string pattern = argv[1];
  if (pattern != "stencil" && pattern != "metg") usage("unknown pattern");
  int w = 8, threads = 0;
  long steps = -1;
  bool verify = false;
  double max_ns = 64000, min_ns = 31.25, factor = 2;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verify") {
      verify = true;
      continue;
    }
    if (i + 1 >= argc) usage("an option needs a value");
    const char* v = argv[++i];
    if (a == "-w") w = static_cast<int>(bench_parse_long(v, "-w"));
    else if (a == "-t") steps = bench_parse_long(v, "-t");
    else if (a == "-p") threads = static_cast<int>(bench_parse_long(v, "-p"));
    else if (a == "--max-ns") max_ns = bench_parse_double(v, "--max-ns");
    else if (a == "--min-ns") min_ns = bench_parse_double(v, "--min-ns");
    else if (a == "--factor") factor = bench_parse_double(v, "--factor");
    else usage("unknown option");
  }
  if (w < 1 || w > BENCH_MAX_WIDTH || factor <= 1 || min_ns <= 0 || max_ns < min_ns) usage("option out of range");
  if (steps < 0) steps = pattern == "stencil" ? 12500 : 1000;
  steps = (steps + 1) / 2 * 2;  // even: a rerun starts on the fields the last run left (the stamps go on)
  if (steps < 2) steps = 2;

  int want = threads > 0 ? threads : oneapi::tbb::info::default_concurrency();
  oneapi::tbb::global_control limit(oneapi::tbb::global_control::max_allowed_parallelism, static_cast<size_t>(want));
  threads = static_cast<int>(
      oneapi::tbb::global_control::active_value(oneapi::tbb::global_control::max_allowed_parallelism));
  const char* runtime = "tbb-rerun";
  setup_fields(w);
  {  // warm-up: starts the workers
    stencil_graph warm(w, 64);
    warm.run();
  }
  setup_fields(w);
  bench_verify = verify && pattern == "stencil";
  double t0 = bench_now_ns();
  stencil_graph sg(w, steps);
  double build = bench_now_ns() - t0;
  double first = sg.run();
  long n = steps * w;
  bench_extra e{};
  bench_options o;
  memset(&o, 0, sizeof o);
  o.pattern_name = pattern == "stencil" ? "stencil" : "metg";
  int status = 0;
  if (pattern == "stencil") {
    double wall = sg.run();  // the measurement: the second run of the prebuilt graph
    bench_add(&e, "ms=%.3f build_ns_per_task=%.1f first_ns_per_task=%.1f", wall / 1e6, build / n, first / n);
    if (verify) {
      long errors = BENCH_LOAD(&verify_errors);
      if (BENCH_LOAD(&verify_ran) != 2 * n) ++errors;
      for (int c = 0; c < w; ++c)  // two runs: 2 * steps steps in all
        if (field[1][c] != 2 * steps - 1 || field[0][c] != 2 * steps - 2) ++errors;
      if (errors == 0) bench_add(&e, "verified=ok");
      else {
        bench_add(&e, "verified=FAIL errors=%ld ran=%ld expected=%ld", errors, BENCH_LOAD(&verify_ran), 2 * n);
        status = 1;
      }
    }
    char param[32];
    snprintf(param, sizeof param, "%d", w);
    bench_print(&o, runtime, threads, n, param, wall / static_cast<double>(n), &e);
  } else {
    o.width = w;
    o.steps = steps;
    o.max_ns = max_ns;
    o.min_ns = min_ns;
    o.factor = factor;
    bench_add(&e, "build_ns_per_task=%.1f", build / n);
    bench_metg(&o, runtime, threads, metg_runner, &sg, &e);
  }
  return status;
}
