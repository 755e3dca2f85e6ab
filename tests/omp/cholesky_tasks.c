/* Blocked right-looking Cholesky factorisation of a small SPD matrix with one task per block
 * kernel (potrf, trsm, syrk, gemm; naive kernels, no BLAS) and depend(in/inout) on the blocks.
 * Dependences serialise every block's updates in program order, so the result must be bitwise
 * equal to running the same kernels sequentially; it is also checked against L*L^T = A. */
#include "omp_test.h"
#include <math.h>

#define MAXNB 6
#define MAXBS 10
typedef double block[MAXBS][MAXBS];

static block A[MAXNB][MAXNB], R[MAXNB][MAXNB], orig[MAXNB][MAXNB];
static int NB, BS;

static void potrf(block a) {
  for (int j = 0; j < BS; j++) {
    double s = a[j][j];
    for (int m = 0; m < j; m++) s -= a[j][m] * a[j][m];
    CHECK(s > 0, "matrix not positive definite (pivot %g)", s);
    a[j][j] = sqrt(s);
    for (int i = j + 1; i < BS; i++) {
      double t = a[i][j];
      for (int m = 0; m < j; m++) t -= a[i][m] * a[j][m];
      a[i][j] = t / a[j][j];
    }
    for (int i = 0; i < j; i++) a[i][j] = 0.0;
  }
}
/* b = b * L^-T, L the lower factor in l */
static void trsm(block l, block b) {
  for (int r = 0; r < BS; r++)
    for (int j = 0; j < BS; j++) {
      double t = b[r][j];
      for (int m = 0; m < j; m++) t -= b[r][m] * l[j][m];
      b[r][j] = t / l[j][j];
    }
}
/* c -= a * a^T */
static void syrk(block a, block c) {
  for (int i = 0; i < BS; i++)
    for (int j = 0; j < BS; j++) {
      double t = c[i][j];
      for (int m = 0; m < BS; m++) t -= a[i][m] * a[j][m];
      c[i][j] = t;
    }
}
/* c -= a * b^T */
static void gemm(block a, block b, block c) {
  for (int i = 0; i < BS; i++)
    for (int j = 0; j < BS; j++) {
      double t = c[i][j];
      for (int m = 0; m < BS; m++) t -= a[i][m] * b[j][m];
      c[i][j] = t;
    }
}

static void factor_seq(block M[MAXNB][MAXNB]) {
  for (int k = 0; k < NB; k++) {
    potrf(M[k][k]);
    for (int i = k + 1; i < NB; i++) trsm(M[k][k], M[i][k]);
    for (int i = k + 1; i < NB; i++) {
      syrk(M[i][k], M[i][i]);
      for (int j = k + 1; j < i; j++) gemm(M[i][k], M[j][k], M[i][j]);
    }
  }
}

static void factor_tasks(block M[MAXNB][MAXNB]) {
  for (int k = 0; k < NB; k++) {
    #pragma omp task depend(inout : M[k][k][0][0]) firstprivate(k)
    potrf(M[k][k]);
    for (int i = k + 1; i < NB; i++) {
      #pragma omp task depend(in : M[k][k][0][0]) depend(inout : M[i][k][0][0]) firstprivate(i, k)
      trsm(M[k][k], M[i][k]);
    }
    for (int i = k + 1; i < NB; i++) {
      #pragma omp task depend(in : M[i][k][0][0]) depend(inout : M[i][i][0][0]) firstprivate(i, k)
      syrk(M[i][k], M[i][i]);
      for (int j = k + 1; j < i; j++) {
        #pragma omp task depend(in : M[i][k][0][0], M[j][k][0][0]) depend(inout : M[i][j][0][0]) firstprivate(i, j, k)
        gemm(M[i][k], M[j][k], M[i][j]);
      }
    }
  }
  #pragma omp taskwait
}

static void make_spd(unsigned long long seed) {
  int n = NB * BS;
  static double m[MAXNB * MAXBS][MAXNB * MAXBS];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) m[i][j] = (double)(omp_test_rand(&seed) % 2001) / 1000.0 - 1.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = (i == j) ? n : 0.0;
      for (int k = 0; k < n; k++) s += m[i][k] * m[j][k];
      orig[i / BS][j / BS][i % BS][j % BS] = s;
    }
}

static double elem(block M[MAXNB][MAXNB], int i, int j) { return M[i / BS][j / BS][i % BS][j % BS]; }

int main(void) {
  int sizes[][2] = {{5, 8}, {6, 4}, {3, 10}, {1, 5}};
  for (int s = 0; s < 4; s++) {
    NB = sizes[s][0];
    BS = sizes[s][1];
    for (int rep = 0; rep < 3; rep++) {
      PHASE("build");
      make_spd(1000ULL * (unsigned)s + (unsigned)rep + 1);
      memcpy(R, orig, sizeof orig);
      factor_seq(R);
      memcpy(A, orig, sizeof orig);
      PHASE("factor with tasks");
      #pragma omp parallel
      #pragma omp single
      factor_tasks(A);
      PHASE("compare");
      int n = NB * BS;
      for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
          CHECK(elem(A, i, j) == elem(R, i, j), "NB=%d BS=%d: L[%d][%d] = %.17g, sequential %.17g", NB, BS, i, j, elem(A, i, j), elem(R, i, j));
      double maxerr = 0;
      for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
          double t = 0;
          for (int k = 0; k <= j; k++) t += elem(A, i, k) * elem(A, j, k);
          double e = fabs(t - elem(orig, i, j));
          if (e > maxerr) maxerr = e;
        }
      CHECK(maxerr < 1e-9 * n, "NB=%d BS=%d: |L L^T - A| = %g", NB, BS, maxerr);
    }
  }
  PASS();
}
