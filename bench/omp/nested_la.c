/* Tiled Cholesky and tiled LU whose panel tasks run a nested parallel region, as SLATE's do (issue
   26, paper 004 section 5): one gcc -fopenmp binary timed on libgomp, LLVM libomp and weft
   (bench/nested.sh).

     nested_la cholesky|lu N B INNER

   N: matrix order, B: tile size (N a multiple of B), INNER: threads of each panel's nested region.
   The matrix is stored as (N/B)^2 contiguous B x B row-major tiles and factored in place, without
   pivoting: Cholesky's matrix is symmetric and diagonally dominant (positive definite), LU's is
   diagonally dominant, so both are stable. The task graph works on block columns, like SLATE's
   (a dependence token per block column):
     panel k       depend(inout: column k)
                   Cholesky: potrf of the diagonal tile, then the trsm of the tiles below it;
                   LU: getrf of the whole block column (the diagonal tile and the tiles below it).
                   Both in one `#pragma omp parallel num_threads(INNER)`: a right-looking
                   column-by-column factorisation whose rows are split among the inner threads,
                   one barrier per column of the tile, then (Cholesky) a `for` over the tiles
                   below and a `single`.
     update (k, j) depend(in: column k) depend(inout: column j), for every j > k
                   Cholesky: syrk of tile (j, j) (its upper triangle, which the panel reads) and
                   gemm of the tiles (i > j, j) with column k;
                   LU: trsm of tile (k, j) by the unit lower L(k, k), then gemm of the tiles
                   (i > k, j).
   So update (k, k+1) and panel k+1 (the lookahead) overlap the other updates of step k, and a
   panel's nested region runs while the other threads are busy with updates: with more threads
   than cores (libgomp, or libomp with nesting on) or on fibers of the existing workers (weft with
   WEFT_GANG=nested). The kernels are plain C (no BLAS), compiled -O2.

   Prints one line:
     nested_la alg=cholesky n=2048 b=256 inner=2 threads=2 team=2 seconds=0.6783 gflops=4.222
       residual=6.31e-17 check=ok threads_peak=3
   seconds: the factorisation alone (the task graph, from the first task to the last); gflops:
   n^3/3 (Cholesky) or 2n^3/3 (LU) over that; team: the sizes the panels' nested teams had (min-max;
   1 when the runtime serialises nested regions); threads_peak: the most threads the process had
   (entries of /proc/self/task, read by each panel once its team has met and by each update task);
   residual: the largest of ||A X - L(L^T X)|| / (||A|| ||X||) over 3 random vectors X (Cholesky;
   LU: L(U X)), and for N <= 512 also ||A - L L^T||_F / ||A||_F (LU: A - L U). Exits 1 when the
   residual is above 1e-8 (check=fail), 2 on bad arguments. */
#include <dirent.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n, b, nt, inner, lu;
static double **tiles; /* tiles[i * nt + j]: tile (i, j), b x b row-major */
#define TILE(i, j) tiles[(size_t)(i) * (size_t)nt + (size_t)(j)]

static int peak_threads, team_min = 1 << 30, team_max;

