/* Blocked Gauss-Seidel sweeps (a wavefront) with one task per block per sweep:
 * depend(inout: own block) depend(in: the four neighbour blocks). Every pair of tasks touching a
 * common block with at least one writer is ordered as created, so the grid must be bitwise equal
 * to executing the block tasks sequentially in creation order. The residual is then computed with
 * a taskloop reduction and compared with the sequential sum. */
#include "omp_test.h"
#include <math.h>

#define NBK 5
#define B 6
#define N (NBK * B)
#define SWEEPS 4

static double u[N + 2][N + 2], ref[N + 2][N + 2], f[N + 2][N + 2];
static char blk[NBK][NBK];  /* dependence addresses, one per block */
static char outside;        /* stands in for neighbours beyond the boundary */

static void relax_block(double (*g)[N + 2], int bi, int bj) {
  for (int i = 1 + bi * B; i <= (bi + 1) * B; i++)
    for (int j = 1 + bj * B; j <= (bj + 1) * B; j++)
      g[i][j] = 0.25 * (g[i - 1][j] + g[i + 1][j] + g[i][j - 1] + g[i][j + 1]) + f[i][j];
}

static void init(double (*g)[N + 2]) {
  for (int i = 0; i < N + 2; i++)
    for (int j = 0; j < N + 2; j++) {
      g[i][j] = (i == 0 || j == 0 || i == N + 1 || j == N + 1) ? (double)((i * 3 + j * 5) % 7) : 0.0;
      f[i][j] = ((i * 31 + j * 17) % 13) * 0.01;
    }
}

static double residual_seq(double (*g)[N + 2]) {
  double s = 0;
  for (int i = 1; i <= N; i++)
    for (int j = 1; j <= N; j++) {
      double r = 0.25 * (g[i - 1][j] + g[i + 1][j] + g[i][j - 1] + g[i][j + 1]) + f[i][j] - g[i][j];
      s += r * r;
    }
  return s;
}

int main(void) {
  init(ref);
  for (int s = 0; s < SWEEPS; s++)
    for (int bi = 0; bi < NBK; bi++)
      for (int bj = 0; bj < NBK; bj++) relax_block(ref, bi, bj);
  double res_ref = residual_seq(ref);

  for (int rep = 0; rep < 5; rep++) {
    PHASE("wavefront tasks");
    init(u);
    double res = 0;
    #pragma omp parallel
    #pragma omp single
    {
      for (int s = 0; s < SWEEPS; s++)
        for (int bi = 0; bi < NBK; bi++)
          for (int bj = 0; bj < NBK; bj++) {
            char *up = bi > 0 ? &blk[bi - 1][bj] : &outside;
            char *down = bi < NBK - 1 ? &blk[bi + 1][bj] : &outside;
            char *left = bj > 0 ? &blk[bi][bj - 1] : &outside;
            char *right = bj < NBK - 1 ? &blk[bi][bj + 1] : &outside;
            (void)up, (void)down, (void)left, (void)right; /* gcc 12 misses uses in depend clauses */
            #pragma omp task depend(inout : blk[bi][bj]) depend(in : up[0], down[0], left[0], right[0]) firstprivate(bi, bj)
            relax_block(u, bi, bj);
          }
      #pragma omp taskwait
      PHASE("residual taskloop reduction");
      #pragma omp taskloop reduction(+ : res) grainsize(3)
      for (int i = 1; i <= N; i++)
        for (int j = 1; j <= N; j++) {
          double r = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]) + f[i][j] - u[i][j];
          res += r * r;
        }
    }
    PHASE("compare");
    for (int i = 0; i < N + 2; i++)
      for (int j = 0; j < N + 2; j++) CHECK(u[i][j] == ref[i][j], "u[%d][%d] = %.17g, sequential %.17g", i, j, u[i][j], ref[i][j]);
    CHECK(fabs(res - res_ref) <= 1e-12 * res_ref, "residual %.17g, sequential %.17g", res, res_ref);
  }
  PASS();
}
