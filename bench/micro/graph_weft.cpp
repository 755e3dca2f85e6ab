// micro_graph: persistent task graphs (weft_graph_* in weft.h) against ordinary weft tasks, through
// the C API (weft_task_create with inline arguments). One process runs one pattern x one variant and
// prints one result line (the format of common.h's bench_print; discovery prints one line with all
// of its figures); bench/graph.sh runs them side by side.
//
//   micro_graph stencil   -w 8 -t T --variant plain|reexec|taskiter     ns per task, end to end
//   micro_graph discovery -w 8 -i 16 -r R                               producer's creation time per
//                                                                       iteration: recording, replay,
//                                                                       non-persistent
//   micro_graph metg      -w 8 -t T --variant plain|reexec|taskiter     METG(50%) of the stencil
//   micro_graph heat      -n N -b B -s S --variant serial|plain|reexec|barrier|taskiter
//   micro_graph jacobi    -n N -b B -s S --variant serial|plain|reexec|taskiter
//
// stencil is micro_weft's: two fields, task (s, c) out f[s%2][c], in f[(s+1)%2][c-1], [c], [c+1]
// (clamped at the edges). Its accesses repeat every 2 steps, so the persistent variants record 2
// steps per round (unroll 2; --unroll 1 makes every iteration differ from the last: re-recorded, a
// check of that path, not a measurement). heat/jacobi: see graph_kernels.h.
//
// Variants: plain = the same loop without weft_graph_* (one taskwait at the end, no barrier between
// steps either); reexec = weft_graph_begin_with + weft_graph_iteration at the top of every
// iteration; barrier = reexec with options.barrier = 1; taskiter = options.mode TASKITER with
// options.iterations = steps, the body run for the `unroll` recorded iterations only; serial = the
// kernel in a loop, no task (heat/jacobi).
#include <weft/weft.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <string>
#include <vector>

#include "common.h"
#include "graph_kernels.h"

