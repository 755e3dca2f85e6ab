/* parallel: default team size, num_threads, if(0), dense thread numbers, the encountering thread
 * is thread 0, omp_in_parallel, proc_bind clauses, many fork/joins, firstprivate/shared. */
#include "omp_test.h"

#define MAXT 64
static __thread int tls_marker;

static void check_team(int expect, const char *what) {
  int seen[MAXT] = {0};
  int nthreads[MAXT] = {0};
  int in_par[MAXT] = {0};
  int *main_marker = &tls_marker;
  int primary_is_encountering = 0;
  #pragma omp parallel num_threads(expect)
  {
    int id = omp_get_thread_num();
    int n = omp_get_num_threads();
    CHECK(id >= 0 && id < n && n <= MAXT, "%s: id %d of %d", what, id, n);
    #pragma omp atomic
    seen[id]++;
    nthreads[id] = n;
    in_par[id] = omp_in_parallel();
    if (id == 0) primary_is_encountering = (&tls_marker == main_marker);
  }
  for (int i = 0; i < expect; i++) {
    CHECK(seen[i] == 1, "%s: thread %d ran the region %d times (team of %d)", what, i, seen[i], expect);
    CHECK(nthreads[i] == expect, "%s: thread %d saw team size %d, expected %d", what, i, nthreads[i], expect);
    CHECK(in_par[i] == (expect > 1), "%s: omp_in_parallel()=%d in a team of %d", what, in_par[i], expect);
  }
  for (int i = expect; i < MAXT; i++) CHECK(seen[i] == 0, "%s: thread number %d >= team size %d", what, i, expect);
  CHECK(primary_is_encountering, "%s: thread 0 of the team is not the encountering thread", what);
}

int main(void) {
  int T = omp_test_threads();
  CHECK(T >= 1 && T <= MAXT, "max threads %d", T);

  PHASE("sequential part");
  CHECK(!omp_in_parallel(), "omp_in_parallel outside");
  CHECK(omp_get_num_threads() == 1, "num_threads outside = %d", omp_get_num_threads());
  CHECK(omp_get_thread_num() == 0, "thread_num outside");
  CHECK(omp_get_level() == 0 && omp_get_active_level() == 0, "levels outside");

  PHASE("default team");
  {
    int seen[MAXT] = {0};
    int size = -1;
    #pragma omp parallel
    {
      #pragma omp atomic
      seen[omp_get_thread_num()]++;
      if (omp_get_thread_num() == 0) size = omp_get_num_threads();
      CHECK(omp_get_level() == 1, "level in region");
      CHECK(omp_get_active_level() == (omp_get_num_threads() > 1), "active level in region");
    }
    CHECK(size == T, "default team size %d, OMP_NUM_THREADS gives %d", size, T);
    for (int i = 0; i < T; i++) CHECK(seen[i] == 1, "thread %d ran %d times", i, seen[i]);
  }

  PHASE("num_threads");
  for (int n = 1; n <= 8; n++) check_team(n, "num_threads(n)");
  check_team(T, "num_threads(T)");

  PHASE("if(0)");
  {
    int runs = 0, size = -1, lvl = -1, alvl = -1, inpar = -1;
    int zero = 0;
    #pragma omp parallel if(zero) num_threads(4)
    {
      #pragma omp atomic
      runs++;
      size = omp_get_num_threads();
      lvl = omp_get_level();
      alvl = omp_get_active_level();
      inpar = omp_in_parallel();
    }
    CHECK(runs == 1 && size == 1, "if(0): %d runs, team of %d", runs, size);
    CHECK(lvl == 1 && alvl == 0 && inpar == 0, "if(0): level %d active %d in_parallel %d", lvl, alvl, inpar);
    int one = 1, cnt = 0;
    #pragma omp parallel if(one) num_threads(3)
    {
      #pragma omp atomic
      cnt++;
    }
    CHECK(cnt == 3, "if(1) num_threads(3): %d threads", cnt);
  }

  PHASE("proc_bind clauses");
  {
    int c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0;
    #pragma omp parallel proc_bind(close)
    {
      #pragma omp atomic
      c1++;
    }
    #pragma omp parallel proc_bind(spread)
    {
      #pragma omp atomic
      c2++;
    }
    #pragma omp parallel proc_bind(master)
    {
      #pragma omp atomic
      c3++;
    }
    #pragma omp parallel proc_bind(primary) num_threads(2)
    {
      #pragma omp atomic
      c4++;
    }
    #pragma omp parallel proc_bind(close) num_threads(3) if(T > 1)
    {
      #pragma omp atomic
      c5++;
    }
    CHECK(c1 == T && c2 == T && c3 == T && c4 == 2, "proc_bind team sizes %d %d %d %d (T=%d)", c1, c2, c3, c4, T);
    CHECK(c5 == (T > 1 ? 3 : 1), "proc_bind + if: %d", c5);
  }

  PHASE("many fork/joins");
  {
    long total = 0;
    for (int r = 0; r < 300; r++) {
      int n = 1 + r % 4;
      #pragma omp parallel num_threads(n) reduction(+ : total)
      total += omp_get_thread_num() + 1;
    }
    long expect = 0;
    for (int r = 0; r < 300; r++) {
      int n = 1 + r % 4;
      expect += (long)n * (n + 1) / 2;
    }
    CHECK(total == expect, "fork/join sum %ld, expected %ld", total, expect);
  }

  PHASE("data sharing");
  {
    int shared_arr[MAXT] = {0};
    int fp = 42, priv = 7;
    #pragma omp parallel firstprivate(fp) private(priv) shared(shared_arr)
    {
      CHECK(fp == 42, "firstprivate value %d", fp);
      priv = omp_get_thread_num();
      fp += priv;
      shared_arr[priv] = fp;
    }
    CHECK(fp == 42 && priv == 7, "originals changed: fp %d priv %d", fp, priv);
    for (int i = 0; i < T; i++) CHECK(shared_arr[i] == 42 + i, "shared slot %d = %d", i, shared_arr[i]);
  }

  PHASE("after regions");
  CHECK(!omp_in_parallel() && omp_get_level() == 0 && omp_get_thread_num() == 0, "state after regions");
  PASS();
}
