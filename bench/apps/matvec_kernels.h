/* Multi-matvec and dense Jacobi (the taskiter paper's Table 1, on one node), shared by matvec_omp.c
 * (gcc -fopenmp) and matvec_weft.cpp (native weft): the problem, the row-block kernels, the serial
 * reference, the options.
 *
 * Both kernels cut an N x N row-major matrix into T blocks of contiguous rows, one task per block per
 * step (S steps):
 *
 *   matvec  y += A x: repeated dgemv (beta = 1) with a fixed x, as the paper's multi-matvec, whose
 *           iterations are independent: block b of step s depends only on block b of step s-1 (its
 *           inout on y's block), so the graph is T disconnected chains. The accumulation (rather
 *           than y = A x) makes a misordered or lost update visible to the check. Task accesses:
 *           in: x (the whole vector, one address), inout: y block. A's entries are uniform in
 *           [0, 2/N) (row sums near 1): y grows by about 1 per step, no overflow, no denormals.
 *   jacobi  x' = D^-1 (b - R x), R the off-diagonal part: the iterate is read whole by every block
 *           task of the next step (all-to-all). Two vectors, swapped every step (step s reads v[s%2]
 *           and writes v[(s+1)%2]), so a persistent graph records two steps per round (unroll 2).
 *           Task accesses: in: the T blocks of the old vector, out: the block of the new one.
 *           R's entries are uniform in [0, 1/N), d_i = 1.1 * sum_j r_ij (strictly dominant: the
 *           iteration converges by a factor of about 1/1.1 per step, slowly enough that a wrong
 *           input block still changes the result), b = A * ones, x0 = 0.
 *
 * Each row is one dot product in column order, the same code in every variant (the kernels are
 * noinline), so every variant must reproduce the serial run's bits: error= is the largest
 * difference to it, which must be 0. C11 and C++20 alike. */
#ifndef WEFT_BENCH_MATVEC_KERNELS_H
#define WEFT_BENCH_MATVEC_KERNELS_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_common.h"

#define MV_KERNEL static APP_UNUSED __attribute__((noinline))

enum { MV_MATVEC = 0, MV_JACOBI = 1 };

typedef struct mv_problem {
  int kernel;
  long n;
  int T;
  long *lo;     /* T + 1 row bounds: block b = rows [lo[b], lo[b+1]) */
  double *A;    /* n x n, row-major; jacobi: R, the diagonal stored as 0 */
  double *diag; /* jacobi: d */
  double *b;    /* jacobi: right-hand side */
  double *x;    /* matvec: the input vector */
  double *v[2]; /* matvec: v[0] = y; jacobi: the two iterates */
} mv_problem;

static APP_UNUSED void *mv_alloc(size_t bytes) {
  void *p = NULL;
  if (bytes == 0) bytes = 64;
  if (posix_memalign(&p, 64, (bytes + 63) & ~(size_t)63) != 0) return NULL;
  return p;
}