namespace {

[[noreturn]] void die(const char* what, int status) {
  fprintf(stderr, "micro_graph: %s: %s\n", what, weft_strerror(status));
  exit(1);
}

[[noreturn]] void usage_error(const char* msg) {
  fprintf(stderr,
          "micro_graph: %s\n"
          "usage: micro_graph <stencil|discovery|metg|heat|jacobi> [options]\n"
          "  --variant V    plain | reexec | taskiter | barrier (heat) | serial (heat, jacobi)\n"
          "  -w W           stencil width                                  [8]\n"
          "  -t T           stencil steps (rounded up to a multiple of unroll) [12500; metg 1000]\n"
          "  -i I           discovery: iterations per graph                [16]\n"
          "  -r R           discovery: graphs (and non-persistent loops) timed, alternated [200]\n"
          "  -n N -b B -s S heat/jacobi: interior N x N, blocks B x B, S sweeps [1024 64 50]\n"
          "  --unroll U     iterations per recorded round                  [stencil, jacobi: 2; heat: 1]\n"
          "  --policy P     default | immediate | iteration                [default]\n"
          "  --lookahead L  rounds the producer may run ahead (1..6, 0 = runtime's) [0]\n"
          "  --max-ns D --min-ns D --factor F   metg sweep                 [64000 31.25 2]\n"
          "  -p P           workers (sets WEFT_NUM_THREADS)                [env]\n"
          "  --verify       stencil/metg/discovery: task bodies check the order (heat and jacobi\n"
          "                 always compare the grid with a serial sweep, bit for bit)\n",
          msg);
  exit(2);
}

enum class variant { plain, reexec, barrier, taskiter, serial };

const char* variant_name(variant v) {
  switch (v) {
    case variant::plain: return "plain";
    case variant::reexec: return "reexec";
    case variant::barrier: return "barrier";
    case variant::taskiter: return "taskiter";
    case variant::serial: return "serial";
  }
  return "?";
}

struct config {
  std::string pattern;
  variant var = variant::plain;
  bool var_given = false;
  int width = 8;
  long steps = -1;
  long iters = 16;
  long reps = 200;
  int n = 1024, b = 64;
  long sweeps = 50;
  int unroll = -1;
  int policy = WEFT_GRAPH_POLICY_DEFAULT;
  int lookahead = 0;
  double max_ns = 64000, min_ns = 31.25, factor = 2;
  int threads = 0;
  bool verify = false;
};

config cfg;

// --- weft calls that die on error ------------------------------------------------------------------

weft_task_t* create(weft_task_fn fn, const void* args, size_t size) {
  weft_task_t* t = weft_task_create(fn, args, size, WEFT_TASK_DEFAULT);
  if (!t) die("weft_task_create", weft_last_error());
  return t;
}
inline void depend(weft_task_t* t, weft_dep_type type, const void* address) {
  int s = weft_task_depend(t, type, address, 1);
  if (s != WEFT_OK) die("weft_task_depend", s);
}
inline void submit(weft_task_t* t) {
  int s = weft_task_submit(t);
  if (s != WEFT_OK) die("weft_task_submit", s);
}
void taskwait() {
  int s = weft_taskwait();
  if (s != WEFT_OK) die("weft_taskwait", s);
}

bool persistent(variant v) { return v == variant::reexec || v == variant::barrier || v == variant::taskiter; }

// Opens a graph for variant v (nothing for plain/serial). steps: loop iterations in all (taskiter).
void graph_begin(variant v, int unroll, long steps) {
  if (!persistent(v)) return;
  weft_graph_options_t o{};
  o.mode = v == variant::taskiter ? WEFT_GRAPH_TASKITER : WEFT_GRAPH_REEXECUTE;
  o.unroll = unroll;
  o.iterations = v == variant::taskiter ? steps : 0;
  o.policy = cfg.policy;
  o.lookahead = cfg.lookahead;
  o.on_change = WEFT_GRAPH_ON_CHANGE_DEFAULT;
  o.barrier = v == variant::barrier ? 1 : 0;
  int s = weft_graph_begin_with(&o);
  if (s != WEFT_OK) die("weft_graph_begin_with", s);
}
inline void graph_iteration(variant v) {
  if (!persistent(v)) return;
  int s = weft_graph_iteration();
  if (s != WEFT_OK) die("weft_graph_iteration", s);
}
void graph_end(variant v) {
  if (!persistent(v)) {
    taskwait();
    return;
  }
  int s = weft_graph_end();
  if (s != WEFT_OK) die("weft_graph_end", s);
}
// Loop iterations whose body the producer runs: taskiter runs only the recorded round.
long body_iterations(variant v, int unroll, long steps) { return v == variant::taskiter ? unroll : steps; }

struct stats_delta {
  weft_stats_t before{};
  void start() {
    weft_reset_stats();
    weft_get_stats(&before);
  }
  weft_stats_t now() const {
    weft_stats_t st{};
    weft_get_stats(&st);
    st.tasks_created -= before.tasks_created;
    st.tasks_completed -= before.tasks_completed;
    st.graph_replayed -= before.graph_replayed;
    st.graph_recordings -= before.graph_recordings;
    return st;
  }
};

void add_graph_stats(bench_extra* e, const weft_stats_t& st) {
  bench_add(e,
            "tasks_created=%" PRIu64 " tasks_completed=%" PRIu64 " graph_replayed=%" PRIu64
            " graph_recordings=%" PRIu64 " steals=%" PRIu64 " max_live=%" PRIu64,
            st.tasks_created, st.tasks_completed, st.graph_replayed, st.graph_recordings, st.steals,
            st.max_live_tasks);
}

// --- stencil ------------------------------------------------------------------------------------------

// Field stamps: cell c of field f holds the last step that wrote it. Start: field 1 = -1 ("step -1",
// read by step 0), field 0 = -2. The check needs no step number from the arguments (a taskiter
// replay runs the recorded arguments): the cell a task overwrites holds s - 2, so s = that + 2, and
// the 3 cells it reads must hold s - 1 (read after write, and no later write before the read).
long* field[2];
long verify_errors = 0;  // atomic (BENCH_ADD)
long verify_ran = 0;

struct cell_args {
  long s;       // step (as recorded, for taskiter replays)
  int c, w, parity;
  int check_s;  // the arguments are the iteration's own (not taskiter): s must match the stamps
  unsigned long spin;
};

void stencil_fn(void* a) {
  const cell_args* p = static_cast<const cell_args*>(a);
  if (p->spin) bench_spin(p->spin);
  if (bench_verify) {
    const long* in = field[p->parity ^ 1];
    long* out = field[p->parity];
    long prev = BENCH_LOAD(&out[p->c]);
    long s = prev + 2;
    int ok = BENCH_LOAD(&in[bench_left(p->c)]) == s - 1 && BENCH_LOAD(&in[p->c]) == s - 1 &&
             BENCH_LOAD(&in[bench_right(p->c, p->w)]) == s - 1 && (!p->check_s || p->s == s);
    if (!ok) BENCH_ADD(&verify_errors, 1);
    BENCH_STORE(&out[p->c], s);
    BENCH_ADD(&verify_ran, 1);
  }
}

void stencil_setup(int w) {
  for (int f = 0; f < 2; ++f) {
    free(field[f]);
    field[f] = static_cast<long*>(malloc(sizeof(long) * static_cast<size_t>(w)));
    if (!field[f]) die("malloc", WEFT_ERR_OUT_OF_MEMORY);
    for (int c = 0; c < w; ++c) field[f][c] = f == 0 ? -2 : -1;
  }
  BENCH_STORE(&verify_errors, 0);
  BENCH_STORE(&verify_ran, 0);
}

// Errors after steps of width w (0 = ok): every body ran, the last two steps' stamps are there.
long stencil_check(int w, long steps) {
  long errors = BENCH_LOAD(&verify_errors);
  if (BENCH_LOAD(&verify_ran) != steps * w) ++errors;
  for (int c = 0; c < w; ++c) {
    if (field[(steps - 1) & 1][c] != steps - 1) ++errors;
    if (steps >= 2 && field[steps & 1][c] != steps - 2) ++errors;
  }
  return errors;
}

inline void stencil_step(long s, int w, unsigned long spin, int check_s) {
  const int parity = static_cast<int>(s & 1);
  const long* in = field[parity ^ 1];
  const long* out = field[parity];
  for (int c = 0; c < w; ++c) {
    cell_args a{s, c, w, parity, check_s, spin};
    weft_task_t* t = create(stencil_fn, &a, sizeof a);
    depend(t, WEFT_DEP_OUT, &out[c]);
    depend(t, WEFT_DEP_IN, &in[bench_left(c)]);
    depend(t, WEFT_DEP_IN, &in[c]);
    depend(t, WEFT_DEP_IN, &in[bench_right(c, w)]);
    submit(t);
  }
}

// Wall ns from the first creation to the end of the graph (or taskwait).
double run_stencil(variant v, int unroll, int w, long steps, unsigned long spin) {
  const long body = body_iterations(v, unroll, steps);
  const int check_s = v != variant::taskiter;
  double t0 = bench_now_ns();
  graph_begin(v, unroll, steps);
  for (long s = 0; s < body; ++s) {
    graph_iteration(v);
    stencil_step(s, w, spin, check_s);
  }
  graph_end(v);
  return bench_now_ns() - t0;
}

struct metg_ctx {
  variant v;
  int unroll;
};

double metg_runner(void* ctx, int w, long steps, unsigned long spin) {
  const metg_ctx* m = static_cast<const metg_ctx*>(ctx);
  stencil_setup(w);
  return run_stencil(m->v, m->unroll, w, steps, spin);
}

// --- discovery: the producer's time per iteration ------------------------------------------------------

struct iteration_times {
  double create;  // weft_graph_iteration() returned -> last submit of the iteration done
  double iter;    // weft_graph_iteration() called -> last submit done (the call's own work and waits)
};

// One graph (or non-persistent loop) of `iters` iterations; fills times[0..iters).
void discovery_once(variant v, int unroll, int w, long iters, std::vector<iteration_times>& times) {
  graph_begin(v, unroll, iters);
  for (long it = 0; it < iters; ++it) {
    double t0 = bench_now_ns();
    graph_iteration(v);
    double t1 = bench_now_ns();
    stencil_step(it, w, 0, 1);
    double t2 = bench_now_ns();
    times[static_cast<size_t>(it)] = {t2 - t1, t2 - t0};
  }
  graph_end(v);
}

double median(std::vector<double> x) {
  if (x.empty()) return 0;
  std::sort(x.begin(), x.end());
  size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

// --- heat (Gauss-Seidel) and Jacobi --------------------------------------------------------------------

struct gs_args {
  const gk_grid* g;
  double* u;
  int bi, bj;
};
void gs_fn(void* a) {
  const gs_args* p = static_cast<const gs_args*>(a);
  gk_gs_block(p->g, p->u, p->bi, p->bj);
}

struct jacobi_args {
  const gk_grid* g;
  double* dst;
  const double* src;
  int bi, bj;
};
void jacobi_fn(void* a) {
  const jacobi_args* p = static_cast<const jacobi_args*>(a);
  gk_jacobi_block(p->g, p->dst, p->src, p->bi, p->bj);
}

// The address standing for block (bi, bj) of u in the dependences: its first cell.
inline const void* block_addr(const gk_grid& g, const double* u, int bi, int bj) {
  return u + (1 + static_cast<size_t>(bi) * static_cast<size_t>(g.b)) * g.stride + 1 +
         static_cast<size_t>(bj) * static_cast<size_t>(g.b);
}

double run_heat(variant v, int unroll, const gk_grid& g, double* u, long sweeps) {
  double t0 = bench_now_ns();
  if (v == variant::serial) {
    gk_gs_serial(&g, u, sweeps);
    return bench_now_ns() - t0;
  }
  const long body = body_iterations(v, unroll, sweeps);
  graph_begin(v, unroll, sweeps);
  for (long s = 0; s < body; ++s) {
    graph_iteration(v);
    for (int bi = 0; bi < g.nb; ++bi) {
      for (int bj = 0; bj < g.nb; ++bj) {
        gs_args a{&g, u, bi, bj};
        weft_task_t* t = create(gs_fn, &a, sizeof a);
        depend(t, WEFT_DEP_INOUT, block_addr(g, u, bi, bj));
        if (bi > 0) depend(t, WEFT_DEP_IN, block_addr(g, u, bi - 1, bj));
        if (bi + 1 < g.nb) depend(t, WEFT_DEP_IN, block_addr(g, u, bi + 1, bj));
        if (bj > 0) depend(t, WEFT_DEP_IN, block_addr(g, u, bi, bj - 1));
        if (bj + 1 < g.nb) depend(t, WEFT_DEP_IN, block_addr(g, u, bi, bj + 1));
        submit(t);
      }
    }
  }
  graph_end(v);
  return bench_now_ns() - t0;
}

// Iteration k: src = k odd ? b : a, dst the other one. Returns wall ns; the result is in
// (iterations odd ? b : a).
double run_jacobi(variant v, int unroll, const gk_grid& g, double* a, double* b, long iterations) {
  double t0 = bench_now_ns();
  if (v == variant::serial) {
    gk_jacobi_serial(&g, a, b, iterations);
    return bench_now_ns() - t0;
  }
  const long body = body_iterations(v, unroll, iterations);
  graph_begin(v, unroll, iterations);
  for (long k = 0; k < body; ++k) {
    graph_iteration(v);
    double* src = (k & 1) ? b : a;
    double* dst = (k & 1) ? a : b;
    for (int bi = 0; bi < g.nb; ++bi) {
      for (int bj = 0; bj < g.nb; ++bj) {
        jacobi_args args{&g, dst, src, bi, bj};
        weft_task_t* t = create(jacobi_fn, &args, sizeof args);
        depend(t, WEFT_DEP_OUT, block_addr(g, dst, bi, bj));
        depend(t, WEFT_DEP_IN, block_addr(g, src, bi, bj));
        if (bi > 0) depend(t, WEFT_DEP_IN, block_addr(g, src, bi - 1, bj));
        if (bi + 1 < g.nb) depend(t, WEFT_DEP_IN, block_addr(g, src, bi + 1, bj));
        if (bj > 0) depend(t, WEFT_DEP_IN, block_addr(g, src, bi, bj - 1));
        if (bj + 1 < g.nb) depend(t, WEFT_DEP_IN, block_addr(g, src, bi, bj + 1));
        submit(t);
      }
    }
  }
  graph_end(v);
  return bench_now_ns() - t0;
}

// --- command line ------------------------------------------------------------------------------------

long parse_long(const char* s, const char* what) { return bench_parse_long(s, what); }

void parse(int argc, char** argv) {
  if (argc < 2) usage_error("no pattern");
  cfg.pattern = argv[1];
  if (cfg.pattern == "-h" || cfg.pattern == "--help") usage_error("help");
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verify") {
      cfg.verify = true;
      continue;
    }
    if (i + 1 >= argc) usage_error(("option " + a + " needs a value").c_str());
    const char* v = argv[++i];
    if (a == "--variant") {
      std::string s = v;
      cfg.var_given = true;
      if (s == "plain") cfg.var = variant::plain;
      else if (s == "reexec") cfg.var = variant::reexec;
      else if (s == "barrier") cfg.var = variant::barrier;
      else if (s == "taskiter") cfg.var = variant::taskiter;
      else if (s == "serial") cfg.var = variant::serial;
      else usage_error("unknown variant");
    } else if (a == "-w") cfg.width = static_cast<int>(parse_long(v, "-w"));
    else if (a == "-t") cfg.steps = parse_long(v, "-t");
    else if (a == "-i") cfg.iters = parse_long(v, "-i");
    else if (a == "-r") cfg.reps = parse_long(v, "-r");
    else if (a == "-n") cfg.n = static_cast<int>(parse_long(v, "-n"));
    else if (a == "-b") cfg.b = static_cast<int>(parse_long(v, "-b"));
    else if (a == "-s") cfg.sweeps = parse_long(v, "-s");
    else if (a == "--unroll") cfg.unroll = static_cast<int>(parse_long(v, "--unroll"));
    else if (a == "--lookahead") cfg.lookahead = static_cast<int>(parse_long(v, "--lookahead"));
    else if (a == "--max-ns") cfg.max_ns = bench_parse_double(v, "--max-ns");
    else if (a == "--min-ns") cfg.min_ns = bench_parse_double(v, "--min-ns");
    else if (a == "--factor") cfg.factor = bench_parse_double(v, "--factor");
    else if (a == "-p") cfg.threads = static_cast<int>(parse_long(v, "-p"));
    else if (a == "--policy") {
      std::string s = v;
      if (s == "default") cfg.policy = WEFT_GRAPH_POLICY_DEFAULT;
      else if (s == "immediate") cfg.policy = WEFT_GRAPH_IMMEDIATE_SUCCESSOR;
      else if (s == "iteration") cfg.policy = WEFT_GRAPH_ITERATION_PRIORITY;
      else usage_error("unknown policy");
    } else usage_error(("unknown option " + a).c_str());
  }
  if (cfg.width < 1 || cfg.width > BENCH_MAX_WIDTH || cfg.iters < 1 || cfg.reps < 1 || cfg.sweeps < 1 ||
      cfg.factor <= 1 || cfg.min_ns <= 0 || cfg.max_ns < cfg.min_ns)
    usage_error("option out of range");
}

