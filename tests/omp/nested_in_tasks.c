/* Nested parallel regions opened inside explicit tasks (issue 26: on weft with WEFT_GANG=nested
 * their members are gang-scheduled fibers on the existing workers; here only what OpenMP promises
 * is checked, so the program also validates itself on libgomp). Run with OMP_MAX_ACTIVE_LEVELS=4
 * (the program also calls omp_set_max_active_levels(4)).
 *
 * Inside parallel + single, NTASKS explicit tasks each open `parallel num_threads(3 or 4)`; and,
 * separately, every implicit task of an outer team opens one directly. In every inner team:
 * omp_get_thread_num in range and each number seen exactly once, omp_get_num_threads,
 * omp_get_level / omp_get_active_level, omp_get_ancestor_thread_num and omp_get_team_size at every
 * level, omp_in_parallel; BARRIER_PHASES barrier phases (each member writes its slot, then reads
 * every other member's after the barrier); an omp_lock_t taken by every member around a
 * non-atomic counter; critical around a global non-atomic counter; a `for` with a reduction and a
 * dynamic `for` writing an array; `single copyprivate`; tasks created by one member (single) and
 * by every member, waited for with taskwait, their results summed (and their level, team size and
 * ancestor checked); a third level (parallel num_threads(2) inside each member); after the region
 * the encountering task's thread number and level are back. Then the same with
 * max-active-levels 1 (inner regions inactive unless the outer team has one thread). Every value is compared with one
 * computed sequentially. */
#include "omp_test.h"

#define NTASKS 8
#define MAXOUTER 64
#define NREGIONS (NTASKS + MAXOUTER)
#define MAXM 4
#define BARRIER_PHASES 5
#define LOCK_REPS 40
#define FOR_N 1000
#define INNER_TASKS 24
#define MEMBER_TASKS 5

/* Everything one nested region records; index = region id. */
struct region {
  int size;                       /* the num_threads asked for */
  int enc_thread, enc_level, enc_active, outer_size;
  int team, level3_team;          /* the team sizes OpenMP prescribes, at level+1 and level+2 */
  int seen[MAXM];                 /* member number -> times seen */
  long board[2][MAXM];            /* barrier phases, double-buffered by phase parity */
  omp_lock_t lock;
  long lock_count;
  long red_sum;                   /* for reduction */
  long dyn[FOR_N];                /* dynamic for writes */
  long copied[MAXM];              /* copyprivate value seen by each member */
  int singles;
  long task_sum;                  /* tasks of the single member */
  long member_task_sum[MAXM];     /* tasks of each member */
  int third_level[MAXM];          /* members of the level-3 teams */
  int after_thread, after_level;
};

static struct region regions[NREGIONS];
static long critical_count;

static long for_value(int id, int i) { return (long)(i * 7 + id * 13) % 101; }
static long board_value(int id, int phase, int m) { return (long)id * 1000 + phase * 10 + m; }
static long copy_value(int id) { return 424242L + id; }
static long task_value(int id, int i) { return (long)id * 100 + i; }

static long expected_red_sum(int id) {
  long s = 0;
  for (int i = 0; i < FOR_N; i++) s += for_value(id, i);
  return s;
}

