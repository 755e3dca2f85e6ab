/* Waits that run no task (an ordered turn, a lock, a critical section) must not sit on counts of
 * finished tasks that another thread's wait needs (found by a random-program search: weft hung).
 * A worker reports the tasks it finishes for one parent in a batch; a thread that ran a child of
 * another thread's task (stealing it while its own implicit task was parked) and then went on to
 * wait for its ordered turn kept that child's count, so the other thread's taskwait never ended
 * and it never reached the ordered turn the first one waited for.
 *
 * Each iteration of an ordered loop: tasks that each open a taskgroup with a task reduction, fed by
 * tasks (some with a priority) and a taskloop; a taskwait; then the ordered section, which checks
 * the iteration order and the reductions' values, and a critical section and a lock. Registered
 * with OMP_MAX_TASK_PRIORITY=5 and, on weft, 64 KiB stacks: more waits park (a short stack runs
 * fewer children in place), which made the hang frequent. */
#include "omp_test.h"

#define ITERATIONS 40
#define OUTER 3
#define FEEDERS 2
#define LOOP 15

static unsigned long work(unsigned long x, int n) {
  for (int i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
  return x % 100003;
}

int main(void) {
  long next_ordered = 0, locked_sum = 0, critical_sum = 0;
  omp_lock_t lock;
  omp_init_lock(&lock);
#pragma omp parallel
  {
#pragma omp for schedule(static, 2) ordered
    for (int i = 0; i < ITERATIONS; i++) {
      unsigned long got[OUTER];
      for (int j = 0; j < OUTER; j++) {
#pragma omp task shared(got) firstprivate(i, j)
        {
          unsigned long x = 0;
#pragma omp taskgroup task_reduction(+: x)
          {
            for (int k = 0; k < FEEDERS; k++) {
#pragma omp task in_reduction(+: x) firstprivate(i, j, k) priority(k + 1)
              x += work((unsigned long)(i * 100 + j * 10 + k), 500);
            }
#pragma omp taskloop in_reduction(+: x) grainsize(1)
            for (int q = 0; q < LOOP; q++) x += work((unsigned long)(i * 1000 + j * 100 + q), 2000);
          }
          got[j] = x;
        }
      }
#pragma omp taskwait
      for (int j = 0; j < OUTER; j++) {
        unsigned long expect = 0;
        for (int k = 0; k < FEEDERS; k++) expect += work((unsigned long)(i * 100 + j * 10 + k), 500);
        for (int q = 0; q < LOOP; q++) expect += work((unsigned long)(i * 1000 + j * 100 + q), 2000);
        CHECK(got[j] == expect, "iteration %d task %d: reduction %lu, expected %lu", i, j, got[j], expect);
      }
#pragma omp ordered
      {
        CHECK(next_ordered == i, "ordered section of iteration %d ran when %ld was next", i, next_ordered);
        next_ordered++;
      }
#pragma omp critical
      critical_sum += i;
      omp_set_lock(&lock);
      locked_sum += i;
      omp_unset_lock(&lock);
    }
  }
  omp_destroy_lock(&lock);
  long total = (long)ITERATIONS * (ITERATIONS - 1) / 2;
  CHECK(next_ordered == ITERATIONS, "%ld ordered sections ran", next_ordered);
  CHECK(critical_sum == total && locked_sum == total, "critical %ld, lock %ld, expected %ld", critical_sum, locked_sum,
        total);
  PASS();
}
