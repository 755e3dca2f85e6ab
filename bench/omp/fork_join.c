/* Recursive fork-join through the OpenMP door: one gcc -fopenmp binary timed on libgomp, LLVM libomp
   and weft (bench/fork_join.sh). Every pattern makes a task per call and waits for its children
   with taskwait, no cutoff, so the runtime's spawn, steal and join costs are the whole time.

     fork_join fib N                  fib(N), two tasks per call
     fork_join nqueens N              N-queens solutions, one task per safe placement
     fork_join tree NODES [MEAN]      an unbalanced tree: each node spawns a random number of
                                      children (geometric, mean MEAN, default 0.999) and waits for
                                      them; the root spawns as many subtrees as it takes to reach
                                      NODES nodes (found by a sequential pass, untimed)
     fork_join burst ITERS            ITERS rounds of a serial stretch (300 us) in `single`, then a
                                      burst of 8 tasks of 100 us and a taskwait: the other threads
                                      wait at single's barrier between bursts, so the time shows how
                                      soon they join a burst (on 2 cores: 0.14 s for 200 rounds
                                      with 2 threads; all on the producer, 0.22 s)
   Options after the pattern's arguments: untied (tasks are untied; default tied).
   Prints "<pattern> <result> <seconds>"; exits 1 when the result differs from a sequential run. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int untied;

/* --- fib ---------------------------------------------------------------------------------------- */
static long fib(int n) {
  if (n < 2) return n;
  long a, b;
  if (untied) {
#pragma omp task shared(a) firstprivate(n) untied
    a = fib(n - 1);
#pragma omp task shared(b) firstprivate(n) untied
    b = fib(n - 2);
  } else {
#pragma omp task shared(a) firstprivate(n)
    a = fib(n - 1);
#pragma omp task shared(b) firstprivate(n)
    b = fib(n - 2);
  }
#pragma omp taskwait
  return a + b;
}

static long fib_sequential(int n) {
  long a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    long c = a + b;
    a = b;
    b = c;
  }
  return a;
}

/* --- n-queens ----------------------------------------------------------------------------------- */
#define MAX_QUEENS 20

static int safe(const signed char *cols, int row, int col) {
  for (int r = 0; r < row; ++r) {
    int c = cols[r];
    if (c == col || c - col == r - row || c - col == row - r) return 0;
  }
  return 1;
}

static long queens(int n, int row, const signed char *cols) {
  if (row == n) return 1;
  long found[MAX_QUEENS];
  for (int col = 0; col < n; ++col) {
    found[col] = 0;
    if (!safe(cols, row, col)) continue;
    if (untied) {
#pragma omp task shared(found) firstprivate(col) untied
      {
        signed char next[MAX_QUEENS];
        memcpy(next, cols, (size_t)row);
        next[row] = (signed char)col;
        found[col] = queens(n, row + 1, next);
      }
    } else {
#pragma omp task shared(found) firstprivate(col)
      {
        signed char next[MAX_QUEENS];
        memcpy(next, cols, (size_t)row);
        next[row] = (signed char)col;
        found[col] = queens(n, row + 1, next);
      }
    }
  }
#pragma omp taskwait
  long sum = 0;
  for (int col = 0; col < n; ++col) sum += found[col];
  return sum;
}

static long queens_sequential(int n, int row, signed char *cols) {
  if (row == n) return 1;
  long sum = 0;
  for (int col = 0; col < n; ++col) {
    if (!safe(cols, row, col)) continue;
    cols[row] = (signed char)col;
    sum += queens_sequential(n, row + 1, cols);
  }
  return sum;
}

/* --- unbalanced tree ---------------------------------------------------------------------------- */
/* A node is its 64-bit id; its children count is drawn from its id alone, so every runtime builds
   the same tree. Geometric: P(k) = (1-p) p^k, mean p/(1-p). At most MAX_CHILDREN children. */
#define MAX_CHILDREN 64
static double tree_p;