/* The body of one nested region (`id` its record). */
static void inner_region(int id) {
  struct region *r = &regions[id];
  const int k = r->size;
  const int exp_size = r->team;
  const int exp_level = r->enc_level + 1;
  const int exp_active = r->enc_active + (exp_size > 1);
  const int exp3 = r->level3_team;
  long red = 0;
  #pragma omp parallel num_threads(k) shared(red)
  {
    int me = omp_get_thread_num();
    int n = omp_get_num_threads();
    CHECK(n == exp_size, "region %d: team of %d, expected %d", id, n, exp_size);
    CHECK(me >= 0 && me < n, "region %d: thread number %d of %d", id, me, n);
    #pragma omp atomic update
    r->seen[me]++;
    CHECK(omp_get_level() == exp_level, "region %d: level %d, expected %d", id, omp_get_level(), exp_level);
    CHECK(omp_get_active_level() == exp_active, "region %d: active level %d, expected %d", id,
          omp_get_active_level(), exp_active);
    CHECK(omp_in_parallel() == (exp_active > 0), "region %d: omp_in_parallel %d", id, omp_in_parallel());
    CHECK(omp_get_ancestor_thread_num(0) == 0, "region %d: ancestor(0) %d", id, omp_get_ancestor_thread_num(0));
    CHECK(omp_get_ancestor_thread_num(exp_level - 1) == r->enc_thread, "region %d: ancestor(%d) %d, encountering thread %d",
          id, exp_level - 1, omp_get_ancestor_thread_num(exp_level - 1), r->enc_thread);
    CHECK(omp_get_ancestor_thread_num(exp_level) == me, "region %d: ancestor(level) %d, me %d", id,
          omp_get_ancestor_thread_num(exp_level), me);
    CHECK(omp_get_ancestor_thread_num(exp_level + 1) == -1, "region %d: ancestor beyond the level", id);
    CHECK(omp_get_team_size(0) == 1, "region %d: team size(0) %d", id, omp_get_team_size(0));
    CHECK(omp_get_team_size(exp_level - 1) == r->outer_size, "region %d: team size(%d) %d, expected %d", id,
          exp_level - 1, omp_get_team_size(exp_level - 1), r->outer_size);
    CHECK(omp_get_team_size(exp_level) == n, "region %d: team size(level) %d", id, omp_get_team_size(exp_level));
    CHECK(omp_get_team_size(exp_level + 1) == -1, "region %d: team size beyond the level", id);

    /* Barrier phases: write my slot, barrier, read everybody's. Two buffers by parity: a member
     * writes buffer p%2 again at phase p+2 only after the barrier of phase p+1, which every member
     * passes only after reading phase p. */
    for (int p = 0; p < BARRIER_PHASES; p++) {
      r->board[p % 2][me] = board_value(id, p, me);
      if ((me + p) % 2) omp_test_spin(2000); /* members arrive in varying order */
      #pragma omp barrier
      for (int m = 0; m < n; m++)
        CHECK(r->board[p % 2][m] == board_value(id, p, m), "region %d phase %d: member %d's slot %ld, expected %ld",
              id, p, m, r->board[p % 2][m], board_value(id, p, m));
    }

    /* The region's lock around a non-atomic counter, and the (global) critical section. */
    for (int i = 0; i < LOCK_REPS; i++) {
      omp_set_lock(&r->lock);
      long v = r->lock_count;
      omp_test_spin(20);
      r->lock_count = v + 1;
      omp_unset_lock(&r->lock);
      #pragma omp critical
      {
        long c = critical_count;
        omp_test_spin(5);
        critical_count = c + 1;
      }
    }
    #pragma omp barrier
    CHECK(r->lock_count == (long)n * LOCK_REPS, "region %d: lock counter %ld, expected %ld", id, r->lock_count,
          (long)n * LOCK_REPS);

    /* Worksharing: a reduction and a dynamic loop. */
    #pragma omp for reduction(+ : red) schedule(static)
    for (int i = 0; i < FOR_N; i++) red += for_value(id, i);
    CHECK(red == expected_red_sum(id), "region %d: reduction %ld, expected %ld", id, red, expected_red_sum(id));
    if (me == 0) r->red_sum = red;
    #pragma omp for schedule(dynamic, 7)
    for (int i = 0; i < FOR_N; i++) r->dyn[i] += for_value(id, i) + 1;
    for (int i = me; i < FOR_N; i += n)
      CHECK(r->dyn[i] == for_value(id, i) + 1, "region %d: dynamic for element %d = %ld", id, i, r->dyn[i]);

    /* single + copyprivate */
    long v = -1;
    #pragma omp single copyprivate(v)
    {
      v = copy_value(id);
      #pragma omp atomic update
      r->singles++;
    }
    r->copied[me] = v;
    CHECK(v == copy_value(id), "region %d: copyprivate gave %ld", id, v);

    /* Tasks of the inner team: created by one member, run by any, waited for at taskwait. */
    #pragma omp single
    {
      long sum = 0;
      for (int i = 0; i < INNER_TASKS; i++) {
        #pragma omp task firstprivate(i) shared(sum)
        {
          CHECK(omp_get_level() == exp_level, "region %d: inner task at level %d", id, omp_get_level());
          CHECK(omp_get_team_size(exp_level) == n, "region %d: inner task's team size %d", id,
                omp_get_team_size(exp_level));
          CHECK(omp_get_ancestor_thread_num(exp_level - 1) == r->enc_thread, "region %d: inner task's ancestor %d", id,
                omp_get_ancestor_thread_num(exp_level - 1));
          omp_test_spin(200 * (i % 5));
          #pragma omp atomic update
          sum += task_value(id, i);
        }
      }
      #pragma omp taskwait
      r->task_sum = sum;
    }
    /* ... and by every member, each waiting for its own. */
    {
      long mine[MEMBER_TASKS];
      for (int i = 0; i < MEMBER_TASKS; i++) {
        #pragma omp task firstprivate(i) shared(mine)
        {
          long c = 0;
          #pragma omp task shared(c) firstprivate(i) /* a grandchild, waited for by its parent */
          c = task_value(id, i) * 3;
          #pragma omp taskwait
          mine[i] = c + me;
        }
      }
      #pragma omp taskwait
      long s = 0;
      for (int i = 0; i < MEMBER_TASKS; i++) s += mine[i];
      r->member_task_sum[me] = s;
    }

    /* A third level inside each member. */
    #pragma omp parallel num_threads(2)
    {
      CHECK(omp_get_num_threads() == exp3, "region %d: level-3 team %d, expected %d", id, omp_get_num_threads(), exp3);
      CHECK(omp_get_level() == exp_level + 1, "region %d: level-3 level %d", id, omp_get_level());
      CHECK(omp_get_ancestor_thread_num(exp_level) == me, "region %d: level-3 ancestor %d, me %d", id,
            omp_get_ancestor_thread_num(exp_level), me);
      CHECK(omp_get_team_size(exp_level) == n && omp_get_team_size(exp_level + 1) == exp3, "region %d: level-3 team sizes", id);
      #pragma omp barrier
      #pragma omp atomic update
      r->third_level[me]++;
    }
  }
}

