/* An untied task resumed by a worker whose own thread is inside a nested region (found by a
 * random-program search: weft read a freed team under AddressSanitizer). Each round an outer
 * thread makes an untied task that waits for children twice, and a task that opens a nested
 * region once a gate task is done; the thread's taskwait has nothing to run at first and parks.
 * A loop fiber of its worker runs the nested region, whose master waits at the barrier while the
 * other member spins; meanwhile that worker serves the outer team for the parked thread, and may
 * resume an untied task there. weft resumed it in the nested team's role: the task saw the nested
 * team (omp_get_level 2), its children went to that team's queues, and a wait of it after the
 * team had ended resumed into freed memory. Each untied task checks its team after its waits.
 * The program sets max-active-levels to 2 itself. */
#include "omp_test.h"

#define ROUNDS 200
#define CHILDREN 3
#define CHILD_SPIN 2000
#define INNER_SPIN 3000

#define spin omp_test_spin_value

static void check_team(int level, int team_size, const char* where, int r) {
  CHECK(omp_get_level() == level, "round %d, %s: level %d, expected %d", r, where, omp_get_level(), level);
  CHECK(omp_get_num_threads() == team_size, "round %d, %s: team of %d, expected %d", r, where, omp_get_num_threads(),
        team_size);
  CHECK(omp_get_thread_num() < team_size, "round %d, %s: thread %d in a team of %d", r, where, omp_get_thread_num(),
        team_size);
}

int main(void) {
  omp_set_max_active_levels(2);
  long total = 0;
  int team_size = 0;
#pragma omp parallel reduction(+ : total)
  {
#pragma omp single
    team_size = omp_get_num_threads();
    for (int i = 0; i < ROUNDS; i++) {
      int r = i * omp_get_num_threads() + omp_get_thread_num();
      char gate = 0; /* named by depend clauses only */
      (void)gate;
#pragma omp task untied firstprivate(r) shared(team_size)
      {
        long part[CHILDREN] = {0};
        check_team(1, team_size, "before the first wait", r);
        for (int pass = 0; pass < 2; pass++) {
          for (int k = 0; k < CHILDREN; k++) {
#pragma omp task shared(part) firstprivate(k, r)
            part[k] += (long)(spin(r * CHILDREN + k, CHILD_SPIN) & 1) + 1;
          }
#pragma omp taskwait
          check_team(1, team_size, pass ? "after the second wait" : "after the first wait", r);
        }
        long sum = part[0] + part[1] + part[2];
        CHECK(sum >= 2 * CHILDREN && sum <= 4 * CHILDREN, "round %d: children's sum %ld", r, sum);
      }
#pragma omp task depend(out : gate) firstprivate(r)
      (void)spin(r, INNER_SPIN);
#pragma omp task depend(in : gate) firstprivate(r)
      {
#pragma omp parallel num_threads(2)
        {
          /* Member 0 waits at the barrier while member 1 spins: its worker serves the outer team. */
          if (omp_get_thread_num() == 1) (void)spin(r, INNER_SPIN);
#pragma omp barrier
          (void)spin(r + 1, 10);
        }
      }
      total += 1;
      /* Nothing here to run on this stack at first (the region waits for its gate): the wait
         parks, and a loop fiber of this worker runs the region. */
#pragma omp taskwait
    }
  }
  CHECK(total == (long)ROUNDS * team_size, "rounds %ld, expected %ld", total, (long)ROUNDS * team_size);
  PASS();
}
