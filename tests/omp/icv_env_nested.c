/* ICVs from the environment (set by the CTest registration):
 *   OMP_NUM_THREADS=<T>,2  OMP_MAX_ACTIVE_LEVELS=3  OMP_THREAD_LIMIT=100
 *   OMP_MAX_TASK_PRIORITY=20  OMP_DEFAULT_DEVICE=3  OMP_PROC_BIND=false  OMP_DYNAMIC=false
 * The nthreads list gives nested team sizes (T at level 1, 2 below, 2 again at level 3). */
#include "omp_test.h"

int main(void) {
  const char *nt = getenv("OMP_NUM_THREADS");
  CHECK(nt && strchr(nt, ','), "the harness must set OMP_NUM_THREADS to a list, got %s", nt ? nt : "(unset)");
  int T = atoi(nt);

  PHASE("ICV values");
  CHECK(omp_get_max_threads() == T, "max threads %d, expected %d", omp_get_max_threads(), T);
  CHECK(omp_get_max_active_levels() == 3, "max active levels %d", omp_get_max_active_levels());
  CHECK(omp_get_thread_limit() == 100, "thread limit %d", omp_get_thread_limit());
  CHECK(omp_get_max_task_priority() == 20, "max task priority %d", omp_get_max_task_priority());
  CHECK(omp_get_default_device() == 3, "default device %d", omp_get_default_device());
  CHECK(omp_get_proc_bind() == omp_proc_bind_false, "proc bind %d", (int)omp_get_proc_bind());
  CHECK(omp_get_dynamic() == 0, "dynamic %d", omp_get_dynamic());
  CHECK(omp_get_cancellation() == 0, "cancellation %d", omp_get_cancellation());

  PHASE("nested team sizes from the list");
  {
    int outer = 0, bad = 0;
    int inner_sizes[64];
    for (int i = 0; i < 64; i++) inner_sizes[i] = -1;
    #pragma omp parallel reduction(+ : bad)
    {
      #pragma omp single
      outer = omp_get_num_threads();
      if (omp_get_max_threads() != 2) bad++;
      #pragma omp parallel
      {
        #pragma omp single
        inner_sizes[omp_get_ancestor_thread_num(1)] = omp_get_num_threads();
        if (omp_get_max_threads() != 2) {
          #pragma omp atomic
          bad++;
        }
      }
    }
    CHECK(outer == T, "outer team %d, expected %d", outer, T);
    CHECK(bad == 0, "%d threads saw the wrong nthreads-var in nested regions", bad);
    for (int i = 0; i < T; i++) CHECK(inner_sizes[i] == 2, "inner team of outer thread %d: %d", i, inner_sizes[i]);
  }

  PHASE("three active levels");
  {
    int count = 0;
    #pragma omp parallel num_threads(2)
    #pragma omp parallel
    #pragma omp parallel
    {
      CHECK(omp_get_level() == 3 && omp_get_active_level() == 3, "levels %d %d", omp_get_level(), omp_get_active_level());
      CHECK(omp_get_num_threads() == 2, "level-3 team %d", omp_get_num_threads());
      #pragma omp atomic
      count++;
    }
    CHECK(count == 8, "level-3 threads %d", count);
  }

  PHASE("priorities up to the maximum");
  {
    int ran = 0;
    #pragma omp parallel
    #pragma omp single
    for (int p = 0; p <= 25; p++) {
      #pragma omp task priority(p) shared(ran)
      {
        #pragma omp atomic
        ran++;
      }
    }
    CHECK(ran == 26, "prioritised tasks %d", ran);
  }
  PASS();
}
