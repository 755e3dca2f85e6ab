/* omp_pause_resource and omp_pause_resource_all (OpenMP 5.0), as libgomp does them:
 * - outside any region, a soft or hard pause of the host returns 0 and releases the runtime's
 *   threads (only the threads of the process before its first OpenMP call are left, counted in
 *   /proc/self/task, and a sanitizer's own), also before the first
 *   region and twice in a row;
 * - the next region starts a full team again (the requested size, distinct thread numbers, tasks
 *   and barriers work), and the ICVs set before the pause survive it;
 * - inside a parallel region, or for a device that does not exist, the call fails (nonzero) and
 *   the team goes on working. (Inside an explicit task the spec forbids the call; libgomp's answer
 *   varies there, weft refuses.) */
#include "omp_test.h"
#include <dirent.h>

static int process_threads(void) {
  DIR *d = opendir("/proc/self/task");
  CHECK(d != NULL, "opendir /proc/self/task");
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* Threads of the process that are not the runtime's: those before any OpenMP call, plus
 * OMPTEST_SANITIZER_THREADS (ThreadSanitizer starts a background thread with the second thread). */
static int threads_at_start;

/* A runtime may let released threads finish exiting after the call returns: wait up to 5 s. True
 * when only the threads that are not the runtime's are left. */
static int threads_settle_to_start(void) {
  for (int i = 0; i < 500 && process_threads() > threads_at_start; i++) usleep(10000);
  return process_threads() <= threads_at_start;
}

/* A region of `want` threads (0: the default) that checks its team, its tasks and a barrier. */
static void region_works(int want, const char *when) {
  int size = 0, members = 0, mask = 0;
  long sum = 0;
  #pragma omp parallel num_threads(want ? want : omp_get_max_threads()) reduction(+ : members, sum)
  {
    #pragma omp single
    size = omp_get_num_threads();
    members++;
    #pragma omp atomic
    mask |= 1 << omp_get_thread_num();
    #pragma omp barrier
    #pragma omp single
    for (int i = 1; i <= 100; i++) {
      #pragma omp task shared(sum)
      {
        #pragma omp atomic
        sum += i;
      }
    }
  }
  int expect = want ? want : omp_get_max_threads();
  CHECK(size == expect && members == expect && mask == (1 << expect) - 1,
        "%s: team of %d (%d members, thread mask %x), expected %d", when, size, members, mask, expect);
  CHECK(sum == 5050, "%s: tasks summed to %ld", when, sum);
}

int main(void) {
  const char *extra = getenv("OMPTEST_SANITIZER_THREADS");
  threads_at_start = process_threads() + (extra ? atoi(extra) : 0);
  int T = omp_test_threads();

  PHASE("pause before the first region");
  CHECK(omp_pause_resource(omp_pause_soft, omp_get_initial_device()) == 0, "soft pause before any region");
  region_works(0, "first region");

  PHASE("soft pause releases the threads");
  CHECK(omp_pause_resource(omp_pause_soft, omp_get_initial_device()) == 0, "soft pause of the host");
  CHECK(threads_settle_to_start(), "%d threads left after a soft pause (%d at the start)", process_threads(),
        threads_at_start);
  CHECK(omp_pause_resource(omp_pause_soft, omp_get_initial_device()) == 0, "a second pause in a row");
  region_works(0, "after a soft pause");
  region_works(T + 1, "a larger team after a soft pause");

  PHASE("hard pause keeps the ICVs");
  omp_set_num_threads(3);
  omp_set_schedule(omp_sched_guided, 7);
  omp_set_max_active_levels(2);
  omp_set_default_allocator(omp_cgroup_mem_alloc);
  region_works(0, "before a hard pause");
  CHECK(omp_pause_resource(omp_pause_hard, omp_get_initial_device()) == 0, "hard pause of the host");
  CHECK(threads_settle_to_start(), "%d threads left after a hard pause (%d at the start)", process_threads(),
        threads_at_start);
  omp_sched_t kind;
  int chunk;
  omp_get_schedule(&kind, &chunk);
  CHECK(omp_get_max_threads() == 3 && kind == omp_sched_guided && chunk == 7 && omp_get_max_active_levels() == 2 &&
            omp_get_default_allocator() == omp_cgroup_mem_alloc,
        "ICVs after the pause: threads %d, schedule %d,%d, levels %d, allocator %lu", omp_get_max_threads(), (int)kind,
        chunk, omp_get_max_active_levels(), (unsigned long)omp_get_default_allocator());
  region_works(0, "after a hard pause");
  omp_set_num_threads(T);
  omp_set_max_active_levels(1);

  PHASE("omp_pause_resource_all");
  CHECK(omp_pause_resource_all(omp_pause_soft) == 0, "omp_pause_resource_all");
  CHECK(threads_settle_to_start(), "%d threads left after omp_pause_resource_all (%d at the start)", process_threads(),
        threads_at_start);
  region_works(0, "after omp_pause_resource_all");

  PHASE("refused inside a region or for no device");
  {
    int inside = 0, all_inside = 0, size = 0;
    long sum = 0;
    #pragma omp parallel reduction(+ : sum)
    {
      #pragma omp master
      {
        inside = omp_pause_resource(omp_pause_soft, omp_get_initial_device());
        all_inside = omp_pause_resource_all(omp_pause_hard);
        size = omp_get_num_threads();
      }
      #pragma omp barrier
      #pragma omp for
      for (int i = 1; i <= 100; i++) sum += i;
    }
    CHECK(inside != 0 && all_inside != 0, "pause inside a region returned %d / %d", inside, all_inside);
    CHECK(size == T && sum == 5050, "the team after a refused pause: %d threads, sum %ld", size, sum);
    CHECK(omp_pause_resource(omp_pause_soft, -1) != 0, "pause of device -1 returned 0");
    CHECK(omp_pause_resource(omp_pause_soft, omp_get_num_devices() + 1) != 0, "pause of a missing device returned 0");
    region_works(0, "after the refused pauses");
  }
  PASS();
}
