/* cg_omp: conjugate gradient on the 27-point Poisson matrix (cg_kernels.h) as OpenMP, plain C built
 * with gcc -O2 -fopenmp. One binary for every OpenMP runtime: libgomp as linked, LLVM libomp
 * (LD_PRELOAD=libomp.so.5) or weft's OpenMP door (LD_PRELOAD=libweft.so); runtime= names the one that
 * answered. Not linked to weft: weft/omp_ext.h's graph calls are weak and do nothing off weft.
 *
 *   cg_omp [--variant V] [-n NX] [-i ITERS] [-t T] [-p P] [--no-check]
 *
 * Variants:
 *   parallel-for    fork-join, as HPCG's reference code: one `parallel for schedule(static)` per vector
 *                   loop (six per iteration), the dots with reduction(+:) clauses, the scalars computed
 *                   by the master between loops. T is not used (static schedule: one contiguous block
 *                   of rows per thread); block= still prints it.
 *   omp-tasks       one dependence graph for the whole solve (no taskwait inside the iteration loop):
 *                   per iteration T tasks per loop on contiguous row chunks; SpMV chunk c
 *                   depend(in: the p chunks its columns reach) (iterator), out: q chunk); the dots
 *                   write one partial per chunk (out: part[c]) and one small task per dot depends on
 *                   all T partials (iterator) and computes alpha = rr / pq, or beta = rr' / rr and
 *                   rr = rr'; the vector updates depend on the scalar (in) and their chunks. GCC 12 has
 *                   no depend(inoutset:), hence the partials. 6 T + 2 tasks per iteration.
 *   omp-persistent  the same loop between weft_graph_begin() / weft_graph_iteration() per CG iteration /
 *                   weft_graph_end() (re-execute mode): recorded once and replayed on weft, plain tasks
 *                   on libgomp / libomp. Every iteration creates the same tasks with the same arguments:
 *                   the scalars live in one cg_scalars at a fixed address, read and written by the
 *                   tasks through a pointer (never captured by value), and the chunk bounds in arrays.
 *   serial          the reference iteration (cg_serial_iteration) on one thread, no OpenMP.
 *
 * The chunk sums are added in chunk order, so omp-tasks and omp-persistent reproduce the serial bits;
 * parallel-for's reduction order differs (rounding only). After the timed solve the serial reference
 * runs in the same process (--no-check skips it): error= is the true residual ||b - A x|| / ||b||;
 * check=ok when it is below 1.25/(ITERS+1) (cg_threshold) and within 1e-10 (relative; 1e-14 absolute
 * for runs converged to rounding) of the serial run's. check=FAIL exits 1. gflops = (2 nnz + 10 rows) * ITERS / seconds / 1e9 (SpMV 2 per nonzero;
 * 2 dots, 2 axpys, 1 xpby: 10 per row). */
#define _GNU_SOURCE
#include <omp.h>

#include <weft/omp_ext.h>

#include "app_common.h"
#include "cg_kernels.h"

static const char *const variants[] = {"parallel-for", "omp-tasks", "omp-persistent", "serial", NULL};
enum { V_FOR, V_TASKS, V_PERSISTENT, V_SERIAL };

/* --- fork-join ---------------------------------------------------------------------------------- */

static void cg_parallel_for(const cg_matrix *A, cg_state *st, long iters) {
  const long rows = A->rows;
  const int64_t *rp = A->rowptr;
  const int32_t *col = A->col;
  const double *val = A->val;
  double *x = st->x, *r = st->r, *p = st->p, *q = st->q;
  cg_scalars *s = st->s;
  long it, i;
  for (it = 0; it < iters; ++it) {
    double pq = 0.0, rr_new = 0.0, alpha, beta;
#pragma omp parallel for schedule(static)
    for (i = 0; i < rows; ++i) {
      double t = 0.0;
      int64_t k;
      for (k = rp[i]; k < rp[i + 1]; ++k) t += val[k] * p[col[k]];
      q[i] = t;
    }
#pragma omp parallel for schedule(static) reduction(+ : pq)
    for (i = 0; i < rows; ++i) pq += p[i] * q[i];
    alpha = s->rr / pq;
    s->alpha = alpha;
#pragma omp parallel for schedule(static)
    for (i = 0; i < rows; ++i) x[i] += alpha * p[i];
#pragma omp parallel for schedule(static)
    for (i = 0; i < rows; ++i) r[i] += -alpha * q[i];
#pragma omp parallel for schedule(static) reduction(+ : rr_new)
    for (i = 0; i < rows; ++i) rr_new += r[i] * r[i];
    beta = rr_new / s->rr;
    s->beta = beta;
    s->rr = rr_new;
#pragma omp parallel for schedule(static)
    for (i = 0; i < rows; ++i) p[i] = r[i] + beta * p[i];
  }
}

