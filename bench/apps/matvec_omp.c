/* matvec_omp: multi-matvec and dense Jacobi (matvec_kernels.h) as OpenMP, plain C built with
 * gcc -O2 -fopenmp. One binary for every OpenMP runtime: libgomp as linked, LLVM libomp
 * (LD_PRELOAD=libomp.so.5) or weft's OpenMP door (LD_PRELOAD=libweft.so); runtime= names the one that
 * answered. Not linked to weft: weft/omp_ext.h's graph calls are weak and do nothing off weft.
 *
 *   matvec_omp [--kernel matvec|jacobi] [--variant V] [-n N] [-t T] [-s STEPS] [-p P] [--no-check]
 *
 * Variants:
 *   parallel-for    fork-join: one parallel region per run, per step an `omp for schedule(static)` over
 *                   the rows (implicit barrier at its end). T is not used (one contiguous block of rows
 *                   per thread); block= still prints it.
 *   omp-tasks       one task per row block per step, no barrier between steps. matvec: depend(in: x)
 *                   (the whole vector by its first element) depend(inout: y block); jacobi:
 *                   depend(iterator: in: every block of the old vector) depend(out: block of the new).
 *   omp-persistent  the same loop between weft_graph_begin_with (re-execute mode; jacobi: unroll 2,
 *                   since the vectors swap every step) / weft_graph_iteration per step /
 *                   weft_graph_end: replayed on weft, plain tasks on libgomp / libomp. The tasks of
 *                   every step (every second step for jacobi) are the same: the problem's address and
 *                   the block index as arguments, the accesses computed from them.
 *   serial          the reference (mv_serial) on one thread, no OpenMP.
 *
 * After the timed run the serial reference runs in the same process (--no-check skips it): error= is
 * the largest difference to it, which must be 0 (check=FAIL and exit 1 otherwise).
 * gflops = 2 N^2 STEPS / seconds / 1e9. */
#define _GNU_SOURCE
#include <omp.h>

#include <weft/omp_ext.h>

#include "app_common.h"
#include "matvec_kernels.h"

static const char *const variants[] = {"parallel-for", "omp-tasks", "omp-persistent", "serial", NULL};
enum { V_FOR, V_TASKS, V_PERSISTENT, V_SERIAL };

static void run_parallel_for(const mv_problem *pb, long steps) {
  const long n = pb->n;
#pragma omp parallel
  {
    long s, i;
    for (s = 0; s < steps; ++s) {
#pragma omp for schedule(static)
      for (i = 0; i < n; ++i) mv_block(pb, s, i, i + 1);
    }
  }
}

/* The tasks of step s. Block b of a vector is named by its first element. */
static void submit_step(const mv_problem *pb, long s) {
  const int T = pb->T;
  const long *lo = pb->lo;
  int b;
  if (pb->kernel == MV_MATVEC) {
    const double *x = pb->x;
    double *y = pb->v[0];
    for (b = 0; b < T; ++b) {
#pragma omp task firstprivate(b) depend(in : x[0]) depend(inout : y[lo[b]])
      mv_matvec_rows(pb->A, pb->n, x, y, lo[b], lo[b + 1]);
    }
  } else {
    const double *xo = pb->v[s & 1];
    double *xn = pb->v[(s + 1) & 1];
    for (b = 0; b < T; ++b) {
#pragma omp task firstprivate(b, xo, xn) depend(iterator(int j = 0 : T), in : xo[lo[j]]) depend(out : xn[lo[b]])
      mv_jacobi_rows(pb->A, pb->diag, pb->b, pb->n, xo, xn, lo[b], lo[b + 1]);
    }
  }
}

static void run_tasks(const mv_problem *pb, long steps, int persistent) {
#pragma omp parallel
#pragma omp single
  {
    long s;
    int rc;
    if (persistent) {
      weft_graph_options_t opt;
      memset(&opt, 0, sizeof opt);
      opt.mode = WEFT_GRAPH_REEXECUTE;
      opt.unroll = pb->kernel == MV_JACOBI ? 2 : 1;
      if ((rc = weft_graph_begin_with(&opt)) != 0) app_die("matvec_omp: weft_graph_begin_with failed (status %d)", rc);
    }
    for (s = 0; s < steps; ++s) {
      if (persistent && (rc = weft_graph_iteration()) != 0)
        app_die("matvec_omp: weft_graph_iteration failed (status %d)", rc);
      submit_step(pb, s);
    }
    if (persistent && (rc = weft_graph_end()) != 0) app_die("matvec_omp: weft_graph_end failed (status %d)", rc);
#pragma omp taskwait
  }
}

int main(int argc, char **argv) {
  mv_options o;
  mv_problem pb;
  int team = 1, ok = 1, variant;
  double t0, seconds, error = 0.0;
  weft_stats_t stats;
  app_result res;

  mv_parse(&o, argc, argv, "matvec_omp", variants);
  variant = o.variant_index;
  if (mv_build(&pb, o.kernel, o.n, o.T) != 0) app_die("matvec_omp: out of memory for N = %ld", o.n);
  if (o.threads > 0) omp_set_num_threads(o.threads);
  if (variant != V_SERIAL) {
    /* Starts the team before the clock (and learns its size). */
#pragma omp parallel
    {
#pragma omp single
      team = omp_get_num_threads();
    }
  }
  app_weft_reset_stats();

  t0 = app_now();
  switch (variant) {
    case V_FOR: run_parallel_for(&pb, o.steps); break;
    case V_SERIAL: mv_serial(&pb, o.steps); break;
    default: run_tasks(&pb, o.steps, variant == V_PERSISTENT); break;
  }
  seconds = app_now() - t0;
  app_weft_stats(&stats);

  if (o.check) {
    error = mv_check(&pb, o.steps, "matvec_omp");
    ok = error == 0.0;
  }

  memset(&res, 0, sizeof res);
  res.app = mv_app_name(o.kernel);
  res.variant = o.variant;
  res.runtime = app_omp_runtime();
  res.threads = team;
  res.size = o.n;
  res.block = o.T;
  res.iters = o.steps;
  res.seconds = seconds;
  res.gflops = mv_gflops(&o, seconds);
  res.tasks = (variant == V_TASKS || variant == V_PERSISTENT) ? (long long)o.T * o.steps : -1;
  res.edges = strcmp(app_omp_runtime(), "weft") == 0 ? (long long)stats.edges_created : -1;
  res.ok = ok;
  res.error = error;
  app_print_result(&res);
  mv_free(&pb);
  return ok ? 0 : 1;
}
