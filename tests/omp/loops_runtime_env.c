/* schedule(runtime) driven by OMP_SCHEDULE, which the harness sets (the CTest registration gives
 * "static,4" or "monotonic:dynamic,3"; other values fail the test so that a typo is noticed).
 * Checks omp_get_schedule against the variable, the distribution for static,4, chunking and
 * monotonicity for monotonic:dynamic,3, and that omp_set_schedule overrides the variable. */
#include "omp_test.h"
#include <limits.h>

#define N 1003
#define MAXT 64
static int hits[N], owner[N];

static int run_runtime_loop(void) {
  int nonmono = 0;
  for (int i = 0; i < N; i++) hits[i] = 0, owner[i] = -1;
  #pragma omp parallel reduction(+ : nonmono)
  {
    int last = INT_MIN;
    #pragma omp for schedule(runtime)
    for (int i = 0; i < N; i++) {
      hits[i]++;
      owner[i] = omp_get_thread_num();
      if (i <= last) nonmono++;
      last = i;
    }
  }
  for (int i = 0; i < N; i++) CHECK(hits[i] == 1, "iteration %d ran %d times", i, hits[i]);
  return nonmono;
}

int main(void) {
  int T = omp_test_threads();
  const char *env = getenv("OMP_SCHEDULE");
  CHECK(env != NULL, "the harness must set OMP_SCHEDULE");
  omp_sched_t kind;
  int chunk;
  omp_get_schedule(&kind, &chunk);
  PHASE(env);
  if (strcmp(env, "static,4") == 0) {
    CHECK((kind & ~omp_sched_monotonic) == omp_sched_static && chunk == 4, "OMP_SCHEDULE=%s gives kind %#x chunk %d", env, (unsigned)kind, chunk);
    int nonmono = run_runtime_loop();
    CHECK(nonmono == 0, "static is monotonic");
    for (int i = 0; i < N; i++) CHECK(owner[i] == (i / 4) % T, "iteration %d on thread %d", i, owner[i]);
  } else if (strcmp(env, "monotonic:dynamic,3") == 0) {
    CHECK((kind & ~omp_sched_monotonic) == omp_sched_dynamic && (kind & omp_sched_monotonic) && chunk == 3,
          "OMP_SCHEDULE=%s gives kind %#x chunk %d", env, (unsigned)kind, chunk);
    int nonmono = run_runtime_loop();
    CHECK(nonmono == 0, "monotonic:dynamic ran %d iterations out of order on a thread", nonmono);
    for (int i = 0; i < N; i++) CHECK(owner[i] == owner[i - i % 3], "chunk of 3 split at %d", i);
  } else {
    CHECK(0, "unexpected OMP_SCHEDULE '%s'", env);
  }

  PHASE("run-sched-var inherited by regions");
  {
    int ok = 1;
    #pragma omp parallel
    {
      omp_sched_t k2;
      int c2;
      omp_get_schedule(&k2, &c2);
      if (k2 != kind || c2 != chunk) {
        #pragma omp atomic write
        ok = 0;
      }
    }
    CHECK(ok, "a thread saw a different run-sched-var");
  }

  PHASE("omp_set_schedule overrides OMP_SCHEDULE");
  omp_set_schedule(omp_sched_static, 2);
  omp_get_schedule(&kind, &chunk);
  CHECK((kind & ~omp_sched_monotonic) == omp_sched_static && chunk == 2, "after omp_set_schedule: %#x %d", (unsigned)kind, chunk);
  run_runtime_loop();
  for (int i = 0; i < N; i++) CHECK(owner[i] == (i / 2) % T, "iteration %d on thread %d after omp_set_schedule", i, owner[i]);
  PASS();
}
