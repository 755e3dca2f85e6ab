/* OMP_PLACES without OMP_PROC_BIND (set by the CTest registration: OMP_PLACES=threads, or an
 * explicit list): bind-var is true, as libgomp sets it, inside and outside a region; the places
 * are counted, and with OMP_PLACES=threads every thread of a team is in one; OMP_DISPLAY_ENV's block shows OMP_PROC_BIND 'TRUE' and the places as processor
 * lists in braces (libgomp's form), the schedule without its default chunk. Places name only
 * CPUs that exist (registered once with places for CPUs 62 and 63 too). */
#include "omp_test.h"

/* omp_display_env's block, read back from a temporary file that stands in for stderr. */
static void display_block(char *out, size_t size) {
  fflush(stderr);
  int saved = dup(2);
  FILE *f = tmpfile();
  CHECK(saved >= 0 && f != NULL, "cannot redirect stderr");
  dup2(fileno(f), 2);
  omp_display_env(0);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(f);
  size_t n = fread(out, 1, size - 1, f);
  out[n] = 0;
  fclose(f);
}

int main(void) {
  CHECK(getenv("OMP_PLACES") != NULL && getenv("OMP_PROC_BIND") == NULL,
        "the harness must set OMP_PLACES and leave OMP_PROC_BIND unset");

  PHASE("bind-var");
  CHECK(omp_get_proc_bind() == omp_proc_bind_true, "proc bind %d outside a region, expected true",
        (int)omp_get_proc_bind());
  int inside = -1;
  #pragma omp parallel
  #pragma omp master
  inside = (int)omp_get_proc_bind();
  CHECK(inside == omp_proc_bind_true, "proc bind %d inside a region, expected true", inside);

  PHASE("places");
  int np = omp_get_num_places();
  CHECK(np >= 1, "%d places", np);
  for (int p = 0; p < np; p++) CHECK(omp_get_place_num_procs(p) >= 1, "place %d has no processor", p);
  /* Only CPUs that exist are in places (libgomp drops the others, and places left without any:
   * OMP_PLACES written for a larger machine). The initial thread's own mask may already be
   * narrowed to its place by the runtime: the machine's CPU count is the reference. */
  long cpus = sysconf(_SC_NPROCESSORS_CONF);
  for (int p = 0; p < np; p++) {
    int ids[1024];
    int n = omp_get_place_num_procs(p);
    CHECK(n <= 1024, "place %d: %d processors", p, n);
    omp_get_place_proc_ids(p, ids);
    for (int i = 0; i < n; i++)
      CHECK(ids[i] >= 0 && ids[i] < cpus, "place %d lists processor %d; the machine has %ld", p, ids[i], cpus);
  }
  if (omp_test_env_is("OMP_PLACES", "threads") && np <= 64) {
    /* one place per processor: every bound thread is in one (weft binds workers to its cores),
     * and a team with as many threads as places has one in each */
    int place[64], team = 0;
    #pragma omp parallel num_threads(np)
    {
      #pragma omp single
      team = omp_get_num_threads();
      place[omp_get_thread_num()] = omp_get_place_num();
    }
    for (int i = 0; i < team; i++) {
      CHECK(place[i] >= 0 && place[i] < np, "thread %d: omp_get_place_num() %d, expected a place in [0, %d)", i,
            place[i], np);
      for (int j = 0; j < i && team == np; j++)
        CHECK(place[j] != place[i], "threads %d and %d of a team of %d are both in place %d", j, i, np, place[i]);
    }
  }

  PHASE("display");
  static char block[8192];
  display_block(block, sizeof block);
  CHECK(strstr(block, "OMP_PROC_BIND = 'TRUE'") != NULL, "display: no OMP_PROC_BIND = 'TRUE' in\n%s", block);
  const char *places = strstr(block, "OMP_PLACES = '{");
  CHECK(places != NULL, "display: the places are not shown as processor lists in\n%s", block);
  CHECK(strstr(block, "OMP_SCHEDULE = 'DYNAMIC'\n") != NULL, "display: the default schedule is not 'DYNAMIC' in\n%s",
        block);
  PASS();
}
