/* Task suspension, the cases only a runtime that really suspends tasks can finish (registered for
 * the weft flavours only: libgomp's taskyield never switches away from a running task and its
 * taskwait runs children on the waiting task's stack, so it hangs or overflows its stack here).
 * Every case must finish with any team size, 1 included (most have more waiting tasks than threads):
 * - 64 tasks that spin with taskyield until a flag that a LATER-created task sets: one flag set by
 *   the last task; "all arrived" (each waits until every task has started); a reverse chain (task
 *   i waits for task i+1, so they finish in reverse creation order).
 * - a task's child that spins with taskyield on a flag a later sibling of the parent sets, while
 *   the parent waits for the child in taskwait.
 * - an undeferred task (if(0)) with depend(in) on a sibling that spins with taskyield until a
 *   task created before the undeferred one (but after the sibling) has run.
 * - a detached task whose event is fulfilled by its own child, waited for in taskwait (libgomp
 *   deadlocks with one thread: its taskwait never runs the grandchild).
 * - producer/consumer pairs with bounded buffers, consumers created first, more pairs than
 *   threads, each side calling taskyield while the buffer is full/empty; tied and untied.
 * - a chain of 20000 nested tasks, each creating one child and waiting for it in taskwait (tied
 *   and untied); with untied tasks the thread before/after taskwait is recorded (may differ).
 * OMPTEST_CASE=<name> runs one case only (names in the table at the end); OMPTEST_VERBOSE=1 prints
 * how many untied tasks resumed on another thread.
 */
#include <sched.h>

#include "omp_test.h"
#include <stdlib.h>

#define N 64

static int flag_last;
static int arrived;
static int done_chain[N + 1];

/* Every 64 unsuccessful taskyields a sched_yield: it cannot make another task run on this thread
 * (only suspension can), but with more threads than cores it lets the thread that will make the
 * condition true get the core (a taskyield with nothing else to run returns at once). */
#define BACKOFF(spins)                      \
  do {                                      \
    if (++(spins) % 64 == 0) sched_yield(); \
  } while (0)

/* taskyield in a loop until *p != 0. */
static void yield_until_set(int *p) {
  int spins = 0;
  while (!__atomic_load_n(p, __ATOMIC_ACQUIRE)) {
    #pragma omp taskyield
    BACKOFF(spins);
  }
}

/* ---- bounded buffers ---------------------------------------------------------------------- */
#define CAP 2
#define ITEMS 500
#define PAIRS 8
struct ring {
  int buf[CAP];
  unsigned head, tail;
  long sum;
};
static struct ring rings[PAIRS];

static void produce(struct ring *r, int seed) {
  for (int i = 0; i < ITEMS; i++) {
    int spins = 0;
    while (__atomic_load_n(&r->tail, __ATOMIC_RELAXED) - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == CAP) {
      #pragma omp taskyield
      BACKOFF(spins);
    }
    unsigned t = r->tail;
    r->buf[t % CAP] = seed + i;
    __atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
  }
}

static void consume(struct ring *r, int seed) {
  long sum = 0;
  for (int i = 0; i < ITEMS; i++) {
    int spins = 0;
    while (__atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) == __atomic_load_n(&r->head, __ATOMIC_RELAXED)) {
      #pragma omp taskyield
      BACKOFF(spins);
    }
    unsigned h = r->head;
    int v = r->buf[h % CAP];
    CHECK(v == seed + i, "pair %d: consumer got %d for item %d", (int)(r - rings), v, i);
    sum += v;
    __atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
  }
  r->sum = sum;
}

/* ---- deep chain --------------------------------------------------------------------------- */
/* 20000 levels; fewer under the sanitizers (WEFT_TEST_SCALE, as the CI sets it): ThreadSanitizer
 * keeps at most 65536 frames of a stack, and the nested levels run on one stack. */
static int DEEP = 20000;
static int deep_max, untied_moved;
static void scale_depth(void) {
  const char *s = getenv("WEFT_TEST_SCALE");
  double f = s ? atof(s) : 1.0;
  if (f > 0 && f < 1) DEEP = (int)(20000 * f);
}

static int chain_tied(int depth) {
  if (depth == DEEP) {
    deep_max = depth;
    return 0;
  }
  int r = -1;
  #pragma omp task shared(r) firstprivate(depth)
  r = chain_tied(depth + 1);
  int me = omp_get_thread_num();
  #pragma omp taskwait
  CHECK(omp_get_thread_num() == me, "tied task at depth %d moved from thread %d to %d", depth, me,
        omp_get_thread_num());
  return r + 1;
}