/* --- tasks -------------------------------------------------------------------------------------- */

/* The tasks of one CG iteration. Chunk c of a vector is named by its first element (&v[lo[c]]). */
static void cg_submit_iteration(const cg_matrix *A, const cg_chunks *ck, cg_state *st) {
  const int T = ck->T;
  const long *lo = ck->lo;
  double *x = st->x, *r = st->r, *p = st->p, *q = st->q, *pqp = st->pq_part, *rrp = st->rr_part;
  cg_scalars *s = st->s;
  int c;
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(iterator(int j = ck->reach_lo[c] : ck->reach_hi[c] + 1), in : p[lo[j]]) \
    depend(out : q[lo[c]])
    cg_spmv(A, p, q, lo[c], lo[c + 1]);
  }
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(in : p[lo[c]], q[lo[c]]) depend(out : pqp[c])
    pqp[c] = cg_dot(p, q, lo[c], lo[c + 1]);
  }
#pragma omp task depend(iterator(int j = 0 : T), in : pqp[j]) depend(in : s->rr) depend(out : s->alpha)
  cg_alpha_step(s, pqp, T);
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(in : s->alpha, p[lo[c]]) depend(inout : x[lo[c]])
    cg_axpy(x, s->alpha, p, lo[c], lo[c + 1]);
  }
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(in : s->alpha, q[lo[c]]) depend(inout : r[lo[c]])
    cg_axpy(r, -s->alpha, q, lo[c], lo[c + 1]);
  }
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(in : r[lo[c]]) depend(out : rrp[c])
    rrp[c] = cg_dot(r, r, lo[c], lo[c + 1]);
  }
#pragma omp task depend(iterator(int j = 0 : T), in : rrp[j]) depend(inout : s->rr) depend(out : s->beta)
  cg_beta_step(s, rrp, T);
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(in : s->beta, r[lo[c]]) depend(inout : p[lo[c]])
    cg_xpby(p, r, s->beta, lo[c], lo[c + 1]);
  }
}

static void cg_tasks(const cg_matrix *A, const cg_chunks *ck, cg_state *st, long iters, int persistent) {
#pragma omp parallel
#pragma omp single
  {
    long it;
    int rc;
    if (persistent && (rc = weft_graph_begin()) != 0) app_die("cg_omp: weft_graph_begin failed (status %d)", rc);
    for (it = 0; it < iters; ++it) {
      if (persistent && (rc = weft_graph_iteration()) != 0)
        app_die("cg_omp: weft_graph_iteration failed (status %d)", rc);
      cg_submit_iteration(A, ck, st);
    }
    if (persistent && (rc = weft_graph_end()) != 0) app_die("cg_omp: weft_graph_end failed (status %d)", rc);
#pragma omp taskwait
  }
}

int main(int argc, char **argv) {
  cg_options o;
  cg_problem pb;
  int team = 1, ok, variant;
  long it;
  double t0, seconds, error = 0.0;
  weft_stats_t stats;
  app_result res;

  cg_parse(&o, argc, argv, "cg_omp", variants);
  variant = o.variant_index;
  cg_setup(&pb, &o, "cg_omp");
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
    case V_FOR: cg_parallel_for(&pb.A, &pb.st, o.iters); break;
    case V_SERIAL:
      for (it = 0; it < o.iters; ++it) cg_serial_iteration(&pb.A, &pb.ck, &pb.st);
      break;
    default: cg_tasks(&pb.A, &pb.ck, &pb.st, o.iters, variant == V_PERSISTENT); break;
  }
  seconds = app_now() - t0;
  app_weft_stats(&stats);

  ok = cg_check(&pb, &o, &error, "cg_omp");

  memset(&res, 0, sizeof res);
  res.app = "cg";
  res.variant = o.variant;
  res.runtime = app_omp_runtime();
  res.threads = team;
  res.size = pb.A.rows;
  res.block = o.T;
  res.iters = o.iters;
  res.seconds = seconds;
  res.gflops = cg_gflops(&pb.A, o.iters, seconds);
  res.tasks = (variant == V_TASKS || variant == V_PERSISTENT) ? cg_task_count(&o) : -1;
  res.edges = strcmp(app_omp_runtime(), "weft") == 0 ? (long long)stats.edges_created : -1;
  res.ok = ok;
  res.error = error;
  app_print_result(&res);
  cg_state_free(&pb.st);
  cg_chunks_free(&pb.ck);
  cg_matrix_free(&pb.A);
  free(pb.b);
  return ok ? 0 : 1;
}
