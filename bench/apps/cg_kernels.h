/* Conjugate gradient on the 27-point 3-D Poisson matrix (the shape of HPCG's), shared by cg_omp.c
 * (gcc -fopenmp) and cg_weft.cpp (native weft): the matrix, the row chunks and what each chunk reads,
 * the kernels, the serial reference, the options and the check.
 *
 * Matrix: grid nx^3, row i = ix + nx*(iy + nx*iz); 26 on the diagonal, -1 for each neighbour of the
 * 3x3x3 box inside the grid (up to 26), in CSR with ascending columns. b = A * ones, so the solution
 * is all ones; x0 = 0 (r0 = p0 = b). Unpreconditioned CG, a fixed number of iterations (no early exit:
 * every variant does the same work). One iteration is six loops over the rows:
 *
 *   q = A p                 spmv    (chunk c reads the p chunks its rows' columns fall in)
 *   pq = p . q              dot     (one partial per chunk, then one task: alpha = rr / sum)
 *   x += alpha p            axpy
 *   r -= alpha q            axpy
 *   rr' = r . r             dot     (one partial per chunk, then one task: beta = rr' / rr, rr = rr')
 *   p = r + beta p          xpby
 *
 * Every loop is cut into T chunks of contiguous rows (the "tasks per loop" of the paper). The sums
 * are the per-chunk partials added in chunk order, so any task order gives the serial reference's
 * bits; only the parallel-for variant (OpenMP reduction clauses) adds in another order.
 *
 * The kernels are noinline: the timed variants and the serial reference run the same machine code.
 * C11 and C++20 alike (the OpenMP program is C, the weft program C++). */
#ifndef WEFT_BENCH_CG_KERNELS_H
#define WEFT_BENCH_CG_KERNELS_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_common.h"

#define CG_KERNEL static APP_UNUSED __attribute__((noinline))

typedef struct cg_matrix {
  int nx;
  long rows, nnz;
  int64_t *rowptr; /* rows + 1 */
  int32_t *col;
  double *val;
} cg_matrix;

/* T chunks of rows; chunk c = rows [lo[c], lo[c+1]). The SpMV of chunk c reads the p chunks
 * reach_lo[c] .. reach_hi[c] (from the columns actually present). */
typedef struct cg_chunks {
  int T;
  long *lo;
  int *reach_lo, *reach_hi;
} cg_chunks;

/* The scalars of the iteration, at fixed addresses: tasks read and write them through pointers
 * (their dependences name these addresses), so every iteration creates the same tasks with the
 * same arguments, which is what a persistent graph replays. */
typedef struct cg_scalars {
  double rr;    /* r . r of the current residual */
  double alpha; /* rr / (p . A p) */
  double beta;  /* rr_new / rr_old */
} cg_scalars;

typedef struct cg_state {
  double *x, *r, *p, *q;
  double *pq_part, *rr_part; /* T each */
  cg_scalars *s;
} cg_state;

static APP_UNUSED void *cg_alloc(size_t bytes) {
  void *p = NULL;
  if (bytes == 0) bytes = 64;
  if (posix_memalign(&p, 64, (bytes + 63) & ~(size_t)63) != 0) return NULL;
  return p;
}

static APP_UNUSED int cg_build(cg_matrix *A, int nx) {
  const long n = (long)nx * nx * nx;
  long i = 0, k = 0;
  int ix, iy, iz;
  A->nx = nx;
  A->rows = n;
  A->rowptr = (int64_t *)cg_alloc((size_t)(n + 1) * sizeof(int64_t));
  /* nnz = (3 nx - 2)^3: each dimension contributes 3 nx - 2 (index, neighbour) pairs */
  A->nnz = (3L * nx - 2) * (3L * nx - 2) * (3L * nx - 2);
  A->col = (int32_t *)cg_alloc((size_t)A->nnz * sizeof(int32_t));
  A->val = (double *)cg_alloc((size_t)A->nnz * sizeof(double));
  if (!A->rowptr || !A->col || !A->val) return -1;
  for (iz = 0; iz < nx; ++iz)
    for (iy = 0; iy < nx; ++iy)
      for (ix = 0; ix < nx; ++ix, ++i) {
        int dz, dy, dx;
        A->rowptr[i] = k;
        for (dz = -1; dz <= 1; ++dz) {
          if (iz + dz < 0 || iz + dz >= nx) continue;
          for (dy = -1; dy <= 1; ++dy) {
            if (iy + dy < 0 || iy + dy >= nx) continue;
            for (dx = -1; dx <= 1; ++dx) {
              if (ix + dx < 0 || ix + dx >= nx) continue;
              long j = (ix + dx) + (long)nx * ((iy + dy) + (long)nx * (iz + dz));
              A->col[k] = (int32_t)j;
              A->val[k] = j == i ? 26.0 : -1.0;
              ++k;
            }
          }
        }
      }
  A->rowptr[n] = k;
  return k == A->nnz ? 0 : -1;
}

