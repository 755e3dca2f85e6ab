/* A thread with a backlog runs the tasks it creates at once, in a team of any size (libgomp's rule:
 * more than 64 tasks queued per thread of the team; weft's: 64 in the creating thread's own
 * queues). The other members spin in user code, at no scheduling point, so nobody takes the
 * creator's tasks: its queue only grows, and every task created well past the threshold has run
 * by the time GOMP_task returns. Deferring them all instead (what weft did in teams of several
 * before 2026-11-28) leaves them to the final taskwait: the check below fails then. */
#include "omp_test.h"

#define MAXN (64 * 64 + 200)
static int ran[MAXN];

int main(void) {
  int T = omp_test_threads();
  /* Past libgomp's team-wide threshold too (64 x T), with a margin. */
  const int from = 64 * T + 50, n = 64 * T + 150;
  if (n > MAXN) {
    printf("tasks_backlog: %d threads: more than this test is written for, skipped\n", T);
    return 0;
  }

  PHASE("a backlogged creator runs its new tasks at once");
  {
    int released = 0, at_once = 0;
    #pragma omp parallel shared(released, at_once)
    {
      if (omp_get_thread_num() == 0) {
        for (int i = 0; i < n; i++) {
          #pragma omp task firstprivate(i)
          __atomic_store_n(&ran[i], 1, __ATOMIC_RELEASE);
          if (i >= from && __atomic_load_n(&ran[i], __ATOMIC_ACQUIRE)) at_once++;
        }
        __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
        #pragma omp taskwait
      } else {
        while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE)) omp_test_spin(100);
      }
    }
    CHECK(at_once == n - from, "%d of the %d tasks created past %d queued had run when their creation returned",
          at_once, n - from, from);
    for (int i = 0; i < n; i++) CHECK(ran[i] == 1, "task %d never ran", i);
  }
  return 0;
}
