/* target nowait with depend: chains of target tasks and host tasks over the same data, in order;
   and, with OMPTEST_COOPERATIVE=1 (weft with tests/omp's test plugin, whose async_run finishes a
   region 100 ms after it started), that a target task waiting for its device lets the only
   thread of its team run another task meanwhile: the other task sees the region started (it wrote
   a host flag through a raw address) but its `from` data not yet copied back. On a runtime whose
   target task holds its thread until the device is done, the other task only runs after the copy
   back. Without OMPTEST_COOPERATIVE only the results are checked (host fallback, libgomp). */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "omp_test.h"

#define C 4
#define L 8

static int started;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void) {
  int cooperative = omp_test_env_is("OMPTEST_COOPERATIVE", "1");

  PHASE("chains");
  int v[C];
#pragma omp parallel
#pragma omp single
  {
    for (int c = 0; c < C; ++c) {
      v[c] = c + 1;
      for (int l = 0; l < L; ++l) {
        if (l % 2 == 0) {
#pragma omp target nowait depend(inout : v[c]) map(tofrom : v[c:1]) firstprivate(l)
          v[c] = v[c] * 2 + l;
        } else {
#pragma omp task depend(inout : v[c]) firstprivate(c, l) shared(v)
          v[c] = v[c] * 3 - l;
        }
      }
    }
#pragma omp taskwait
  }
  for (int c = 0; c < C; ++c) {
    int e = c + 1;
    for (int l = 0; l < L; ++l) e = l % 2 == 0 ? e * 2 + l : e * 3 - l;
    CHECK(v[c] == e, "chain %d: %d, expected %d", c, v[c], e);
  }

  PHASE("fan-in");
  int a = 0, b = 0, sum = -1;
#pragma omp parallel
#pragma omp single
  {
#pragma omp target nowait depend(out : a) map(from : a)
    a = 20;
#pragma omp target nowait depend(out : b) map(from : b)
    b = 22;
#pragma omp target nowait depend(in : a, b) depend(out : sum) map(to : a, b) map(from : sum)
    sum = a + b;
#pragma omp task depend(in : sum) shared(sum, a)
    a = sum;
  }
  CHECK(sum == 42 && a == 42 && b == 22, "sum %d a %d b %d", sum, a, b);

  PHASE("cooperative");
  int res = 0, saw_started = -1, saw_res = -1;
  uintptr_t flag = (uintptr_t)&started;
#pragma omp parallel num_threads(1)
#pragma omp single
  {
#pragma omp target nowait map(from : res) firstprivate(flag)
    {
      __atomic_store_n((int *)flag, 1, __ATOMIC_RELEASE);
      res = 1;
    }
#pragma omp task shared(res, saw_started, saw_res)
    {
      if (cooperative) {
        double until = now() + 5;
        while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE) && now() < until) {
#pragma omp taskyield
        }
      }
      saw_started = __atomic_load_n(&started, __ATOMIC_ACQUIRE);
      saw_res = __atomic_load_n(&res, __ATOMIC_ACQUIRE);
    }
#pragma omp taskwait
  }
  CHECK(res == 1, "res %d", res);
  if (cooperative)
    CHECK(saw_started == 1 && saw_res == 0,
          "the other task saw started=%d res=%d: it did not run while the target task waited for its device",
          saw_started, saw_res);
  PASS();
}