static void atomic_max(int *p, int v) {
  int seen = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v > seen && !__atomic_compare_exchange_n(p, &seen, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}
static void atomic_min(int *p, int v) {
  int seen = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < seen && !__atomic_compare_exchange_n(p, &seen, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

static void sample_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') count++;
  closedir(d);
  atomic_max(&peak_threads, count);
}

/* --- the matrix --------------------------------------------------------------------------------- */
static double hash01(uint64_t x) { /* in [-0.5, 0.5) */
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return (double)(x >> 11) / 9007199254740992.0 - 0.5;
}

/* Element (i, j) of the input, recomputed for the check (no copy of A is kept). */
static double a_orig(int i, int j) {
  if (!lu && j > i) { /* symmetric */
    int t = i;
    i = j;
    j = t;
  }
  double v = hash01((uint64_t)i * 0x9E3779B97F4A7C15ULL + (uint64_t)j * 0x632BE59BD9B4E019ULL + 12345u);
  if (i == j) v += n; /* diagonally dominant */
  return v;
}

static double get(int i, int j) { return TILE(i / b, j / b)[(size_t)(i % b) * b + (j % b)]; }

/* The factors as the factorisation left them: L (Cholesky: lower with its diagonal; LU: unit
   lower) and U (LU: upper with the diagonal; Cholesky: L^T). */
static double l_of(int i, int j) {
  if (j > i) return 0.0;
  if (lu && i == j) return 1.0;
  return get(i, j);
}
static double u_of(int i, int j) {
  if (!lu) return l_of(j, i);
  return j < i ? 0.0 : get(i, j);
}

/* --- the nested panels -------------------------------------------------------------------------- */
static void panel_team_met(void) {
  #pragma omp barrier
  if (omp_get_thread_num() == 0) {
    atomic_min(&team_min, omp_get_num_threads());
    atomic_max(&team_max, omp_get_num_threads());
    sample_threads();
  }
}

/* Cholesky panel k: potrf of the diagonal tile, then X := A(i, k) L(k, k)^-T for the tiles below.
   The factorisation runs on the upper triangle (the tile is symmetric: U = L^T), so that rows are
   contiguous: per column j the owner of row j scales it, a barrier, then every thread updates its
   own rows i > j with row j (rows dealt round-robin). The owner of row j + 1 is the only writer of
   that row in step j and the one that scales it in step j + 1, so one barrier per column suffices.
   At the end the lower triangle receives L = U^T. */
static void cholesky_panel(int k) {
  double *restrict a = TILE(k, k);
  const int B = b;
  #pragma omp parallel num_threads(inner)
  {
    panel_team_met();
    const int me = omp_get_thread_num(), nth = omp_get_num_threads();
    for (int j = 0; j < B; j++) {
      if (j % nth == me) {
        double *restrict rj = a + (size_t)j * B;
        double d = sqrt(rj[j]);
        rj[j] = d;
        double inv = 1.0 / d;
        for (int l = j + 1; l < B; l++) rj[l] *= inv;
      }
      #pragma omp barrier
      const double *restrict rj = a + (size_t)j * B;
      int first = j + 1 + ((me - (j + 1)) % nth + nth) % nth; /* my first row > j */
      for (int i = first; i < B; i += nth) {
        double *restrict ri = a + (size_t)i * B;
        double s = rj[i];
        #pragma omp simd
        for (int l = i; l < B; l++) ri[l] -= s * rj[l];
      }
    }
    #pragma omp barrier
    /* trsm: each row x of A(i, k) solves x U = a. */
    #pragma omp for schedule(dynamic, 1)
    for (int t = k + 1; t < nt; t++) {
      double *restrict x = TILE(t, k);
      for (int r = 0; r < B; r++) {
        double *restrict xr = x + (size_t)r * B;
        for (int s = 0; s < B; s++) {
          const double *restrict us = a + (size_t)s * B;
          double v = xr[s] / us[s];
          xr[s] = v;
          #pragma omp simd
          for (int c = s + 1; c < B; c++) xr[c] -= v * us[c];
        }
      }
    }
    #pragma omp single
    for (int i = 0; i < B; i++)
      for (int j = 0; j < i; j++) a[(size_t)i * B + j] = a[(size_t)j * B + i];
  }
}

/* LU panel k: the block column (tiles k..nt-1, k) factored without pivoting, right-looking, one
   column at a time: every thread updates its block of the panel's rows below row j with row j of
   the diagonal tile, then a barrier (row j + 1, the next pivot row, is final after it). */
static void lu_panel(int k) {
  const int B = b;
  const int rows = (nt - k) * B;
  const double *restrict diag = TILE(k, k);
  #pragma omp parallel num_threads(inner)
  {
    panel_team_met();
    const int me = omp_get_thread_num(), nth = omp_get_num_threads();
    const int lo = (int)((long)rows * me / nth), hi = (int)((long)rows * (me + 1) / nth);
    for (int j = 0; j < B; j++) {
      const double *restrict pj = diag + (size_t)j * B;
      const double inv = 1.0 / pj[j];
      for (int p = lo > j + 1 ? lo : j + 1; p < hi; p++) {
        double *restrict rp = TILE(k + p / B, k) + (size_t)(p % B) * B;
        double l = rp[j] * inv;
        rp[j] = l;
        #pragma omp simd
        for (int c = j + 1; c < B; c++) rp[c] -= l * pj[c];
      }
      #pragma omp barrier
    }
  }
}

/* --- the updates (sequential kernels inside one task) ------------------------------------------- */
/* C -= A * Bm (all b x b row-major); upper_only: only c >= r (the diagonal tile of a syrk: the
   Cholesky panel reads the upper triangle of its symmetric tile). */
static void gemm_nn(double *restrict c, const double *restrict a, const double *restrict bm, int upper_only) {
  const int B = b;
  for (int r = 0; r < B; r++) {
    double *restrict cr = c + (size_t)r * B;
    const int from = upper_only ? r : 0;
    for (int s = 0; s < B; s++) {
      const double ars = a[(size_t)r * B + s];
      const double *restrict bs = bm + (size_t)s * B;
      #pragma omp simd
      for (int q = from; q < B; q++) cr[q] -= ars * bs[q];
    }
  }
}

static void cholesky_update(int k, int j) {
  const int B = b;
  sample_threads();
  /* Not a buffer per thread number: a task run by a nested team's member (weft's gangs run outer
     tasks at the join barrier) may see the thread number of another running task. */
  double *restrict tbuf = aligned_alloc(64, sizeof(double) * (size_t)B * B);
  if (!tbuf) abort();
  const double *restrict ljk = TILE(j, k);
  for (int r = 0; r < B; r++) /* tbuf = L(j, k)^T */
    for (int c = 0; c < B; c++) tbuf[(size_t)c * B + r] = ljk[(size_t)r * B + c];
  gemm_nn(TILE(j, j), ljk, tbuf, 1);
  for (int i = j + 1; i < nt; i++) gemm_nn(TILE(i, j), TILE(i, k), tbuf, 0);
  free(tbuf);
}

static void lu_update(int k, int j) {
  const int B = b;
  sample_threads();
  const double *restrict lkk = TILE(k, k);
  double *restrict akj = TILE(k, j);
  for (int r = 1; r < B; r++) { /* A(k, j) := L(k, k)^-1 A(k, j), L unit lower */
    double *restrict ar = akj + (size_t)r * B;
    for (int s = 0; s < r; s++) {
      const double l = lkk[(size_t)r * B + s];
      const double *restrict as = akj + (size_t)s * B;
      #pragma omp simd
      for (int c = 0; c < B; c++) ar[c] -= l * as[c];
    }
  }
  for (int i = k + 1; i < nt; i++) gemm_nn(TILE(i, j), TILE(i, k), akj, 0);
}

/* --- the check ---------------------------------------------------------------------------------- */
static double residual(void) {
  double anorm = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) anorm += a_orig(i, j) * a_orig(i, j);
  anorm = sqrt(anorm);
  double worst = 0.0;
  double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n);
  for (int probe = 0; probe < 3; probe++) {
    double xnorm = 0.0;
    for (int i = 0; i < n; i++) {
      x[i] = hash01((uint64_t)probe * 1000003u + (uint64_t)i + 77u);
      xnorm += x[i] * x[i];
    }
    xnorm = sqrt(xnorm);
    for (int i = 0; i < n; i++) { /* z = U x */
      double s = 0.0;
      for (int j = i; j < n; j++) s += u_of(i, j) * x[j];
      z[i] = s;
    }
    double err = 0.0;
    for (int i = 0; i < n; i++) { /* y = A x - L z */
      double s = 0.0;
      for (int j = 0; j < n; j++) s += a_orig(i, j) * x[j];
      for (int j = 0; j <= i; j++) s -= l_of(i, j) * z[j];
      err += s * s;
    }
    double r = sqrt(err) / (anorm * xnorm);
    if (!(r <= worst)) worst = r; /* NaN sticks */
  }
  if (n <= 512) {
    double err = 0.0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double s = a_orig(i, j);
        int top = i < j ? i : j;
        for (int q = 0; q <= top; q++) s -= l_of(i, q) * u_of(q, j);
        err += s * s;
      }
    double r = sqrt(err) / anorm;
    if (!(r <= worst)) worst = r;
  }
  free(x);
  free(y);
  free(z);
  return worst;
}

