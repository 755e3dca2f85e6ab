/* cancel taskgroup and cancellation point taskgroup, run with OMP_CANCELLATION=true and =false.
 * With cancellation on: code after an activated cancel does not run, tasks of the cancelled
 * taskgroup that start afterwards stop at their first cancellation point (or are discarded), tasks
 * outside the taskgroup and of an enclosing taskgroup are unaffected, cancellation inside a
 * taskloop (its implicit taskgroup), and cancellation from the tasks of a worksharing loop's task
 * reduction, which cancels the taskgroup around the loop (libgomp's binding: the reduction's own
 * group is not one the program named). With it off: everything runs. */
#include "omp_test.h"

int main(void) {
  int on = omp_get_cancellation();
  if (omp_test_env_is("OMP_CANCELLATION", "true")) CHECK(on == 1, "OMP_CANCELLATION=true but omp_get_cancellation()=%d", on);
  if (!omp_test_env_is("OMP_CANCELLATION", "true")) CHECK(on == 0, "cancellation disabled but omp_get_cancellation()=%d", on);

  PHASE("tasks created after the cancel");
  for (int rep = 0; rep < 10; rep++) {
    int canceller_after = 0, late_done = 0, outside_done = 0, outer_done = 0;
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp task shared(outside_done)
      outside_done = 1;
      #pragma omp taskgroup
      {
        #pragma omp taskgroup
        {
          #pragma omp task shared(canceller_after)
          {
            #pragma omp cancel taskgroup
            canceller_after = 1;
          }
          #pragma omp taskwait
          for (int i = 0; i < 20; i++) {
            #pragma omp task shared(late_done)
            {
              #pragma omp cancellation point taskgroup
              #pragma omp atomic
              late_done++;
            }
          }
        }
        /* the enclosing taskgroup is not cancelled */
        for (int i = 0; i < 5; i++) {
          #pragma omp task shared(outer_done)
          {
            #pragma omp cancellation point taskgroup
            #pragma omp atomic
            outer_done++;
          }
        }
      }
      #pragma omp taskwait
    }
    CHECK(outside_done == 1, "task outside the taskgroup did not run");
    CHECK(outer_done == 5, "tasks of the enclosing taskgroup: %d of 5 ran", outer_done);
    if (on) {
      CHECK(canceller_after == 0, "code after an activated cancel taskgroup ran");
      CHECK(late_done == 0, "%d tasks passed a cancellation point of a cancelled taskgroup", late_done);
    } else {
      CHECK(canceller_after == 1 && late_done == 20, "no cancellation: %d %d", canceller_after, late_done);
    }
  }

  PHASE("cancel among running siblings");
  for (int rep = 0; rep < 10; rep++) {
    int done[100];
    memset(done, 0, sizeof done);
    int started = 0;
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp taskgroup
      {
        for (int i = 0; i < 100; i++) {
          #pragma omp task firstprivate(i) shared(done, started)
          {
            #pragma omp atomic
            started++;
            omp_test_spin(200);
            if (i == 30) {
              #pragma omp cancel taskgroup
            }
            #pragma omp cancellation point taskgroup
            done[i] = 1;
          }
        }
      }
    }
    int total = 0;
    for (int i = 0; i < 100; i++) total += done[i];
    if (on) {
      CHECK(done[30] == 0, "the cancelling task went on after cancel");
      CHECK(total <= started, "done %d > started %d", total, started);
    } else {
      CHECK(total == 100, "no cancellation: %d of 100 done", total);
    }
  }

  PHASE("cancel taskgroup inside taskloop");
  for (int rep = 0; rep < 10; rep++) {
    int done[200];
    memset(done, 0, sizeof done);
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp taskloop grainsize(1) shared(done)
      for (int i = 0; i < 200; i++) {
        if (i == 10) {
          #pragma omp cancel taskgroup
        }
        #pragma omp cancellation point taskgroup
        done[i] = 1;
      }
    }
    int total = 0;
    for (int i = 0; i < 200; i++) total += done[i];
    if (on) CHECK(done[10] == 0, "taskloop iteration went on after cancel");
    else CHECK(total == 200, "no cancellation: %d of 200 done", total);
  }
  PHASE("cancel taskgroup in the tasks of a worksharing task reduction");
  for (int rep = 0; rep < 10; rep++) {
    int sum = 0, iterations = 0, later = 0, outside = 0;
    #pragma omp parallel shared(sum, iterations, later, outside)
    {
      #pragma omp taskgroup
      {
        #pragma omp for reduction(task, + : sum)
        for (int i = 0; i < 40; i++) {
          #pragma omp atomic
          iterations++;
          #pragma omp task in_reduction(+ : sum)
          {
            sum += 1;
            #pragma omp cancel taskgroup
          }
        }
        /* the loop's tasks cancelled the taskgroup around the loop: this task is discarded */
        #pragma omp task shared(later)
        {
          #pragma omp atomic
          later++;
        }
      }
      /* no taskgroup encloses this one */
      #pragma omp task shared(outside)
      {
        #pragma omp atomic
        outside++;
      }
    }
    int team = 0;
    #pragma omp parallel
    #pragma omp single
    team = omp_get_num_threads();
    CHECK(iterations == 40, "the loop ran %d of 40 iterations", iterations);
    CHECK(outside == team, "%d of %d tasks outside the cancelled taskgroups ran", outside, team);
    if (on) {
      CHECK(later == 0, "%d task(s) created in the cancelled taskgroup after the loop ran", later);
      CHECK(sum >= 1 && sum <= 40, "reduction of the tasks that ran: %d", sum);
    } else {
      CHECK(later == team && sum == 40, "no cancellation: later %d of %d, sum %d of 40", later, team, sum);
    }
  }
  PASS();
}