static APP_UNUSED void cg_matrix_free(cg_matrix *A) {
  free(A->rowptr);
  free(A->col);
  free(A->val);
}

static APP_UNUSED int cg_chunk_of(const cg_chunks *ck, long row) {
  int lo = 0, hi = ck->T - 1; /* the last c with ck->lo[c] <= row */
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (ck->lo[mid] <= row) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

static APP_UNUSED int cg_chunks_make(cg_chunks *ck, const cg_matrix *A, int T) {
  int c;
  ck->T = T;
  ck->lo = (long *)cg_alloc((size_t)(T + 1) * sizeof(long));
  ck->reach_lo = (int *)cg_alloc((size_t)T * sizeof(int));
  ck->reach_hi = (int *)cg_alloc((size_t)T * sizeof(int));
  if (!ck->lo || !ck->reach_lo || !ck->reach_hi) return -1;
  for (c = 0; c <= T; ++c) ck->lo[c] = (long)((long long)A->rows * c / T); /* >= 1 row each (T <= rows) */
  for (c = 0; c < T; ++c) {
    long i, cmin = ck->lo[c], cmax = ck->lo[c + 1] - 1;
    for (i = ck->lo[c]; i < ck->lo[c + 1]; ++i) {
      if (A->col[A->rowptr[i]] < cmin) cmin = A->col[A->rowptr[i]];
      if (A->col[A->rowptr[i + 1] - 1] > cmax) cmax = A->col[A->rowptr[i + 1] - 1];
    }
    ck->reach_lo[c] = cg_chunk_of(ck, cmin);
    ck->reach_hi[c] = cg_chunk_of(ck, cmax);
  }
  return 0;
}

static APP_UNUSED void cg_chunks_free(cg_chunks *ck) {
  free(ck->lo);
  free(ck->reach_lo);
  free(ck->reach_hi);
}

/* --- kernels ------------------------------------------------------------------------------------ */

CG_KERNEL void cg_spmv(const cg_matrix *A, const double *p, double *q, long lo, long hi) {
  const int64_t *rp = A->rowptr;
  const int32_t *col = A->col;
  const double *val = A->val;
  long i;
  for (i = lo; i < hi; ++i) {
    double s = 0.0;
    int64_t k;
    for (k = rp[i]; k < rp[i + 1]; ++k) s += val[k] * p[col[k]];
    q[i] = s;
  }
}

CG_KERNEL double cg_dot(const double *a, const double *b, long lo, long hi) {
  double s = 0.0;
  long i;
  for (i = lo; i < hi; ++i) s += a[i] * b[i];
  return s;
}

/* y += a x */
CG_KERNEL void cg_axpy(double *y, double a, const double *x, long lo, long hi) {
  long i;
  for (i = lo; i < hi; ++i) y[i] += a * x[i];
}

/* p = r + beta p */
CG_KERNEL void cg_xpby(double *p, const double *r, double beta, long lo, long hi) {
  long i;
  for (i = lo; i < hi; ++i) p[i] = r[i] + beta * p[i];
}

/* The partials in chunk order. */
CG_KERNEL double cg_sum(const double *part, int T) {
  double s = 0.0;
  int c;
  for (c = 0; c < T; ++c) s += part[c];
  return s;
}

/* The two scalar steps (small tasks of their own in the task variants). */
CG_KERNEL void cg_alpha_step(cg_scalars *s, const double *pq_part, int T) { s->alpha = s->rr / cg_sum(pq_part, T); }
CG_KERNEL void cg_beta_step(cg_scalars *s, const double *rr_part, int T) {
  double rr_new = cg_sum(rr_part, T);
  s->beta = rr_new / s->rr;
  s->rr = rr_new;
}

/* --- state, reference, check ------------------------------------------------------------------- */

static APP_UNUSED int cg_state_alloc(cg_state *st, long rows, int T) {
  st->x = (double *)cg_alloc((size_t)rows * sizeof(double));
  st->r = (double *)cg_alloc((size_t)rows * sizeof(double));
  st->p = (double *)cg_alloc((size_t)rows * sizeof(double));
  st->q = (double *)cg_alloc((size_t)rows * sizeof(double));
  st->pq_part = (double *)cg_alloc((size_t)T * sizeof(double));
  st->rr_part = (double *)cg_alloc((size_t)T * sizeof(double));
  st->s = (cg_scalars *)cg_alloc(sizeof(cg_scalars));
  return st->x && st->r && st->p && st->q && st->pq_part && st->rr_part && st->s ? 0 : -1;
}

static APP_UNUSED void cg_state_free(cg_state *st) {
  free(st->x);
  free(st->r);
  free(st->p);
  free(st->q);
  free(st->pq_part);
  free(st->rr_part);
  free(st->s);
}

/* b = A * ones. */
static APP_UNUSED void cg_rhs(const cg_matrix *A, double *b) {
  long i;
  for (i = 0; i < A->rows; ++i) {
    double s = 0.0;
    int64_t k;
    for (k = A->rowptr[i]; k < A->rowptr[i + 1]; ++k) s += A->val[k];
    b[i] = s;
  }
}

/* x0 = 0, r0 = p0 = b, rr = b . b (chunked, in chunk order). Not timed. */
static APP_UNUSED void cg_start(cg_state *st, const cg_chunks *ck, const double *b, long rows) {
  int c;
  memset(st->x, 0, (size_t)rows * sizeof(double));
  memcpy(st->r, b, (size_t)rows * sizeof(double));
  memcpy(st->p, b, (size_t)rows * sizeof(double));
  memset(st->q, 0, (size_t)rows * sizeof(double));
  for (c = 0; c < ck->T; ++c) st->rr_part[c] = cg_dot(b, b, ck->lo[c], ck->lo[c + 1]);
  memset(st->pq_part, 0, (size_t)ck->T * sizeof(double));
  st->s->rr = cg_sum(st->rr_part, ck->T);
  st->s->alpha = st->s->beta = 0.0;
}

/* One CG iteration on one thread, chunk by chunk: the bits every task variant must reproduce. */
static APP_UNUSED void cg_serial_iteration(const cg_matrix *A, const cg_chunks *ck, cg_state *st) {
  const int T = ck->T;
  int c;
  for (c = 0; c < T; ++c) cg_spmv(A, st->p, st->q, ck->lo[c], ck->lo[c + 1]);
  for (c = 0; c < T; ++c) st->pq_part[c] = cg_dot(st->p, st->q, ck->lo[c], ck->lo[c + 1]);
  cg_alpha_step(st->s, st->pq_part, T);
  for (c = 0; c < T; ++c) cg_axpy(st->x, st->s->alpha, st->p, ck->lo[c], ck->lo[c + 1]);
  for (c = 0; c < T; ++c) cg_axpy(st->r, -st->s->alpha, st->q, ck->lo[c], ck->lo[c + 1]);
  for (c = 0; c < T; ++c) st->rr_part[c] = cg_dot(st->r, st->r, ck->lo[c], ck->lo[c + 1]);
  cg_beta_step(st->s, st->rr_part, T);
  for (c = 0; c < T; ++c) cg_xpby(st->p, st->r, st->s->beta, ck->lo[c], ck->lo[c + 1]);
}

/* ||b - A x|| / ||b||, serially in row order: the error= of a run (the true residual, not the
 * recurrence's, so that a wrong x is seen too). */
static APP_UNUSED double cg_residual(const cg_matrix *A, const double *b, const double *x) {
  double rr = 0.0, bb = 0.0;
  long i;
  for (i = 0; i < A->rows; ++i) {
    double s = b[i];
    int64_t k;
    for (k = A->rowptr[i]; k < A->rowptr[i + 1]; ++k) s -= A->val[k] * x[A->col[k]];
    rr += s * s;
    bb += b[i] * b[i];
  }
  return bb > 0 ? sqrt(rr / bb) : sqrt(rr);
}

/* The residual a correct run must reach, calibrated on the serial CG (||b - A x_k|| / ||b||, -t 32):
 * on this matrix and right-hand side unpreconditioned CG first reduces the residual as 1/(k+1)
 * exactly (k = 1..5 on nx=96: 0.500 0.333 0.250 0.200 0.166), then below that curve: nx=96: 4.58e-2
 * at k=20, 1.565e-2 at k=50, 9.0e-4 at k=75, 7.1e-6 at k=100; nx=48: 4.01e-2 at k=20; nx=24:
 * 1.44e-3 at k=20. So the bound is 1.25/(k+1) (2.45e-2 at the default 50 iterations): a fixed 1e-3
 * would need about 75 iterations at nx=96. */
static APP_UNUSED double cg_threshold(long iters) { return 1.25 / (double)(iters + 1); }

/* --- options ------------------------------------------------------------------------------------ */

typedef struct cg_options {
  const char *variant;
  int variant_index;
  int nx, T, threads, check;
  long iters;
} cg_options;

static APP_UNUSED void cg_usage(FILE *f, const char *prog, const char *const *variants) {
  int k;
  fprintf(f,
          "usage: %s [--variant V] [-n NX] [-i ITERS] [-t T] [-p P] [--no-check]\n"
          "  CG on the 27-point Poisson matrix of an NX^3 grid (HPCG's), unpreconditioned, ITERS\n"
          "  iterations, each vector loop cut into T tasks over contiguous rows.\n"
          "  --variant V   one of:",
          prog);
  for (k = 0; variants[k]; ++k) fprintf(f, " %s", variants[k]);
  fprintf(f,
          " [%s]\n"
          "  -n NX         grid side (NX^3 rows)                      [96]\n"
          "  -i ITERS      CG iterations (fixed, no early exit)       [50]\n"
          "  -t T          tasks (row chunks) per loop                [32]\n"
          "  -p P          threads (0: the runtime's default)         [0]\n"
          "  --no-check    skip the serial reference run and the check\n",
          variants[0]);
}

/* variants: NULL-terminated, the first is the default. Exits 0 on -h, 2 on a bad option. */
static APP_UNUSED void cg_parse(cg_options *o, int argc, char **argv, const char *prog, const char *const *variants) {
  int i;
  memset(o, 0, sizeof *o);
  o->variant = variants[0];
  o->nx = 96;
  o->iters = 50;
  o->T = 32;
  o->check = 1;
  for (i = 1; i < argc; ++i) {
    const char *a = argv[i], *v;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      cg_usage(stdout, prog, variants);
      exit(0);
    }
    if (strcmp(a, "--no-check") == 0) {
      app_check_skipped = 1;
      o->check = 0;
      continue;
    }
    if (strcmp(a, "--variant") != 0 && strcmp(a, "-n") != 0 && strcmp(a, "-i") != 0 && strcmp(a, "-t") != 0 &&
        strcmp(a, "-p") != 0)
      app_bad(prog, "unknown option '%s'", a);
    if (i + 1 >= argc) app_bad(prog, "option %s needs a value", a);
    v = argv[++i];
    if (strcmp(a, "--variant") == 0) {
      int k, found = -1;
      for (k = 0; variants[k]; ++k)
        if (strcmp(v, variants[k]) == 0) found = k;
      if (found < 0) app_bad(prog, "option --variant: unknown variant '%s' for this program", v);
      o->variant = variants[found];
      o->variant_index = found;
    } else if (strcmp(a, "-n") == 0) {
      o->nx = (int)app_parse_long(prog, a, v, 2, 1024);
    } else if (strcmp(a, "-i") == 0) {
      o->iters = app_parse_long(prog, a, v, 1, 100000000L);
    } else if (strcmp(a, "-t") == 0) {
      o->T = (int)app_parse_long(prog, a, v, 1, 1 << 20);
    } else {
      o->threads = (int)app_parse_long(prog, a, v, 0, 4096);
    }
  }
  if ((long)o->T > (long)o->nx * o->nx * o->nx)
    app_bad(prog, "option -t: %d chunks for %ld rows (at most one chunk per row)", o->T,
           (long)o->nx * o->nx * o->nx);
}

