/* Explicit tasks: firstprivate capture (explicit and default), shared updates with atomic,
 * taskwait, taskyield, if(0) undeferred tasks (run before the construct completes, also with a
 * depend clause that must wait for a sibling), final + omp_in_final (children included and
 * final), mergeable, untied, priority (with omp_get_max_task_priority), tasks created by every
 * thread, omp_get_thread_num inside tasks, tasks outside any parallel region. */
#include "omp_test.h"

#define NT 200
static int out[NT];

int main(void) {
  int T = omp_test_threads();

  PHASE("firstprivate capture");
  #pragma omp parallel
  #pragma omp single
  {
    int i;
    for (i = 0; i < NT; i++) {
      int sq = i * i;
      #pragma omp task firstprivate(i) /* sq is firstprivate by default */
      {
        omp_test_spin(i % 13 * 10);
        out[i] = sq + i;
      }
      sq = -1; /* must not affect the task's copy */
    }
    #pragma omp taskwait
    for (int k = 0; k < NT; k++) CHECK(out[k] == k * k + k, "task %d wrote %d", k, out[k]);
  }

  PHASE("shared counter from all threads' tasks");
  {
    int counter = 0;
    int bad_tid = 0;
    #pragma omp parallel
    {
      for (int i = 0; i < 50; i++) {
        #pragma omp task shared(counter, bad_tid)
        {
          int me = omp_get_thread_num();
          if (me < 0 || me >= omp_get_num_threads()) {
            #pragma omp atomic
            bad_tid++;
          }
          #pragma omp atomic
          counter++;
        }
      }
    }
    CHECK(counter == 50 * T, "counter %d after the region (barrier waits for tasks)", counter);
    CHECK(bad_tid == 0, "%d tasks saw a bad thread number", bad_tid);
  }

  PHASE("taskwait waits for children");
  #pragma omp parallel
  #pragma omp single
  {
    for (int r = 0; r < 20; r++) {
      int done = 0;
      for (int i = 0; i < 10; i++) {
        #pragma omp task shared(done)
        {
          omp_test_spin(300);
          #pragma omp atomic
          done++;
        }
      }
      #pragma omp taskwait
      CHECK(done == 10, "round %d: %d children done after taskwait", r, done);
    }
  }

  PHASE("taskyield");
  {
    int cnt = 0;
    #pragma omp parallel
    {
      #pragma omp single
      for (int i = 0; i < 50; i++) {
        #pragma omp task shared(cnt)
        {
          #pragma omp taskyield
          #pragma omp atomic
          cnt++;
          #pragma omp taskyield
        }
      }
    }
    CHECK(cnt == 50, "taskyield tasks %d", cnt);
  }

  PHASE("if(0) undeferred");
  #pragma omp parallel
  #pragma omp single
  {
    for (int i = 0; i < 30; i++) {
      int flag = 0;
      int zero = 0;
      #pragma omp task if(zero) shared(flag)
      flag = 1;
      CHECK(flag == 1, "undeferred task not complete after the construct");
    }
    /* undeferred with a dependence: must wait for the earlier sibling */
    for (int i = 0; i < 20; i++) {
      int x = 0;
      #pragma omp task depend(out : x) shared(x)
      {
        omp_test_spin(2000);
        x = 42;
      }
      #pragma omp task if(0) depend(in : x) shared(x)
      CHECK(x == 42, "undeferred dependent task ran before its predecessor (x=%d)", x);
      CHECK(x == 42, "undeferred task with depend did not complete inline");
    }
  }

  PHASE("final and omp_in_final");
  #pragma omp parallel
  #pragma omp single
  {
    CHECK(!omp_in_final(), "implicit task is final");
    int in_final = -1, child_final = -1, child_ran_inline = 0;
    #pragma omp task final(1) shared(in_final, child_final, child_ran_inline)
    {
      in_final = omp_in_final();
      int ran = 0;
      #pragma omp task shared(ran, child_final)
      {
        child_final = omp_in_final();
        ran = 1;
      }
      /* children of a final task are included: executed immediately */
      child_ran_inline = ran;
    }
    #pragma omp taskwait
    CHECK(in_final == 1, "omp_in_final in final(1) task: %d", in_final);
    CHECK(child_final == 1, "child of a final task is not final: %d", child_final);
    CHECK(child_ran_inline == 1, "child of a final task was not included (ran later)");
    int nf = -1;
    int zero = 0;
    #pragma omp task final(zero) shared(nf)
    nf = omp_in_final();
    #pragma omp taskwait
    CHECK(nf == 0, "omp_in_final in final(0) task: %d", nf);
  }

  PHASE("mergeable, untied, priority");
  {
    int maxp = omp_get_max_task_priority();
    CHECK(maxp >= 0, "max task priority %d", maxp);
    int m = 0, u = 0, p = 0;
    #pragma omp parallel
    #pragma omp single
    {
      for (int i = 0; i < 40; i++) {
        #pragma omp task mergeable shared(m)
        {
          #pragma omp atomic
          m++;
        }
        #pragma omp task untied shared(u)
        {
          #pragma omp taskyield
          #pragma omp atomic
          u++;
        }
        #pragma omp task priority(i % 5) shared(p)
        {
          #pragma omp atomic
          p++;
        }
        #pragma omp task priority(maxp) shared(p)
        {
          #pragma omp atomic
          p++;
        }
      }
      #pragma omp taskwait
      CHECK(m == 40 && u == 40 && p == 80, "mergeable %d untied %d priority %d", m, u, p);
    }
    int prio_mf = 0;
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp task mergeable final(1) shared(prio_mf)
      {
        #pragma omp task mergeable shared(prio_mf)
        prio_mf = omp_in_final() ? 2 : 1;
      }
    }
    CHECK(prio_mf == 2, "mergeable child of final task: %d", prio_mf);
  }

  PHASE("tasks outside any parallel region");
  {
    int k = 0;
    for (int i = 0; i < 10; i++) {
      #pragma omp task shared(k)
      k++;
    }
    #pragma omp taskwait
    CHECK(k == 10, "orphan tasks %d", k);
  }

  PHASE("many small tasks from every thread");
  {
    long total = 0;
    #pragma omp parallel
    {
      for (int i = 0; i < 500; i++) {
        #pragma omp task shared(total) firstprivate(i)
        {
          #pragma omp atomic
          total += i;
        }
        if (i % 100 == 0) {
          #pragma omp taskwait
        }
      }
      #pragma omp taskwait
    }
    CHECK(total == (long)T * 499 * 500 / 2, "total %ld", total);
  }
  PASS();
}
