// micro_weft: the micro-benchmark patterns on weft's native door, through the C API of weft.h
// (weft_task_create with inline arguments, weft_task_depend, weft_task_submit, weft_taskwait):
// the cheapest path weft offers, with no closure to build. The main thread is worker 0 and the
// producer. Workers: WEFT_NUM_THREADS (set from -p before weft_init when -p is given).
#include <weft/weft.h>

#include <cinttypes>

#include "common.h"

namespace {

[[noreturn]] void die(const char* what, int status) {
  fprintf(stderr, "micro_weft: %s: %s\n", what, weft_strerror(status));
  exit(1);
}

// Creates a task with an inline copy of args; dies on error (none is expected in a benchmark).
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

// --- task bodies: each receives its inline argument block -----------------------------------------

struct step_args {
  long s;
  int c, w;
  unsigned long iterations;
};

void indep_fn(void*) { bench_indep_body(); }
void chain_fn(void* a) { bench_chain_body(*static_cast<long*>(a)); }
void stencil_fn(void* a) {
  const step_args* p = static_cast<const step_args*>(a);
  if (p->iterations) bench_spin(p->iterations);
  bench_stencil_body(p->s, p->c, p->w);
}
void member_fn(void* a) { bench_member_body(*static_cast<long*>(a)); }
void reader_fn(void* a) { bench_reader_body(*static_cast<long*>(a)); }
void close_fn(void* a) { bench_close_body(*static_cast<long*>(a)); }
void gate_fn(void*) { bench_gate_body(); }
void pending_fn(void*) { bench_pending_body(); }

// --- patterns: each returns the wall time from the first creation to the end of the taskwait -----

double run_indep(long n) {
  double t0 = bench_now_ns();
  for (long i = 0; i < n; ++i) submit(create(indep_fn, nullptr, 0));
  taskwait();
  return bench_now_ns() - t0;
}

double run_chain(long n) {
  long x = 0;  // the one variable: only its address matters
  double t0 = bench_now_ns();
  for (long i = 0; i < n; ++i) {
    weft_task_t* t = create(chain_fn, &i, sizeof i);
    depend(t, WEFT_DEP_INOUT, &x);
    submit(t);
  }
  taskwait();
  return bench_now_ns() - t0;
}

// Task (s, c): out f[s%2][c], in f[(s+1)%2][c-1], [c], [c+1] (clamped at the edges, so the edge
// tasks name one cell twice, as the OpenMP version does).
double run_stencil(int w, long steps, unsigned long iterations) {
  double t0 = bench_now_ns();
  for (long s = 0; s < steps; ++s) {
    const long* in = bench_field[(s + 1) & 1];
    const long* out = bench_field[s & 1];
    for (int c = 0; c < w; ++c) {
      step_args a{s, c, w, iterations};
      weft_task_t* t = create(stencil_fn, &a, sizeof a);
      depend(t, WEFT_DEP_OUT, &out[c]);
      depend(t, WEFT_DEP_IN, &in[bench_left(c)]);
      depend(t, WEFT_DEP_IN, &in[c]);
      depend(t, WEFT_DEP_IN, &in[bench_right(c, w)]);
      submit(t);
    }
  }
  taskwait();
  return bench_now_ns() - t0;
}

double run_inoutset(long rounds, int members, int readers) {
  long x = 0;
  double t0 = bench_now_ns();
  for (long r = 0; r < rounds; ++r) {
    for (int i = 0; i < members; ++i) {
      weft_task_t* t = create(member_fn, &r, sizeof r);
      depend(t, WEFT_DEP_INOUTSET, &x);
      submit(t);
    }
    for (int i = 0; i < readers; ++i) {
      weft_task_t* t = create(reader_fn, &r, sizeof r);
      depend(t, WEFT_DEP_IN, &x);
      submit(t);
    }
    weft_task_t* t = create(close_fn, &r, sizeof r);
    depend(t, WEFT_DEP_OUT, &x);
    submit(t);
  }
  taskwait();
  return bench_now_ns() - t0;
}

// The gate out(g) holds n tasks in(g) + out(cell i); RSS is read before and after creating them.
double run_pending(long n, long* rss_before, long* rss_after, int* held) {
  char g = 0;
  char* cells = static_cast<char*>(malloc(static_cast<size_t>(n)));
  if (!cells) die("malloc", WEFT_ERR_OUT_OF_MEMORY);
  memset(cells, 0, static_cast<size_t>(n));  // resident before the first reading
  bench_is_producer = 1;
  weft_task_t* gate = create(gate_fn, nullptr, 0);
  depend(gate, WEFT_DEP_OUT, &g);
  submit(gate);
  *rss_before = bench_rss_bytes();
  double t0 = bench_now_ns();
  for (long i = 0; i < n; ++i) {
    weft_task_t* t = create(pending_fn, nullptr, 0);
    depend(t, WEFT_DEP_IN, &g);
    depend(t, WEFT_DEP_OUT, &cells[i]);
    submit(t);
  }
  double t1 = bench_now_ns();
  *rss_after = bench_rss_bytes();
  *held = bench_gate_open();
  taskwait();
  bench_is_producer = 0;
  free(cells);
  return t1 - t0;
}

void add_stats(bench_extra* e) {
  weft_stats_t st{};
  if (weft_get_stats(&st) != WEFT_OK) return;
  bench_add(e,
            "edges=%" PRIu64 " elided=%" PRIu64 " pruned=%" PRIu64 " redirects=%" PRIu64
            " steals=%" PRIu64 " throttle_waits=%" PRIu64 " max_live=%" PRIu64 " task_bytes=%" PRIu64,
            st.edges_created, st.edges_elided, st.edges_pruned, st.redirect_nodes, st.steals,
            st.throttle_waits, st.max_live_tasks, st.task_bytes);
}

}  // namespace