/* Flops per run: 2 per nonzero (SpMV) and 10 per row (two dots, two axpys, one xpby: 2 each) per
 * iteration; the scalar steps are not counted. */
static APP_UNUSED double cg_gflops(const cg_matrix *A, long iters, double seconds) {
  return seconds > 0 ? (2.0 * (double)A->nnz + 10.0 * (double)A->rows) * (double)iters / seconds / 1e9 : 0.0;
}

/* Tasks one run creates in the task variants: 6 loops of T, and the two scalar tasks. */
static APP_UNUSED long long cg_task_count(const cg_options *o) { return (6LL * o->T + 2) * o->iters; }

/* Everything a program needs: the matrix, the chunks, b and the CG state. */
typedef struct cg_problem {
  cg_matrix A;
  cg_chunks ck;
  double *b;
  cg_state st;
} cg_problem;

/* Builds it, with the state at the start of a solve (not timed); dies on a failure. */
static APP_UNUSED void cg_setup(cg_problem *pb, const cg_options *o, const char *prog) {
  memset(pb, 0, sizeof *pb);
  if (cg_build(&pb->A, o->nx) != 0) app_die("%s: out of memory for the %d^3 matrix", prog, o->nx);
  if (cg_chunks_make(&pb->ck, &pb->A, o->T) != 0) app_die("%s: out of memory", prog);
  pb->b = (double *)cg_alloc((size_t)pb->A.rows * sizeof(double));
  if (!pb->b || cg_state_alloc(&pb->st, pb->A.rows, o->T) != 0) app_die("%s: out of memory for the vectors", prog);
  cg_rhs(&pb->A, pb->b);
  cg_start(&pb->st, &pb->ck, pb->b, pb->A.rows);
}

