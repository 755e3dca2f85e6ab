/* OMP_THREAD_LIMIT bounds the whole contention group, nested regions included (issue 23): run with
 * OMP_THREAD_LIMIT=6 and OMP_MAX_ACTIVE_LEVELS=3, 5 x 5 x 2 nested teams never have more than 6
 * threads alive at once, and a region ended gives its threads back to the group. */
#include "omp_test.h"

static int live, most;

static void leaf(void) {
  int now = __atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
  int seen = __atomic_load_n(&most, __ATOMIC_RELAXED);
  while (now > seen && !__atomic_compare_exchange_n(&most, &seen, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  usleep(20000); /* the other leaves of the group are alive meanwhile */
  __atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
}

int main(void) {
  CHECK(omp_get_thread_limit() == 6, "omp_get_thread_limit() %d (run with OMP_THREAD_LIMIT=6)", omp_get_thread_limit());
  CHECK(omp_get_max_active_levels() >= 3, "max-active-levels %d (run with OMP_MAX_ACTIVE_LEVELS=3)",
        omp_get_max_active_levels());

  PHASE("5 x 5 x 2 nested teams under a limit of 6");
  for (int rep = 0; rep < 3; rep++) {
    most = 0;
    #pragma omp parallel num_threads(5)
    #pragma omp parallel num_threads(5)
    #pragma omp parallel num_threads(2)
    leaf();
    CHECK(most >= 1 && most <= 6, "rep %d: %d threads alive at once in the contention group, limit 6", rep, most);
  }

  PHASE("threads come back to the group after a region");
  for (int rep = 0; rep < 3; rep++) {
    int outer = 0, inner = 0;
    #pragma omp parallel num_threads(6)
    {
      #pragma omp single
      outer = omp_get_num_threads();
    }
    #pragma omp parallel num_threads(2)
    {
      #pragma omp parallel num_threads(3)
      {
        #pragma omp atomic update
        inner++;
      }
    }
    CHECK(outer == 6, "rep %d: a team of 6 under the limit 6 got %d threads", rep, outer);
    CHECK(inner >= 2 && inner <= 6, "rep %d: 2 x 3 nested teams gave %d threads", rep, inner);
  }
  return 0;
}