/* Opens region `id` from the current task (explicit or implicit) and records what it sees. The
 * region is active (k members) while the active level is below max-active-levels, else a team of
 * one; the same for its level-3 regions of 2. */
static void open_region(int id, int k) {
  struct region *r = &regions[id];
  r->size = k;
  r->enc_thread = omp_get_thread_num();
  r->enc_level = omp_get_level();
  r->enc_active = omp_get_active_level();
  r->outer_size = omp_get_num_threads();
  const int max_active = omp_get_max_active_levels();
  r->team = r->enc_active < max_active ? k : 1;
  r->level3_team = r->enc_active + (r->team > 1) < max_active ? 2 : 1;
  omp_init_lock(&r->lock);
  inner_region(id);
  omp_destroy_lock(&r->lock);
  r->after_thread = omp_get_thread_num();
  r->after_level = omp_get_level();
}

/* The sequential reference for every region opened. */
static void verify(int id) {
  struct region *r = &regions[id];
  const int n = r->team;
  for (int m = 0; m < MAXM; m++)
    CHECK(r->seen[m] == (m < n), "region %d: member %d seen %d times (team of %d)", id, m, r->seen[m], n);
  CHECK(r->lock_count == (long)n * LOCK_REPS, "region %d: lock counter %ld", id, r->lock_count);
  CHECK(r->red_sum == expected_red_sum(id), "region %d: reduction %ld", id, r->red_sum);
  for (int i = 0; i < FOR_N; i++) CHECK(r->dyn[i] == for_value(id, i) + 1, "region %d: dyn[%d] %ld", id, i, r->dyn[i]);
  CHECK(r->singles == 1, "region %d: single ran %d times", id, r->singles);
  long ts = 0;
  for (int i = 0; i < INNER_TASKS; i++) ts += task_value(id, i);
  CHECK(r->task_sum == ts, "region %d: inner tasks summed %ld, expected %ld", id, r->task_sum, ts);
  for (int m = 0; m < n; m++) {
    long ms = 0;
    for (int i = 0; i < MEMBER_TASKS; i++) ms += task_value(id, i) * 3 + m;
    CHECK(r->member_task_sum[m] == ms, "region %d: member %d's tasks %ld, expected %ld", id, m, r->member_task_sum[m], ms);
    CHECK(r->copied[m] == copy_value(id), "region %d: member %d copyprivate %ld", id, m, r->copied[m]);
  }
  for (int m = 0; m < n; m++)
    CHECK(r->third_level[m] == r->level3_team, "region %d: member %d's level-3 team ran %d members, expected %d", id,
          m, r->third_level[m], r->level3_team);
  CHECK(r->after_thread == r->enc_thread, "region %d: thread number %d after the region, %d before", id,
        r->after_thread, r->enc_thread);
  CHECK(r->after_level == r->enc_level, "region %d: level %d after the region, %d before", id, r->after_level, r->enc_level);
}

