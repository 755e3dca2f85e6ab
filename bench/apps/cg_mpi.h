/* Distributed conjugate gradient (bench/apps, issue 9): what cg_mpi_omp.c (gcc -fopenmp + MPI) and
 * cg_mpi_weft.cpp (native weft + libweft-mpi) share: the z-slab decomposition of cg_kernels.h's
 * 27-point Poisson matrix, the ghost planes, the chunks and what each reads, the two scalar steps with
 * their MPI_Allreduce, the start and end of a run (MPI_Init_thread, timing, the gathered check, the
 * RESULT line). The kernels (SpMV, dot, axpy, xpby) and the check are cg_kernels.h's. C11 and C++20;
 * everything static.
 *
 * Rank r of R owns the z-planes [r nx / R, (r + 1) nx / R) (nx >= R), i.e. rows z0 nx^2 ..
 * (z0 + nz) nx^2 - 1 of the global matrix, in the same order. p lives in an extended vector: the
 * plane below (from the rank below), my rows, the plane above (from the rank above); my matrix rows
 * are built as cg_build builds them, columns renumbered into that vector (ascending as before), so a
 * row's SpMV adds the same products in the same order. x, r, q hold my rows only.
 *
 * One iteration per rank, each loop cut into T chunks of my rows (-t: chunks per rank):
 *   halo      my first plane of p to the rank below, my last to the rank above; the ghost planes from them
 *   q = A p   chunk c reads the p chunks its columns reach, and the ghost planes its rows touch
 *   alpha     my pq partials in chunk order, MPI_Allreduce (sum over the ranks), alpha = rr / pq
 *   x, r      axpy
 *   beta      my rr partials in chunk order, MPI_Allreduce, beta = rr' / rr, rr = rr'
 *   p         xpby
 * The collectives of one rank are ordered by the dependences (alpha, then beta, then the next
 * iteration's alpha), so every rank calls them in the same order, as MPI requires. The receives of
 * iteration i also wait for beta of iteration i - 1 (in: beta): their data cannot come sooner (the
 * neighbour's p needs that beta, which needs every rank in the collective), and posted sooner a
 * blocking receive can hold the thread this rank's part of the collective needs: with two threads an
 * interior rank could sit in both receives while no rank can finish the collective, so no rank ever
 * sends (seen with 4 ranks of 2 threads on libgomp). Tag of a halo message: iteration (mod 2^14) and
 * direction.
 *
 * Check: x gathered on rank 0; the serial CG of cg_kernels.h runs there on the whole matrix, and
 * cg_check compares the true residuals (within 1e-10 relative; below 1.25 / (iters + 1)). MPI_Allreduce
 * adds the ranks' sums in its own order, so the bits may differ from the serial run's: the residuals
 * agree to rounding. time = max over the ranks between a barrier and the end of the solve.
 * Starting MPI, the quiet parse, option errors and the reductions over ranks are app_mpi.h's. */
#ifndef WEFT_BENCH_CG_MPI_H
#define WEFT_BENCH_CG_MPI_H

#include "app_common.h"
#include "app_mpi.h"
#include "cg_kernels.h"

/* The direction a plane travels. */
enum { CGM_TO_LOWER = 0, CGM_TO_UPPER = 1 };

typedef struct cgm_slab {
  int rank, ranks;
  int lower, upper;                 /* ranks of the slabs below (z - 1) and above; MPI_PROC_NULL at the ends */
  int nx, z0, nz;                   /* my planes z0 .. z0 + nz - 1 */
  long plane;                       /* rows per plane, nx^2 */
  long rows;                        /* mine, nz * plane */
  cg_matrix A;                      /* my rows; a column is an index in pext */
  cg_chunks ck;                     /* T chunks of my rows; reach_lo/hi: the chunks of my p a SpMV chunk reads */
  unsigned char *need_lo, *need_hi; /* chunk c's SpMV reads the ghost plane below / above */
  int first_hi;                     /* chunks 0 .. first_hi hold my first plane (sent below) */
  int last_lo;                      /* chunks last_lo .. T - 1 hold my last plane (sent above) */
  double *b;                        /* my rows of b = A * ones */
  double *pext;                     /* plane + rows + plane: ghost below, my p, ghost above */
  cg_state st;                      /* x, r, q: my rows; p = pext + plane; partials and scalars */
} cgm_slab;

static APP_UNUSED int cgm_tag(long it, int dir) { return (int)((it & 0x3fff) << 1) | dir; }

static inline double *cgm_ghost_lo(const cgm_slab *s) { return s->pext; }
static inline double *cgm_ghost_hi(const cgm_slab *s) { return s->pext + s->plane + s->rows; }

