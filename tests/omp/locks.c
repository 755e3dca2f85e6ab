/* omp_lock_t and omp_nest_lock_t: init/set/unset/test/destroy, mutual exclusion of a
 * non-atomic counter, omp_test_lock fails while another thread holds the lock, nest counts
 * returned by omp_test_nest_lock, a nest lock held by one thread is not acquirable by another,
 * many locks (an array), repeated init/destroy, locks used outside parallel regions, and that the
 * runtime writes nothing outside the user's lock objects (canaries; omp_lock_t is 4 bytes and
 * omp_nest_lock_t 16 bytes in gcc's omp.h). */
#include "omp_test.h"

#define NLOCKS 8

struct guarded_lock { unsigned char before[16]; omp_lock_t l; unsigned char after[16]; };
struct guarded_nest { unsigned char before[16]; omp_nest_lock_t l; unsigned char after[16]; };

static void fill(unsigned char *p, size_t n) { memset(p, 0xA5, n); }
static int intact(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++) if (p[i] != 0xA5) return 0;
  return 1;
}

int main(void) {
  int T = omp_test_threads();
  CHECK(sizeof(omp_lock_t) == 4 && sizeof(omp_nest_lock_t) == 16, "unexpected lock sizes %zu %zu", sizeof(omp_lock_t), sizeof(omp_nest_lock_t));

  PHASE("simple lock outside parallel");
  static struct guarded_lock g;
  fill(g.before, 16); fill(g.after, 16);
  omp_init_lock(&g.l);
  CHECK(omp_test_lock(&g.l) == 1, "test_lock on a free lock");
  omp_unset_lock(&g.l);
  omp_set_lock(&g.l);
  omp_unset_lock(&g.l);

  PHASE("simple lock mutual exclusion");
  {
    long counter = 0;
    int inside = 0, violations = 0;
    #pragma omp parallel reduction(+ : violations)
    {
      for (int i = 0; i < 500; i++) {
        omp_set_lock(&g.l);
        if (inside++ != 0) violations++;
        long c = counter;
        if (i % 16 == 0) omp_test_spin(20);
        counter = c + 1;
        inside--;
        omp_unset_lock(&g.l);
      }
    }
    CHECK(violations == 0 && counter == 500L * T, "lock: %d violations, counter %ld", violations, counter);
  }

  PHASE("test_lock fails while held by another thread");
  if (T >= 2) {
    int got = -1;
    #pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0) omp_set_lock(&g.l);
      #pragma omp barrier
      if (omp_get_thread_num() == 1) got = omp_test_lock(&g.l);
      #pragma omp barrier
      if (omp_get_thread_num() == 0) omp_unset_lock(&g.l);
      #pragma omp barrier
      if (omp_get_thread_num() == 1) {
        CHECK(omp_test_lock(&g.l) == 1, "test_lock after release failed");
        omp_unset_lock(&g.l);
      }
    }
    CHECK(got == 0, "omp_test_lock succeeded on a lock held by another thread (%d)", got);
  }

  PHASE("spin acquisition with test_lock");
  {
    int total = 0;
    #pragma omp parallel
    {
      for (int i = 0; i < 100; i++) {
        while (!omp_test_lock(&g.l)) { }
        total++;
        omp_unset_lock(&g.l);
      }
    }
    CHECK(total == 100 * T, "test_lock loop total %d", total);
  }
  omp_destroy_lock(&g.l);
  CHECK(intact(g.before, 16) && intact(g.after, 16), "runtime wrote outside omp_lock_t");

  PHASE("lock array and repeated init/destroy");
  {
    omp_lock_t locks[NLOCKS];
    long counts[NLOCKS] = {0};
    for (int k = 0; k < NLOCKS; k++) omp_init_lock(&locks[k]);
    #pragma omp parallel
    {
      for (int i = 0; i < 400; i++) {
        int k = (i * 7 + omp_get_thread_num()) % NLOCKS;
        omp_set_lock(&locks[k]);
        counts[k]++;
        omp_unset_lock(&locks[k]);
      }
    }
    long sum = 0;
    for (int k = 0; k < NLOCKS; k++) {
      sum += counts[k];
      omp_destroy_lock(&locks[k]);
    }
    CHECK(sum == 400L * T, "lock array sum %ld", sum);
    for (int r = 0; r < 1000; r++) {
      omp_lock_t l;
      omp_init_lock(&l);
      omp_set_lock(&l);
      omp_unset_lock(&l);
      omp_destroy_lock(&l);
    }
  }

  PHASE("nest lock counts");
  static struct guarded_nest n;
  fill(n.before, 16); fill(n.after, 16);
  omp_init_nest_lock(&n.l);
  CHECK(omp_test_nest_lock(&n.l) == 1, "first test_nest_lock");
  omp_set_nest_lock(&n.l);
  omp_set_nest_lock(&n.l);
  CHECK(omp_test_nest_lock(&n.l) == 4, "nest count after 4 acquisitions");
  for (int i = 0; i < 4; i++) omp_unset_nest_lock(&n.l);
  CHECK(omp_test_nest_lock(&n.l) == 1, "nest lock not free after 4 releases");
  omp_unset_nest_lock(&n.l);

  PHASE("nest lock exclusion between threads");
  {
    long counter = 0;
    int inside = 0, violations = 0;
    #pragma omp parallel reduction(+ : violations)
    {
      for (int i = 0; i < 300; i++) {
        omp_set_nest_lock(&n.l);
        omp_set_nest_lock(&n.l);
        if (inside++ != 0) violations++;
        counter++;
        inside--;
        omp_unset_nest_lock(&n.l);
        omp_unset_nest_lock(&n.l);
      }
    }
    CHECK(violations == 0 && counter == 300L * T, "nest lock: %d violations, counter %ld", violations, counter);
  }
  if (T >= 2) {
    int got = -1;
    #pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0) {
        omp_set_nest_lock(&n.l);
        omp_set_nest_lock(&n.l);
      }
      #pragma omp barrier
      if (omp_get_thread_num() == 1) got = omp_test_nest_lock(&n.l);
      #pragma omp barrier
      if (omp_get_thread_num() == 0) {
        omp_unset_nest_lock(&n.l);
        omp_unset_nest_lock(&n.l);
      }
    }
    CHECK(got == 0, "omp_test_nest_lock acquired a nest lock held by another thread (%d)", got);
  }
  omp_destroy_nest_lock(&n.l);
  CHECK(intact(n.before, 16) && intact(n.after, 16), "runtime wrote outside omp_nest_lock_t");
  PASS();
}
