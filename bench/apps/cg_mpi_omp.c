/* cg_mpi_omp: distributed conjugate gradient on the 27-point Poisson matrix (cg_mpi.h) as MPI + OpenMP,
 * plain C built with gcc -O2 -fopenmp and linked to MPI only. One binary for every OpenMP runtime:
 * libgomp as linked, LLVM libomp (LD_PRELOAD=libomp.so.5) or weft's OpenMP door (LD_PRELOAD=libweft.so,
 * with libweft-mpi.so beside it for task-aware MPI); runtime= names the one that answered,
 * task_aware_mpi= whether blocking MPI calls inside tasks suspend the task or hold the thread.
 *
 *   mpirun -np R cg_mpi_omp [--variant V] [-n NX] [-i ITERS] [-t T] [-p P] [--no-check]
 *
 * Each rank owns a slab of z-planes (cg_mpi.h); -t T is the chunks per loop on each rank. Variants:
 *   parallel-for  the classic bulk-synchronous code (HPCG's shape): per iteration the halo by
 *                 MPI_Sendrecv (two shifts), then one `parallel for schedule(static)` per vector loop,
 *                 the dots with reduction(+:) clauses and MPI_Allreduce between the parallel regions
 *                 (the master alone calls MPI: MPI_THREAD_FUNNELED). T is not used (block= prints it).
 *   tasks         one task graph for the whole solve, no taskwait inside the iteration loop: cg_omp's
 *                 omp-tasks graph on the rank's rows plus, per iteration and neighbour, a send task
 *                 (depend in: the p chunks holding the plane it sends, iterator) and a receive task
 *                 (depend out: the ghost plane), with BLOCKING MPI_Send / MPI_Recv inside; a SpMV chunk
 *                 also depends on the ghost planes its rows touch; the alpha and beta tasks sum the
 *                 rank's partials and call the BLOCKING MPI_Allreduce. MPI_THREAD_MULTIPLE. On
 *                 libgomp / LLVM libomp a thread inside a blocking call is lost to the team: with one
 *                 thread per rank a rank can wait in a receive while the other waits in the collective
 *                 (a deadlock, expected); weft's task-aware MPI suspends the task instead.
 * After the timed solve x is gathered on rank 0 and checked against a serial CG there (cg_check). */
#define _GNU_SOURCE
#include <omp.h>

#include "app_common.h"
#include "cg_mpi.h"

static const char *const variants[] = {"parallel-for", "tasks", NULL};
enum { V_FOR, V_TASKS };

/* --- bulk-synchronous ---------------------------------------------------------------------------- */

