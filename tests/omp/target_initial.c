/* A host-fallback target region starts like a new initial task (issue 23): a team of one at
 * level 0, not in parallel, with the initial device's ICVs (not the encountering thread's), one
 * team, no ancestors; thread_limit on target and on teams bounds the parallel regions inside; and
 * parallel -> single -> target teams distribute parallel for, which hung weft at 2+ threads. */
#include "omp_test.h"

#define N 4096
static int a[N];

struct seen {
  int num_threads, thread_num, level, active_level, in_parallel, ancestor0, ancestor1, team_size1;
  int max_threads, dynamic, max_active_levels, num_teams, team_num, sched_chunk;
  omp_sched_t sched;
};

static void look(struct seen* s) {
  s->num_threads = omp_get_num_threads();
  s->thread_num = omp_get_thread_num();
  s->level = omp_get_level();
  s->active_level = omp_get_active_level();
  s->in_parallel = omp_in_parallel();
  s->ancestor0 = omp_get_ancestor_thread_num(0);
  s->ancestor1 = omp_get_ancestor_thread_num(1);
  s->team_size1 = omp_get_team_size(1);
  s->max_threads = omp_get_max_threads();
  s->dynamic = omp_get_dynamic();
  s->max_active_levels = omp_get_max_active_levels();
  s->num_teams = omp_get_num_teams();
  s->team_num = omp_get_team_num();
  omp_get_schedule(&s->sched, &s->sched_chunk);
}

static void expect_initial(const struct seen* s, const struct seen* initial, const char* where) {
  CHECK(s->num_threads == 1 && s->thread_num == 0, "%s: team %d, thread %d", where, s->num_threads, s->thread_num);
  CHECK(s->level == 0 && s->active_level == 0 && !s->in_parallel, "%s: level %d, active %d, in_parallel %d", where,
        s->level, s->active_level, s->in_parallel);
  CHECK(s->ancestor0 == 0 && s->ancestor1 == -1 && s->team_size1 == -1, "%s: ancestors %d %d, team_size(1) %d", where,
        s->ancestor0, s->ancestor1, s->team_size1);
  CHECK(s->max_threads == initial->max_threads, "%s: max_threads %d, initial %d", where, s->max_threads,
        initial->max_threads);
  CHECK(s->dynamic == initial->dynamic && s->max_active_levels == initial->max_active_levels,
        "%s: dynamic %d (initial %d), max_active_levels %d (initial %d)", where, s->dynamic, initial->dynamic,
        s->max_active_levels, initial->max_active_levels);
  CHECK(s->sched == initial->sched && s->sched_chunk == initial->sched_chunk, "%s: schedule %d,%d, initial %d,%d",
        where, (int)s->sched, s->sched_chunk, (int)initial->sched, initial->sched_chunk);
  CHECK(s->num_teams == 1 && s->team_num == 0, "%s: num_teams %d, team_num %d", where, s->num_teams, s->team_num);
}

/* Called from a teams region (gcc rejects a target or atomic strictly nested there). */
__attribute__((noinline)) static void target_look(struct seen* s) {
  #pragma omp target map(from : s[0:1])
  look(s);
}

__attribute__((noinline)) static void teams_parallel(int* limit, int* wider, int want) {
  int l = omp_get_thread_limit(), w = 0;
  #pragma omp parallel num_threads(8)
  #pragma omp single
  w = omp_get_num_threads();
  __atomic_store_n(limit, l, __ATOMIC_RELAXED);
  __atomic_add_fetch(wider, w > want, __ATOMIC_RELAXED);
}

int main(void) {
  struct seen initial;
  look(&initial);

  PHASE("target if(0) inside a parallel region, ICVs changed by the thread");
  {
    struct seen inside[64];
    int team = 0;
    #pragma omp parallel num_threads(4)
    {
      int me = omp_get_thread_num();
      if (me == 0) team = omp_get_num_threads();
      omp_set_num_threads(7);
      omp_set_dynamic(!initial.dynamic);
      omp_set_max_active_levels(initial.max_active_levels + 3);
      omp_set_schedule(omp_sched_guided, 9);
      #pragma omp target if (0) map(from : inside[me : 1])
      look(&inside[me]);
      CHECK(omp_get_max_threads() == 7, "the thread's own ICVs were lost after the target region: %d",
            omp_get_max_threads());
    }
    for (int t = 0; t < team; t++) expect_initial(&inside[t], &initial, "target if(0) in parallel");
  }

  PHASE("target inside host teams");
  {
    struct seen inside[4];
    #pragma omp teams num_teams(3)
    target_look(&inside[omp_get_team_num()]);
    for (int t = 0; t < omp_get_max_threads() && t < 3; t++) expect_initial(&inside[t], &initial, "target in teams");
  }

  PHASE("thread_limit on target");
  {
    int limit = -1, widest = 0;
    #pragma omp target thread_limit(2) map(from : limit, widest)
    {
      limit = omp_get_thread_limit();
      #pragma omp parallel num_threads(4)
      #pragma omp single
      widest = omp_get_num_threads();
    }
    CHECK(limit == 2, "omp_get_thread_limit() in target thread_limit(2): %d", limit);
    CHECK(widest >= 1 && widest <= 2, "a parallel region in target thread_limit(2) has %d threads", widest);
  }

  PHASE("thread_limit on target teams");
  {
    int limit = -1, widest = 0;
    #pragma omp target teams num_teams(2) thread_limit(3) map(tofrom : limit, widest)
    teams_parallel(&limit, &widest, 3);
    CHECK(limit >= 1 && limit <= 3, "omp_get_thread_limit() in teams thread_limit(3): %d", limit);
    CHECK(widest == 0, "a parallel region in teams thread_limit(3) had more than 3 threads");
  }

  PHASE("thread_limit on host teams");
  {
    int wider = 0, limit = -1;
    #pragma omp teams num_teams(2) thread_limit(2)
    teams_parallel(&limit, &wider, 2);
    CHECK(limit >= 1 && limit <= 2, "omp_get_thread_limit() in host teams thread_limit(2): %d", limit);
    CHECK(wider == 0, "a parallel region in host teams thread_limit(2) had more than 2 threads");
  }

  PHASE("parallel -> single -> target teams distribute parallel for");
  for (int rep = 0; rep < 20; rep++) {
    for (int i = 0; i < N; i++) a[i] = 0;
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp target teams distribute parallel for map(tofrom : a[0:N]) num_teams(2)
      for (int i = 0; i < N; i++) a[i] += i + rep;
    }
    for (int i = 0; i < N; i++) CHECK(a[i] == i + rep, "rep %d: a[%d]=%d", rep, i, a[i]);
  }

  PHASE("parallel -> target -> parallel, every thread");
  {
    int counts[64] = {0};
    #pragma omp parallel
    {
      int me = omp_get_thread_num(), c = 0;
      #pragma omp target map(tofrom : c)
      {
        #pragma omp parallel num_threads(2) reduction(+ : c)
        c += omp_get_level() == 1;
      }
      counts[me] = c;
    }
    for (int t = 0; t < omp_get_max_threads() && t < 64; t++)
      CHECK(counts[t] >= 1 && counts[t] <= 2, "thread %d: %d members at level 1 in its target's parallel region", t,
            counts[t]);
  }
  return 0;
}