static uint64_t mix(uint64_t x) { /* splitmix64's finaliser */
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static int children_of(uint64_t id) {
  uint64_t r = mix(id);
  int k = 0;
  /* 53 random bits per draw, re-mixed for each further child */
  while (k < MAX_CHILDREN && (double)(r >> 11) * 0x1p-53 < tree_p) {
    ++k;
    r = mix(r + (uint64_t)k);
  }
  return k;
}

static uint64_t child_id(uint64_t id, int i) { return mix(id * 31 + (uint64_t)i + 1); }

static long tree(uint64_t id) {
  int k = children_of(id);
  long size[MAX_CHILDREN];
  for (int i = 0; i < k; ++i) {
    if (untied) {
#pragma omp task shared(size) firstprivate(i, id) untied
      size[i] = tree(child_id(id, i));
    } else {
#pragma omp task shared(size) firstprivate(i, id)
      size[i] = tree(child_id(id, i));
    }
  }
#pragma omp taskwait
  long sum = 1;
  for (int i = 0; i < k; ++i) sum += size[i];
  return sum;
}

static long tree_sequential(uint64_t id) {
  long sum = 1;
  int k = children_of(id);
  for (int i = 0; i < k; ++i) sum += tree_sequential(child_id(id, i));
  return sum;
}

/* The root's children: the first subtrees whose sizes add up to at least nodes - 1. Subtrees of a
   near-critical tree are heavy-tailed (most tiny, a few huge), so their count is found, not
   estimated. Sets *total to the tree's size. */
static long tree_roots(long nodes, long *total) {
  long roots = 0;
  *total = 1;
  while (*total < nodes) *total += tree_sequential(mix((uint64_t)roots++));
  return roots;
}

static long tree_root(long roots) {
  long total = 1;
  long *size = calloc((size_t)roots, sizeof *size);
  if (!size) return -1;
  for (long i = 0; i < roots; ++i) {
    if (untied) {
#pragma omp task firstprivate(i) untied
      size[i] = tree(mix((uint64_t)i));
    } else {
#pragma omp task firstprivate(i)
      size[i] = tree(mix((uint64_t)i));
    }
  }
#pragma omp taskwait
  for (long i = 0; i < roots; ++i) total += size[i];
  free(size);
  return total;
}

/* --- burst ------------------------------------------------------------------------------------- */
static void busy_us(double us) {
  double until = omp_get_wtime() + us * 1e-6;
  while (omp_get_wtime() < until) {
  }
}

static long burst(long rounds) {
  long done = 0;
  for (long r = 0; r < rounds; ++r) {
    busy_us(300);
    for (int k = 0; k < 8; ++k) {
      if (untied) {
#pragma omp task shared(done) untied
        {
          busy_us(100);
#pragma omp atomic
          ++done;
        }
      } else {
#pragma omp task shared(done)
        {
          busy_us(100);
#pragma omp atomic
          ++done;
        }
      }
    }
#pragma omp taskwait
  }
  return done;
}

static void usage(void) {
  fprintf(stderr, "usage: fork_join fib N | nqueens N | tree NODES [MEAN] | burst ITERS  [untied]\n");
  exit(2);
}

int main(int argc, char **argv) {
  if (argc < 3) usage();
  const char *pattern = argv[1];
  long arg = atol(argv[2]);
  double mean = 0.999;
  int next = 3;
  if (!strcmp(pattern, "tree") && argc > 3 && strcmp(argv[3], "untied") != 0) mean = atof(argv[next++]);
  for (; next < argc; ++next) {
    if (!strcmp(argv[next], "untied")) untied = 1;
    else usage();
  }
  long result = 0, expected = 0;
  double t0 = 0, t1 = 0;
  if (!strcmp(pattern, "fib")) {
    if (arg < 0 || arg > 60) usage();
    t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
    result = fib((int)arg);
    t1 = omp_get_wtime();
    expected = fib_sequential((int)arg);
  } else if (!strcmp(pattern, "nqueens")) {
    if (arg < 1 || arg > MAX_QUEENS) usage();
    signed char cols[MAX_QUEENS];
    t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
    result = queens((int)arg, 0, cols);
    t1 = omp_get_wtime();
    expected = queens_sequential((int)arg, 0, cols);
  } else if (!strcmp(pattern, "tree")) {
    if (arg < 1 || mean <= 0 || mean >= 1) usage();
    tree_p = mean / (1.0 + mean);
    long roots = tree_roots(arg, &expected);
    t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
    result = tree_root(roots);
    t1 = omp_get_wtime();
  } else if (!strcmp(pattern, "burst")) {
    if (arg < 1) usage();
    t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
    result = burst(arg);
    t1 = omp_get_wtime();
    expected = 8 * arg;
  } else {
    usage();
  }
  if (result != expected) {
    printf("%s wrong: %ld, expected %ld\n", pattern, result, expected);
    return 1;
  }
  printf("%s %ld %.4f\n", pattern, result, t1 - t0);
  return 0;
}
