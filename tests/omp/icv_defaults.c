/* omp_* queries and setters with only OMP_NUM_THREADS set by the harness: wtime/wtick,
 * set/get_dynamic, num_procs, max_threads follows OMP_NUM_THREADS and omp_set_num_threads (also
 * inside regions, per task), thread_limit, levels outside regions, ancestor/team_size edge
 * values, schedule round trip, supported/max active levels clamping, cancellation default off,
 * max task priority default 0, devices (none: host is the initial device), teams queries outside
 * teams, omp_get_proc_bind valid, places API callable with consistent answers, omp_in_final. */
#include "omp_test.h"

int main(void) {
  const char *nt = getenv("OMP_NUM_THREADS");
  CHECK(nt != NULL, "the harness must set OMP_NUM_THREADS");
  int T = atoi(nt);

  PHASE("wtime / wtick");
  {
    double tick = omp_get_wtick();
    CHECK(tick > 0.0 && tick < 0.01, "omp_get_wtick %g", tick);
    double prev = omp_get_wtime();
    for (int i = 0; i < 10000; i++) {
      double now = omp_get_wtime();
      CHECK(now >= prev, "omp_get_wtime went backwards: %.9f after %.9f", now, prev);
      prev = now;
    }
    double t0 = omp_get_wtime();
    usleep(20000);
    double dt = omp_get_wtime() - t0;
    CHECK(dt >= 0.015 && dt < 5.0, "20 ms sleep measured as %g s", dt);
    int bad = 0;
    #pragma omp parallel reduction(+ : bad)
    {
      double a = omp_get_wtime(), b = omp_get_wtime();
      if (b < a || omp_get_wtick() <= 0.0) bad++;
    }
    CHECK(bad == 0, "wtime in threads");
  }

  PHASE("max threads");
  CHECK(omp_get_max_threads() == T, "omp_get_max_threads %d, OMP_NUM_THREADS=%d", omp_get_max_threads(), T);
  CHECK(omp_get_num_procs() >= 1, "omp_get_num_procs %d", omp_get_num_procs());
  omp_set_num_threads(3);
  CHECK(omp_get_max_threads() == 3, "after omp_set_num_threads(3): %d", omp_get_max_threads());
  {
    int size = 0, inner_max = 0;
    #pragma omp parallel
    {
      #pragma omp single
      {
        size = omp_get_num_threads();
        inner_max = omp_get_max_threads();
      }
    }
    CHECK(size == 3 && inner_max == 3, "team %d, max_threads inside %d", size, inner_max);
    int bad = 0;
    #pragma omp parallel num_threads(2) reduction(+ : bad)
    {
      omp_set_num_threads(5 + omp_get_thread_num());
      if (omp_get_max_threads() != 5 + omp_get_thread_num()) bad++;
    }
    CHECK(bad == 0, "per-thread omp_set_num_threads");
    CHECK(omp_get_max_threads() == 3, "region's setting leaked out: %d", omp_get_max_threads());
  }
  omp_set_num_threads(T);

  PHASE("dynamic");
  omp_set_dynamic(1);
  CHECK(omp_get_dynamic() == 1, "omp_get_dynamic after set(1)");
  {
    int size = 0;
    #pragma omp parallel num_threads(4)
    {
      #pragma omp master
      size = omp_get_num_threads();
    }
    CHECK(size >= 1 && size <= 4, "dynamic team size %d", size);
  }
  omp_set_dynamic(0);
  CHECK(omp_get_dynamic() == 0, "omp_get_dynamic after set(0)");

  PHASE("limits and levels");
  CHECK(omp_get_thread_limit() >= T, "omp_get_thread_limit %d", omp_get_thread_limit());
  CHECK(omp_get_level() == 0 && omp_get_active_level() == 0, "levels outside");
  CHECK(omp_get_ancestor_thread_num(0) == 0 && omp_get_team_size(0) == 1, "level-0 ancestor/team size");
  CHECK(omp_get_ancestor_thread_num(1) == -1 && omp_get_team_size(1) == -1, "level-1 queries outside regions");
  CHECK(omp_get_ancestor_thread_num(-1) == -1 && omp_get_team_size(-1) == -1, "negative level queries");
  int sup = omp_get_supported_active_levels();
  CHECK(sup >= 1, "supported active levels %d", sup);
  omp_set_max_active_levels(sup + 100);
  CHECK(omp_get_max_active_levels() <= sup, "max active levels %d above supported %d", omp_get_max_active_levels(), sup);
  omp_set_max_active_levels(3);
  CHECK(omp_get_max_active_levels() == 3, "max active levels %d", omp_get_max_active_levels());
  omp_set_max_active_levels(1);

  PHASE("schedule round trip");
  {
    omp_sched_t kinds[] = {omp_sched_static, omp_sched_dynamic, omp_sched_guided, omp_sched_auto};
    for (int k = 0; k < 4; k++) {
      omp_set_schedule(kinds[k], 7);
      omp_sched_t got;
      int chunk;
      omp_get_schedule(&got, &chunk);
      CHECK((got & ~omp_sched_monotonic) == kinds[k], "schedule kind %d came back as %d", (int)kinds[k], (int)got);
      if (kinds[k] != omp_sched_auto) CHECK(chunk == 7, "chunk %d", chunk);
    }
  }

  PHASE("defaults");
  CHECK(omp_get_cancellation() == 0, "cancellation is on without OMP_CANCELLATION");
  CHECK(omp_get_max_task_priority() == 0, "max task priority default %d", omp_get_max_task_priority());
  CHECK(omp_in_final() == 0, "omp_in_final outside tasks");
  CHECK(omp_get_num_teams() == 1 && omp_get_team_num() == 0, "teams queries outside teams: %d %d", omp_get_num_teams(), omp_get_team_num());

  PHASE("devices");
  CHECK(omp_get_num_devices() == 0, "omp_get_num_devices %d", omp_get_num_devices());
  CHECK(omp_is_initial_device() == 1, "omp_is_initial_device");
  CHECK(omp_get_initial_device() == omp_get_num_devices(), "omp_get_initial_device %d", omp_get_initial_device());
  CHECK(omp_get_device_num() == omp_get_initial_device(), "omp_get_device_num %d", omp_get_device_num());
  omp_set_default_device(0);
  CHECK(omp_get_default_device() == 0, "default device %d", omp_get_default_device());

  PHASE("proc bind and places");
  {
    omp_proc_bind_t b = omp_get_proc_bind();
    CHECK(b >= omp_proc_bind_false && b <= omp_proc_bind_spread, "omp_get_proc_bind %d", (int)b);
    int np = omp_get_num_places();
    CHECK(np >= 0, "omp_get_num_places %d", np);
    for (int p = 0; p < np; p++) {
      int n = omp_get_place_num_procs(p);
      CHECK(n >= 0, "place %d has %d procs", p, n);
      int ids[1024];
      if (n > 0 && n <= 1024) omp_get_place_proc_ids(p, ids);
    }
    CHECK(omp_get_place_num_procs(-1) == 0 && omp_get_place_num_procs(np) == 0, "procs of an invalid place");
    int pn = omp_get_place_num();
    CHECK(pn >= -1 && pn < (np > 0 ? np : 1), "omp_get_place_num %d", pn);
    int pp = omp_get_partition_num_places();
    CHECK(pp >= 0 && pp <= np, "partition places %d of %d", pp, np);
    int parts[1024];
    if (pp <= 1024) omp_get_partition_place_nums(parts);
    for (int i = 0; i < pp && i < 1024; i++) CHECK(parts[i] >= 0 && parts[i] < np, "partition place %d", parts[i]);
    int bad = 0;
    #pragma omp parallel reduction(+ : bad)
    {
      if (omp_get_place_num() < -1 || omp_get_place_num() >= (np > 0 ? np : 1)) bad++;
      omp_proc_bind_t bi = omp_get_proc_bind();
      if (bi < omp_proc_bind_false || bi > omp_proc_bind_spread) bad++;
    }
    CHECK(bad == 0, "places queries inside a region");
  }
  PASS();
}