static void halo_sendrecv(cgm_slab *s, long it) {
  const int n = (int)s->plane;
  double *p = s->st.p;
  MPI_Sendrecv(p, n, MPI_DOUBLE, s->lower, cgm_tag(it, CGM_TO_LOWER), cgm_ghost_hi(s), n, MPI_DOUBLE, s->upper,
               cgm_tag(it, CGM_TO_LOWER), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(p + s->rows - s->plane, n, MPI_DOUBLE, s->upper, cgm_tag(it, CGM_TO_UPPER), cgm_ghost_lo(s), n,
               MPI_DOUBLE, s->lower, cgm_tag(it, CGM_TO_UPPER), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void cg_parallel_for(cgm_slab *s, long iters) {
  const long rows = s->rows;
  const int64_t *rp = s->A.rowptr;
  const int32_t *col = s->A.col;
  const double *val = s->A.val, *pext = s->pext;
  double *x = s->st.x, *r = s->st.r, *p = s->st.p, *q = s->st.q;
  cg_scalars *sc = s->st.s;
  long it, i;
  for (it = 0; it < iters; ++it) {
    double pq = 0.0, rr_new = 0.0, mine, alpha, beta;
    halo_sendrecv(s, it);
#pragma omp parallel for schedule(static)
    for (i = 0; i < rows; ++i) {
      double t = 0.0;
      int64_t k;
      for (k = rp[i]; k < rp[i + 1]; ++k) t += val[k] * pext[col[k]];
      q[i] = t;
    }
    mine = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : mine)
    for (i = 0; i < rows; ++i) mine += p[i] * q[i];
    MPI_Allreduce(&mine, &pq, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    alpha = sc->rr / pq;
    sc->alpha = alpha;
#pragma omp parallel for schedule(static)
    for (i = 0; i < rows; ++i) x[i] += alpha * p[i];
#pragma omp parallel for schedule(static)
    for (i = 0; i < rows; ++i) r[i] += -alpha * q[i];
    mine = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : mine)
    for (i = 0; i < rows; ++i) mine += r[i] * r[i];
    MPI_Allreduce(&mine, &rr_new, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    beta = rr_new / sc->rr;
    sc->beta = beta;
    sc->rr = rr_new;
#pragma omp parallel for schedule(static)
    for (i = 0; i < rows; ++i) p[i] = r[i] + beta * p[i];
  }
}

/* --- tasks --------------------------------------------------------------------------------------- */

/* The tasks of one iteration. Chunk c of a vector is named by its first element (&v[lo[c]]), a ghost
 * plane by its first element; a SpMV chunk that does not touch a ghost plane names its own p chunk
 * again in that place, so that every SpMV task has the same clauses. The receives also wait for the
 * last beta (cg_mpi.h says why). */
static void submit_iteration(cgm_slab *s, long it) {
  const cg_matrix *A = &s->A;
  const cg_chunks *ck = &s->ck;
  const int T = ck->T, n = (int)s->plane;
  const long *lo = ck->lo, plane = s->plane, rows = s->rows;
  double *pext = s->pext, *x = s->st.x, *r = s->st.r, *p = s->st.p, *q = s->st.q;
  double *pqp = s->st.pq_part, *rrp = s->st.rr_part;
  cg_scalars *sc = s->st.s;
  int c;
  if (s->lower != MPI_PROC_NULL) {
#pragma omp task depend(iterator(int j = 0 : s->first_hi + 1), in : p[lo[j]])
    MPI_Send(p, n, MPI_DOUBLE, s->lower, cgm_tag(it, CGM_TO_LOWER), MPI_COMM_WORLD);
#pragma omp task depend(out : pext[0]) depend(in : sc->beta)
    MPI_Recv(pext, n, MPI_DOUBLE, s->lower, cgm_tag(it, CGM_TO_UPPER), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (s->upper != MPI_PROC_NULL) {
#pragma omp task depend(iterator(int j = s->last_lo : T), in : p[lo[j]])
    MPI_Send(p + rows - plane, n, MPI_DOUBLE, s->upper, cgm_tag(it, CGM_TO_UPPER), MPI_COMM_WORLD);
#pragma omp task depend(out : pext[plane + rows]) depend(in : sc->beta)
    MPI_Recv(pext + plane + rows, n, MPI_DOUBLE, s->upper, cgm_tag(it, CGM_TO_LOWER), MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  }
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(iterator(int j = ck->reach_lo[c] : ck->reach_hi[c] + 1), in : p[lo[j]]) \
    depend(in : pext[s->need_lo[c] ? 0 : plane + lo[c]], pext[s->need_hi[c] ? plane + rows : plane + lo[c]])         \
    depend(out : q[lo[c]])
    cg_spmv(A, pext, q, lo[c], lo[c + 1]);
  }
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(in : p[lo[c]], q[lo[c]]) depend(out : pqp[c])
    pqp[c] = cg_dot(p, q, lo[c], lo[c + 1]);
  }
#pragma omp task depend(iterator(int j = 0 : T), in : pqp[j]) depend(in : sc->rr) depend(out : sc->alpha)
  cgm_alpha_step(sc, pqp, T);
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(in : sc->alpha, p[lo[c]]) depend(inout : x[lo[c]])
    cg_axpy(x, sc->alpha, p, lo[c], lo[c + 1]);
  }
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(in : sc->alpha, q[lo[c]]) depend(inout : r[lo[c]])
    cg_axpy(r, -sc->alpha, q, lo[c], lo[c + 1]);
  }
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(in : r[lo[c]]) depend(out : rrp[c])
    rrp[c] = cg_dot(r, r, lo[c], lo[c + 1]);
  }
#pragma omp task depend(iterator(int j = 0 : T), in : rrp[j]) depend(inout : sc->rr) depend(out : sc->beta)
  cgm_beta_step(sc, rrp, T);
  for (c = 0; c < T; ++c) {
#pragma omp task firstprivate(c) depend(in : sc->beta, r[lo[c]]) depend(inout : p[lo[c]])
    cg_xpby(p, r, sc->beta, lo[c], lo[c + 1]);
  }
}

static void cg_tasks(cgm_slab *s, long iters) {
#pragma omp parallel
#pragma omp single
  {
    long it;
    for (it = 0; it < iters; ++it) submit_iteration(s, it);
#pragma omp taskwait
  }
}

int main(int argc, char **argv) {
  cg_options o;
  cgm_slab s;
  int team = 1, ok, variant, aware;
  double t0, seconds;
  weft_stats_t stats;
  const char *runtime;

  cgm_parse(&o, argc, argv, "cg_mpi_omp", variants);
  variant = o.variant_index;
  cgm_start(&s, &o, &argc, &argv, variant == V_TASKS ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED, "cg_mpi_omp");
  if (o.threads > 0) omp_set_num_threads(o.threads);
  /* Starts the team before the clock (and learns its size). */
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  app_weft_reset_stats();

  MPI_Barrier(MPI_COMM_WORLD);
  t0 = app_now();
  if (variant == V_FOR) cg_parallel_for(&s, o.iters);
  else cg_tasks(&s, o.iters);
  seconds = app_now() - t0;
  app_weft_stats(&stats);

  runtime = app_omp_runtime();
  aware = app_mpi_task_aware();
  ok = cgm_finish(&o, &s, seconds, runtime, team, variant == V_TASKS ? cgm_task_count(&o, &s) : -1,
                  strcmp(runtime, "weft") == 0 ? (long long)stats.edges_created : -1,
                  aware > 0 ? "task_aware_mpi=yes" : "task_aware_mpi=no", "cg_mpi_omp");
  cgm_free(&s);
  MPI_Finalize();
  return ok ? 0 : 1;
}