/* A uniform double in [0, 1) from a 64-bit key (splitmix64). */
static APP_UNUSED double mv_uniform(uint64_t key) {
  uint64_t z = key + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* --- kernels ------------------------------------------------------------------------------------ */

/* y[i] += A[i,:] . x for rows lo..hi-1. */
MV_KERNEL void mv_matvec_rows(const double *A, long n, const double *x, double *y, long lo, long hi) {
  long i, j;
  for (i = lo; i < hi; ++i) {
    const double *a = A + (size_t)i * (size_t)n;
    double s = 0.0;
    for (j = 0; j < n; ++j) s += a[j] * x[j];
    y[i] += s;
  }
}

/* xn[i] = (b[i] - R[i,:] . xo) / d[i] for rows lo..hi-1 (R's diagonal is 0). */
MV_KERNEL void mv_jacobi_rows(const double *R, const double *d, const double *b, long n, const double *xo, double *xn,
                              long lo, long hi) {
  long i, j;
  for (i = lo; i < hi; ++i) {
    const double *a = R + (size_t)i * (size_t)n;
    double s = 0.0;
    for (j = 0; j < n; ++j) s += a[j] * xo[j];
    xn[i] = (b[i] - s) / d[i];
  }
}

/* One step's block, whatever the kernel: step s of jacobi reads v[s%2] and writes v[(s+1)%2]. */
static APP_UNUSED void mv_block(const mv_problem *pb, long step, long lo, long hi) {
  if (pb->kernel == MV_MATVEC) mv_matvec_rows(pb->A, pb->n, pb->x, pb->v[0], lo, hi);
  else mv_jacobi_rows(pb->A, pb->diag, pb->b, pb->n, pb->v[step & 1], pb->v[(step + 1) & 1], lo, hi);
}

/* The vector a run ends in. */
static APP_UNUSED const double *mv_result(const mv_problem *pb, long steps) {
  return pb->kernel == MV_MATVEC ? pb->v[0] : pb->v[steps & 1];
}

/* --- problem ------------------------------------------------------------------------------------ */

/* Resets the vectors to the start of a run (not timed). */
static APP_UNUSED void mv_reset(mv_problem *pb) {
  memset(pb->v[0], 0, (size_t)pb->n * sizeof(double));
  if (pb->v[1]) memset(pb->v[1], 0, (size_t)pb->n * sizeof(double));
}

/* Builds the problem; -1 when out of memory. */
static APP_UNUSED int mv_build(mv_problem *pb, int kernel, long n, int T) {
  long i, j;
  int b;
  memset(pb, 0, sizeof *pb);
  pb->kernel = kernel;
  pb->n = n;
  pb->T = T;
  pb->lo = (long *)mv_alloc((size_t)(T + 1) * sizeof(long));
  pb->A = (double *)mv_alloc((size_t)n * (size_t)n * sizeof(double));
  pb->v[0] = (double *)mv_alloc((size_t)n * sizeof(double));
  if (!pb->lo || !pb->A || !pb->v[0]) return -1;
  for (b = 0; b <= T; ++b) pb->lo[b] = (long)((long long)n * b / T); /* >= 1 row each (T <= n) */
  if (kernel == MV_MATVEC) {
    pb->x = (double *)mv_alloc((size_t)n * sizeof(double));
    if (!pb->x) return -1;
    for (i = 0; i < n; ++i) {
      double *a = pb->A + (size_t)i * (size_t)n;
      for (j = 0; j < n; ++j) a[j] = mv_uniform((uint64_t)i * (uint64_t)n + (uint64_t)j) * (2.0 / (double)n);
      pb->x[i] = mv_uniform(~(uint64_t)i);
    }
  } else {
    pb->v[1] = (double *)mv_alloc((size_t)n * sizeof(double));
    pb->diag = (double *)mv_alloc((size_t)n * sizeof(double));
    pb->b = (double *)mv_alloc((size_t)n * sizeof(double));
    if (!pb->v[1] || !pb->diag || !pb->b) return -1;
    for (i = 0; i < n; ++i) {
      double *a = pb->A + (size_t)i * (size_t)n, rowsum = 0.0;
      for (j = 0; j < n; ++j) {
        a[j] = j == i ? 0.0 : mv_uniform((uint64_t)i * (uint64_t)n + (uint64_t)j) / (double)n;
        rowsum += a[j];
      }
      pb->diag[i] = 1.1 * rowsum;
      pb->b[i] = pb->diag[i] + rowsum; /* A * ones */
    }
  }
  mv_reset(pb);
  return 0;
}

static APP_UNUSED void mv_free(mv_problem *pb) {
  free(pb->lo);
  free(pb->A);
  free(pb->diag);
  free(pb->b);
  free(pb->x);
  free(pb->v[0]);
  free(pb->v[1]);
}

/* The serial run, block after block, step after step. */
static APP_UNUSED void mv_serial(mv_problem *pb, long steps) {
  long s;
  int b;
  for (s = 0; s < steps; ++s)
    for (b = 0; b < pb->T; ++b) mv_block(pb, s, pb->lo[b], pb->lo[b + 1]);
}

/* After the timed run: the serial run on fresh vectors (the matrix is shared), and the largest
 * difference of the timed result to it. */
static APP_UNUSED double mv_check(mv_problem *pb, long steps, const char *prog) {
  mv_problem ref = *pb;
  const double *got = mv_result(pb, steps), *want;
  double diff = 0.0;
  long i;
  ref.v[0] = (double *)mv_alloc((size_t)pb->n * sizeof(double));
  ref.v[1] = pb->v[1] ? (double *)mv_alloc((size_t)pb->n * sizeof(double)) : NULL;
  if (!ref.v[0] || (pb->v[1] && !ref.v[1])) app_die("%s: out of memory for the reference", prog);
  mv_reset(&ref);
  mv_serial(&ref, steps);
  want = mv_result(&ref, steps);
  for (i = 0; i < pb->n; ++i) {
    double d = fabs(got[i] - want[i]);
    if (!(d <= diff)) diff = d; /* a NaN counts */
  }
  free(ref.v[0]);
  free(ref.v[1]);
  return diff;
}

/* --- one rank's rows (the distributed programs, dense_mpi.h) -------------------------------------- */

/* mv_build's rows lo..hi-1 into arrays that hold those rows only (row i at i - lo): a rank builds
 * its own rows, and the check's mv_build of the whole problem on rank 0 gives the same bits (the
 * same expressions, in the same order). matvec: A's rows; x is mv_matvec_init_x's, whole. */
static APP_UNUSED void mv_matvec_init_rows(long n, double *A, long lo, long hi) {
  long i, j;
  for (i = lo; i < hi; ++i) {
    double *a = A + (size_t)(i - lo) * (size_t)n;
    for (j = 0; j < n; ++j) a[j] = mv_uniform((uint64_t)i * (uint64_t)n + (uint64_t)j) * (2.0 / (double)n);
  }
}

static APP_UNUSED void mv_matvec_init_x(long n, double *x) {
  long i;
  for (i = 0; i < n; ++i) x[i] = mv_uniform(~(uint64_t)i);
}

/* jacobi: R's rows (diagonal 0), d and b. */
static APP_UNUSED void mv_jacobi_init_rows(long n, double *R, double *d, double *b, long lo, long hi) {
  long i, j;
  for (i = lo; i < hi; ++i) {
    double *a = R + (size_t)(i - lo) * (size_t)n, rowsum = 0.0;
    for (j = 0; j < n; ++j) {
      a[j] = j == i ? 0.0 : mv_uniform((uint64_t)i * (uint64_t)n + (uint64_t)j) / (double)n;
      rowsum += a[j];
    }
    d[i - lo] = 1.1 * rowsum;
    b[i - lo] = d[i - lo] + rowsum; /* A * ones */
  }
}

/* --- options ------------------------------------------------------------------------------------ */

typedef struct mv_options {
  const char *variant;
  int variant_index;
  int kernel, T, threads, check;
  long n, steps;
} mv_options;

static APP_UNUSED void mv_usage(FILE *f, const char *prog, const char *const *variants) {
  int k;
  fprintf(f,
          "usage: %s [--kernel matvec|jacobi] [--variant V] [-n N] [-t T] [-s STEPS] [-p P] [--no-check]\n"
          "  matvec: y += A x repeated (independent steps); jacobi: dense Jacobi iteration (all-to-all).\n"
          "  N x N matrix in T row blocks, one task per block per step.\n"
          "  --kernel K    matvec | jacobi                            [matvec]\n"
          "  --variant V   one of:",
          prog);
  for (k = 0; variants[k]; ++k) fprintf(f, " %s", variants[k]);
  fprintf(f,
          " [%s]\n"
          "  -n N          matrix order                               [4096]\n"
          "  -t T          row blocks (tasks per step)                [32]\n"
          "  -s STEPS      steps                                      [50]\n"
          "  -p P          threads (0: the runtime's default)         [0]\n"
          "  --no-check    skip the serial reference run and the check\n",
          variants[0]);
}

/* variants: NULL-terminated, the first is the default. Exits 0 on -h, 2 on a bad option. */
static APP_UNUSED void mv_parse(mv_options *o, int argc, char **argv, const char *prog, const char *const *variants) {
  int i;
  memset(o, 0, sizeof *o);
  o->variant = variants[0];
  o->kernel = MV_MATVEC;
  o->n = 4096;
  o->T = 32;
  o->steps = 50;
  o->check = 1;
  for (i = 1; i < argc; ++i) {
    const char *a = argv[i], *v;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      mv_usage(stdout, prog, variants);
      exit(0);
    }
    if (strcmp(a, "--no-check") == 0) {
      app_check_skipped = 1;
      o->check = 0;
      continue;
    }
    if (strcmp(a, "--kernel") != 0 && strcmp(a, "--variant") != 0 && strcmp(a, "-n") != 0 && strcmp(a, "-t") != 0 &&
        strcmp(a, "-s") != 0 && strcmp(a, "-p") != 0)
      app_bad(prog, "unknown option '%s'", a);
    if (i + 1 >= argc) app_bad(prog, "option %s needs a value", a);
    v = argv[++i];
    if (strcmp(a, "--kernel") == 0) {
      if (strcmp(v, "matvec") == 0) o->kernel = MV_MATVEC;
      else if (strcmp(v, "jacobi") == 0) o->kernel = MV_JACOBI;
      else app_bad(prog, "option --kernel: unknown kernel '%s' (matvec | jacobi)", v);
    } else if (strcmp(a, "--variant") == 0) {
      int k, found = -1;
      for (k = 0; variants[k]; ++k)
        if (strcmp(v, variants[k]) == 0) found = k;
      if (found < 0) app_bad(prog, "option --variant: unknown variant '%s' for this program", v);
      o->variant = variants[found];
      o->variant_index = found;
    } else if (strcmp(a, "-n") == 0) {
      o->n = app_parse_long(prog, a, v, 1, 1L << 20);
    } else if (strcmp(a, "-t") == 0) {
      o->T = (int)app_parse_long(prog, a, v, 1, 1 << 20);
    } else if (strcmp(a, "-s") == 0) {
      o->steps = app_parse_long(prog, a, v, 1, 100000000L);
    } else {
      o->threads = (int)app_parse_long(prog, a, v, 0, 4096);
    }
  }
  if (o->T > o->n) app_bad(prog, "option -t: %d blocks for %ld rows (at most one block per row)", o->T, o->n);
}

static APP_UNUSED const char *mv_app_name(int kernel) { return kernel == MV_MATVEC ? "matvec" : "jacobi"; }

/* gflops = 2 N^2 STEPS / seconds / 1e9 (one multiply-add per matrix entry per step). */
static APP_UNUSED double mv_gflops(const mv_options *o, double seconds) {
  return seconds > 0 ? 2.0 * (double)o->n * (double)o->n * (double)o->steps / seconds / 1e9 : 0.0;
}

#endif /* WEFT_BENCH_MATVEC_KERNELS_H */
