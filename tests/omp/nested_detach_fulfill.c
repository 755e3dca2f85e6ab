/* A detached task's event fulfilled inside a nested parallel region (found by a random-program
 * search: weft hung). Fulfilling the event completes the detached task and makes its successor
 * ready. weft made it ready on the thread that fulfilled it, a member of the inner team: first the
 * successor stayed in a queue nobody served once the inner region ended (the outer taskwait never
 * ended); later it ran, but as a task of the inner team (omp_get_level 2) when a member of it took
 * it. It is made ready in its own team now. Each round: a detached task, a dependent successor, an
 * inner region whose single fulfills the event, a taskwait; the successor's value and level are
 * checked. The program sets max-active-levels to 3 itself. */
#include "omp_test.h"

#define ROUNDS 200

int main(void) {
  omp_set_max_active_levels(3);
  long total = 0;
#pragma omp parallel reduction(+: total)
  {
    for (int r = 0; r < ROUNDS; r++) {
      omp_event_handle_t e;
      long x = 0, y = 0;
      int level = -1;
#pragma omp task detach(e) shared(x) depend(out: x)
      x = r + 1;
#pragma omp task shared(x, y, level) depend(in : x)
      {
        y = x * 2;
        level = omp_get_level();
      }
#pragma omp parallel num_threads(2) firstprivate(e)
      {
#pragma omp single
        omp_fulfill_event(e);
      }
#pragma omp taskwait
      CHECK(x == r + 1 && y == 2 * (r + 1), "round %d: x %ld y %ld", r, x, y);
      CHECK(level == 1, "round %d: the successor ran at level %d (a task of the inner team?)", r, level);
      total += x + y;
    }
  }
  long expect = 3L * ROUNDS * (ROUNDS + 1) / 2 * omp_get_max_threads();
  CHECK(total == expect, "total %ld, expected %ld", total, expect);
  PASS();
}