static void run_round(int active, int round) {
  const int T = omp_test_threads();
  CHECK(T <= MAXOUTER, "OMP_NUM_THREADS %d above %d", T, MAXOUTER);
  memset(regions, 0, sizeof regions);
  critical_count = 0;
  int outer_team = 0;

  PHASE(active ? "nested regions inside explicit tasks" : "inactive nested regions inside explicit tasks");
  #pragma omp parallel
  {
    #pragma omp single
    {
      outer_team = omp_get_num_threads();
      for (int t = 0; t < NTASKS; t++) {
        #pragma omp task firstprivate(t)
        {
          int enc = omp_get_thread_num();
          CHECK(omp_get_level() == 1, "task %d at level %d", t, omp_get_level());
          CHECK(omp_get_active_level() == (T > 1), "task %d at active level %d", t, omp_get_active_level());
          open_region(t, 3 + (t + round) % 2);
          CHECK(omp_get_thread_num() == enc, "task %d: thread number %d after its nested region, %d before", t,
                omp_get_thread_num(), enc);
        }
      }
    }
  }
  CHECK(outer_team == T, "outer team %d, expected %d", outer_team, T);

  PHASE(active ? "nested regions of the outer team's implicit tasks" : "inactive nested regions of implicit tasks");
  #pragma omp parallel
  {
    int me = omp_get_thread_num();
    CHECK(omp_get_level() == 1 && omp_get_active_level() == (T > 1), "implicit task at levels %d %d",
          omp_get_level(), omp_get_active_level());
    open_region(NTASKS + me, 3 + (me + round) % 2);
  }

  PHASE("sequential reference");
  long crit = 0;
  for (int t = 0; t < NTASKS; t++) {
    verify(t);
    CHECK(regions[t].team == (active ? regions[t].size : T > 1 ? 1 : regions[t].size),
          "task %d's region: %d members by the rule, expected more", t, regions[t].team);
    CHECK(regions[t].level3_team == (active ? 2 : 1), "task %d's region: level-3 teams of %d by the rule", t,
          regions[t].level3_team);
    crit += (long)regions[t].team * LOCK_REPS;
  }
  for (int o = 0; o < T; o++) {
    verify(NTASKS + o);
    crit += (long)regions[NTASKS + o].team * LOCK_REPS;
  }
  CHECK(critical_count == crit, "critical counter %ld, expected %ld", critical_count, crit);
}

int main(void) {
  omp_set_max_active_levels(4);
  CHECK(omp_get_max_active_levels() == 4, "max active levels %d", omp_get_max_active_levels());
  CHECK(omp_get_supported_active_levels() >= 3, "supported active levels %d", omp_get_supported_active_levels());
  for (int round = 0; round < 3; round++) run_round(1, round);
  /* max-active-levels 1: nested regions (and the level-3 ones) are inactive teams of one, except
   * under an outer team of one thread (itself inactive): then the level-2 regions are the first
   * active level and have their members. */
  omp_set_max_active_levels(1);
  run_round(0, 0);
  omp_set_max_active_levels(4);
  PHASE("exit (the runtime's shutdown)");
  PASS();
}
