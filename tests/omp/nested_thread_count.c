/* The process's thread count while nested regions are live (issue 26: with gangs on, nesting must
 * not grow weft's thread pool). NTASKS explicit tasks each open `parallel num_threads(M)`, M =
 * max(4, cores + 3) members (more than the limit below allows at one worker, so a pool that grows
 * fails even at OMP_NUM_THREADS=1);
 * then every implicit task of the outer team opens one. Inside each region the members meet at a
 * barrier (so all of them are live at once), member 0 counts the entries of /proc/self/task, and
 * the members meet again before leaving; the largest count is kept.
 *
 * On weft with gangs on (weft detected through weft/omp_ext.h's weak references, and WEFT_GANG
 * unset, "nested" or "all") the count must not exceed max(T, cores) + 2, where T is the outer
 * team's size (omp_get_max_threads(), the workers weft starts for it) and cores the online CPUs
 * (sysconf: the main thread's affinity mask is no measure, weft binds it to worker 0's core); the
 * 2 are slack for the runtime's helper threads (a watchdog or timer
 * thread, the process's main thread when it is not a worker). Anywhere else (libgomp, libomp,
 * weft with WEFT_GANG=off) the program only prints the count: those runtimes oversubscribe by
 * design (libgomp: up to T x M threads here at T threads).
 *
 * OMPTEST_OPT_IN=1: the program first calls weft_omp_set_gang_sched() (weft/omp_ext.h), which
 * turns gangs on for its regions whatever WEFT_GANG says (a no-op elsewhere).
 *
 * Registered only for weft, with WEFT_GANG=nested and with WEFT_GANG=off plus the opt-in (it fails
 * on weft while nested regions grow the pool); runnable by hand anywhere:
 * OMP_NUM_THREADS=T OMP_MAX_ACTIVE_LEVELS=4 ./omp_nested_thread_count */
#include <dirent.h>
#include <weft/omp_ext.h>

#include "omp_test.h"

#define NTASKS 16
#define MAXMEMBERS 64

static int most, members;

static int count_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

static void region(void) {
  #pragma omp parallel num_threads(members)
  {
    CHECK(omp_get_num_threads() == members, "a nested team of %d, asked for %d", omp_get_num_threads(), members);
    #pragma omp barrier
    if (omp_get_thread_num() == 0) {
      int n = count_threads();
      CHECK(n > 0, "cannot read /proc/self/task");
      int seen = __atomic_load_n(&most, __ATOMIC_RELAXED);
      while (n > seen && !__atomic_compare_exchange_n(&most, &seen, n, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      }
    }
    omp_test_spin(200000); /* the other regions of the moment are live meanwhile */
    #pragma omp barrier
  }
}

int main(void) {
  omp_set_max_active_levels(4);
  const int T = omp_test_threads();
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  const int cores = online > 0 ? (int)online : 1;
  members = cores + 3 > 4 ? cores + 3 : 4;
  if (members > MAXMEMBERS) members = MAXMEMBERS;
  const char *gang = getenv("WEFT_GANG");
  const int on_weft = weft_omp_graphs_available();
  const char *opt_in = getenv("OMPTEST_OPT_IN");
  const int asked = opt_in && !strcmp(opt_in, "1");
  if (asked) weft_omp_set_gang_sched();
  const int gangs_on = on_weft && (asked || !gang || !*gang || !strcmp(gang, "nested") || !strcmp(gang, "all"));
  const int limit = (T > cores ? T : cores) + 2;

  PHASE("nested regions inside tasks");
  most = 0;
  #pragma omp parallel
  #pragma omp single
  for (int t = 0; t < NTASKS; t++) {
    #pragma omp task
    region();
  }
  int in_tasks = most;

  PHASE("nested regions of the implicit tasks");
  most = 0;
  #pragma omp parallel
  region();
  int in_implicit = most;

  printf("runtime %s, WEFT_GANG=%s: %d threads at most with nested regions in tasks, %d with nested regions "
         "of implicit tasks (T=%d, cores=%d, nested teams of %d%s)\n",
         on_weft ? "weft" : "not weft", gang ? gang : "(unset)", in_tasks, in_implicit, T, cores, members,
         gangs_on ? "" : on_weft ? "; not checked: WEFT_GANG turns gangs off" : "; not checked: not weft");
  fflush(stdout);
  if (gangs_on) {
    PHASE("the check");
    CHECK(in_tasks <= limit, "%d threads with nested regions inside tasks; gangs on: at most max(T=%d, cores=%d) + 2 = %d",
          in_tasks, T, cores, limit);
    CHECK(in_implicit <= limit,
          "%d threads with nested regions of implicit tasks; gangs on: at most max(T=%d, cores=%d) + 2 = %d", in_implicit,
          T, cores, limit);
  }
  PHASE("exit (the runtime's shutdown)");
  PASS();
}