const char* policy_name(int p) {
  switch (p) {
    case WEFT_GRAPH_IMMEDIATE_SUCCESSOR: return "immediate";
    case WEFT_GRAPH_ITERATION_PRIORITY: return "iteration";
    default: return "default";
  }
}

// runtime= field of the result line: weft-<variant>.
std::string runtime_of(variant v) { return std::string("weft-") + variant_name(v); }

// Rounds steps up to a multiple of unroll (so that the recorded round repeats evenly, and the stencil
// stamps of a rerun continue).
long round_up(long steps, int unroll) { return (steps + unroll - 1) / unroll * unroll; }
// The least even multiple of unroll: a step count of the stencil that ends on field 1.
int even_multiple(int unroll) { return unroll % 2 ? 2 * unroll : unroll; }

bench_options line_options(const char* pattern) {
  bench_options o;
  memset(&o, 0, sizeof o);
  o.pattern_name = pattern;
  return o;
}

int main_stencil(int threads) {
  variant v = cfg.var;  // barrier is allowed (a reexec option); serial is not
  if (v == variant::serial) usage_error("stencil has no serial variant");
  int unroll = cfg.unroll > 0 ? cfg.unroll : 2;
  long steps = round_up(cfg.steps > 0 ? cfg.steps : 12500, even_multiple(unroll));
  int w = cfg.width;
  bench_verify = cfg.verify;
  // Warm-up: the same loop once, small (pools filled, workers awake, the graph code paged in).
  stencil_setup(w);
  run_stencil(v, unroll, w, round_up(64, even_multiple(unroll)), 0);
  stencil_setup(w);
  stats_delta sd;
  sd.start();
  double wall = run_stencil(v, unroll, w, steps, 0);
  weft_stats_t st = sd.now();
  long n = steps * w;
  bench_extra e{};
  bench_add(&e, "ms=%.3f unroll=%d policy=%s lookahead=%d", wall / 1e6, persistent(v) ? unroll : 0,
            policy_name(cfg.policy), cfg.lookahead);
  add_graph_stats(&e, st);
  int status = 0;
  if (persistent(v) && st.graph_replayed == 0) {
    // The graph replayed nothing: a failure, unless --unroll 1 asked for a round that cannot repeat
    // (every iteration is then re-recorded: the results must still be right).
    bench_add(&e, "replay=none");
    if (cfg.verify && cfg.unroll <= 0) status = 1;
  }
  if (cfg.verify) {
    long errors = stencil_check(w, steps);
    if (errors == 0) bench_add(&e, "verified=ok");
    else {
      bench_add(&e, "verified=FAIL errors=%ld ran=%ld expected=%ld", errors, BENCH_LOAD(&verify_ran), n);
      status = 1;
    }
  }
  bench_options o = line_options("stencil");
  char param[32];
  snprintf(param, sizeof param, "%d", w);
  bench_print(&o, runtime_of(v).c_str(), threads, n, param, wall / static_cast<double>(n), &e);
  return status;
}

