/* Sparse blocked LU through the OpenMP door, one producer: the shape of BOTS' sparselu and of
   KASTORS' dependent version, written for weft's bench (one gcc -fopenmp binary timed on libgomp,
   LLVM libomp and weft by bench/fork_join.sh). A matrix of NB x NB blocks of BS x BS floats, some
   blocks absent; the factorisation (no pivoting) fills some absent blocks in. One thread creates a
   task per block operation:

     sparselu taskwait NB BS   per step: fwd and bdiv tasks, taskwait, bmod tasks, taskwait
                               (lu0 runs in the producer between steps), as BOTS does
     sparselu depend NB BS     every operation a task (lu0 too) ordered by depend clauses on the
                               blocks, one taskwait at the end: steps overlap

   Prints "sparselu-<variant> <tasks> <seconds>" (seconds of the factorisation only); exits 1 when
   the factors differ from a sequential run's by a single bit (every block sees the same operations
   in the same order either way, so they must be identical). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nb, bs;

static float *new_block(void) {
  float *b = aligned_alloc(64, ((size_t)bs * bs * sizeof(float) + 63) / 64 * 64);
  if (!b) {
    fprintf(stderr, "sparselu: out of memory\n");
    exit(2);
  }
  return b;
}

/* Which blocks exist before the factorisation: the diagonal and its neighbours, plus a sparse
   lattice of rows and columns (about a third of the blocks for NB = 50). */
static int present(int i, int j) {
  if (i == j || i == j + 1 || j == i + 1) return 1;
  if (i % 4 == 0 && j % 2 == 0) return 1;
  if (j % 4 == 0 && i % 2 == 0) return 1;
  return (i * 7 + j * 3) % 11 == 0;
}

static void generate(float **a) {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < nb; ++i)
    for (int j = 0; j < nb; ++j) {
      a[i * nb + j] = NULL;
      if (!present(i, j)) continue;
      float *b = new_block();
      for (int k = 0; k < bs * bs; ++k) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        b[k] = (float)((double)(s >> 40) / (double)(1ull << 24) - 0.5);
      }
      /* Diagonally dominant diagonal blocks keep the unpivoted factorisation stable. */
      if (i == j)
        for (int k = 0; k < bs; ++k) b[k * bs + k] += (float)(2 * nb * bs);
      a[i * nb + j] = b;
    }
}

static void lu0(float *d) {
  for (int k = 0; k < bs; ++k)
    for (int i = k + 1; i < bs; ++i) {
      d[i * bs + k] /= d[k * bs + k];
      float l = d[i * bs + k];
      for (int j = k + 1; j < bs; ++j) d[i * bs + j] -= l * d[k * bs + j];
    }
}

/* A block right of the diagonal: solve with the diagonal block's unit lower triangle. */
static void fwd(const float *d, float *c) {
  for (int k = 0; k < bs; ++k)
    for (int i = k + 1; i < bs; ++i) {
      float l = d[i * bs + k];
      for (int j = 0; j < bs; ++j) c[i * bs + j] -= l * c[k * bs + j];
    }
}

/* A block below the diagonal: solve with the diagonal block's upper triangle. */
static void bdiv(const float *d, float *r) {
  for (int i = 0; i < bs; ++i)
    for (int k = 0; k < bs; ++k) {
      r[i * bs + k] /= d[k * bs + k];
      float l = r[i * bs + k];
      for (int j = k + 1; j < bs; ++j) r[i * bs + j] -= l * d[k * bs + j];
    }
}

static void bmod(const float *r, const float *c, float *t) {
  for (int i = 0; i < bs; ++i)
    for (int k = 0; k < bs; ++k) {
      float l = r[i * bs + k];
      for (int j = 0; j < bs; ++j) t[i * bs + j] -= l * c[k * bs + j];
    }
}

static float *fill_in(float **a, int i, int j) {
  if (!a[i * nb + j]) {
    float *b = new_block();
    memset(b, 0, (size_t)bs * bs * sizeof(float));
    a[i * nb + j] = b;
  }
  return a[i * nb + j];
}

