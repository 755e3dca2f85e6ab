/* 2-D heat equation (bench/apps): what heat_omp.c (gcc -O2 -fopenmp) and heat_weft.cpp (g++, native
 * weft) share: the grid, its blocking, the block updates, the serial reference sweeps, the comparison
 * and the command line. C11 and C++20 both compile it; everything is static.
 *
 * The grid is (n + 2) x (n + 2) doubles, row-major: a fixed boundary ring (top row 1.0, the other
 * three sides 0.0) around n x n interior cells, which start pseudo-random in [0, 1) (so that an update
 * made in a wrong order changes bits). The interior is cut into nb x nb blocks of b x b cells
 * (n = nb * b). One sweep (timestep) updates every interior cell once with the 5-point stencil
 *     u(i, j) = 0.25 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
 * which costs 5 flops per cell (4 additions, 1 multiplication): gflops = 5 n^2 S / seconds / 1e9.
 *
 *   gauss-seidel: in place, block by block, row by row inside a block. Block (bi, bj) reads its north
 *     and west neighbours as this sweep left them and its south and east ones as the last sweep did.
 *     As tasks: inout(own block), in(the 4 neighbour blocks), created in row-major block order, sweep
 *     after sweep. Each cell update then sees exactly the values it sees in the serial row-major
 *     blocked sweep, whatever order the runtime picks among the orders the dependences allow (a wave
 *     front inside a sweep, sweeps overlapping), so the result is the same bit for bit: the
 *     serial-random variant runs the blocks in a random dependence-respecting order (sweeps
 *     overlapping) to check that claim.
 *   jacobi: two arrays; sweep k writes dst from src (out dst block, in src block and its 4 neighbour
 *     blocks) and the arrays swap every sweep (a persistent graph records 2 sweeps: unroll 2).
 *
 * No FMA can be contracted on plain x86-64 (no -march), so gcc and g++ give the same bits. */
#ifndef WEFT_BENCH_HEAT_KERNELS_H
#define WEFT_BENCH_HEAT_KERNELS_H

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../micro/graph_kernels.h"

#if defined(__GNUC__)
#define HEAT_UNUSED __attribute__((unused))
#else
#define HEAT_UNUSED
#endif

/* The grid, its initial state, the block updates and the serial sweeps are the persistent-graph
 * micro-benchmark's (bench/micro/graph_kernels.h): the same code, so the same bits. */

/* The first cell of block (bi, bj): the address that stands for the block in dependences. */
static inline double *heat_block(const gk_grid *g, double *u, int bi, int bj) {
  return u + (1 + (size_t)bi * (size_t)g->b) * g->stride + 1 + (size_t)bj * (size_t)g->b;
}


