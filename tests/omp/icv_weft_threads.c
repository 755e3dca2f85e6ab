/* Thread-count precedence (issue 23): WEFT_NUM_THREADS, when set, wins over OMP_NUM_THREADS, as
 * the README states for every WEFT_* variable; it sets nthreads-var (the team size of a parallel
 * region) as well as the pool. Run on weft only, with WEFT_NUM_THREADS=3 and OMPTEST_TEAM=3, and
 * OMP_NUM_THREADS set to anything. */
#include "omp_test.h"

int main(void) {
  const char* want_text = getenv("OMPTEST_TEAM");
  CHECK(want_text && *want_text, "run with OMPTEST_TEAM=<expected team size>");
  int want = atoi(want_text);
  CHECK(omp_get_max_threads() == want, "omp_get_max_threads() %d, WEFT_NUM_THREADS=%s, OMP_NUM_THREADS=%s",
        omp_get_max_threads(), getenv("WEFT_NUM_THREADS"), getenv("OMP_NUM_THREADS"));
  int team = 0;
  #pragma omp parallel
  #pragma omp single
  team = omp_get_num_threads();
  CHECK(team == want, "a parallel region has %d threads, WEFT_NUM_THREADS=%s", team, getenv("WEFT_NUM_THREADS"));
  return 0;
}
