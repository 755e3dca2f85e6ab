/* Kernels of the persistent-graph benchmarks (bench/graph.sh), shared by graph_weft.cpp (g++) and
 * graph_omp.c (gcc -fopenmp) so that every variant runs the very same block update and a grid can be
 * compared bit for bit with a serial sweep, and across binaries through its hash.
 *
 * The grid is (n + 2) x (n + 2) doubles, row-major: a fixed boundary ring around n x n interior
 * cells, cut into nb x nb blocks of b x b cells (n = nb * b).
 *
 *   Gauss-Seidel (heat): block (bi, bj) is updated in place, row by row, each cell becoming the mean
 *     of its 4 neighbours. Done block by block in row-major block order, a block reads its upper and
 *     left neighbours as updated in this sweep and its lower and right ones as left by the last
 *     sweep: a task inout(own block), in(4 neighbour blocks), created in that order, computes the
 *     same bits; so does an anti-diagonal wavefront (the blocks of one diagonal share no edge).
 *   Jacobi: dst cell = mean of the 4 neighbours in src; src and dst swap every iteration.
 *
 * C11 and C++20 both compile it; everything is static. No FMA can be contracted on plain x86-64
 * (no -march), so gcc and g++ produce the same bits. */
#ifndef WEFT_BENCH_GRAPH_KERNELS_H
#define WEFT_BENCH_GRAPH_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define GK_UNUSED __attribute__((unused))
#else
#define GK_UNUSED
#endif

typedef struct gk_grid {
  int n;          /* interior cells per side */
  int b;          /* block side */
  int nb;         /* blocks per side */
  size_t stride;  /* n + 2 */
} gk_grid;

/* 0 when b does not divide n or a size is out of range. */
static GK_UNUSED int gk_make(gk_grid *g, int n, int b) {
  if (n < 1 || b < 1 || n % b != 0 || n > 65536) return 0;
  g->n = n;
  g->b = b;
  g->nb = n / b;
  g->stride = (size_t)n + 2;
  return 1;
}

static GK_UNUSED size_t gk_cells(const gk_grid *g) { return g->stride * g->stride; }

static GK_UNUSED double *gk_alloc(const gk_grid *g) {
  double *u = (double *)malloc(sizeof(double) * gk_cells(g));
  return u;
}

/* The same start for every variant: the top boundary row hot (1.0), the rest of the boundary 0,
 * the interior pseudo-random in [0, 1) (so that an update in the wrong order changes bits). */
static GK_UNUSED void gk_init(const gk_grid *g, double *u) {
  size_t i, j, s = g->stride;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (i = 0; i < s; ++i) {
    for (j = 0; j < s; ++j) {
      double v;
      if (i == 0) v = 1.0;
      else if (i == s - 1 || j == 0 || j == s - 1) v = 0.0;
      else {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v = (double)(x >> 11) * (1.0 / 9007199254740992.0);
      }
      u[i * s + j] = v;
    }
  }
}

/* Gauss-Seidel: block (bi, bj) in place. */
static inline void gk_gs_block(const gk_grid *g, double *u, int bi, int bj) {
  size_t s = g->stride;
  size_t i0 = 1 + (size_t)bi * (size_t)g->b, j0 = 1 + (size_t)bj * (size_t)g->b;
  size_t i, j;
  for (i = i0; i < i0 + (size_t)g->b; ++i) {
    double *row = u + i * s;
    const double *up = row - s, *down = row + s;
    for (j = j0; j < j0 + (size_t)g->b; ++j) row[j] = 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]);
  }
}

/* Jacobi: block (bi, bj) of dst from src. */
static inline void gk_jacobi_block(const gk_grid *g, double *dst, const double *src, int bi, int bj) {
  size_t s = g->stride;
  size_t i0 = 1 + (size_t)bi * (size_t)g->b, j0 = 1 + (size_t)bj * (size_t)g->b;
  size_t i, j;
  for (i = i0; i < i0 + (size_t)g->b; ++i) {
    const double *row = src + i * s, *up = row - s, *down = row + s;
    double *out = dst + i * s;
    for (j = j0; j < j0 + (size_t)g->b; ++j) out[j] = 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]);
  }
}

static GK_UNUSED void gk_gs_serial(const gk_grid *g, double *u, long sweeps) {
  long s;
  int bi, bj;
  for (s = 0; s < sweeps; ++s)
    for (bi = 0; bi < g->nb; ++bi)
      for (bj = 0; bj < g->nb; ++bj) gk_gs_block(g, u, bi, bj);
}

/* Returns the array holding the last iteration (a after an even count, b after an odd one). */
static GK_UNUSED double *gk_jacobi_serial(const gk_grid *g, double *a, double *b, long iterations) {
  long k;
  int bi, bj;
  for (k = 0; k < iterations; ++k) {
    double *src = (k & 1) ? b : a, *dst = (k & 1) ? a : b;
    for (bi = 0; bi < g->nb; ++bi)
      for (bj = 0; bj < g->nb; ++bj) gk_jacobi_block(g, dst, src, bi, bj);
  }
  return (iterations & 1) ? b : a;
}

/* FNV-1a over the bytes of the grid: the same hash means the same bits. */
static GK_UNUSED uint64_t gk_hash(const gk_grid *g, const double *u) {
  const unsigned char *p = (const unsigned char *)u;
  size_t k, n = sizeof(double) * gk_cells(g);
  uint64_t h = 0xcbf29ce484222325ull;
  for (k = 0; k < n; ++k) {
    h ^= p[k];
    h *= 0x100000001b3ull;
  }
  return h;
}

/* Cells that differ (bitwise) between two grids. */
static GK_UNUSED size_t gk_diff(const gk_grid *g, const double *a, const double *b) {
  size_t k, n = gk_cells(g), bad = 0;
  for (k = 0; k < n; ++k)
    if (memcmp(&a[k], &b[k], sizeof(double)) != 0) ++bad;
  return bad;
}

#endif /* WEFT_BENCH_GRAPH_KERNELS_H */