/* My rows as cg_build makes them (same loops, same order), column j stored as j - (z0 - 1) nx^2. */
static APP_UNUSED int cgm_build(cg_matrix *A, int nx, int z0, int nz) {
  const long plane = (long)nx * nx, base = (long)(z0 - 1) * plane;
  long i = 0, k = 0;
  int ix, iy, iz;
  A->nx = nx;
  A->rows = (long)nz * plane;
  A->rowptr = (int64_t *)cg_alloc((size_t)(A->rows + 1) * sizeof(int64_t));
  A->col = (int32_t *)cg_alloc((size_t)A->rows * 27 * sizeof(int32_t));
  A->val = (double *)cg_alloc((size_t)A->rows * 27 * sizeof(double));
  if (!A->rowptr || !A->col || !A->val) return -1;
  for (iz = z0; iz < z0 + nz; ++iz)
    for (iy = 0; iy < nx; ++iy)
      for (ix = 0; ix < nx; ++ix, ++i) {
        const long gi = ix + (long)nx * (iy + (long)nx * iz);
        int dz, dy, dx;
        A->rowptr[i] = k;
        for (dz = -1; dz <= 1; ++dz) {
          if (iz + dz < 0 || iz + dz >= nx) continue;
          for (dy = -1; dy <= 1; ++dy) {
            if (iy + dy < 0 || iy + dy >= nx) continue;
            for (dx = -1; dx <= 1; ++dx) {
              if (ix + dx < 0 || ix + dx >= nx) continue;
              long j = (ix + dx) + (long)nx * ((iy + dy) + (long)nx * (iz + dz));
              A->col[k] = (int32_t)(j - base);
              A->val[k] = j == gi ? 26.0 : -1.0;
              ++k;
            }
          }
        }
      }
  A->rowptr[A->rows] = k;
  A->nnz = k;
  return 0;
}

/* T chunks of my rows and what each SpMV chunk reads (columns ascend in a row: its first and last
 * are its extremes). */
static APP_UNUSED int cgm_chunks_make(cgm_slab *s, int T) {
  cg_chunks *ck = &s->ck;
  const cg_matrix *A = &s->A;
  int c;
  ck->T = T;
  ck->lo = (long *)cg_alloc((size_t)(T + 1) * sizeof(long));
  ck->reach_lo = (int *)cg_alloc((size_t)T * sizeof(int));
  ck->reach_hi = (int *)cg_alloc((size_t)T * sizeof(int));
  s->need_lo = (unsigned char *)cg_alloc((size_t)T);
  s->need_hi = (unsigned char *)cg_alloc((size_t)T);
  if (!ck->lo || !ck->reach_lo || !ck->reach_hi || !s->need_lo || !s->need_hi) return -1;
  for (c = 0; c <= T; ++c) ck->lo[c] = (long)((long long)s->rows * c / T); /* >= 1 row each (T <= rows) */
  for (c = 0; c < T; ++c) {
    long i, cmin = s->plane + ck->lo[c], cmax = s->plane + ck->lo[c + 1] - 1, lmin, lmax;
    for (i = ck->lo[c]; i < ck->lo[c + 1]; ++i) {
      if (A->col[A->rowptr[i]] < cmin) cmin = A->col[A->rowptr[i]];
      if (A->col[A->rowptr[i + 1] - 1] > cmax) cmax = A->col[A->rowptr[i + 1] - 1];
    }
    s->need_lo[c] = cmin < s->plane;
    s->need_hi[c] = cmax >= s->plane + s->rows;
    lmin = cmin - s->plane < 0 ? 0 : cmin - s->plane;
    lmax = cmax - s->plane > s->rows - 1 ? s->rows - 1 : cmax - s->plane;
    ck->reach_lo[c] = cg_chunk_of(ck, lmin);
    ck->reach_hi[c] = cg_chunk_of(ck, lmax);
  }
  s->first_hi = cg_chunk_of(ck, s->plane - 1);
  s->last_lo = cg_chunk_of(ck, s->rows - s->plane);
  return 0;
}

/* alpha = rr / (p . A p): my partials in chunk order, then the sum over the ranks (blocking
 * collective; inside a task in the task variants). */