static int chain_untied(int depth) {
  if (depth == DEEP) {
    deep_max = depth;
    return 0;
  }
  int r = -1;
  #pragma omp task untied shared(r) firstprivate(depth)
  r = chain_untied(depth + 1);
  int me = omp_get_thread_num();
  #pragma omp taskwait
  if (omp_get_thread_num() != me) __atomic_fetch_add(&untied_moved, 1, __ATOMIC_RELAXED);
  return r + 1;
}

static void case_last_flag(void) {
  PHASE("taskyield until the last-created task sets a flag");
  for (int rep = 0; rep < 5; rep++) {
    int finished = 0;
    flag_last = 0;
    #pragma omp parallel
    #pragma omp single
    {
      for (int i = 0; i < N - 1; i++) {
        #pragma omp task shared(finished)
        {
          yield_until_set(&flag_last);
          __atomic_fetch_add(&finished, 1, __ATOMIC_RELAXED);
        }
      }
      #pragma omp task shared(finished)
      {
        CHECK(__atomic_load_n(&finished, __ATOMIC_RELAXED) == 0, "a waiter finished before the flag was set");
        __atomic_store_n(&flag_last, 1, __ATOMIC_RELEASE);
      }
    }
    CHECK(finished == N - 1, "%d of %d waiters finished", finished, N - 1);
  }
}

static void case_all_arrived(void) {
  PHASE("taskyield until every task has started");
  for (int rep = 0; rep < 5; rep++) {
    arrived = 0;
    int finished = 0;
    #pragma omp parallel
    #pragma omp single
    for (int i = 0; i < N; i++) {
      #pragma omp task shared(finished) firstprivate(i) untied
      {
        __atomic_fetch_add(&arrived, 1, __ATOMIC_ACQ_REL);
        int spins = 0;
        while (__atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < N) {
          #pragma omp taskyield
          BACKOFF(spins);
        }
        __atomic_fetch_add(&finished, 1, __ATOMIC_RELAXED);
      }
    }
    CHECK(finished == N, "%d of %d tasks finished", finished, N);
  }
}

static void case_reverse_chain(void) {
  PHASE("taskyield reverse chain: task i waits for task i+1");
  for (int rep = 0; rep < 5; rep++) {
    int order[N], pos = 0;
    for (int i = 0; i <= N; i++) done_chain[i] = 0;
    done_chain[N] = 1;
    #pragma omp parallel
    #pragma omp single
    for (int i = 0; i < N; i++) {
      #pragma omp task firstprivate(i) shared(order, pos)
      {
        yield_until_set(&done_chain[i + 1]);
        order[__atomic_fetch_add(&pos, 1, __ATOMIC_ACQ_REL)] = i;
        __atomic_store_n(&done_chain[i], 1, __ATOMIC_RELEASE);
      }
    }
    CHECK(pos == N, "%d of %d tasks finished", pos, N);
    for (int k = 0; k < N; k++) CHECK(order[k] == N - 1 - k, "finish %d was task %d", k, order[k]);
  }
}

static void case_child_in_taskwait(void) {
  PHASE("child spins with taskyield, parent in taskwait, flag set by the parent's later sibling");
  for (int rep = 0; rep < 5; rep++) {
    int flags[8] = {0}, got = 0;
    #pragma omp parallel
    #pragma omp single
    {
      for (int p = 0; p < 8; p++) {
        #pragma omp task firstprivate(p) shared(flags, got)
        {
          int child_done = 0;
          #pragma omp task firstprivate(p) shared(flags, child_done)
          {
            yield_until_set(&flags[p]);
            child_done = 1;
          }
          #pragma omp taskwait
          CHECK(child_done == 1, "taskwait returned before the child finished");
          __atomic_fetch_add(&got, 1, __ATOMIC_RELAXED);
        }
      }
      for (int p = 0; p < 8; p++) {
        #pragma omp task firstprivate(p) shared(flags)
        __atomic_store_n(&flags[p], 1, __ATOMIC_RELEASE);
      }
    }
    CHECK(got == 8, "%d of 8 parents finished", got);
  }
}

static void case_undeferred_dep(void) {
  PHASE("undeferred task depending on a sibling that waits for a later sibling");
  for (int rep = 0; rep < 5; rep++) {
    int x = 0, flag = 0, y = -1;
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp task depend(out : x) shared(x, flag)
      {
        yield_until_set(&flag);
        x = 42;
      }
      #pragma omp task shared(flag)
      {
        omp_test_spin(1000);
        __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
      }
      #pragma omp task if(0) depend(in : x) shared(x, y)
      y = x;
      CHECK(y == 42, "undeferred dependent task read %d", y);
    }
  }
}

