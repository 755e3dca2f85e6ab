/* Tiled Cholesky (dpotrf, lower) shared by cholesky_omp, cholesky_weft and cholesky_starpu: the
 * command line, the deterministic SPD matrix in tile layout, the four tile kernels, the task count
 * and the residual check.
 *
 * Layout: an n x n matrix is nt x nt tiles of b x b (n = nt * b), tile (i, j) at
 * base + (j * nt + i) * b * b, each tile column-major with leading dimension b, so every task
 * touches whole contiguous tiles and a tile's address names it in the dependences. Only the lower
 * tiles (i >= j) are generated, copied, factorised and checked; the upper ones are never touched.
 *
 * Algorithm (right-looking), for k = 0 .. nt-1:
 *   potrf(k,k); trsm(i,k) for i > k; syrk(i,i) -= (i,k)(i,k)^T for i > k;
 *   gemm(i,j) -= (i,k)(j,k)^T for k < j < i.
 * Tasks per factorisation: nt + nt(nt-1)/2 (trsm) + nt(nt-1)/2 (syrk) + nt(nt-1)(nt-2)/6 (gemm).
 *
 * The kernels call single-threaded BLAS (app_blas_threads(1) before any task runs).
 * C11 and C++20 alike; everything is static, each executable includes it once. */
#ifndef WEFT_BENCH_CHOLESKY_KERNELS_H
#define WEFT_BENCH_CHOLESKY_KERNELS_H

#ifdef __cplusplus
#define LAPACK_COMPLEX_CPP /* lapacke.h: std::complex rather than C99 _Complex */
#endif
#include <cblas.h>
#include <errno.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>

#include "app_common.h"

/* --- command line --------------------------------------------------------------------------- */

typedef struct chol_opts {
  const char *variant;
  long n, b, nt; /* nt = n / b */
  int threads;   /* -p: 0 = the runtime's default */
  int reps;      /* -r */
  int check;     /* 0 with --no-check */
} chol_opts;

static APP_UNUSED void chol_usage(FILE *f, const char *prog, const char *const *variants) {
  fprintf(f,
          "usage: %s [--variant V] [-n N] [-b B] [-p P] [-r R] [--no-check] [-h]\n"
          "  tiled Cholesky (dpotrf, lower) of a deterministic n x n SPD matrix in b x b tiles\n"
          "  --variant V  one of:",
          prog);
  for (const char *const *v = variants; *v; ++v) fprintf(f, " %s", *v);
  fprintf(f,
          " (default %s)\n"
          "  -n N         matrix order (default 4096), a multiple of B\n"
          "  -b B         tile size (default 256)\n"
          "  -p P         threads (default 0: the runtime's default, e.g. OMP_NUM_THREADS)\n"
          "  -r R         repetitions in this process, each on a fresh copy of the matrix (default 1)\n"
          "  --no-check   skip the residual check ||A - L L^T||_F / ||A||_F\n"
          "  -h           this help\n",
          variants[0]);
}

/* A positive (or, with allow_zero, non-negative) integer option, or exit 2 naming it. */
/* variants: NULL-terminated, the first is the default. Exits 0 after -h, 2 on a bad option. */
static APP_UNUSED void chol_parse(int argc, char **argv, const char *prog, const char *const *variants,
                                  chol_opts *o) {
  o->variant = variants[0];
  o->n = 4096;
  o->b = 256;
  o->threads = 0;
  o->reps = 1;
  o->check = 1;
  for (int a = 1; a < argc; ++a) {
    const char *arg = argv[a];
    const char *next = a + 1 < argc ? argv[a + 1] : NULL;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      chol_usage(stdout, prog, variants);
      exit(0);
    } else if (!strcmp(arg, "--variant")) {
      int known = 0;
      if (!next) app_die("%s: --variant needs a value (see -h)", prog);
      for (const char *const *v = variants; *v; ++v)
        if (!strcmp(*v, next)) known = 1;
      if (!known) {
        fprintf(stderr, "%s: --variant '%s' is not one of:", prog, next);
        for (const char *const *v = variants; *v; ++v) fprintf(stderr, " %s", *v);
        app_die("");
      }
      o->variant = next;
      ++a;
    } else if (!strcmp(arg, "-n")) {
      o->n = app_parse_long(prog, "-n", next, 1, 1L << 20), ++a;
    } else if (!strcmp(arg, "-b")) {
      o->b = app_parse_long(prog, "-b", next, 1, 1L << 16), ++a;
    } else if (!strcmp(arg, "-p")) {
      o->threads = (int)app_parse_long(prog, "-p", next, 0, 1 << 16), ++a;
    } else if (!strcmp(arg, "-r")) {
      o->reps = (int)app_parse_long(prog, "-r", next, 1, 1 << 20), ++a;
    } else if (!strcmp(arg, "--no-check")) {
      app_check_skipped = 1;
      o->check = 0;
    } else {
      app_die("%s: unknown option '%s' (see -h)", prog, arg);
    }
  }
  if (o->b > o->n) app_die("%s: -b %ld is larger than -n %ld", prog, o->b, o->n);
  if (o->n % o->b != 0) app_die("%s: -n %ld is not a multiple of -b %ld", prog, o->n, o->b);
  o->nt = o->n / o->b;
}

