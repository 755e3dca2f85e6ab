/* ICVs from the environment (set by the CTest registration):
 *   OMP_THREAD_LIMIT=3  OMP_DYNAMIC=true  OMP_MAX_ACTIVE_LEVELS=1  OMP_PROC_BIND=spread,close
 *   OMP_PLACES=threads  OMP_NUM_TEAMS=5  OMP_TEAMS_THREAD_LIMIT=2  OMP_CANCELLATION=true
 * Team sizes never exceed the thread limit; dynamic may shrink them; the bind-var list gives
 * spread outside and close inside a region; places queries are consistent; teams ICVs. */
#include "omp_test.h"

int main(void) {
  CHECK(omp_test_env_is("OMP_THREAD_LIMIT", "3"), "the harness must set OMP_THREAD_LIMIT=3");

  PHASE("ICV values");
  CHECK(omp_get_thread_limit() == 3, "thread limit %d", omp_get_thread_limit());
  CHECK(omp_get_dynamic() == 1, "dynamic %d", omp_get_dynamic());
  CHECK(omp_get_max_active_levels() == 1, "max active levels %d", omp_get_max_active_levels());
  CHECK(omp_get_proc_bind() == omp_proc_bind_spread, "proc bind %d, expected spread", (int)omp_get_proc_bind());
  CHECK(omp_get_cancellation() == 1, "cancellation %d", omp_get_cancellation());
  CHECK(omp_get_max_teams() == 5, "max teams %d", omp_get_max_teams());
  CHECK(omp_get_teams_thread_limit() == 2, "teams thread limit %d", omp_get_teams_thread_limit());

  PHASE("team sizes under the thread limit");
  for (int req = 1; req <= 8; req++) {
    int size = 0, bind_inside = -1;
    #pragma omp parallel num_threads(req)
    {
      #pragma omp master
      {
        size = omp_get_num_threads();
        bind_inside = (int)omp_get_proc_bind();
      }
    }
    CHECK(size >= 1 && size <= 3 && size <= req, "num_threads(%d) gave a team of %d with thread limit 3", req, size);
    CHECK(bind_inside == omp_proc_bind_close, "bind-var inside the region %d, expected close", bind_inside);
  }
  {
    int size = 0;
    #pragma omp parallel
    {
      #pragma omp master
      size = omp_get_num_threads();
    }
    CHECK(size >= 1 && size <= 3, "default team of %d with thread limit 3", size);
  }

  PHASE("places");
  {
    int np = omp_get_num_places();
    CHECK(np >= 0, "num places %d", np);
    for (int p = 0; p < np; p++) {
      int n = omp_get_place_num_procs(p);
      CHECK(n >= 1, "OMP_PLACES=threads: place %d has %d procs", p, n);
      int ids[1024];
      if (n <= 1024) {
        omp_get_place_proc_ids(p, ids);
        for (int i = 0; i < n; i++) CHECK(ids[i] >= 0, "place %d proc id %d", p, ids[i]);
      }
    }
    int bad = 0;
    #pragma omp parallel num_threads(3) reduction(+ : bad)
    {
      int pn = omp_get_place_num();
      if (pn < -1 || pn >= (np > 0 ? np : 1)) bad++;
      int pp = omp_get_partition_num_places();
      if (pp < 0 || pp > np) bad++;
    }
    CHECK(bad == 0, "inconsistent place queries in a region");
  }

  PHASE("teams with OMP_NUM_TEAMS / OMP_TEAMS_THREAD_LIMIT");
  {
    int nteams = 0, seen[8] = {0}, limit_ok = 1;
    #pragma omp teams
    {
      if (omp_get_team_num() == 0) nteams = omp_get_num_teams();
      if (omp_get_team_num() < 8) __atomic_fetch_add(&seen[omp_get_team_num()], 1, __ATOMIC_RELAXED);
      #pragma omp parallel
      {
        if (omp_get_thread_limit() > 2 || omp_get_num_threads() > 2) {
          #pragma omp atomic write
          limit_ok = 0;
        }
      }
    }
    CHECK(nteams >= 1 && nteams <= 5, "teams without num_teams: %d teams", nteams);
    for (int t = 0; t < nteams; t++) CHECK(seen[t] == 1, "team %d ran %d times", t, seen[t]);
    CHECK(limit_ok, "thread limit inside teams above OMP_TEAMS_THREAD_LIMIT");
  }
  PASS();
}
