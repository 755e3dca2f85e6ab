/* More threads than the process may run on, binding not asked for (OMP_PROC_BIND and WEFT_BIND
 * unset): from the second region on, every thread of the team may run on every CPU of the process,
 * as on libgomp. weft pinned each worker to one core (its own default), two per core past the core
 * count, so an idle member pinned beside a busy one could not take the idle core (a serial stretch
 * in `single` then a burst of tasks ran them all on the producer). With OMPTEST_EXPECT_PINNED=1
 * (weft only, WEFT_BIND=core asks for binding) each thread stays on one core. */
#define _GNU_SOURCE
#include <sched.h>

#include "omp_test.h"

static int cpus_of_calling_thread(void) {
  cpu_set_t mask;
  CHECK(sched_getaffinity(0, sizeof mask, &mask) == 0, "sched_getaffinity failed");
  return CPU_COUNT(&mask);
}

int main(void) {
  const char *pinned_env = getenv("OMPTEST_EXPECT_PINNED");
  const int expect_pinned = pinned_env && atoi(pinned_env) == 1;
  const int cpus = cpus_of_calling_thread(); /* the process's mask: nothing is bound before a region */
  const int threads = cpus + 2;

  PHASE("first region past the CPUs");
  int size = 0;
  #pragma omp parallel num_threads(threads)
  {
    #pragma omp barrier
    #pragma omp single
    size = omp_get_num_threads();
  }
  CHECK(size == threads, "team of %d, asked for %d", size, threads);

  PHASE("masks in the second region");
  int fewest = cpus, most = 0;
  #pragma omp parallel num_threads(threads) reduction(min : fewest) reduction(max : most)
  {
    int n = cpus_of_calling_thread();
    fewest = n;
    most = n;
  }
  if (expect_pinned) {
    if (cpus > 1) CHECK(most < cpus, "WEFT_BIND=core: a thread may run on all %d CPUs", cpus);
  } else {
    CHECK(fewest == cpus, "a thread may run on %d of the process's %d CPUs only", fewest, cpus);
  }
  PASS();
}
