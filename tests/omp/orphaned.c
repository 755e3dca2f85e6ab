/* Orphaned constructs: functions containing for / single / barrier / sections / critical /
 * master / task+taskwait / taskloop / taskgroup, called inside a parallel region (binding to the
 * team) and outside any region (binding to the implicit team of one). */
#include "omp_test.h"

#define N 1000
static int hits[N];

static void orphan_for(void) {
  #pragma omp for schedule(dynamic, 7)
  for (int i = 0; i < N; i++) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
}
static void orphan_for_static_reduction(long *sum) {
  #pragma omp for reduction(+ : sum[0])
  for (int i = 0; i < N; i++) sum[0] += i;
}
static int orphan_single(int *count) {
  int executed = 0;
  #pragma omp single
  {
    (*count)++;
    executed = 1;
  }
  return executed;
}
static void orphan_barrier(void) {
  #pragma omp barrier
}
static void orphan_sections(int *a, int *b) {
  #pragma omp sections
  {
    #pragma omp section
    (*a)++;
    #pragma omp section
    (*b)++;
  }
}
static void orphan_critical(int *c) {
  #pragma omp critical(orphan_lock)
  (*c)++;
}
static void orphan_master(int *m) {
  #pragma omp master
  (*m)++;
}
static void orphan_tasks(int *done) {
  for (int i = 0; i < 20; i++) {
    #pragma omp task shared(done)
    {
      #pragma omp atomic
      (*done)++;
    }
  }
  #pragma omp taskwait
}
static void orphan_taskloop(int *hitsv) {
  #pragma omp taskloop grainsize(10)
  for (int i = 0; i < N; i++) __atomic_fetch_add(&hitsv[i], 1, __ATOMIC_RELAXED);
}
static void orphan_taskgroup(int *done) {
  #pragma omp taskgroup
  {
    for (int i = 0; i < 10; i++) {
      #pragma omp task
      {
        #pragma omp task
        {
          #pragma omp atomic
          (*done)++;
        }
      }
    }
  }
}

static void check_hits(const char *what, int expect) {
  for (int i = 0; i < N; i++) {
    CHECK(hits[i] == expect, "%s: iteration %d ran %d times", what, i, hits[i]);
    hits[i] = 0;
  }
}

int main(void) {
  int T = omp_test_threads();

  PHASE("outside any region");
  orphan_for();
  check_hits("orphaned for outside", 1);
  long sum = 0;
  orphan_for_static_reduction(&sum);
  CHECK(sum == (long)N * (N - 1) / 2, "orphaned reduction outside: %ld", sum);
  int count = 0;
  CHECK(orphan_single(&count) == 1 && count == 1, "single outside");
  orphan_barrier();
  int a = 0, b = 0;
  orphan_sections(&a, &b);
  CHECK(a == 1 && b == 1, "sections outside %d %d", a, b);
  int c = 0, m = 0;
  orphan_critical(&c);
  orphan_master(&m);
  CHECK(c == 1 && m == 1, "critical/master outside %d %d", c, m);
  int done = 0;
  orphan_tasks(&done);
  CHECK(done == 20, "tasks outside: %d", done);
  orphan_taskloop(hits);
  check_hits("taskloop outside", 1);
  done = 0;
  orphan_taskgroup(&done);
  CHECK(done == 10, "taskgroup outside: %d", done);

  PHASE("inside a region");
  count = 0; a = 0; b = 0; c = 0; m = 0; done = 0; sum = 0;
  int singles = 0;
  int done2 = 0;
  #pragma omp parallel reduction(+ : singles)
  {
    orphan_for();
    orphan_for_static_reduction(&sum);
    singles += orphan_single(&count);
    orphan_barrier();
    orphan_sections(&a, &b);
    orphan_critical(&c);
    orphan_barrier();
    orphan_master(&m);
    orphan_tasks(&done);
    #pragma omp barrier
    #pragma omp single
    {
      orphan_taskloop(hits);
      orphan_taskgroup(&done2);
    }
  }
  for (int i = 0; i < N; i++) {
    CHECK(hits[i] == 2, "orphaned for + taskloop inside: iteration %d ran %d times", i, hits[i]);
    hits[i] = 0;
  }
  CHECK(sum == (long)N * (N - 1) / 2, "orphaned reduction inside: %ld", sum);
  CHECK(count == 1 && singles == 1, "single inside: count %d singles %d", count, singles);
  CHECK(a == 1 && b == 1, "sections inside %d %d", a, b);
  CHECK(c == T, "critical inside %d (T=%d)", c, T);
  CHECK(m == 1, "master inside %d", m);
  CHECK(done == 20 * T, "tasks inside: %d", done);
  CHECK(done2 == 10, "taskgroup inside: %d", done2);
  PASS();
}