int main_metg(int threads) {
  variant v = cfg.var;
  if (v == variant::serial) usage_error("metg has no serial variant");
  int unroll = cfg.unroll > 0 ? cfg.unroll : 2;
  long steps = round_up(cfg.steps > 0 ? cfg.steps : 1000, even_multiple(unroll));
  bench_verify = 0;
  metg_ctx ctx{v, unroll};
  metg_runner(&ctx, cfg.width, round_up(64, even_multiple(unroll)), 0);  // warm-up
  bench_options o = line_options("metg");
  o.width = cfg.width;
  o.steps = steps;
  o.max_ns = cfg.max_ns;
  o.min_ns = cfg.min_ns;
  o.factor = cfg.factor;
  bench_extra e{};
  bench_add(&e, "unroll=%d policy=%s", persistent(v) ? unroll : 0, policy_name(cfg.policy));
  bench_metg(&o, runtime_of(v).c_str(), threads, metg_runner, &ctx, &e);
  return 0;
}

// Alternates non-persistent loops and persistent graphs (reexec) of `iters` iterations, `reps` of
// each; per graph, the mean creation time of the recorded iterations (the first round), of the
// replayed ones, and per loop of all of its iterations; prints the medians over the reps.
int main_discovery(int threads) {
  int unroll = cfg.unroll > 0 ? cfg.unroll : 2;
  long iters = round_up(cfg.iters, unroll);
  if (iters <= unroll) usage_error("discovery needs more iterations than one round (-i)");
  int w = cfg.width;
  bench_verify = cfg.verify;
  std::vector<iteration_times> times(static_cast<size_t>(iters));
  std::vector<double> plain_create, plain_iter, rec_create, rec_iter, rep_create, rep_iter, first_create;
  long errors = 0;
  for (long r = -3; r < cfg.reps; ++r) {  // 3 warm-up rounds of each, not counted
    for (int k = 0; k < 2; ++k) {
      variant v = (k == 0) == (r % 2 == 0) ? variant::plain : variant::reexec;  // alternate the order
      stencil_setup(w);
      discovery_once(v, unroll, w, iters, times);
      if (cfg.verify) errors += stencil_check(w, iters);
      if (r < 0) continue;
      if (v == variant::plain) {
        double c = 0, i = 0;
        for (auto& t : times) c += t.create, i += t.iter;
        plain_create.push_back(c / static_cast<double>(iters));
        plain_iter.push_back(i / static_cast<double>(iters));
      } else {
        double c = 0, i = 0;
        for (long it = 0; it < unroll; ++it) c += times[static_cast<size_t>(it)].create, i += times[static_cast<size_t>(it)].iter;
        rec_create.push_back(c / unroll);
        rec_iter.push_back(i / unroll);
        first_create.push_back(times[0].create);
        c = 0, i = 0;
        for (long it = unroll; it < iters; ++it) c += times[static_cast<size_t>(it)].create, i += times[static_cast<size_t>(it)].iter;
        rep_create.push_back(c / static_cast<double>(iters - unroll));
        rep_iter.push_back(i / static_cast<double>(iters - unroll));
      }
    }
  }
  // Stats of one more graph alone: did it replay?
  stencil_setup(w);
  stats_delta sd;
  sd.start();
  discovery_once(variant::reexec, unroll, w, iters, times);
  weft_stats_t st = sd.now();
  double pc = median(plain_create), pi = median(plain_iter), rc = median(rec_create), ri = median(rec_iter);
  double xc = median(rep_create), xi = median(rep_iter);
  bench_extra e{};
  bench_add(&e,
            "iters=%ld unroll=%d reps=%ld plain_create_ns=%.1f record_create_ns=%.1f "
            "record_first_ns=%.1f replay_create_ns=%.1f plain_iter_ns=%.1f record_iter_ns=%.1f "
            "replay_iter_ns=%.1f disc_speedup=%.2f disc_speedup_iter=%.2f record_vs_plain=%.2f",
            iters, unroll, cfg.reps, pc, rc, median(first_create), xc, pi, ri, xi, xc > 0 ? pc / xc : 0,
            xi > 0 ? pi / xi : 0, pc > 0 ? rc / pc : 0);
  add_graph_stats(&e, st);
  int status = 0;
  if (st.graph_replayed == 0) {
    bench_add(&e, "replay=none");
    if (cfg.verify) status = 1;
  }
  if (cfg.verify) {
    errors += stencil_check(w, iters);
    if (errors == 0) bench_add(&e, "verified=ok");
    else {
      bench_add(&e, "verified=FAIL errors=%ld", errors);
      status = 1;
    }
  }
  bench_options o = line_options("discovery");
  char param[32];
  snprintf(param, sizeof param, "%d", w);
  // ns_per_task: the replayed creation time per task (the figure the ratio is about).
  bench_print(&o, "weft", threads, iters * w, param, xc / w, &e);
  return status;
}

