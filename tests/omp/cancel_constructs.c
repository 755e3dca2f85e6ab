/* cancel parallel / for / sections and cancellation point. Cancellation only takes effect when
 * OMP_CANCELLATION=true (cancel-var); the harness runs this program both with it set to true and
 * set to false. Either way the results must be consistent: with cancellation on, code after an
 * activated cancel (and after later cancellation points/barriers) does not run; with it off,
 * everything runs to completion. */
#include "omp_test.h"
#include <sched.h>

#define N 400

int main(void) {
  int T = omp_test_threads();
  int on = omp_get_cancellation();
  if (omp_test_env_is("OMP_CANCELLATION", "true")) CHECK(on == 1, "OMP_CANCELLATION=true but omp_get_cancellation()=%d", on);
  if (omp_test_env_is("OMP_CANCELLATION", "false") || !getenv("OMP_CANCELLATION"))
    CHECK(on == 0, "cancellation disabled but omp_get_cancellation()=%d", on);
  printf("cancellation %s\n", on ? "enabled" : "disabled");

  PHASE("cancel parallel");
  for (int rep = 0; rep < 20; rep++) {
    int after_cancel = 0, after_barrier = 0, flag = 0;
    #pragma omp parallel shared(after_cancel, after_barrier, flag)
    {
      if (omp_get_thread_num() == 0) {
        __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
        #pragma omp cancel parallel
        after_cancel = 1;
      } else {
        while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE)) {
          #pragma omp cancellation point parallel
          sched_yield();
        }
      }
      #pragma omp barrier
      #pragma omp atomic
      after_barrier++;
    }
    if (on) {
      CHECK(after_cancel == 0, "code after an activated cancel parallel ran");
      CHECK(after_barrier == 0, "%d threads passed the barrier of a cancelled region", after_barrier);
    } else {
      CHECK(after_cancel == 1 && after_barrier == T, "without cancellation: after_cancel %d after_barrier %d", after_cancel, after_barrier);
    }
  }

  /* Worksharing constructs in a region that contains cancel parallel end with the cancellable
     entry points (GOMP_loop_end_cancel, GOMP_sections_end_cancel, GOMP_barrier_cancel). */
  PHASE("cancel parallel after worksharing constructs");
  for (int rep = 0; rep < 10; rep++) {
    static int done1[N], done2[N];
    memset(done1, 0, sizeof done1);
    memset(done2, 0, sizeof done2);
    int a = 0, b = 0, after = 0;
    #pragma omp parallel shared(a, b, after)
    {
      #pragma omp for schedule(dynamic, 8)
      for (int i = 0; i < N; i++) done1[i] = 1;
      #pragma omp sections
      {
        #pragma omp section
        a = 1;
        #pragma omp section
        b = 1;
      }
      if (omp_get_thread_num() == 0) {
        #pragma omp cancel parallel
      }
      #pragma omp for schedule(dynamic, 8)
      for (int i = 0; i < N; i++) done2[i] = 1;
      #pragma omp atomic
      after++;
    }
    for (int i = 0; i < N; i++) CHECK(done1[i] == 1, "first loop iteration %d not done", i);
    CHECK(a == 1 && b == 1, "sections before the cancel: %d %d", a, b);
    if (on) {
      CHECK(after == 0, "%d threads passed a loop end barrier of a cancelled region", after);
    } else {
      CHECK(after == T, "after %d", after);
      for (int i = 0; i < N; i++) CHECK(done2[i] == 1, "second loop iteration %d not done", i);
    }
  }

  PHASE("cancel parallel if(false) is a cancellation point only");
  {
    int ran = 0;
    int zero = 0;
    #pragma omp parallel reduction(+ : ran)
    {
      #pragma omp cancel parallel if(zero)
      ran = 1;
    }
    CHECK(ran == T, "cancel if(false) cancelled: %d of %d ran", ran, T);
  }

  PHASE("cancel for (static)");
  for (int rep = 0; rep < 10; rep++) {
    static int done[N];
    memset(done, 0, sizeof done);
    int post = 0;
    const int K = 123;
    #pragma omp parallel shared(post)
    {
      #pragma omp for schedule(static)
      for (int i = 0; i < N; i++) {
        if (i == K) {
          #pragma omp cancel for
        }
        #pragma omp cancellation point for
        done[i] = 1;
      }
      #pragma omp atomic
      post++;
    }
    CHECK(post == T, "code after the cancelled loop ran on %d of %d threads", post, T);
    if (on) {
      CHECK(done[K] == 0, "iteration after the cancel ran");
      if (T == 1)
        for (int i = 0; i < N; i++) CHECK(done[i] == (i < K), "one thread: iteration %d done=%d", i, done[i]);
    } else {
      for (int i = 0; i < N; i++) CHECK(done[i] == 1, "no cancellation: iteration %d not done", i);
    }
  }

  PHASE("cancel for if() (dynamic)");
  for (int rep = 0; rep < 10; rep++) {
    static int done[N];
    memset(done, 0, sizeof done);
    const int K = 57;
    #pragma omp parallel
    {
      #pragma omp for schedule(dynamic, 4)
      for (int i = 0; i < N; i++) {
        #pragma omp cancel for if(i == K)
        done[i] = 1;
      }
    }
    if (on) {
      CHECK(done[K] == 0, "iteration %d ran after its cancel", K);
      if (T == 1)
        for (int i = 0; i < N; i++) CHECK(done[i] == (i < K), "one thread: iteration %d done=%d", i, done[i]);
    } else {
      for (int i = 0; i < N; i++) CHECK(done[i] == 1, "no cancellation: iteration %d not done", i);
    }
  }

  PHASE("cancel sections");
  for (int rep = 0; rep < 10; rep++) {
    int s1 = 0, s1_after = 0, s2 = 0, s3 = 0, post = 0;
    #pragma omp parallel shared(s1, s1_after, s2, s3, post)
    {
      #pragma omp sections
      {
        #pragma omp section
        {
          s1 = 1;
          #pragma omp cancel sections
          s1_after = 1;
        }
        #pragma omp section
        {
          #pragma omp cancellation point sections
          s2 = 1;
        }
        #pragma omp section
        {
          #pragma omp cancellation point sections
          s3 = 1;
        }
      }
      #pragma omp atomic
      post++;
    }
    CHECK(s1 == 1 && post == T, "s1 %d post %d", s1, post);
    if (on) {
      CHECK(s1_after == 0, "code after cancel sections ran");
      if (T == 1) CHECK(s2 == 0 && s3 == 0, "one thread: sections after the cancelled one ran (%d %d)", s2, s3);
    } else {
      CHECK(s1_after == 1 && s2 == 1 && s3 == 1, "no cancellation: %d %d %d", s1_after, s2, s3);
    }
  }
  PASS();
}
