/* One member runs many nowait worksharing constructs ahead of the others: nothing bounds how far
 * (libgomp's chain of work shares has no bound). Thread 1 waits, outside any construct, until
 * thread 0 has passed LEAD nowait constructs (dynamic, guided and runtime loops, sections), so
 * the team must set up constructs with a member LEAD constructs behind: weft's former ring of 8
 * work shares made thread 0 wait for thread 1 at the 9th, which waited for thread 0: a hang.
 * Then both run the same constructs in turn and every iteration runs once (by the thread that
 * got there first, or split). Found by GCC's Fortran testsuite (cancel-parallel-3.f90 took a
 * second longer on weft) and a program derived from it. */
#include "omp_test.h"

#define LEAD 40
#define ITERS 16

static int hits[LEAD][ITERS];

int main(void) {
  for (int round = 0; round < 20; round++) {
    memset(hits, 0, sizeof hits);
    int passed = 0;
    PHASE("member 0 leads by LEAD nowait constructs");
#pragma omp parallel num_threads(2)
    {
      if (omp_get_num_threads() == 2 && omp_get_thread_num() == 1) {
        int seen;
        do {
#pragma omp atomic read
          seen = passed;
        } while (!seen);
      }
      for (int c = 0; c < LEAD; c++) {
        switch (c % 4) {
          case 0:
#pragma omp for schedule(dynamic) nowait
            for (int i = 0; i < ITERS; i++) __atomic_fetch_add(&hits[c][i], 1, __ATOMIC_RELAXED);
            break;
          case 1:
#pragma omp for schedule(guided, 2) nowait
            for (int i = 0; i < ITERS; i++) __atomic_fetch_add(&hits[c][i], 1, __ATOMIC_RELAXED);
            break;
          case 2:
#pragma omp for schedule(runtime) nowait
            for (int i = 0; i < ITERS; i++) __atomic_fetch_add(&hits[c][i], 1, __ATOMIC_RELAXED);
            break;
          default:
#pragma omp sections nowait
            {
#pragma omp section
              for (int i = 0; i < ITERS / 2; i++) __atomic_fetch_add(&hits[c][i], 1, __ATOMIC_RELAXED);
#pragma omp section
              for (int i = ITERS / 2; i < ITERS; i++) __atomic_fetch_add(&hits[c][i], 1, __ATOMIC_RELAXED);
            }
        }
      }
      if (omp_get_thread_num() == 0) {
#pragma omp atomic write
        passed = 1;
      }
    }
    for (int c = 0; c < LEAD; c++)
      for (int i = 0; i < ITERS; i++)
        CHECK(hits[c][i] == 1, "round %d: construct %d iteration %d ran %d times", round, c, i, hits[c][i]);
  }
  PASS();
}