int main_grid(int threads, bool heat) {
  variant v = cfg.var;
  if (!heat && v == variant::barrier) usage_error("jacobi has no barrier variant (use heat)");
  int unroll = cfg.unroll > 0 ? cfg.unroll : (heat ? 1 : 2);
  long sweeps = round_up(cfg.sweeps, unroll);
  gk_grid g;
  if (!gk_make(&g, cfg.n, cfg.b)) usage_error("-n must be a multiple of -b");
  double* u = gk_alloc(&g);
  double* u2 = gk_alloc(&g);
  double* ref = gk_alloc(&g);
  double* ref2 = gk_alloc(&g);
  if (!u || !u2 || !ref || !ref2) die("malloc", WEFT_ERR_OUT_OF_MEMORY);
  // The serial reference first (also the warm-up of the pages).
  gk_init(&g, ref);
  gk_init(&g, ref2);
  const double* expect = heat ? (gk_gs_serial(&g, ref, sweeps), ref) : gk_jacobi_serial(&g, ref, ref2, sweeps);
  // Warm-up of the runtime: 2 sweeps (one round or more) on the real grid, then start again.
  gk_init(&g, u);
  gk_init(&g, u2);
  if (heat) run_heat(v, unroll, g, u, unroll);
  else run_jacobi(v, unroll, g, u, u2, 2 * unroll);
  gk_init(&g, u);
  gk_init(&g, u2);
  stats_delta sd;
  sd.start();
  double wall = heat ? run_heat(v, unroll, g, u, sweeps) : run_jacobi(v, unroll, g, u, u2, sweeps);
  weft_stats_t st = sd.now();
  const double* got = heat ? u : ((sweeps & 1) ? u2 : u);
  size_t bad = gk_diff(&g, got, expect);
  long tasks = sweeps * g.nb * g.nb;
  bench_extra e{};
  bench_add(&e, "ms=%.3f us_per_sweep=%.2f unroll=%d policy=%s hash=%016" PRIx64 " check=%s diff_cells=%zu",
            wall / 1e6, wall / 1e3 / static_cast<double>(sweeps), persistent(v) ? unroll : 0,
            policy_name(cfg.policy), gk_hash(&g, got), bad ? "FAIL" : "ok", bad);
  int status = bad ? 1 : 0;
  if (v != variant::serial) {
    add_graph_stats(&e, st);
    if (persistent(v) && st.graph_replayed == 0) bench_add(&e, "replay=none");
  }
  bench_options o = line_options(heat ? "heat" : "jacobi");
  char param[64];
  snprintf(param, sizeof param, "%dx%d/%d", cfg.n, cfg.b, static_cast<int>(sweeps));
  bench_print(&o, runtime_of(v).c_str(), v == variant::serial ? 1 : threads, tasks, param,
              wall / static_cast<double>(tasks), &e);
  free(u);
  free(u2);
  free(ref);
  free(ref2);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  parse(argc, argv);
  if (cfg.threads > 0) {
    char value[16];
    snprintf(value, sizeof value, "%d", cfg.threads);
    setenv("WEFT_NUM_THREADS", value, 1);
  }
  int s = weft_init();
  if (s != WEFT_OK) die("weft_init", s);
  int threads = weft_num_workers();
  int status;
  if (cfg.pattern == "stencil") status = main_stencil(threads);
  else if (cfg.pattern == "metg") status = main_metg(threads);
  else if (cfg.pattern == "discovery") status = main_discovery(threads);
  else if (cfg.pattern == "heat") status = main_grid(threads, true);
  else if (cfg.pattern == "jacobi") status = main_grid(threads, false);
  else usage_error("unknown pattern");
  s = weft_finalize();
  if (s != WEFT_OK) die("weft_finalize", s);
  return status;
}