/* --- the matrix --------------------------------------------------------------------------------- */

typedef struct chol_matrix {
  long n, b, nt;
  double *t; /* nt * nt tiles of b * b */
} chol_matrix;

static APP_UNUSED double *chol_tile(const chol_matrix *m, long i, long j) {
  return m->t + ((size_t)j * (size_t)m->nt + (size_t)i) * (size_t)m->b * (size_t)m->b;
}

static APP_UNUSED void chol_alloc(chol_matrix *m, const chol_opts *o) {
  void *p = NULL;
  size_t bytes = (size_t)o->n * (size_t)o->n * sizeof(double);
  m->n = o->n;
  m->b = o->b;
  m->nt = o->nt;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
    fprintf(stderr, "cholesky: out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
  m->t = (double *)p;
}

/* Uniform in [-0.5, 0.5], a function of the (row, column) pair only (splitmix64). */
static APP_UNUSED double chol_entry(long r, long c) {
  uint64_t z = ((uint64_t)r << 32 ^ (uint64_t)c) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0) - 0.5;
}

/* The lower tiles of the symmetric matrix A(r,c) = A(c,r) = entry(max, min), plus n on the
 * diagonal (diagonally dominant, hence SPD). Diagonal tiles hold both triangles. */
static APP_UNUSED void chol_generate(chol_matrix *m) {
  long b = m->b, nt = m->nt;
  for (long j = 0; j < nt; ++j)
    for (long i = j; i < nt; ++i) {
      double *t = chol_tile(m, i, j);
      for (long c = 0; c < b; ++c)
        for (long r = 0; r < b; ++r) {
          long gr = i * b + r, gc = j * b + c;
          double v = gr >= gc ? chol_entry(gr, gc) : chol_entry(gc, gr);
          if (gr == gc) v += (double)m->n;
          t[c * b + r] = v;
        }
    }
}

static APP_UNUSED void chol_copy_tile(double *dst, const double *src, long b) {
  memcpy(dst, src, (size_t)b * (size_t)b * sizeof(double));
}

/* The lower tiles of src into dst (same shape). */
static APP_UNUSED void chol_copy(chol_matrix *dst, const chol_matrix *src) {
  for (long j = 0; j < src->nt; ++j)
    for (long i = j; i < src->nt; ++i) chol_copy_tile(chol_tile(dst, i, j), chol_tile(src, i, j), src->b);
}

/* Tiles <-> one column-major n x n array (lda = n), lower tiles only (for the openblas variant). */
static APP_UNUSED void chol_tiles_to_full(double *full, const chol_matrix *m) {
  long b = m->b, n = m->n;
  for (long j = 0; j < m->nt; ++j)
    for (long i = j; i < m->nt; ++i) {
      const double *t = chol_tile(m, i, j);
      for (long c = 0; c < b; ++c)
        memcpy(full + (size_t)(j * b + c) * (size_t)n + (size_t)(i * b), t + c * b, (size_t)b * sizeof(double));
    }
}
static APP_UNUSED void chol_full_to_tiles(chol_matrix *m, const double *full) {
  long b = m->b, n = m->n;
  for (long j = 0; j < m->nt; ++j)
    for (long i = j; i < m->nt; ++i) {
      double *t = chol_tile(m, i, j);
      for (long c = 0; c < b; ++c)
        memcpy(t + c * b, full + (size_t)(j * b + c) * (size_t)n + (size_t)(i * b), (size_t)b * sizeof(double));
    }
}

/* --- the four tile kernels --------------------------------------------------------------------- */

/* Set (never cleared) when a diagonal tile is not positive definite. */
static APP_UNUSED int chol_potrf_failed;

/* A_kk = L_kk L_kk^T, L_kk in the lower triangle (the upper one is left as it was). The _work
 * entry point skips LAPACKE's NaN scan of the input. */
static APP_UNUSED void chol_potrf(double *akk, int b) {
  lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', b, akk, b);
  if (info != 0) __atomic_store_n(&chol_potrf_failed, 1, __ATOMIC_RELAXED);
}
/* A_ik = A_ik L_kk^-T */
static APP_UNUSED void chol_trsm(const double *lkk, double *aik, int b) {
  cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, b, b, 1.0, lkk, b, aik, b);
}
/* A_ii -= A_ik A_ik^T (lower triangle) */
static APP_UNUSED void chol_syrk(const double *aik, double *aii, int b) {
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, b, b, -1.0, aik, b, 1.0, aii, b);
}
/* A_ij -= A_ik A_jk^T */
static APP_UNUSED void chol_gemm(const double *aik, const double *ajk, double *aij, int b) {
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, b, b, b, -1.0, aik, b, ajk, b, 1.0, aij, b);
}