static inline uint64_t heat_rand(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* Gauss-Seidel, one block at a time in a random order that respects the task dependences (sweeps
 * overlap): block x may do its sweep d+1 (it has done d) when its north and west neighbours have
 * done d+1 sweeps and its south and east ones exactly d. Returns 0 on success, -1 if no block was
 * ready while sweeps remained (cannot happen: the block with the fewest sweeps done, lowest in
 * row-major order among those, is always ready) or on out of memory. */
static HEAT_UNUSED int heat_gs_random_order(const gk_grid *g, double *u, long sweeps, uint64_t seed) {
  const int nb = g->nb;
  const long total = sweeps * (long)nb * (long)nb;
  long *done = (long *)calloc((size_t)nb * (size_t)nb, sizeof(long));
  int *ready = (int *)malloc(sizeof(int) * (size_t)nb * (size_t)nb);
  long step;
  uint64_t x = seed ? seed : 0x2545F4914F6CDD1Dull;
  if (!done || !ready) {
    free(done);
    free(ready);
    return -1;
  }
  for (step = 0; step < total; ++step) {
    int count = 0, bi, bj, pick;
    for (bi = 0; bi < nb; ++bi) {
      for (bj = 0; bj < nb; ++bj) {
        long d = done[bi * nb + bj];
        if (d == sweeps) continue;
        if (bi > 0 && done[(bi - 1) * nb + bj] != d + 1) continue;
        if (bj > 0 && done[bi * nb + bj - 1] != d + 1) continue;
        if (bi + 1 < nb && done[(bi + 1) * nb + bj] != d) continue;
        if (bj + 1 < nb && done[bi * nb + bj + 1] != d) continue;
        ready[count++] = bi * nb + bj;
      }
    }
    if (count == 0) {
      free(done);
      free(ready);
      return -1;
    }
    pick = ready[heat_rand(&x) % (uint64_t)count];
    gk_gs_block(g, u, pick / nb, pick % nb);
    ++done[pick];
  }
  free(done);
  free(ready);
  return 0;
}

/* Jacobi, each sweep's blocks in a random order (any order gives the same bits). */
static HEAT_UNUSED double *heat_jacobi_random_order(const gk_grid *g, double *a, double *b, long sweeps,
                                                    uint64_t seed) {
  const int nb = g->nb, nblocks = nb * nb;
  int *order = (int *)malloc(sizeof(int) * (size_t)nblocks);
  uint64_t x = seed ? seed : 0x2545F4914F6CDD1Dull;
  long k;
  int i;
  if (!order) return NULL;
  for (k = 0; k < sweeps; ++k) {
    const double *src = (k & 1) ? b : a;
    double *dst = (k & 1) ? a : b;
    for (i = 0; i < nblocks; ++i) order[i] = i;
    for (i = nblocks - 1; i > 0; --i) { /* Fisher-Yates */
      int j = (int)(heat_rand(&x) % (uint64_t)(i + 1)), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    for (i = 0; i < nblocks; ++i) gk_jacobi_block(g, dst, src, order[i] / nb, order[i] % nb);
  }
  free(order);
  return (sweeps & 1) ? b : a;
}

/* Largest |a - b| over the whole grid (boundary included). NaN anywhere counts as infinite. */
static HEAT_UNUSED double heat_max_diff(const gk_grid *g, const double *a, const double *b) {
  size_t k, n = gk_cells(g);
  double m = 0.0;
  for (k = 0; k < n; ++k) {
    double d = fabs(a[k] - b[k]);
    if (d != d) return INFINITY;
    if (d > m) m = d;
  }
  return m;
}

/* --- command line ---------------------------------------------------------------------------------- */

enum heat_method { HEAT_GS = 0, HEAT_JACOBI = 1 };

typedef struct heat_options {
  int method;          /* heat_method */
  const char *variant; /* one of the program's names */
  int variant_index;   /* its index in the program's list */
  int n, b;
  long sweeps;
  int threads;         /* 0: the runtime's default */
  int check;           /* compare with the serial reference after the timed solve */
  gk_grid grid;
} heat_options;

static HEAT_UNUSED void heat_usage(FILE *f, const char *prog, const char *const *variants) {
  int i;
  fprintf(f,
          "usage: %s [--method gauss-seidel|jacobi] [--variant V] [-n N] [-b B] [-s S] [-p P] [--no-check]\n"
          "  2-D heat equation on an (N+2) x (N+2) grid with a fixed boundary, B x B blocks, S sweeps.\n"
          "  --method M     gauss-seidel (in place, wavefront of blocks) or jacobi (two arrays)  [gauss-seidel]\n"
          "  --variant V    ",
          prog);
  for (i = 0; variants[i]; ++i) fprintf(f, "%s%s", i ? " | " : "", variants[i]);
  fprintf(f,
          "  [%s]\n"
          "  -n N           interior cells per side                                              [4096]\n"
          "  -b B           block side; must divide N                                            [256]\n"
          "  -s S           sweeps (timesteps)                                                   [20]\n"
          "  -p P           threads (0: the runtime's default)                                   [0]\n"
          "  --no-check     skip the comparison with the serial sweep after the timed solve\n"
          "  -h, --help     this text\n"
          "Prints one RESULT line (bench/apps/app_common.h); exit 1 when the check fails, 2 on bad options.\n",
          variants[0]);
}

/* variants: NULL-terminated, the first is the default. Exits 0 on -h, 2 on a bad option. */
static HEAT_UNUSED void heat_parse(heat_options *o, int argc, char **argv, const char *prog,
                                   const char *const *variants) {
  int i;
  memset(o, 0, sizeof *o);
  o->method = HEAT_GS;
  o->variant = variants[0];
  o->n = 4096;
  o->b = 256;
  o->sweeps = 20;
  o->check = 1;
  for (i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      heat_usage(stdout, prog, variants);
      exit(0);
    }
    if (strcmp(a, "--no-check") == 0) {
      app_check_skipped = 1;
      o->check = 0;
      continue;
    }
    if (strcmp(a, "--method") != 0 && strcmp(a, "--variant") != 0 && strcmp(a, "-n") != 0 &&
        strcmp(a, "-b") != 0 && strcmp(a, "-s") != 0 && strcmp(a, "-p") != 0)
      app_bad(prog, "unknown option '%s'", a);
    if (i + 1 >= argc) app_bad(prog, "option %s needs a value", a);
    v = argv[++i];
    if (strcmp(a, "--method") == 0) {
      if (strcmp(v, "gauss-seidel") == 0 || strcmp(v, "gs") == 0) o->method = HEAT_GS;
      else if (strcmp(v, "jacobi") == 0) o->method = HEAT_JACOBI;
      else app_bad(prog, "--method: unknown method '%s' (gauss-seidel | jacobi)", v);
    } else if (strcmp(a, "--variant") == 0) {
      int k, found = -1;
      for (k = 0; variants[k]; ++k)
        if (strcmp(v, variants[k]) == 0) found = k;
      if (found < 0) app_bad(prog, "--variant: unknown variant '%s' for this program", v);
      o->variant = variants[found];
      o->variant_index = found;
    } else if (strcmp(a, "-n") == 0) {
      o->n = (int)app_parse_long(prog, a, v, 1, 1000000);
    } else if (strcmp(a, "-b") == 0) {
      o->b = (int)app_parse_long(prog, a, v, 1, 1000000);
    } else if (strcmp(a, "-s") == 0) {
      o->sweeps = app_parse_long(prog, a, v, 1, 100000000L);
    } else {
      o->threads = (int)app_parse_long(prog, a, v, 0, 4096);
    }
  }
  if (o->n % o->b != 0) {
    char nb[64];
    snprintf(nb, sizeof nb, "%d, -b %d", o->n, o->b);
    app_bad(prog, "-n %s: the block side must divide the grid side", nb);
  }
  o->grid.n = o->n;
  o->grid.b = o->b;
  o->grid.nb = o->n / o->b;
  o->grid.stride = (size_t)o->n + 2;
}

/* gflops: 5 flops per interior cell per sweep (4 additions, 1 multiplication). */
static HEAT_UNUSED double heat_gflops(const heat_options *o, double seconds) {
  return seconds > 0 ? 5.0 * (double)o->n * (double)o->n * (double)o->sweeps / seconds / 1e9 : 0.0;
}

#endif /* WEFT_BENCH_HEAT_KERNELS_H */
