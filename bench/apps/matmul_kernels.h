/* Multi-matmul (the taskiter paper's Table 1: repeated dgemm), the kernel and the serial reference,
 * shared by the distributed programs (dense_mpi.h). Plain C loops, no BLAS: every variant calls the
 * same noinline tile kernel in the same order per tile of C, so every variant must reproduce the
 * serial run's bits.
 *
 * C += A B, N x N matrices stored by tiles: nt = N / bs tiles per dimension, tile (ti, tj) is
 * bs x bs row-major doubles at M + (ti nt + tj) bs^2 (contiguous, so one tile is one dependence and
 * one region), element (i, j) of the matrix at tile (i / bs, j / bs), position (i % bs, j % bs). A
 * step updates each tile C(ti, tk) by A(ti, tj) B(tj, tk) for tj = 0, 1, ..., nt - 1 in that order.
 * A's entries are uniform in [0, 2/N), B's in [0, 1) (the keys of mv_uniform, from the global
 * indices): C grows by about 1/2 per step, no overflow, no denormals. C11 and C++20 alike. */
#ifndef WEFT_BENCH_MATMUL_KERNELS_H
#define WEFT_BENCH_MATMUL_KERNELS_H

#include "matvec_kernels.h" /* mv_uniform, mv_alloc, MV_KERNEL */

/* The tile (ti, tj) of a tiled matrix with nt tiles per row. */
static inline double *mm_tile(double *M, long nt, long bs, long ti, long tj) {
  return M + ((size_t)ti * (size_t)nt + (size_t)tj) * (size_t)bs * (size_t)bs;
}

/* c += a b on bs x bs row-major tiles, i-j-k order (each c[i][k] sums over j in order). */
MV_KERNEL void mm_tile_gemm(const double *a, const double *b, double *c, long bs) {
  long i, j, k;
  for (i = 0; i < bs; ++i) {
    double *ci = c + (size_t)i * (size_t)bs;
    const double *ai = a + (size_t)i * (size_t)bs;
    for (j = 0; j < bs; ++j) {
      const double aij = ai[j];
      const double *bj = b + (size_t)j * (size_t)bs;
      for (k = 0; k < bs; ++k) ci[k] += aij * bj[k];
    }
  }
}

enum { MM_A = 0, MM_B = 1 };

/* Tile (ti, tj) of A or B (which), from the global indices of its elements. */
static APP_UNUSED void mm_init_tile(int which, long n, long bs, long ti, long tj, double *t) {
  long r, c;
  for (r = 0; r < bs; ++r)
    for (c = 0; c < bs; ++c) {
      const uint64_t key = (uint64_t)(ti * bs + r) * (uint64_t)n + (uint64_t)(tj * bs + c);
      t[r * bs + c] = which == MM_A ? mv_uniform(key) * (2.0 / (double)n) : mv_uniform(key ^ 0x5851F42D4C957F2DULL);
    }
}

/* The serial run: steps times, tile after tile of C, tj in order. */
static APP_UNUSED void mm_serial(long n, long bs, double *A, double *B, double *C, long steps) {
  const long nt = n / bs;
  long s, ti, tj, tk;
  for (s = 0; s < steps; ++s)
    for (ti = 0; ti < nt; ++ti)
      for (tk = 0; tk < nt; ++tk)
        for (tj = 0; tj < nt; ++tj)
          mm_tile_gemm(mm_tile(A, nt, bs, ti, tj), mm_tile(B, nt, bs, tj, tk), mm_tile(C, nt, bs, ti, tk), bs);
}

#endif /* WEFT_BENCH_MATMUL_KERNELS_H */