static APP_UNUSED void cgm_alpha_step(cg_scalars *sc, const double *pq_part, int T) {
  double mine = cg_sum(pq_part, T), pq = 0.0;
  MPI_Allreduce(&mine, &pq, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  sc->alpha = sc->rr / pq;
}
static APP_UNUSED void cgm_beta_step(cg_scalars *sc, const double *rr_part, int T) {
  double mine = cg_sum(rr_part, T), rr_new = 0.0;
  MPI_Allreduce(&mine, &rr_new, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  sc->beta = rr_new / sc->rr;
  sc->rr = rr_new;
}

/* --- start -------------------------------------------------------------------------------------- */

/* cg_parse before MPI_Init (so that WEFT_NUM_THREADS can be set from -p before anything starts
 * weft), silent on every rank but the first: a bad option exits 2 everywhere, printed once. */
static APP_UNUSED void cgm_parse(cg_options *o, int argc, char **argv, const char *prog, const char *const *variants) {
  app_mpi_quiet q;
  app_mpi_quiet_begin(&q);
  cg_parse(o, argc, argv, prog, variants);
  app_mpi_quiet_end(&q);
}

/* MPI_Init_thread asking for `level` (MPI_THREAD_MULTIPLE where tasks call MPI from any thread,
 * MPI_THREAD_FUNNELED where only the master does); exits 1 with a clear message when MPI gives
 * less. Then this rank's slab: matrix, chunks, vectors, and the CG state at the start of a solve
 * (x0 = 0, r0 = p0 = b, rr = b . b over every rank). Not timed. */
static APP_UNUSED void cgm_start(cgm_slab *s, const cg_options *o, int *argc, char ***argv, int level,
                                 const char *prog) {
  int c;
  long min_rows;
  double mine;
  char who[96];
  memset(s, 0, sizeof *s);
  snprintf(who, sizeof who, "variant %s", o->variant);
  s->rank = app_mpi_init_thread(argc, argv, level, prog, who);
  MPI_Comm_size(MPI_COMM_WORLD, &s->ranks);
  if (o->nx < s->ranks)
    app_mpi_leave(s->rank, 2, prog, "option -n: %d z-planes for %d ranks (each rank needs at least one)", o->nx,
                  s->ranks);
  min_rows = (long)(o->nx / s->ranks) * o->nx * o->nx;
  if (o->T > min_rows)
    app_mpi_leave(s->rank, 2, prog,
                  "option -t: %d chunks per rank for as few as %ld rows on a rank (at most one per row)", o->T,
                  min_rows);
  s->lower = s->rank > 0 ? s->rank - 1 : MPI_PROC_NULL;
  s->upper = s->rank + 1 < s->ranks ? s->rank + 1 : MPI_PROC_NULL;
  s->nx = o->nx;
  s->z0 = (int)((long)o->nx * s->rank / s->ranks);
  s->nz = (int)((long)o->nx * (s->rank + 1) / s->ranks) - s->z0;
  s->plane = (long)o->nx * o->nx;
  s->rows = s->nz * s->plane;
  if (cgm_build(&s->A, o->nx, s->z0, s->nz) != 0 || cgm_chunks_make(s, o->T) != 0)
    app_die("%s: rank %d: out of memory for its matrix", prog, s->rank);
  s->b = (double *)cg_alloc((size_t)s->rows * sizeof(double));
  s->pext = (double *)cg_alloc((size_t)(s->rows + 2 * s->plane) * sizeof(double));
  s->st.x = (double *)cg_alloc((size_t)s->rows * sizeof(double));
  s->st.r = (double *)cg_alloc((size_t)s->rows * sizeof(double));
  s->st.q = (double *)cg_alloc((size_t)s->rows * sizeof(double));
  s->st.pq_part = (double *)cg_alloc((size_t)o->T * sizeof(double));
  s->st.rr_part = (double *)cg_alloc((size_t)o->T * sizeof(double));
  s->st.s = (cg_scalars *)cg_alloc(sizeof(cg_scalars));
  if (!s->b || !s->pext || !s->st.x || !s->st.r || !s->st.q || !s->st.pq_part || !s->st.rr_part || !s->st.s)
    app_die("%s: rank %d: out of memory for its vectors", prog, s->rank);
  s->st.p = s->pext + s->plane;
  cg_rhs(&s->A, s->b); /* row sums: my rows of the global b, bit for bit */
  memset(s->pext, 0, (size_t)(s->rows + 2 * s->plane) * sizeof(double));
  memset(s->st.x, 0, (size_t)s->rows * sizeof(double));
  memset(s->st.q, 0, (size_t)s->rows * sizeof(double));
  memcpy(s->st.r, s->b, (size_t)s->rows * sizeof(double));
  memcpy(s->st.p, s->b, (size_t)s->rows * sizeof(double));
  for (c = 0; c < o->T; ++c) s->st.rr_part[c] = cg_dot(s->b, s->b, s->ck.lo[c], s->ck.lo[c + 1]);
  memset(s->st.pq_part, 0, (size_t)o->T * sizeof(double));
  mine = cg_sum(s->st.rr_part, o->T);
  MPI_Allreduce(&mine, &s->st.s->rr, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  s->st.s->alpha = s->st.s->beta = 0.0;
}

/* Tasks one rank creates per solve in the task variants: cg_kernels.h's 6 T + 2 per iteration, and a
 * send and a receive per neighbour. */
static APP_UNUSED long long cgm_task_count(const cg_options *o, const cgm_slab *s) {
  int links = (s->lower != MPI_PROC_NULL) + (s->upper != MPI_PROC_NULL);
  return cg_task_count(o) + 2LL * links * o->iters;
}

/* --- end ---------------------------------------------------------------------------------------- */

/* x gathered on rank 0, checked there by cg_check against the serial CG on the whole matrix. Returns
 * ok on every rank; *error (rank 0) = the true residual ||b - A x|| / ||b||. */
static APP_UNUSED int cgm_check(const cg_options *o, const cgm_slab *s, double *error, const char *prog) {
  MPI_Datatype plane;
  cg_problem pb;
  int *counts = NULL, *displs = NULL, ok = 1, r;
  *error = 0.0;
  MPI_Type_contiguous((int)s->plane, MPI_DOUBLE, &plane);
  MPI_Type_commit(&plane);
  if (s->rank == 0) {
    cg_setup(&pb, o, prog); /* the whole matrix, b and a state whose x receives the gathered one */
    counts = (int *)malloc(sizeof(int) * (size_t)s->ranks);
    displs = (int *)malloc(sizeof(int) * (size_t)s->ranks);
    if (!counts || !displs) app_die("%s: out of memory", prog);
    for (r = 0; r < s->ranks; ++r) {
      int z0 = (int)((long)s->nx * r / s->ranks), z1 = (int)((long)s->nx * (r + 1) / s->ranks);
      counts[r] = z1 - z0;
      displs[r] = z0;
    }
  }
  MPI_Gatherv(s->st.x, s->nz, plane, s->rank == 0 ? pb.st.x : NULL, counts, displs, plane, 0, MPI_COMM_WORLD);
  MPI_Type_free(&plane);
  if (s->rank == 0) {
    ok = cg_check(&pb, o, error, prog);
    cg_state_free(&pb.st);
    cg_chunks_free(&pb.ck);
    cg_matrix_free(&pb.A);
    free(pb.b);
    free(counts);
    free(displs);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok;
}

/* After the timed solve: the check (unless --no-check), the time (max over ranks), tasks and edges
 * (sums; < 0 on a rank: unknown), and the RESULT line on rank 0. Returns ok. */
static APP_UNUSED int cgm_finish(const cg_options *o, const cgm_slab *s, double seconds, const char *runtime,
                                 int threads, long long tasks, long long edges, const char *extra, const char *prog) {
  double worst = app_mpi_max_time(MPI_COMM_WORLD, seconds), error = 0.0;
  long long counts[2] = {tasks, edges}, sums[2] = {0, 0};
  int ok = 1;
  cg_matrix whole;
  app_result res;
  app_mpi_sum_known(MPI_COMM_WORLD, counts, sums, 2);
  if (o->check) ok = cgm_check(o, s, &error, prog);
  if (s->rank == 0) {
    memset(&whole, 0, sizeof whole); /* the global sizes, for cg_gflops */
    whole.rows = (long)o->nx * o->nx * o->nx;
    whole.nnz = (3L * o->nx - 2) * (3L * o->nx - 2) * (3L * o->nx - 2);
    memset(&res, 0, sizeof res);
    res.app = "cg-mpi";
    res.variant = o->variant;
    res.runtime = runtime;
    res.threads = threads;
    res.size = whole.rows;
    res.block = o->T;
    res.iters = o->iters;
    res.seconds = worst;
    res.gflops = cg_gflops(&whole, o->iters, worst);
    res.tasks = sums[0];
    res.edges = sums[1];
    res.ok = ok;
    res.error = error;
    res.ranks = s->ranks;
    res.extra = extra;
    app_print_result(&res);
  }
  return ok;
}

static APP_UNUSED void cgm_free(cgm_slab *s) {
  cg_matrix_free(&s->A);
  cg_chunks_free(&s->ck);
  free(s->need_lo);
  free(s->need_hi);
  free(s->b);
  free(s->pext);
  free(s->st.x);
  free(s->st.r);
  free(s->st.q);
  free(s->st.pq_part);
  free(s->st.rr_part);
  free(s->st.s);
}

#endif /* WEFT_BENCH_CG_MPI_H */
