/* micro_omp: the micro-benchmark patterns as OpenMP tasks, plain C built with gcc -O2 -fopenmp.
 *
 * The same binary runs on GCC libgomp (as linked), on LLVM libomp (LD_PRELOAD=libomp.so.5) and on
 * weft's OpenMP door (LD_PRELOAD=libweft.so); the runtime= field of the result line names the one
 * that answered. One thread produces every task (parallel + single); the timed region runs from the
 * first task creation to the end of the producer's taskwait, inside a team started beforehand. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>

#include "common.h"

/* Which OpenMP runtime resolved our calls: weft and libomp export symbols libgomp does not. */
static const char *runtime_name(void) {
  if (dlsym(RTLD_DEFAULT, "weft_init")) return "weft-omp";
  if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call")) return "llvm-omp";
  return "gomp";
}

static int team_size;

static double run_indep(long n) {
  double t0 = 0, t1 = 0;
#pragma omp parallel
#pragma omp single
  {
    team_size = omp_get_num_threads();
    t0 = bench_now_ns();
    for (long i = 0; i < n; ++i) {
#pragma omp task firstprivate(i)
      {
        (void)i;
        bench_indep_body();
      }
    }
#pragma omp taskwait
    t1 = bench_now_ns();
  }
  return t1 - t0;
}

static double run_chain(long n) {
  double t0 = 0, t1 = 0;
  long x = 0; /* the one variable: only its address matters */
  (void)x;    /* gcc 12 calls a variable named only in depend() unused */
#pragma omp parallel
#pragma omp single
  {
    t0 = bench_now_ns();
    for (long i = 0; i < n; ++i) {
#pragma omp task depend(inout : x) firstprivate(i)
      bench_chain_body(i);
    }
#pragma omp taskwait
    t1 = bench_now_ns();
  }
  return t1 - t0;
}

/* stencil_1d with two fields; also the METG kernel (iterations > 0: busy bodies). */
static double run_stencil(int w, long steps, unsigned long iterations) {
  double t0 = 0, t1 = 0;
  long *f0 = bench_field[0], *f1 = bench_field[1];
#pragma omp parallel
#pragma omp single
  {
    t0 = bench_now_ns();
    for (long s = 0; s < steps; ++s) {
      long *out = (s & 1) ? f1 : f0;
      long *in = (s & 1) ? f0 : f1;
      (void)out; /* named only in depend(): see run_chain */
      (void)in;
      for (int c = 0; c < w; ++c) {
        int l = bench_left(c), r = bench_right(c, w);
#pragma omp task depend(out : out[c]) depend(in : in[l], in[c], in[r]) firstprivate(s, c, w, iterations)
        {
          if (iterations) bench_spin(iterations);
          bench_stencil_body(s, c, w);
        }
      }
    }
#pragma omp taskwait
    t1 = bench_now_ns();
  }
  return t1 - t0;
}

/* GCC accepts depend(inoutset:) from version 13 on; CMake tells us whether this compiler does. */
#ifdef BENCH_HAVE_OMP_INOUTSET
static double run_inoutset(long rounds, int members, int readers) {
  double t0 = 0, t1 = 0;
  long x = 0;
  (void)x; /* named only in depend(): see run_chain */
#pragma omp parallel
#pragma omp single
  {
    t0 = bench_now_ns();
    for (long r = 0; r < rounds; ++r) {
      for (int i = 0; i < members; ++i) {
#pragma omp task depend(inoutset : x) firstprivate(r)
        bench_member_body(r);
      }
      for (int i = 0; i < readers; ++i) {
#pragma omp task depend(in : x) firstprivate(r)
        bench_reader_body(r);
      }
#pragma omp task depend(out : x) firstprivate(r)
      bench_close_body(r);
    }
#pragma omp taskwait
    t1 = bench_now_ns();
  }
  return t1 - t0;
}
#endif

/* The gate out(g) holds n tasks in(g)+out(cell i); RSS is read before and after creating them. */
static double run_pending(long n, long *rss_before, long *rss_after, int *held) {
  double t0 = 0, t1 = 0;
  char g = 0;
  (void)g; /* named only in depend(): see run_chain */
  char *cells = (char *)malloc((size_t)n);
  if (!cells) {
    fprintf(stderr, "micro_omp: out of memory\n");
    exit(1);
  }
  memset(cells, 0, (size_t)n); /* resident before the first reading */
#pragma omp parallel
#pragma omp single
  {
    bench_is_producer = 1;
#pragma omp task depend(out : g)
    bench_gate_body();
    *rss_before = bench_rss_bytes();
    t0 = bench_now_ns();
    for (long i = 0; i < n; ++i) {
#pragma omp task depend(in : g) depend(out : cells[i])
      bench_pending_body();
    }
    t1 = bench_now_ns();
    *rss_after = bench_rss_bytes();
    *held = bench_gate_open();
#pragma omp taskwait
    bench_is_producer = 0;
  }
  free(cells);
  return t1 - t0;
}

int main(int argc, char **argv) {
  bench_options o;
  bench_extra e = {{0}, 0};
  const char *runtime;
  char param[64] = "-";
  double wall = 0;
  long n = 0;
  int status;

  bench_parse(argc, argv, &o);
  if (o.threads > 0) omp_set_num_threads(o.threads);
  runtime = runtime_name();
  run_indep(1000); /* warm-up: starts the team */

#ifdef BENCH_HAVE_OMP_INOUTSET
#define BENCH_OMP_INOUTSET_RUNNER run_inoutset
#else
#define BENCH_OMP_INOUTSET_RUNNER NULL
  if (o.pattern == BENCH_INOUTSET)
    return bench_unsupported(&o, runtime, team_size, "compiler-lacks-depend-inoutset");
#endif

  bench_verify = o.verify;
  const bench_runners runners = {run_indep, run_chain, run_stencil, BENCH_OMP_INOUTSET_RUNNER, run_pending};
  int ran = bench_run(&o, &runners, runtime, team_size, &e, &n, &wall, param, sizeof param);
  if (ran < 0) return 1;
  if (ran == 2) {
    return 0;
  }
  status = bench_verify_result(&e, n);
  bench_print(&o, runtime, team_size, n, param, wall / (double)n, &e);
  return status;
}
