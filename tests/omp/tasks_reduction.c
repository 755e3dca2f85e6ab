/* Task reductions: taskgroup task_reduction + task in_reduction (+, *, max, on int/long/double,
 * several items, nested taskgroups with different items, in_reduction from grandchild tasks),
 * parallel reduction(task, +: x) with in_reduction tasks created by all threads,
 * for reduction(task, ...) and sections reduction(task, ...) (GOMP_loop_start / sections2_start
 * with a reduction descriptor), scope reduction(task, ...), an orphaned taskgroup reduction
 * outside any parallel region. */
#include "omp_test.h"

int main(void) {
  int T = omp_test_threads();

  PHASE("taskgroup task_reduction / in_reduction");
  for (int rep = 0; rep < 5; rep++) {
    long s = 0;
    double d = 0.0;
    int mx = -1;
    long prod = 1;
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp taskgroup task_reduction(+ : s, d) task_reduction(max : mx) task_reduction(* : prod)
      {
        for (int i = 0; i < 100; i++) {
          #pragma omp task in_reduction(+ : s, d) in_reduction(max : mx) firstprivate(i)
          {
            s += i;
            d += 0.5;
            if ((i * 37) % 101 > mx) mx = (i * 37) % 101;
          }
          if (i % 10 == 0) {
            #pragma omp task in_reduction(* : prod) in_reduction(+ : s)
            {
              prod *= 2;
              #pragma omp task in_reduction(+ : s)
              s += 1000; /* grandchild */
            }
          }
        }
      }
      CHECK(s == 4950 + 10 * 1000, "task reduction sum %ld", s);
      CHECK(d == 50.0, "task reduction double %f", d);
      CHECK(mx == 100, "task reduction max %d", mx);
      CHECK(prod == 1024, "task reduction product %ld", prod);
    }
  }

  PHASE("nested taskgroups with different items");
  {
    int a = 0, btotal = 0;
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp taskgroup task_reduction(+ : a)
      {
        for (int i = 0; i < 10; i++) {
          #pragma omp task in_reduction(+ : a) shared(btotal)
          {
            a += 1;
            int b = 0; /* one inner reduction item per task: concurrent taskgroups must not share it */
            #pragma omp taskgroup task_reduction(+ : b)
            {
              for (int j = 0; j < 5; j++) {
                #pragma omp task in_reduction(+ : b) in_reduction(+ : a)
                {
                  b += 2;
                  a += 3;
                }
              }
            }
            CHECK(b == 10, "inner item %d after its taskgroup", b);
            #pragma omp atomic
            btotal += b;
          }
        }
      }
    }
    CHECK(a == 10 + 150, "outer item %d", a);
    CHECK(btotal == 100, "inner items total %d", btotal);
  }

  PHASE("parallel reduction(task, +) with in_reduction tasks from all threads");
  for (int rep = 0; rep < 5; rep++) {
    long x = 5;
    #pragma omp parallel reduction(task, + : x)
    {
      x += 1; /* each implicit task's own contribution */
      for (int i = 0; i < 20; i++) {
        #pragma omp task in_reduction(+ : x) firstprivate(i)
        x += i;
      }
    }
    CHECK(x == 5 + T + T * 190, "parallel task reduction %ld, expected %d", x, 5 + T + T * 190);
  }

  PHASE("for reduction(task, +)");
  {
    long x = 0;
    #pragma omp parallel
    {
      #pragma omp for reduction(task, + : x) schedule(dynamic, 4)
      for (int i = 0; i < 200; i++) {
        x += 1;
        #pragma omp task in_reduction(+ : x) firstprivate(i)
        x += i;
      }
    }
    CHECK(x == 200 + 199 * 200 / 2, "for task reduction %ld", x);
  }

  PHASE("sections reduction(task, +)");
  {
    int x = 0;
    #pragma omp parallel
    {
      #pragma omp sections reduction(task, + : x)
      {
        #pragma omp section
        {
          #pragma omp task in_reduction(+ : x)
          x += 1;
        }
        #pragma omp section
        {
          #pragma omp task in_reduction(+ : x)
          x += 10;
          x += 100;
        }
      }
    }
    CHECK(x == 111, "sections task reduction %d", x);
  }

  PHASE("scope reduction(task, +)");
  {
    int x = 0;
    #pragma omp parallel
    {
      #pragma omp scope reduction(task, + : x)
      {
        #pragma omp task in_reduction(+ : x)
        x += 2;
      }
    }
    CHECK(x == 2 * T, "scope task reduction %d", x);
  }

  PHASE("orphaned taskgroup reduction outside any region");
  {
    int x = 0;
    #pragma omp taskgroup task_reduction(+ : x)
    {
      for (int i = 0; i < 10; i++) {
        #pragma omp task in_reduction(+ : x) firstprivate(i)
        x += i;
      }
    }
    CHECK(x == 45, "orphaned task reduction %d", x);
  }
  PASS();
}