static void sequential(float **a) {
  for (int k = 0; k < nb; ++k) {
    float *d = a[k * nb + k];
    lu0(d);
    for (int j = k + 1; j < nb; ++j)
      if (a[k * nb + j]) fwd(d, a[k * nb + j]);
    for (int i = k + 1; i < nb; ++i)
      if (a[i * nb + k]) bdiv(d, a[i * nb + k]);
    for (int i = k + 1; i < nb; ++i)
      if (a[i * nb + k])
        for (int j = k + 1; j < nb; ++j)
          if (a[k * nb + j]) bmod(a[i * nb + k], a[k * nb + j], fill_in(a, i, j));
  }
}

static long with_taskwait(float **a) {
  long tasks = 0;
  for (int k = 0; k < nb; ++k) {
    float *d = a[k * nb + k];
    lu0(d);
    for (int j = k + 1; j < nb; ++j) {
      float *c = a[k * nb + j];
      if (!c) continue;
      ++tasks;
#pragma omp task firstprivate(d, c)
      fwd(d, c);
    }
    for (int i = k + 1; i < nb; ++i) {
      float *r = a[i * nb + k];
      if (!r) continue;
      ++tasks;
#pragma omp task firstprivate(d, r)
      bdiv(d, r);
    }
#pragma omp taskwait
    for (int i = k + 1; i < nb; ++i) {
      float *r = a[i * nb + k];
      if (!r) continue;
      for (int j = k + 1; j < nb; ++j) {
        float *c = a[k * nb + j];
        if (!c) continue;
        float *t = fill_in(a, i, j);
        ++tasks;
#pragma omp task firstprivate(r, c, t)
        bmod(r, c, t);
      }
    }
#pragma omp taskwait
  }
  return tasks;
}

static long with_depend(float **a) {
  long tasks = 0;
  for (int k = 0; k < nb; ++k) {
    float *d = a[k * nb + k];
    ++tasks;
#pragma omp task firstprivate(d) depend(inout : d[0])
    lu0(d);
    for (int j = k + 1; j < nb; ++j) {
      float *c = a[k * nb + j];
      if (!c) continue;
      ++tasks;
#pragma omp task firstprivate(d, c) depend(in : d[0]) depend(inout : c[0])
      fwd(d, c);
    }
    for (int i = k + 1; i < nb; ++i) {
      float *r = a[i * nb + k];
      if (!r) continue;
      ++tasks;
#pragma omp task firstprivate(d, r) depend(in : d[0]) depend(inout : r[0])
      bdiv(d, r);
    }
    for (int i = k + 1; i < nb; ++i) {
      float *r = a[i * nb + k];
      if (!r) continue;
      for (int j = k + 1; j < nb; ++j) {
        float *c = a[k * nb + j];
        if (!c) continue;
        float *t = fill_in(a, i, j);
        ++tasks;
#pragma omp task firstprivate(r, c, t) depend(in : r[0], c[0]) depend(inout : t[0])
        bmod(r, c, t);
      }
    }
  }
#pragma omp taskwait
  return tasks;
}

int main(int argc, char **argv) {
  if (argc < 4 || (strcmp(argv[1], "taskwait") && strcmp(argv[1], "depend"))) {
    fprintf(stderr, "usage: sparselu taskwait|depend NB BS\n");
    return 2;
  }
  int dep = !strcmp(argv[1], "depend");
  nb = atoi(argv[2]);
  bs = atoi(argv[3]);
  if (nb < 1 || bs < 1 || nb > 4096 || bs > 1024) {
    fprintf(stderr, "sparselu: NB must be in 1..4096 and BS in 1..1024\n");
    return 2;
  }
  float **a = calloc((size_t)nb * nb, sizeof(float *));
  float **ref = calloc((size_t)nb * nb, sizeof(float *));
  if (!a || !ref) return 2;
  generate(a);
  generate(ref);
  sequential(ref);

  long tasks = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  tasks = dep ? with_depend(a) : with_taskwait(a);
  double t1 = omp_get_wtime();

  int wrong = 0;
  for (int i = 0; i < nb * nb && !wrong; ++i) {
    if (!a[i] != !ref[i])
      wrong = 1;
    else if (a[i] && memcmp(a[i], ref[i], (size_t)bs * bs * sizeof(float)))
      wrong = 1;
  }
  for (int i = 0; i < nb * nb; ++i) {
    free(a[i]);
    free(ref[i]);
  }
  free(a);
  free(ref);
  if (wrong) {
    printf("sparselu-%s wrong: the factors differ from the sequential run's\n", argv[1]);
    return 1;
  }
  printf("sparselu-%s %ld %.4f\n", argv[1], tasks, t1 - t0);
  return 0;
}
