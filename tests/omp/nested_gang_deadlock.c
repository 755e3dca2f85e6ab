/* The deadlock probe of issue 26: NTASKS explicit tasks each open a nested region of MEMBERS
 * members, so there are NTASKS x MEMBERS = 96 members against OMP_NUM_THREADS workers (1 to 8).
 * User-level threads run by a fixed set of workers deadlock here unless every member of a region
 * is guaranteed to run (the paper's Figure 1): the members meet at BARRIERS barriers (and at the
 * barriers of a `for` and a `single`) and take locks:
 *   phase "barriers and a lock": at each barrier every member writes its slot and reads the
 *     others' after it; between barriers every member takes a lock shared by all regions (held
 *     across nothing) around a non-atomic counter;
 *   phase "lock held across a barrier": member 0 takes its region's lock before a barrier and
 *     releases it after; the other members take that lock right after the barrier, so they wait
 *     for member 0 to run again (a member that waits for a lock must let the holder run: on a
 *     runtime whose lock wait blocks the worker that should run the holder, this phase hangs);
 *   both phases again with the regions opened by every implicit task of the outer team as well.
 * Each region checks its members, its barrier slots and counters against the sequential values;
 * the whole run must finish (CTest's timeout, and the watchdog of omp_test.h that names the phase,
 * catch a hang). Run with OMP_MAX_ACTIVE_LEVELS=4 (the program also sets it).
 *
 * What the peers do (measured with gcc 12 on 2 cores, OMP_NUM_THREADS=1, 2, 8; peak threads of
 * the process polled from /proc/<pid>/task): libgomp oversubscribes: every region that runs gets
 * 3 new kernel threads (created and ended with it), at most one region per outer thread at a time,
 * so about 4 x OMP_NUM_THREADS threads (peaks 4, 10 and 33: the threads of an ended region linger
 * a moment), and completes in 0.03-0.15 s.
 * LLVM libomp 14 (preloaded) does the same from its pool (peaks 4, 8, 32) and completes in
 * 0.03-0.3 s. weft before issue 26 (teams of kernel threads, no gangs) also grows (peaks 4, 10,
 * 32). */
#include "omp_test.h"

#define NTASKS 24
#define MEMBERS 4
#define BARRIERS 5
#define LOCK_REPS 10
#define MAXOUTER 64
#define NREGIONS (NTASKS + MAXOUTER)

struct region {
  int seen[MEMBERS];
  long slot[2][MEMBERS];
  omp_lock_t held; /* member 0 holds it across a barrier */
  long held_count;
  int held_released;
  long for_sum;
  int team;
};

static struct region regions[NREGIONS];
static omp_lock_t shared_lock; /* every member of every region, held across nothing */
static long shared_count;

static long slot_value(int id, int b, int m) { return (long)id * 100 + b * 10 + m; }

static void region_body(int id, int across) {
  struct region *r = &regions[id];
  long sum = 0;
  #pragma omp parallel num_threads(MEMBERS) shared(sum)
  {
    int me = omp_get_thread_num();
    int n = omp_get_num_threads();
    CHECK(n == MEMBERS, "region %d: %d members, asked for %d", id, n, MEMBERS);
    #pragma omp atomic update
    r->seen[me]++;
    for (int b = 0; b < BARRIERS; b++) {
      r->slot[b % 2][me] = slot_value(id, b, me);
      if ((me + b + id) % 3 == 0) omp_test_spin(3000);
      #pragma omp barrier
      for (int m = 0; m < n; m++)
        CHECK(r->slot[b % 2][m] == slot_value(id, b, m), "region %d barrier %d: member %d's slot %ld", id, b, m,
              r->slot[b % 2][m]);
      for (int i = 0; i < LOCK_REPS; i++) {
        omp_set_lock(&shared_lock);
        long c = shared_count;
        omp_test_spin(10);
        shared_count = c + 1;
        omp_unset_lock(&shared_lock);
      }
    }
    if (across) {
      /* Member 0 holds its region's lock across a barrier; the others want it after the barrier. */
      if (me == 0) omp_set_lock(&r->held);
      #pragma omp barrier
      if (me == 0) {
        omp_test_spin(20000);
        r->held_released = 1;
        omp_unset_lock(&r->held);
      } else {
        omp_set_lock(&r->held);
        CHECK(r->held_released, "region %d: member %d got the lock before member 0 released it", id, me);
        r->held_count++;
        omp_unset_lock(&r->held);
      }
    }
    /* A `for` and a `single`: more barriers the members meet at. */
    #pragma omp for reduction(+ : sum)
    for (int i = 0; i < 64; i++) sum += i + id;
    #pragma omp single
    r->for_sum = sum;
  }
  r->team = MEMBERS;
}

static void run(int across, int implicit_too) {
  const int T = omp_test_threads();
  CHECK(T <= MAXOUTER, "OMP_NUM_THREADS %d above %d", T, MAXOUTER);
  memset(regions, 0, sizeof regions);
  shared_count = 0;
  for (int i = 0; i < NREGIONS; i++) omp_init_lock(&regions[i].held);
  #pragma omp parallel
  {
    if (implicit_too) region_body(NTASKS + omp_get_thread_num(), across);
    #pragma omp single nowait
    for (int t = 0; t < NTASKS; t++) {
      #pragma omp task firstprivate(t)
      region_body(t, across);
    }
  }
  int nregions = NTASKS + (implicit_too ? T : 0);
  for (int i = 0; i < NREGIONS; i++) omp_destroy_lock(&regions[i].held);
  for (int id = 0; id < nregions; id++) {
    struct region *r = &regions[id];
    CHECK(r->team == MEMBERS, "region %d did not run", id);
    for (int m = 0; m < MEMBERS; m++) CHECK(r->seen[m] == 1, "region %d: member %d seen %d times", id, m, r->seen[m]);
    CHECK(r->held_count == (across ? MEMBERS - 1 : 0), "region %d: held lock taken %ld times", id, r->held_count);
    long s = 0;
    for (int i = 0; i < 64; i++) s += i + id;
    CHECK(r->for_sum == s, "region %d: for reduction %ld, expected %ld", id, r->for_sum, s);
  }
  long expect = (long)nregions * MEMBERS * BARRIERS * LOCK_REPS;
  CHECK(shared_count == expect, "shared lock counter %ld, expected %ld", shared_count, expect);
}

int main(void) {
  omp_set_max_active_levels(4);
  omp_init_lock(&shared_lock);
  PHASE("barriers and a lock, regions in tasks");
  run(0, 0);
  PHASE("lock held across a barrier, regions in tasks");
  run(1, 0);
  PHASE("barriers and a lock, regions in tasks and implicit tasks");
  run(0, 1);
  PHASE("lock held across a barrier, regions in tasks and implicit tasks");
  run(1, 1);
  omp_destroy_lock(&shared_lock);
  PHASE("exit (the runtime's shutdown)");
  PASS();
}
