/* taskgroup waits for all descendants (children, grandchildren, deeper); taskwait only for
 * children (checked as: after taskwait every child is done); nested taskgroups; taskgroup inside
 * tasks and in every thread; taskwait depend(...) waits for exactly the named predecessors. */
#include "omp_test.h"

static int done_count;

static void spawn_tree(int depth, int fanout) {
  for (int i = 0; i < fanout; i++) {
    #pragma omp task firstprivate(depth, fanout)
    {
      omp_test_spin(100);
      if (depth > 1) spawn_tree(depth - 1, fanout);
      __atomic_add_fetch(&done_count, 1, __ATOMIC_ACQ_REL);
    }
  }
}

int main(void) {
  PHASE("taskgroup waits for descendants");
  #pragma omp parallel
  #pragma omp single
  {
    for (int rep = 0; rep < 10; rep++) {
      done_count = 0;
      #pragma omp taskgroup
      spawn_tree(4, 3); /* 3 + 9 + 27 + 81 = 120 tasks */
      CHECK(__atomic_load_n(&done_count, __ATOMIC_ACQUIRE) == 120, "taskgroup ended with %d of 120 descendants done", done_count);
    }
  }

  PHASE("taskwait waits for children");
  #pragma omp parallel
  #pragma omp single
  {
    int child_done[8] = {0};
    for (int i = 0; i < 8; i++) {
      #pragma omp task shared(child_done) firstprivate(i)
      {
        #pragma omp task
        omp_test_spin(1000); /* grandchild: not waited for by the outer taskwait */
        omp_test_spin(200);
        child_done[i] = 1;
      }
    }
    #pragma omp taskwait
    for (int i = 0; i < 8; i++) CHECK(child_done[i] == 1, "child %d not done after taskwait", i);
  }

  PHASE("nested taskgroups, taskgroups in every thread and inside tasks");
  {
    int outer_total = 0;
    #pragma omp parallel shared(outer_total)
    {
      int mine = 0;
      #pragma omp taskgroup
      {
        for (int i = 0; i < 5; i++) {
          #pragma omp task shared(mine)
          {
            int inner = 0;
            #pragma omp taskgroup
            {
              for (int j = 0; j < 4; j++) {
                #pragma omp task shared(inner)
                {
                  #pragma omp task shared(inner)
                  {
                    #pragma omp atomic
                    inner++;
                  }
                  #pragma omp atomic
                  inner++;
                }
              }
            }
            CHECK(inner == 8, "inner taskgroup ended with %d of 8", inner);
            #pragma omp atomic
            mine += inner;
          }
        }
      }
      CHECK(mine == 40, "thread's taskgroup ended with %d of 40", mine);
      #pragma omp atomic
      outer_total += mine;
    }
    CHECK(outer_total == 40 * omp_test_threads(), "total %d", outer_total);
  }

  PHASE("taskwait depend");
  #pragma omp parallel
  #pragma omp single
  {
    for (int rep = 0; rep < 20; rep++) {
      int a = 0, b = 0, c = 0;
      #pragma omp task depend(out : a) shared(a)
      {
        omp_test_spin(2000);
        a = 1;
      }
      #pragma omp task depend(out : b) shared(b)
      {
        omp_test_spin(1000);
        b = 2;
      }
      #pragma omp task depend(in : a) depend(out : c) shared(a, c)
      c = a + 10;
      #pragma omp taskwait depend(in : a)
      CHECK(a == 1, "taskwait depend(in: a) returned before the writer of a");
      #pragma omp taskwait depend(inout : c)
      CHECK(c == 11, "taskwait depend(inout: c) returned before the writer of c (c=%d)", c);
      #pragma omp taskwait depend(in : b) depend(in : a)
      CHECK(b == 2, "taskwait depend(in: b) returned early");
      #pragma omp taskwait
    }
  }
  PASS();
}
