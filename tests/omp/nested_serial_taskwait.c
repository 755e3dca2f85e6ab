/* Tasks of a nested region of one thread, waited for while the thread's worker has work of the
 * enclosing team (found by a random-program search: weft hung). Each outer task opens a nested
 * parallel region, inactive (max-active-levels 1), so a team of one with a queue of its own. Its
 * taskwait parks (with 64 KiB stacks every wait parks), the worker resumes a context of the
 * enclosing team (a barrier waiter that stepped aside), and the inner team's queue, which only that
 * worker serves, kept the three children: the taskwait never ended. The untied round: the region's
 * implicit task ran on the untied task's context, which was free to move to another worker and
 * was not counted as waiting on this one. (With one outer thread the nested region is the first
 * active level and has three threads.) */
#include "omp_test.h"

#define ROUNDS 300
#define OUTER 5
#define INNER 3

#define spin omp_test_spin_value

/* The nested region: three children and a taskwait; their sum, 6 to 9. */
static long inner_region(void) {
  long sum = 0;
#pragma omp parallel num_threads(3) shared(sum)
  {
    long part[INNER] = {0};
    for (int k = 0; k < INNER; k++) {
#pragma omp task shared(part) firstprivate(k)
      part[k] = (spin(k, 1000) & 1) + k + 1;
    }
#pragma omp taskwait
    if (omp_get_thread_num() == 0) sum = part[0] + part[1] + part[2];
  }
  return sum;
}

static void check_round(int r, const long* done) {
  for (int j = 0; j < OUTER; j++) CHECK(done[j] >= 6 && done[j] <= 9, "round %d task %d: %ld", r, j, done[j]);
}

int main(void) {
  omp_set_max_active_levels(1);
  long total = 0;
#pragma omp parallel reduction(+: total)
  {
    for (int r = 0; r < ROUNDS; r++) {
      long done[OUTER] = {0};
      for (int j = 0; j < OUTER; j++) {
#pragma omp task shared(done) firstprivate(j)
        done[j] = inner_region();
      }
#pragma omp single
      total += spin(r, 20000) & 0;
#pragma omp taskwait
      check_round(r, done);
      total += OUTER;
    }
    for (int r = 0; r < ROUNDS; r++) {
      long done[OUTER] = {0};
      for (int j = 0; j < OUTER; j++) {
#pragma omp task untied shared(done) firstprivate(j)
        done[j] = inner_region();
      }
#pragma omp single
      total += spin(r, 20000) & 0;
#pragma omp taskwait
      check_round(r, done);
      total += OUTER;
    }
  }
  long expect = 2L * ROUNDS * OUTER * omp_get_max_threads();
  CHECK(total == expect, "total %ld, expected %ld", total, expect);
  PASS();
}
