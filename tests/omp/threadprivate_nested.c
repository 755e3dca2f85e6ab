/* threadprivate variables stay per thread across nested regions, those opened by tasks included
 * (found by a random-program search: weft's default gang-scheduled nesting ran an inner member as a
 * fiber on the worker of an outer team's thread, and the member's writes landed in that thread's
 * copy). Every OpenMP thread owns one copy; an inner region's members 1.. are new threads, its
 * member 0 is the encountering thread itself.
 *
 * Phases: (1) an outer team whose threads set their copy, tasks opening inner regions whose
 * members 1.. write theirs between barriers (each checks its own value survives the barriers),
 * then every outer thread checks its copy; (2) the same with inner regions larger than the outer
 * team (members outnumber the workers); (3) an inner region opened by every implicit task directly.
 * The program sets max-active-levels to 3 itself. */
#include "omp_test.h"

#define NTASKS 6
#define INNER 3
#define BARRIERS 4

static long tp;
#pragma omp threadprivate(tp)

static void inner_region(int size, long base) {
  long encountering = tp;
#pragma omp parallel num_threads(size)
  {
    int me = omp_get_thread_num();
    if (me != 0) tp = base + me;
    for (int b = 0; b < BARRIERS; ++b) {
#pragma omp barrier
      if (me != 0) CHECK(tp == base + me, "inner member %d of %d: its copy is %ld, it wrote %ld", me, size, tp, base + me);
    }
  }
  CHECK(tp == encountering, "the encountering thread's copy changed across its inner region: %ld, was %ld", tp,
        encountering);
}

static void outer_with_tasks(int inner_size) {
#pragma omp parallel
  {
    long mine = 1000 + omp_get_thread_num();
    tp = mine;
#pragma omp single
    for (int k = 0; k < NTASKS; ++k) {
#pragma omp task firstprivate(k)
      inner_region(inner_size, 100000L * (k + 1));
    }
    /* the tasks ran on some outer threads: their copies may hold what those threads set as
       encountering threads (inner member 0 is the thread itself), which is tp unchanged */
    CHECK(tp == mine, "outer thread %d: its copy is %ld after the nested regions, it wrote %ld", omp_get_thread_num(),
          tp, mine);
  }
}

int main(void) {
  omp_set_max_active_levels(3);
  PHASE("tasks open inner regions");
  outer_with_tasks(INNER);
  PHASE("inner regions larger than the team");
  outer_with_tasks(omp_get_max_threads() + 2);
  PHASE("implicit tasks open inner regions");
#pragma omp parallel
  {
    tp = 2000 + omp_get_thread_num();
    inner_region(INNER, 300000L * (omp_get_thread_num() + 1));
    CHECK(tp == 2000 + omp_get_thread_num(), "outer thread %d: copy %ld", omp_get_thread_num(), tp);
  }
  PASS();
}
