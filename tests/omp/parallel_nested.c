/* Nested parallel regions: omp_set_max_active_levels(2), team sizes at each level,
 * omp_get_level / omp_get_active_level / omp_get_ancestor_thread_num / omp_get_team_size,
 * inactive regions beyond max-active-levels, per-task nthreads-var (omp_set_num_threads in a
 * thread only affects that thread's nested regions), and serialized nesting when levels = 1. */
#include "omp_test.h"

int main(void) {
  PHASE("set max active levels");
  omp_set_max_active_levels(2);
  CHECK(omp_get_max_active_levels() == 2, "max active levels %d", omp_get_max_active_levels());
  CHECK(omp_get_supported_active_levels() >= 2, "supported levels %d", omp_get_supported_active_levels());

  PHASE("two active levels");
  int seen[2][3] = {{0}};
  int level3_runs = 0;
  #pragma omp parallel num_threads(2)
  {
    int outer = omp_get_thread_num();
    CHECK(omp_get_num_threads() == 2, "outer team %d", omp_get_num_threads());
    CHECK(omp_get_level() == 1 && omp_get_active_level() == 1, "outer levels %d %d", omp_get_level(), omp_get_active_level());
    #pragma omp parallel num_threads(3)
    {
      int inner = omp_get_thread_num();
      CHECK(omp_get_num_threads() == 3, "inner team %d", omp_get_num_threads());
      CHECK(omp_in_parallel(), "in_parallel in nested");
      CHECK(omp_get_level() == 2 && omp_get_active_level() == 2, "inner levels %d %d", omp_get_level(), omp_get_active_level());
      CHECK(omp_get_ancestor_thread_num(0) == 0, "ancestor(0) %d", omp_get_ancestor_thread_num(0));
      CHECK(omp_get_ancestor_thread_num(1) == outer, "ancestor(1) %d, outer %d", omp_get_ancestor_thread_num(1), outer);
      CHECK(omp_get_ancestor_thread_num(2) == inner, "ancestor(2) %d, inner %d", omp_get_ancestor_thread_num(2), inner);
      CHECK(omp_get_ancestor_thread_num(3) == -1 && omp_get_ancestor_thread_num(-1) == -1, "ancestor out of range");
      CHECK(omp_get_team_size(0) == 1 && omp_get_team_size(1) == 2 && omp_get_team_size(2) == 3,
            "team sizes %d %d %d", omp_get_team_size(0), omp_get_team_size(1), omp_get_team_size(2));
      CHECK(omp_get_team_size(3) == -1 && omp_get_team_size(-1) == -1, "team size out of range");
      #pragma omp atomic
      seen[outer][inner]++;
      /* Level 3 exceeds max-active-levels: an inactive team of one. */
      #pragma omp parallel num_threads(4)
      {
        CHECK(omp_get_num_threads() == 1, "level-3 team %d", omp_get_num_threads());
        CHECK(omp_get_level() == 3 && omp_get_active_level() == 2, "level-3 levels %d %d", omp_get_level(), omp_get_active_level());
        CHECK(omp_get_team_size(3) == 1 && omp_get_ancestor_thread_num(3) == 0, "level-3 team size/ancestor");
        CHECK(omp_get_ancestor_thread_num(2) == inner && omp_get_ancestor_thread_num(1) == outer, "level-3 ancestors");
        #pragma omp atomic
        level3_runs++;
      }
    }
    CHECK(omp_get_level() == 1, "level back to 1");
  }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) CHECK(seen[i][j] == 1, "pair (%d,%d) ran %d times", i, j, seen[i][j]);
  CHECK(level3_runs == 6, "level-3 regions %d", level3_runs);

  PHASE("nested default size follows the inherited nthreads-var");
  {
    int T = omp_get_max_threads();
    int inner_sizes[2] = {0, 0};
    #pragma omp parallel num_threads(2)
    {
      CHECK(omp_get_max_threads() == T, "nthreads-var inside outer: %d, expected %d", omp_get_max_threads(), T);
      #pragma omp parallel
      {
        #pragma omp single
        inner_sizes[omp_get_ancestor_thread_num(1)] = omp_get_num_threads();
      }
    }
    CHECK(inner_sizes[0] == T && inner_sizes[1] == T, "inner default sizes %d %d, expected %d", inner_sizes[0], inner_sizes[1], T);
  }

  PHASE("per-thread omp_set_num_threads");
  {
    int sizes[4] = {0};
    #pragma omp parallel num_threads(4)
    {
      int me = omp_get_thread_num();
      omp_set_num_threads(me + 1);
      CHECK(omp_get_max_threads() == me + 1, "thread %d: nthreads-var %d", me, omp_get_max_threads());
      #pragma omp barrier
      #pragma omp parallel
      {
        if (omp_get_thread_num() == 0) sizes[me] = omp_get_num_threads();
      }
    }
    for (int i = 0; i < 4; i++) CHECK(sizes[i] == i + 1, "thread %d's nested team %d", i, sizes[i]);
  }

  PHASE("max active levels 1: nested regions are inactive");
  omp_set_max_active_levels(1);
  CHECK(omp_get_max_active_levels() == 1, "max active levels %d", omp_get_max_active_levels());
  {
    int count = 0;
    #pragma omp parallel num_threads(3)
    {
      #pragma omp parallel num_threads(3)
      {
        CHECK(omp_get_num_threads() == 1, "serialized nested team %d", omp_get_num_threads());
        CHECK(omp_get_level() == 2 && omp_get_active_level() == 1, "levels %d %d", omp_get_level(), omp_get_active_level());
        CHECK(omp_in_parallel(), "still in an active region");
        #pragma omp atomic
        count++;
      }
    }
    CHECK(count == 3, "serialized nested count %d", count);
  }

  PHASE("max active levels 0: every region inactive");
  omp_set_max_active_levels(0);
  {
    int count = 0;
    #pragma omp parallel num_threads(3)
    {
      CHECK(omp_get_num_threads() == 1 && !omp_in_parallel(), "team %d with 0 active levels", omp_get_num_threads());
      #pragma omp atomic
      count++;
    }
    CHECK(count == 1, "count %d", count);
  }
  omp_set_max_active_levels(2);
  PASS();
}