/* After the timed solve: error = its true residual; with the check, the serial reference runs in a
 * second state and the residuals must agree to 1e-10 (relative, plus 1e-14 absolute) and be below
 * cg_threshold.
 * Returns 1 when ok (or unchecked). */
static APP_UNUSED int cg_check(cg_problem *pb, const cg_options *o, double *error, const char *prog) {
  cg_state ref;
  double e_ref;
  long it;
  *error = cg_residual(&pb->A, pb->b, pb->st.x);
  if (!o->check) return 1;
  if (cg_state_alloc(&ref, pb->A.rows, o->T) != 0) app_die("%s: out of memory for the reference", prog);
  cg_start(&ref, &pb->ck, pb->b, pb->A.rows);
  for (it = 0; it < o->iters; ++it) cg_serial_iteration(&pb->A, &pb->ck, &ref);
  e_ref = cg_residual(&pb->A, pb->b, ref.x);
  cg_state_free(&ref);
  if (!(*error < cg_threshold(o->iters))) {
    fprintf(stderr, "%s: residual %.6e not below %.3e after %ld iterations\n", prog, *error, cg_threshold(o->iters),
            o->iters);
    return 0;
  }
  /* 1e-14 absolute: a run converged to rounding (small grids) has a residual of pure rounding noise */
  if (!(fabs(*error - e_ref) <= 1e-10 * e_ref + 1e-14)) {
    fprintf(stderr, "%s: residual %.17g differs from the serial run's %.17g (relative %.3e)\n", prog, *error, e_ref,
            fabs(*error - e_ref) / e_ref);
    return 0;
  }
  return 1;
}

#endif /* WEFT_BENCH_CG_KERNELS_H */
