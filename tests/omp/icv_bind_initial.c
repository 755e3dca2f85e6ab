/* Binding with places known (the CTest registration sets OMP_PROC_BIND=true alone, or OMP_PLACES):
 * OMP_PROC_BIND without OMP_PLACES gives a place per hardware thread the process may run on, as
 * libgomp does (weft had none: omp_get_place_num() -1 everywhere); the initial thread runs on the
 * first place from the start, before any region (weft bound it only when its first region began),
 * and stays bound after a region; a team's threads are each in a place. */
#define _GNU_SOURCE
#include <sched.h>

#include "omp_test.h"

/* Whether the calling thread may run on exactly the processors of place p. */
static int bound_to_place(int p) {
  cpu_set_t mask;
  CHECK(sched_getaffinity(0, sizeof mask, &mask) == 0, "sched_getaffinity failed");
  int n = omp_get_place_num_procs(p);
  int ids[CPU_SETSIZE];
  omp_get_place_proc_ids(p, ids);
  if (CPU_COUNT(&mask) != n) return 0;
  for (int i = 0; i < n; i++)
    if (ids[i] < 0 || ids[i] >= CPU_SETSIZE || !CPU_ISSET(ids[i], &mask)) return 0;
  return 1;
}

int main(void) {
  const char* places = getenv("OMP_PLACES");
  CHECK(places != NULL || getenv("OMP_PROC_BIND") != NULL, "the harness must set OMP_PROC_BIND or OMP_PLACES");

  PHASE("places");
  int num_places = omp_get_num_places();
  CHECK(num_places >= 1, "%d places with binding on", num_places);
  if (places == NULL)
    for (int p = 0; p < num_places; p++)
      CHECK(omp_get_place_num_procs(p) == 1, "place %d has %d processors; the default is one per thread", p,
            omp_get_place_num_procs(p));

  PHASE("initial thread before any region");
  CHECK(omp_get_place_num() == 0, "place %d, expected 0", omp_get_place_num());
  CHECK(bound_to_place(0), "the initial thread may run beyond place 0");

  PHASE("a team");
  int team = num_places < 2 ? num_places : 2;
#pragma omp parallel num_threads(team)
  {
    int p = omp_get_place_num();
    CHECK(p >= 0 && p < num_places, "thread %d: place %d of %d", omp_get_thread_num(), p, num_places);
  }

  /* Still bound: weft binds its worker 0 to its first core once it starts (the first place's CPU
     and, on a machine with several threads per core, that core's other threads). */
  PHASE("initial thread after a region");
  CHECK(omp_get_place_num() >= 0, "place %d after the region", omp_get_place_num());
  PASS();
}
