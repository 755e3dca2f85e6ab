/* ICVs belong to the task (issue 23): omp_set_num_threads, omp_set_dynamic,
 * omp_set_max_active_levels and omp_set_schedule inside an undeferred (if(0)) or included (final)
 * task, or a deferred one, change that task's data environment, seen by the task itself and by a
 * parallel region it starts, and not the enclosing implicit task's. */
#include "omp_test.h"

struct icv_view {
  int nthreads, dynamic, levels, chunk;
  omp_sched_t kind;
};

static struct icv_view view(void) {
  struct icv_view v;
  v.nthreads = omp_get_max_threads();
  v.dynamic = omp_get_dynamic();
  v.levels = omp_get_max_active_levels();
  omp_get_schedule(&v.kind, &v.chunk);
  return v;
}

static int same(struct icv_view a, struct icv_view b) {
  return a.nthreads == b.nthreads && a.dynamic == b.dynamic && a.levels == b.levels && a.kind == b.kind &&
         a.chunk == b.chunk;
}

static void change_and_check(int* inner_ok, int* team) {
  omp_set_num_threads(3);
  omp_set_dynamic(0);
  omp_set_max_active_levels(4);
  omp_set_schedule(omp_sched_dynamic, 7);
  struct icv_view v = view();
  *inner_ok = v.nthreads == 3 && !v.dynamic && v.levels == 4 && v.kind == omp_sched_dynamic && v.chunk == 7;
  #pragma omp parallel
  #pragma omp single
  *team = omp_get_num_threads();
  /* Still its own after the region (whose join may set this task aside while other tasks run). */
  v = view();
  *inner_ok = *inner_ok && v.nthreads == 3 && !v.dynamic && v.levels == 4 && v.kind == omp_sched_dynamic && v.chunk == 7;
}

int main(void) {
  PHASE("if(0) task in the sequential part");
  {
    struct icv_view before = view();
    int ok = 0, team = 0;
    #pragma omp task if (0) shared(ok, team)
    change_and_check(&ok, &team);
    CHECK(ok, "the if(0) task did not see its own changes");
    CHECK(team >= 1 && team <= 3, "a parallel region in the if(0) task had %d threads, nthreads-var 3", team);
    CHECK(same(view(), before), "the if(0) task's ICV changes leaked: nthreads %d (was %d)", view().nthreads,
          before.nthreads);
  }

  /* Repeated: with gang-scheduled nested regions, one worker interleaves contexts that run as the
   * same member (an if(0) task parked at its region's join, another thread's final task), and a
   * mix-up of their ICV layers showed in about one run in eight. */
  PHASE("if(0) and final tasks in a parallel region");
  for (int rep = 0; rep < 20; ++rep)
  #pragma omp parallel
  {
    struct icv_view before = view();
    int ok = 0, team = 0;
    #pragma omp task if (0) shared(ok, team)
    change_and_check(&ok, &team);
    CHECK(ok, "the if(0) task did not see its own changes");
    CHECK(same(view(), before), "the if(0) task's ICV changes leaked into the implicit task: nthreads %d (was %d)",
          view().nthreads, before.nthreads);
    int ok2 = 0, team2 = 0;
    #pragma omp task final(1) shared(ok2, team2, before)
    {
      #pragma omp task shared(ok2, team2) /* included: final's descendants run at once */
      change_and_check(&ok2, &team2);
      CHECK(same(view(), before), "an included task's ICV changes leaked into its final parent: nthreads %d",
            view().nthreads);
    }
    #pragma omp taskwait
    CHECK(ok2, "the included task did not see its own changes");
    CHECK(same(view(), before), "ICV changes leaked after final/included tasks: nthreads %d (was %d)",
          view().nthreads, before.nthreads);
  }

  /* Deferred tasks too: their changes end with them, whichever thread ran them (the creator in its
   * taskwait, or another member), and never reach an implicit task or a later task. */
  PHASE("deferred tasks in a parallel region");
  for (int rep = 0; rep < 5; ++rep)
  #pragma omp parallel
  {
    struct icv_view before = view();
    int not_own = 0, leaked = 0;
    #pragma omp single
    {
      for (int k = 0; k < 200; ++k) {
        #pragma omp task shared(not_own, before)
        {
          if (k % 50 == 0) { /* a few also start a region of their own */
            int ok = 0, team = 0;
            change_and_check(&ok, &team);
            if (!ok) {
              #pragma omp atomic
              ++not_own;
            }
          } else {
            omp_set_num_threads(3);
            omp_set_dynamic(1);
            if (omp_get_max_threads() != 3 || !omp_get_dynamic()) {
              #pragma omp atomic
              ++not_own;
            }
          }
        }
      }
      #pragma omp taskwait
      CHECK(same(view(), before), "deferred tasks' ICV changes leaked into their creator: nthreads %d (was %d)",
            view().nthreads, before.nthreads);
    }
    CHECK(same(view(), before), "deferred tasks' ICV changes leaked into an implicit task: nthreads %d (was %d)",
          view().nthreads, before.nthreads);
    #pragma omp task shared(leaked, before)
    if (!same(view(), before)) {
      #pragma omp atomic
      ++leaked;
    }
    #pragma omp taskwait
    #pragma omp barrier
    CHECK(!not_own, "%d deferred tasks did not see their own ICV changes", not_own);
    CHECK(!leaked, "a later task saw ICV values an earlier deferred task set");
  }

  /* A deferred task starts from its creator's values at its creation, whichever thread runs it:
   * here every thread but the creator has changed its own nthreads-var, and a task created inside
   * another one after a change sees that change. */
  PHASE("deferred tasks take their creator's values");
  for (int rep = 0; rep < 5; ++rep)
  #pragma omp parallel
  {
    int creator_value = omp_get_max_threads(), wrong = 0, wrong_inner = 0;
    if (omp_get_thread_num() != 0) omp_set_num_threads(creator_value + 10 + omp_get_thread_num());
    #pragma omp barrier
    #pragma omp master
    {
      for (int k = 0; k < 100; ++k) {
        #pragma omp task shared(wrong, wrong_inner, creator_value)
        {
          if (omp_get_max_threads() != creator_value) {
            #pragma omp atomic
            ++wrong;
          }
          if (k % 10 == 0) {
            omp_set_num_threads(creator_value + 1);
            #pragma omp task shared(wrong_inner, creator_value)
            if (omp_get_max_threads() != creator_value + 1) {
              #pragma omp atomic
              ++wrong_inner;
            }
            #pragma omp taskwait
          }
        }
      }
      #pragma omp taskwait
      CHECK(!wrong, "%d of 100 deferred tasks did not start from their creator's nthreads-var %d", wrong,
            creator_value);
      CHECK(!wrong_inner, "%d tasks did not start from the values their creating task had set", wrong_inner);
    }
    #pragma omp barrier
  }
  return 0;
}
