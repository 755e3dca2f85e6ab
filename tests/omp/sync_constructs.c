/* barrier, single (+ nowait), single copyprivate, master, masked (filter), critical (unnamed,
 * two names, hint), flush with atomic flag hand-off, ordering around barriers. */
#include "omp_test.h"
#include <sched.h>

#define MAXT 64

static int crit_plain, crit_a, crit_b;
static int inside_plain, inside_a, inside_b;

int main(void) {
  int T = omp_test_threads();

  PHASE("barrier");
  {
    int arrived[20] = {0};
    int bad = 0;
    #pragma omp parallel reduction(+ : bad)
    {
      int n = omp_get_num_threads();
      for (int r = 0; r < 20; r++) {
        #pragma omp atomic
        arrived[r]++;
        #pragma omp barrier
        int v;
        #pragma omp atomic read
        v = arrived[r];
        if (v != n) bad++;
        #pragma omp barrier
      }
    }
    CHECK(bad == 0, "%d threads saw an incomplete barrier phase", bad);
  }

  PHASE("single");
  {
    int runs[50] = {0};
    int value = 0;
    int bad = 0;
    #pragma omp parallel reduction(+ : bad)
    {
      for (int r = 0; r < 50; r++) {
        #pragma omp single
        {
          runs[r]++;
          value = r;
        }
        /* implicit barrier: everyone sees the single's write */
        if (value != r) bad++;
        #pragma omp barrier
      }
    }
    CHECK(bad == 0, "%d reads after single were stale", bad);
    for (int r = 0; r < 50; r++) CHECK(runs[r] == 1, "single %d ran %d times", r, runs[r]);
  }

  PHASE("single nowait");
  {
    int runs[50] = {0};
    #pragma omp parallel
    {
      for (int r = 0; r < 50; r++) {
        #pragma omp single nowait
        {
          #pragma omp atomic
          runs[r]++;
        }
      }
    }
    for (int r = 0; r < 50; r++) CHECK(runs[r] == 1, "single nowait %d ran %d times", r, runs[r]);
  }

  PHASE("copyprivate");
  {
    int bad = 0;
    #pragma omp parallel reduction(+ : bad)
    {
      for (int r = 0; r < 20; r++) {
        int x;
        double d;
        struct { int a[5]; char c; } s;
        #pragma omp single copyprivate(x, d, s)
        {
          x = 1000 * r + omp_get_thread_num();
          d = r * 0.5;
          for (int k = 0; k < 5; k++) s.a[k] = r + k;
          s.c = (char)('a' + r);
        }
        if (x / 1000 != r || x % 1000 >= omp_get_num_threads() || d != r * 0.5 || s.a[4] != r + 4 || s.c != (char)('a' + r))
          bad++;
      }
    }
    CHECK(bad == 0, "%d copyprivate receptions were wrong", bad);
  }

  PHASE("master / masked");
  {
    int master_runs = 0, masked_runs = 0, filter1_runs = 0, filter_big = 0;
    int master_tid = -1, filter1_tid = -1;
    #pragma omp parallel
    {
      #pragma omp master
      {
        master_runs++;
        master_tid = omp_get_thread_num();
      }
      #pragma omp masked
      {
        #pragma omp atomic
        masked_runs++;
      }
      #pragma omp masked filter(1)
      {
        #pragma omp atomic
        filter1_runs++;
        filter1_tid = omp_get_thread_num();
      }
      #pragma omp masked filter(MAXT + 5)
      {
        #pragma omp atomic
        filter_big++;
      }
    }
    CHECK(master_runs == 1 && master_tid == 0, "master ran %d times on %d", master_runs, master_tid);
    CHECK(masked_runs == 1, "masked ran %d times", masked_runs);
    CHECK(filter1_runs == (T > 1 ? 1 : 0), "masked filter(1) ran %d times, team %d", filter1_runs, T);
    if (T > 1) CHECK(filter1_tid == 1, "masked filter(1) on thread %d", filter1_tid);
    CHECK(filter_big == 0, "masked filter(out of range) ran %d times", filter_big);
  }

  PHASE("critical");
  {
    int violations = 0;
    #pragma omp parallel reduction(+ : violations)
    {
      for (int i = 0; i < 300; i++) {
        #pragma omp critical
        {
          if (inside_plain++ != 0) violations++;
          int v = crit_plain;
          omp_test_spin(i % 7);
          crit_plain = v + 1;
          inside_plain--;
        }
        #pragma omp critical(name_a)
        {
          if (inside_a++ != 0) violations++;
          int v = crit_a;
          crit_a = v + 2;
          inside_a--;
        }
        #pragma omp critical(name_b) hint(omp_sync_hint_contended)
        {
          if (inside_b++ != 0) violations++;
          int v = crit_b;
          crit_b = v + 3;
          inside_b--;
        }
      }
    }
    CHECK(violations == 0, "%d mutual-exclusion violations", violations);
    CHECK(crit_plain == 300 * T && crit_a == 600 * T && crit_b == 900 * T, "critical counters %d %d %d (T=%d)",
          crit_plain, crit_a, crit_b, T);
  }

  PHASE("nested critical with different names");
  {
    int total = 0;
    #pragma omp parallel
    {
      for (int i = 0; i < 50; i++) {
        #pragma omp critical(outer_name)
        {
          #pragma omp critical(inner_name)
          total++;
        }
      }
    }
    CHECK(total == 50 * T, "nested named critical total %d", total);
  }

  PHASE("flush hand-off");
  {
    int data[16];
    int flag = 0;
    int bad = 0;
    #pragma omp parallel num_threads(2) reduction(+ : bad)
    {
      if (omp_get_num_threads() == 2) {
        if (omp_get_thread_num() == 0) {
          for (int i = 0; i < 16; i++) data[i] = i * i;
          #pragma omp flush
          #pragma omp atomic write seq_cst
          flag = 1;
        } else {
          int f = 0;
          while (!f) {
            #pragma omp atomic read seq_cst
            f = flag;
            if (!f) sched_yield();
          }
          #pragma omp flush
          for (int i = 0; i < 16; i++)
            if (data[i] != i * i) bad++;
        }
      }
    }
    CHECK(bad == 0, "flush hand-off: %d stale values", bad);
  }

  PHASE("flush(list) and release/acquire forms compile and run");
  {
    int x = 0;
    #pragma omp parallel
    {
      #pragma omp flush(x)
#if !defined(__SANITIZE_THREAD__) /* gcc -fsanitize=thread warns: atomic_thread_fence unsupported */
      #pragma omp flush release
      #pragma omp flush acquire
      #pragma omp flush acq_rel
#endif
    }
    CHECK(x == 0, "x changed");
  }
  PASS();
}
