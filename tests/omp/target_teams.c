/* Target constructs with host fallback (no offload devices): target map(tofrom/to/from),
 * firstprivate scalars, target data / update / enter data / exit data, target nowait + depend +
 * taskwait, target teams distribute parallel for (teams inside target, GOMP_teams4); host teams
 * (GOMP_teams_reg): teams num_teams(3) with omp_get_team_num / omp_get_num_teams, teams
 * distribute, parallel inside teams, thread_limit. Device queries: no devices, the host is the
 * initial device, also inside the target region. */
#include "omp_test.h"

#define N 1000
static int a[N], b[N];

int main(void) {
  PHASE("device queries");
  CHECK(omp_get_num_devices() == 0, "omp_get_num_devices %d", omp_get_num_devices());
  CHECK(omp_is_initial_device(), "host is not the initial device");

  PHASE("target map(tofrom)");
  for (int i = 0; i < N; i++) a[i] = i;
  int scalar = 5, initial = -1, level = -1;
  #pragma omp target map(tofrom : a[0:N]) map(from : initial, level) firstprivate(scalar)
  {
    initial = omp_is_initial_device();
    level = omp_get_level();
    for (int i = 0; i < N; i++) a[i] = a[i] * 2 + scalar;
    scalar = 99; /* firstprivate: not copied back */
  }
  CHECK(scalar == 5, "firstprivate scalar changed: %d", scalar);
  CHECK(initial == 1, "target region on the host: omp_is_initial_device %d", initial);
  CHECK(level == 0, "omp_get_level inside a host-fallback target region: %d", level);
  for (int i = 0; i < N; i++) CHECK(a[i] == 2 * i + 5, "a[%d]=%d", i, a[i]);

  PHASE("target inside a parallel region");
  {
    int results[64] = {0};
    #pragma omp parallel
    {
      int me = omp_get_thread_num(), r = 0;
      #pragma omp target map(from : r) firstprivate(me)
      r = me * 10 + 1;
      results[me] = r;
    }
    for (int t = 0; t < omp_get_max_threads(); t++) CHECK(results[t] == t * 10 + 1, "thread %d target result %d", t, results[t]);
  }

  PHASE("target data / update / enter / exit");
  for (int i = 0; i < N; i++) b[i] = -i;
  #pragma omp target data map(tofrom : b[0:N])
  {
    #pragma omp target map(tofrom : b[0:N])
    for (int i = 0; i < N; i++) b[i] += 1;
    #pragma omp target update from(b[0:N])
    #pragma omp target update to(b[0:N])
  }
  #pragma omp target enter data map(to : b[0:N])
  #pragma omp target map(tofrom : b[0:N])
  for (int i = 0; i < N; i++) b[i] *= 3;
  #pragma omp target exit data map(from : b[0:N])
  for (int i = 0; i < N; i++) CHECK(b[i] == 3 * (1 - i), "b[%d]=%d", i, b[i]);

  PHASE("target nowait depend");
  #pragma omp parallel
  #pragma omp single
  {
    int x = 0, y = 0;
    #pragma omp target nowait depend(out : x) map(tofrom : x)
    x = 41;
    #pragma omp target nowait depend(inout : x) map(tofrom : x)
    x += 1;
    #pragma omp task depend(in : x) shared(x, y)
    y = x;
    #pragma omp taskwait
    CHECK(x == 42 && y == 42, "target nowait chain x=%d y=%d", x, y);
  }

  PHASE("target teams distribute parallel for");
  for (int i = 0; i < N; i++) a[i] = 0;
  #pragma omp target teams distribute parallel for map(tofrom : a[0:N]) num_teams(2)
  for (int i = 0; i < N; i++) a[i] += i + 1;
  for (int i = 0; i < N; i++) CHECK(a[i] == i + 1, "target teams loop a[%d]=%d", i, a[i]);

  PHASE("host teams num_teams(3)");
  {
    int seen[3] = {0, 0, 0}, nteams[3] = {0, 0, 0};
    #pragma omp teams num_teams(3)
    {
      int t = omp_get_team_num();
      if (t >= 0 && t < 3) {
        __atomic_fetch_add(&seen[t], 1, __ATOMIC_RELAXED);
        nteams[t] = omp_get_num_teams();
      }
    }
    for (int t = 0; t < 3; t++) CHECK(seen[t] == 1 && nteams[t] == 3, "team %d: ran %d times, saw %d teams", t, seen[t], nteams[t]);
  }

  PHASE("host teams distribute");
  for (int i = 0; i < N; i++) a[i] = 0;
  #pragma omp teams distribute num_teams(4)
  for (int i = 0; i < N; i++) a[i] += 1;
  for (int i = 0; i < N; i++) CHECK(a[i] == 1, "teams distribute a[%d]=%d", i, a[i]);
  #pragma omp teams distribute parallel for num_teams(3) thread_limit(2)
  for (int i = 0; i < N; i++) a[i] += 2;
  for (int i = 0; i < N; i++) CHECK(a[i] == 3, "teams distribute parallel for a[%d]=%d", i, a[i]);

  PHASE("parallel inside host teams, thread_limit");
  {
    int bad = 0, teams_seen = 0;
    #pragma omp teams num_teams(2) thread_limit(2)
    {
      __atomic_fetch_add(&teams_seen, 1, __ATOMIC_RELAXED);
      #pragma omp parallel
      {
        if (omp_get_num_threads() > 2 || omp_get_thread_limit() > 2) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
        if (omp_get_team_num() < 0 || omp_get_team_num() >= 2 || omp_get_num_teams() != 2) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
      }
    }
    CHECK(teams_seen == 2, "teams ran %d times", teams_seen);
    CHECK(bad == 0, "%d bad observations in parallel inside teams", bad);
  }
  CHECK(omp_get_num_teams() == 1 && omp_get_team_num() == 0, "teams state leaked out of the teams region");
  PASS();
}
