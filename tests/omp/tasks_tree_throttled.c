/* Random recursive task trees under a bound on live tasks (issue 23: a recursive tree hung on
 * weft's throttle). Each node spawns a random number of children (tied or untied, in turns per
 * tree) and waits for them with taskwait; one thread produces the root's children inside single
 * while the others reach the end-of-single barrier, where they run tasks. Each tree's node count
 * is checked against a sequential walk of the same tree. Registered with a tiny WEFT_MAX_TASKS
 * (libgomp ignores it), so that nearly every producer runs over the bound. */
#include <stdint.h>

#include "omp_test.h"

#define MAX_CHILDREN 8

static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* Children of a node: 0..MAX_CHILDREN, geometric-like with a mean a little under 1, so trees are
 * deep and unbalanced; no children below max_depth. */
static int children_of(uint64_t id, int depth, int max_depth) {
  if (depth >= max_depth) return 0;
  uint64_t r = mix(id);
  int k = 0;
  while (k < MAX_CHILDREN && (r & 1023) < 508) {
    ++k;
    r = mix(r + (uint64_t)k);
  }
  return k;
}

static uint64_t child_id(uint64_t id, int i) { return mix(id * 31 + (uint64_t)i + 1); }

static long walk(uint64_t id, int depth, int max_depth) {
  long n = 1;
  int k = children_of(id, depth, max_depth);
  for (int i = 0; i < k; ++i) n += walk(child_id(id, i), depth + 1, max_depth);
  return n;
}

static long tree(uint64_t id, int depth, int max_depth, int untied) {
  long size[MAX_CHILDREN];
  int k = children_of(id, depth, max_depth);
  for (int i = 0; i < k; ++i) {
    if (untied) {
      #pragma omp task shared(size) firstprivate(i) untied
      size[i] = tree(child_id(id, i), depth + 1, max_depth, untied);
    } else {
      #pragma omp task shared(size) firstprivate(i)
      size[i] = tree(child_id(id, i), depth + 1, max_depth, untied);
    }
  }
  #pragma omp taskwait
  long n = 1;
  for (int i = 0; i < k; ++i) n += size[i];
  return n;
}

int main(void) {
  enum { trees = 12, roots = 256, max_depth = 200 };
  for (int t = 0; t < trees; ++t) {
    PHASE(t % 2 ? "untied tree" : "tied tree");
    int untied = t % 2;
    long expected = 1, got = 1;
    long size[roots];
    uint64_t seed = mix((uint64_t)t * 977);
    for (int r = 0; r < roots; ++r) expected += walk(mix(seed + (uint64_t)r), 0, max_depth);
    #pragma omp parallel shared(size)
    {
      #pragma omp single
      for (int r = 0; r < roots; ++r) {
        if (untied) {
          #pragma omp task shared(size) firstprivate(r) untied
          size[r] = tree(mix(seed + (uint64_t)r), 0, max_depth, 1);
        } else {
          #pragma omp task shared(size) firstprivate(r)
          size[r] = tree(mix(seed + (uint64_t)r), 0, max_depth, 0);
        }
      }
      /* the end-of-single barrier: every thread runs tasks there until all are done */
    }
    for (int r = 0; r < roots; ++r) got += size[r];
    CHECK(got == expected, "tree %d: %ld nodes counted, %ld expected", t, got, expected);
  }
  return 0;
}