int main(int argc, char** argv) {
  bench_options o;
  bench_parse(argc, argv, &o);
  if (o.threads > 0) {
    char value[16];
    snprintf(value, sizeof value, "%d", o.threads);
    setenv("WEFT_NUM_THREADS", value, 1);
  }
  int s = weft_init();
  if (s != WEFT_OK) die("weft_init", s);
  // BENCH_PROPAGATION=none|path|depth|detect: what the priority propagation of task-aware MPI's
  // policies (sa = path, fa = detect) costs per task, the edges recorded and walked with no MPI.
  const char* propagation = getenv("BENCH_PROPAGATION");
  if (propagation && *propagation) {
    static const char* const modes[] = {"as_given", "none", "path", "depth", "detect"};
    int mode = -1;
    for (int m = 0; m < 5; ++m)
      if (strcmp(propagation, modes[m]) == 0) mode = m;
    if (mode < 0) {
      fprintf(stderr, "micro_weft: BENCH_PROPAGATION=%s: expected as_given, none, path, depth or detect\n", propagation);
      return 2;
    }
    s = weft_set_priority_propagation(mode);
    if (s != WEFT_OK) die("weft_set_priority_propagation", s);
  }
  int threads = weft_num_workers();
  const char* runtime = "weft";
  run_indep(1000);  // warm-up: fills the task pools, wakes the workers

  bench_extra e{};
  char param[64] = "-";
  double wall = 0;
  long n = 0;
  bench_verify = o.verify;
  weft_reset_stats();
  const bench_runners runners = {run_indep, run_chain, run_stencil, run_inoutset, run_pending};
  int ran = bench_run(&o, &runners, runtime, threads, &e, &n, &wall, param, sizeof param);
  if (ran < 0) die("malloc", WEFT_ERR_OUT_OF_MEMORY);
  if (ran == 2) {
    weft_finalize();
    return 0;
  }
  if (o.pattern == BENCH_PENDING) {
    // The throttling bound in force names the row: the producer may not hold n tasks under it.
    const char* max_tasks = getenv("WEFT_MAX_TASKS");
    snprintf(param, sizeof param, "max_tasks=%s", max_tasks && *max_tasks ? max_tasks : "default");
  }
  add_stats(&e);
  if (propagation && *propagation) bench_add(&e, "propagation=%s", propagation);
  int status = bench_verify_result(&e, n);
  bench_print(&o, runtime, threads, n, param, wall / static_cast<double>(n), &e);
  s = weft_finalize();
  if (s != WEFT_OK) die("weft_finalize", s);
  return status;
}