/* OpenBLAS's current thread count (its default before any app_blas_threads), 1 if unknown. */
static APP_UNUSED int chol_blas_get_threads(void) {
  int (*get)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  return get ? get() : 1;
}

static APP_UNUSED long long chol_tasks_per_factorisation(long nt) {
  return (long long)nt + (long long)nt * (nt - 1) + (long long)nt * (nt - 1) * (nt - 2) / 6;
}

static APP_UNUSED double chol_gflops(long n, double seconds, long reps) {
  return seconds > 0 ? (double)reps * (double)n * (double)n * (double)n / 3.0 / seconds / 1e9 : 0;
}

/* --- the check ------------------------------------------------------------------------------------
 * error = ||A - L L^T||_F / ||A||_F over the whole symmetric matrix, computed tile by tile: for each
 * lower tile (i, j), C = A_ij - sum_{k <= j} L_ik L_jk^T (L_jj with its upper triangle zeroed),
 * off-diagonal tiles counted twice, diagonal tiles by their lower triangle (n^3/3 flops, as the
 * factorisation; BLAS runs on blas_threads threads meanwhile, then back to 1).
 *
 * Threshold: error <= 1e-14 * n, i.e. about 45 * n * eps (LAPACK's own potrf test accepts
 * ||A - L L^T|| / (n ||A|| eps) < 30 with the 1-norm); typical values here are 1e-16 .. 1e-15 at
 * any n, while one missing tile update already gives about 1e-5 (n=512): wrong orderings cannot pass.
 * A NaN fails. */
static APP_UNUSED double chol_residual(const chol_matrix *a, const chol_matrix *l, int blas_threads) {
  long b = l->b, nt = l->nt;
  size_t tb = (size_t)b * (size_t)b * sizeof(double);
  double *c = (double *)malloc(tb), *ljj = (double *)malloc(tb);
  double err = 0, norm = 0;
  if (!c || !ljj) {
    fprintf(stderr, "cholesky: out of memory in the check\n");
    exit(1);
  }
  app_blas_threads(blas_threads > 0 ? blas_threads : 1);
  for (long j = 0; j < nt; ++j) {
    memcpy(ljj, chol_tile(l, j, j), tb);
    for (long cc = 0; cc < b; ++cc)
      for (long r = 0; r < cc; ++r) ljj[cc * b + r] = 0.0;
    for (long i = j; i < nt; ++i) {
      memcpy(c, chol_tile(a, i, j), tb);
      if (i == j) {
        for (long k = 0; k < j; ++k) chol_syrk(chol_tile(l, j, k), c, (int)b);
        chol_syrk(ljj, c, (int)b);
        const double *at = chol_tile(a, j, j);
        for (long cc = 0; cc < b; ++cc)
          for (long r = cc; r < b; ++r) {
            double w = r == cc ? 1.0 : 2.0, d = c[cc * b + r], v = at[cc * b + r];
            err += w * d * d;
            norm += w * v * v;
          }
      } else {
        for (long k = 0; k < j; ++k) chol_gemm(chol_tile(l, i, k), chol_tile(l, j, k), c, (int)b);
        chol_gemm(chol_tile(l, i, j), ljj, c, (int)b);
        const double *at = chol_tile(a, i, j);
        for (size_t e = 0; e < (size_t)b * (size_t)b; ++e) {
          err += 2.0 * c[e] * c[e];
          norm += 2.0 * at[e] * at[e];
        }
      }
    }
  }
  app_blas_threads(1);
  free(c);
  free(ljj);
  return norm > 0 ? sqrt(err) / sqrt(norm) : sqrt(err);
}

/* 1 when the factorisation passed: no failed potrf and error within the threshold above. */
static APP_UNUSED int chol_passed(long n, double error) {
  return !__atomic_load_n(&chol_potrf_failed, __ATOMIC_RELAXED) && error <= 1e-14 * (double)n;
}

/* Runs the check (or not) and fills r->ok, r->error: with --no-check ok=1 and error=0 (potrf
 * failures still fail). */
static APP_UNUSED void chol_verify(app_result *r, const chol_opts *o, const chol_matrix *a, const chol_matrix *l,
                                   int blas_threads) {
  r->error = o->check ? chol_residual(a, l, blas_threads) : 0.0;
  r->ok = chol_passed(o->n, r->error);
}

static APP_UNUSED void chol_result_init(app_result *r, const chol_opts *o, const char *runtime, int threads) {
  memset(r, 0, sizeof *r);
  r->app = "cholesky";
  r->variant = o->variant;
  r->runtime = runtime;
  r->threads = threads;
  r->size = o->n;
  r->block = o->b;
  r->iters = 1;
  r->tasks = -1;
  r->edges = -1;
}

#endif /* WEFT_BENCH_CHOLESKY_KERNELS_H */