static void usage(void) {
  fprintf(stderr, "usage: nested_la cholesky|lu N B INNER   (N a multiple of B; INNER >= 1 nested threads)\n");
  exit(2);
}

int main(int argc, char **argv) {
  if (argc != 5) usage();
  if (!strcmp(argv[1], "lu")) lu = 1;
  else if (strcmp(argv[1], "cholesky")) usage();
  n = atoi(argv[2]);
  b = atoi(argv[3]);
  inner = atoi(argv[4]);
  if (n <= 0 || b <= 0 || n % b || inner <= 0) usage();
  nt = n / b;

  tiles = malloc(sizeof(double *) * (size_t)nt * nt);
  for (int i = 0; i < nt; i++)
    for (int j = 0; j < nt; j++) {
      TILE(i, j) = aligned_alloc(64, sizeof(double) * (size_t)b * b);
      if (!TILE(i, j)) {
        fprintf(stderr, "nested_la: out of memory\n");
        return 2;
      }
    }
  #pragma omp parallel for schedule(dynamic, 1)
  for (int ti = 0; ti < nt; ti++)
    for (int tj = 0; tj < nt; tj++)
      for (int r = 0; r < b; r++)
        for (int c = 0; c < b; c++) TILE(ti, tj)[(size_t)r * b + c] = a_orig(ti * b + r, tj * b + c);
  char *column = calloc((size_t)nt, 1); /* the dependence token of each block column */
  int threads = 0;

  double t0 = omp_get_wtime();
  #pragma omp parallel
  #pragma omp single
  {
    threads = omp_get_num_threads();
    for (int k = 0; k < nt; k++) {
      #pragma omp task depend(inout : column[k]) firstprivate(k)
      {
        if (lu) lu_panel(k);
        else cholesky_panel(k);
      }
      for (int j = k + 1; j < nt; j++) {
        #pragma omp task depend(in : column[k]) depend(inout : column[j]) firstprivate(k, j)
        {
          if (lu) lu_update(k, j);
          else cholesky_update(k, j);
        }
      }
    }
  }
  double seconds = omp_get_wtime() - t0;
  sample_threads();
  free(column);

  double res = residual();
  int ok = res <= 1e-8;
  double flops = (lu ? 2.0 : 1.0) * (double)n * n * n / 3.0;
  char team[32];
  if (team_max == 0) snprintf(team, sizeof team, "none");
  else if (team_min == team_max) snprintf(team, sizeof team, "%d", team_max);
  else snprintf(team, sizeof team, "%d-%d", team_min, team_max);
  printf("nested_la alg=%s n=%d b=%d inner=%d threads=%d team=%s seconds=%.4f gflops=%.3f residual=%.2e check=%s "
         "threads_peak=%d\n",
         lu ? "lu" : "cholesky", n, b, inner, threads, team, seconds, flops / seconds * 1e-9, res, ok ? "ok" : "fail",
         peak_threads);
  return ok ? 0 : 1;
}
