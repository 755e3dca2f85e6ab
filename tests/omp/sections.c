/* sections: each section exactly once, more sections than threads, lastprivate (value of the
 * lexically last section), reduction, firstprivate/private, nowait + barrier, parallel sections
 * (combined form, GOMP_parallel_sections), sections in a loop (work share reuse). */
#include "omp_test.h"

static int runs[6];
static int who[6];

int main(void) {
  int T = omp_test_threads();

  PHASE("sections in a region, repeated");
  for (int rep = 0; rep < 50; rep++) {
    memset(runs, 0, sizeof runs);
    int lp = -1, fp = 10;
    long red = 0;
    #pragma omp parallel
    {
      #pragma omp sections lastprivate(lp) reduction(+ : red) firstprivate(fp)
      {
        #pragma omp section
        { runs[0]++; lp = 100; red += 1; who[0] = omp_get_thread_num(); CHECK(fp == 10, "fp %d", fp); }
        #pragma omp section
        { runs[1]++; lp = 101; red += 10; omp_test_spin(200); }
        #pragma omp section
        { runs[2]++; lp = 102; red += 100; }
        #pragma omp section
        { runs[3]++; lp = 103; red += 1000; omp_test_spin(100); }
        #pragma omp section
        { runs[4]++; lp = 104; red += 10000; }
        #pragma omp section
        { runs[5]++; lp = 105; red += 100000; }
      }
    }
    for (int s = 0; s < 6; s++) CHECK(runs[s] == 1, "rep %d: section %d ran %d times", rep, s, runs[s]);
    CHECK(lp == 105, "lastprivate from the last section: %d", lp);
    CHECK(red == 111111, "sections reduction %ld", red);
    CHECK(who[0] >= 0 && who[0] < T, "section ran on thread %d", who[0]);
  }

  PHASE("sections nowait, then barrier");
  {
    int a = 0, b = 0, c = 0;
    #pragma omp parallel
    {
      #pragma omp sections nowait
      {
        #pragma omp section
        a = 1;
        #pragma omp section
        b = 2;
      }
      #pragma omp sections nowait
      {
        #pragma omp section
        c = 3;
      }
      #pragma omp barrier
      CHECK(a == 1 && b == 2 && c == 3, "after barrier %d %d %d", a, b, c);
    }
  }

  PHASE("parallel sections");
  for (int rep = 0; rep < 50; rep++) {
    int x = 0, y = 0, z = 0, lp = 0;
    #pragma omp parallel sections lastprivate(lp)
    {
      #pragma omp section
      { x = 1; lp = 1; }
      #pragma omp section
      { y = 2; lp = 2; }
      #pragma omp section
      { z = 3; lp = 3; }
    }
    CHECK(x == 1 && y == 2 && z == 3 && lp == 3, "parallel sections %d %d %d lp %d", x, y, z, lp);
  }

  PHASE("parallel sections num_threads(2) reduction");
  {
    int s = 0;
    #pragma omp parallel sections num_threads(2) reduction(+ : s)
    {
      #pragma omp section
      s += 5;
      #pragma omp section
      s += 7;
      #pragma omp section
      s += 11;
      #pragma omp section
      s += 13;
    }
    CHECK(s == 36, "reduction %d", s);
  }

  PHASE("single section");
  {
    int only = 0;
    #pragma omp parallel
    {
      #pragma omp sections
      {
        #pragma omp section
        {
          #pragma omp atomic
          only++;
        }
      }
    }
    CHECK(only == 1, "single section ran %d times", only);
  }
  PASS();
}
