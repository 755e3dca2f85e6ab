/* Ordered and doacross loops whose turns are slow to come: one iteration sleeps before its
 * ordered region (or its post), so that the members waiting for the next turns wait long. Past the
 * cores (4 and 8 threads on a 2-core machine) weft's waiters then sleep on their own words and must
 * be woken by the member that moves the turn (worksharing.cpp, wait_reaches). Checked: every
 * ordered region and every doacross sink runs in iteration order, with static, dynamic and guided
 * schedules, several times over. */
#include "omp_test.h"

#include <time.h>

#define N 48
#define SLOW 7

static void nap_ms(int ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}

static int order[N];
static int next_slot;

static void check_order(const char* what, int round) {
  CHECK(next_slot == N, "%s, round %d: %d ordered regions ran of %d", what, round, next_slot, N);
  for (int i = 0; i < N; ++i)
    CHECK(order[i] == i, "%s, round %d: position %d holds iteration %d", what, round, i, order[i]);
}

#define ORDERED_LOOP(what, sched)                      \
  for (int round = 0; round < 3; ++round) {            \
    next_slot = 0;                                     \
    _Pragma("omp parallel") {                          \
      _Pragma(sched) for (int i = 0; i < N; ++i) {     \
        if (i == SLOW) nap_ms(20);                     \
        _Pragma("omp ordered") order[next_slot++] = i; \
      }                                                \
    }                                                  \
    check_order(what, round);                          \
  }

int main(void) {
  PHASE("ordered static,1");
  ORDERED_LOOP("ordered static,1", "omp for ordered schedule(static, 1)")
  PHASE("ordered dynamic");
  ORDERED_LOOP("ordered dynamic", "omp for ordered schedule(dynamic)")
  PHASE("ordered guided");
  ORDERED_LOOP("ordered guided", "omp for ordered schedule(guided)")

  PHASE("doacross");
  for (int round = 0; round < 3; ++round) {
    next_slot = 0;
#pragma omp parallel
    {
#pragma omp for ordered(1) schedule(static, 1)
      for (int i = 0; i < N; ++i) {
#pragma omp ordered depend(sink : i - 1)
        if (i == SLOW) nap_ms(20);
        order[next_slot++] = i;
#pragma omp ordered depend(source)
      }
    }
    check_order("doacross", round);
  }
  return 0;
}
