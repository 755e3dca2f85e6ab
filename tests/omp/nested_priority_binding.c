/* Prioritised tasks stay with the team that made them (found by a random-program search: with
 * OMP_MAX_TASK_PRIORITY > 0, weft ran a prioritised task of the outer team on a member of a nested
 * team, which then saw that team's level and size). Each outer thread makes prioritised tasks;
 * each task opens `parallel num_threads(2)` with a work-shared loop and a single (whose barriers
 * are where an inner member used to pick an outer task up) and checks, in the inner region, the level, the
 * active level and the team size OpenMP prescribes (max-active-levels 1, the default: the inner
 * region is active only under a team of one). Registered with OMP_MAX_TASK_PRIORITY=100. */
#include "omp_test.h"

#define TASKS 6

int main(void) {
  omp_set_max_active_levels(1);
  int outer = 0;
#pragma omp parallel
  {
#pragma omp single
    outer = omp_get_num_threads();
    for (int j = 0; j < TASKS; j++) {
#pragma omp task firstprivate(j) priority(100)
      {
        int a[8];
#pragma omp parallel num_threads(2)
        {
#pragma omp for
          for (int i = 0; i < 8; i++) a[i] = i + j;
#pragma omp single
          a[0] += 0;
          int expect_threads = outer > 1 ? 1 : 2;
          CHECK(omp_get_level() == 2 && omp_get_active_level() == 1 && omp_get_num_threads() == expect_threads,
                "task %d: inner region at level %d, active level %d, %d threads (expected level 2, active level 1, "
                "%d threads)",
                j, omp_get_level(), omp_get_active_level(), omp_get_num_threads(), expect_threads);
        }
        for (int i = 0; i < 8; i++) CHECK(a[i] == i + j, "task %d: a[%d] = %d", j, i, a[i]);
      }
    }
  }
  PASS();
}