static void case_detach_own_child(void) {
  PHASE("detached task fulfilled by its own child; taskwait in any team size");
  for (int rep = 0; rep < 20; rep++) {
    int fulfilled = 0, body = 0;
    #pragma omp parallel
    #pragma omp single
    {
      omp_event_handle_t ev;
      #pragma omp task detach(ev) shared(fulfilled, body)
      {
        #pragma omp task firstprivate(ev) shared(fulfilled)
        {
          omp_test_spin(500);
          __atomic_store_n(&fulfilled, 1, __ATOMIC_RELEASE);
          omp_fulfill_event(ev);
        }
        body = 1;
      }
      #pragma omp taskwait
      CHECK(body == 1 && __atomic_load_n(&fulfilled, __ATOMIC_ACQUIRE) == 1,
            "taskwait returned early (body %d, fulfilled %d)", body, fulfilled);
    }
  }
}

static void check_rings(void) {
  for (int p = 0; p < PAIRS; p++) {
    long want = (long)ITEMS * 1000 * p + (long)ITEMS * (ITEMS - 1) / 2;
    CHECK(rings[p].sum == want, "pair %d: sum %ld, expected %ld", p, rings[p].sum, want);
  }
}

static void case_producer_consumer_tied(void) {
  PHASE("tied producer/consumer pairs, consumers created first");
  for (int rep = 0; rep < 3; rep++) {
    for (int p = 0; p < PAIRS; p++) rings[p] = (struct ring){{0}, 0, 0, -1};
    #pragma omp parallel
    #pragma omp single
    {
      for (int p = 0; p < PAIRS; p++) {
        #pragma omp task firstprivate(p)
        consume(&rings[p], 1000 * p);
      }
      for (int p = 0; p < PAIRS; p++) {
        #pragma omp task firstprivate(p)
        produce(&rings[p], 1000 * p);
      }
    }
    check_rings();
  }
}

static void case_producer_consumer_untied(void) {
  PHASE("untied producer/consumer pairs, consumers created first");
  for (int rep = 0; rep < 3; rep++) {
    for (int p = 0; p < PAIRS; p++) rings[p] = (struct ring){{0}, 0, 0, -1};
    #pragma omp parallel
    #pragma omp single
    {
      for (int p = 0; p < PAIRS; p++) {
        #pragma omp task firstprivate(p) untied
        consume(&rings[p], 1000 * p);
      }
      for (int p = 0; p < PAIRS; p++) {
        #pragma omp task firstprivate(p) untied
        produce(&rings[p], 1000 * p);
      }
    }
    check_rings();
  }
}

static void case_deep_chain_tied(void) {
  PHASE("chain of 20000 nested tied tasks, each waiting for its child");
  scale_depth();
  int r = -1;
  deep_max = 0;
  #pragma omp parallel
  #pragma omp single
  r = chain_tied(0);
  CHECK(r == DEEP && deep_max == DEEP, "chain returned %d (deepest %d)", r, deep_max);
}

static void case_deep_chain_untied(void) {
  PHASE("chain of 20000 nested untied tasks, each waiting for its child");
  scale_depth();
  int r = -1;
  deep_max = 0;
  #pragma omp parallel
  #pragma omp single
  {
    #pragma omp task untied shared(r)
    r = chain_untied(0);
  }
  CHECK(r == DEEP && deep_max == DEEP, "chain returned %d (deepest %d)", r, deep_max);
}

static const struct {
  const char *name;
  void (*run)(void);
} cases[] = {
    {"last_flag", case_last_flag},
    {"all_arrived", case_all_arrived},
    {"reverse_chain", case_reverse_chain},
    {"child_in_taskwait", case_child_in_taskwait},
    {"undeferred_dep", case_undeferred_dep},
    {"detach_own_child", case_detach_own_child},
    {"producer_consumer_tied", case_producer_consumer_tied},
    {"producer_consumer_untied", case_producer_consumer_untied},
    {"deep_chain_tied", case_deep_chain_tied},
    {"deep_chain_untied", case_deep_chain_untied},
};

/* OMPTEST_CASE=name runs only that case (for reproducing one); unset: all, in order. */
int main(void) {
  const char *only = getenv("OMPTEST_CASE");
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    if (!only || !*only || strcmp(only, cases[k].name) == 0) cases[k].run();
  if (getenv("OMPTEST_VERBOSE")) printf("untied tasks resumed on another thread: %d\n", untied_moved);
  PASS();
}
