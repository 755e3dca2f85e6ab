/* Task suspension, the parts any conforming runtime passes (libgomp included; the cases that need
 * a runtime that really suspends tasks are in suspension_weft.c):
 * - detach: N detached tasks whose events are fulfilled by later sibling tasks, by a plain
 *   pthread (not an OpenMP thread) after a short sleep while the team waits in taskwait, and in
 *   reverse creation order; a task with depend(in) on a detached task's depend(out) must not start
 *   before omp_fulfill_event, and taskwait waits for the detached tasks and their dependents.
 * - untied tasks: fib(20) with untied tasks + taskwait, untied tasks with taskyield loops; the
 *   executing thread (omp_get_thread_num, gettid) before/after each wait may differ for untied
 *   tasks and must be equal for tied tasks (checked for tied ones only).
 * - a chain of CHAIN_DEPTH nested tasks, each creating one child and waiting for it in taskwait
 *   (deep enough to matter, shallow enough for libgomp, which runs the child on the waiting
 *   task's stack, with the default 8 MiB stack).
 * - a producer task and a consumer task with a bounded ring buffer between them, each calling
 *   taskyield while the buffer is full/empty (needs 2 threads here; with one thread only a
 *   runtime that suspends the yielding task can finish it).
 * OMPTEST_CASE=<name> runs one case only (names in the table at the end); OMPTEST_VERBOSE=1 prints
 * how many untied tasks resumed on another thread.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>

#include "omp_test.h"

static long my_tid(void) { return syscall(SYS_gettid); }

/* ---- detach ------------------------------------------------------------------------------- */
#define ND 32
static omp_event_handle_t evs[ND];
static int fulfilled[ND];   /* set (release) right before omp_fulfill_event */
static int body_ran[ND];    /* the detached task's body */
static int dep_ran[ND];     /* the dependent task's body */
static char xdep[ND];       /* dependence objects */
static int published;       /* events published for the pthread */

static void reset_detach(void) {
  for (int i = 0; i < ND; i++) fulfilled[i] = body_ran[i] = dep_ran[i] = 0;
  published = 0;
}

static void detach_and_dependent(int i) {
  omp_event_handle_t ev;
  #pragma omp task detach(ev) depend(out : xdep[i]) firstprivate(i)
  {
    omp_test_spin(100 * (i % 5));
    __atomic_store_n(&body_ran[i], 1, __ATOMIC_RELEASE);
  }
  evs[i] = ev;
  #pragma omp task depend(in : xdep[i]) firstprivate(i)
  {
    CHECK(__atomic_load_n(&body_ran[i], __ATOMIC_ACQUIRE) == 1, "dependent %d ran before the detached body", i);
    CHECK(__atomic_load_n(&fulfilled[i], __ATOMIC_ACQUIRE) == 1, "dependent %d ran before omp_fulfill_event", i);
    __atomic_store_n(&dep_ran[i], 1, __ATOMIC_RELEASE);
  }
}

static void check_all_done(const char *what) {
  for (int i = 0; i < ND; i++) {
    CHECK(__atomic_load_n(&body_ran[i], __ATOMIC_ACQUIRE) == 1, "%s: detached body %d had not run after taskwait", what, i);
    CHECK(__atomic_load_n(&fulfilled[i], __ATOMIC_ACQUIRE) == 1, "%s: taskwait returned before event %d was fulfilled", what, i);
    CHECK(__atomic_load_n(&dep_ran[i], __ATOMIC_ACQUIRE) == 1, "%s: dependent %d had not run after taskwait", what, i);
  }
}

static void *pthread_fulfiller(void *arg) {
  int reverse = (int)(long)arg;
  while (__atomic_load_n(&published, __ATOMIC_ACQUIRE) < ND) sched_yield();
  struct timespec ts = {0, 20 * 1000 * 1000};  /* 20 ms: the team is in taskwait by then */
  nanosleep(&ts, NULL);
  for (int k = 0; k < ND; k++) {
    int i = reverse ? ND - 1 - k : k;
    __atomic_store_n(&fulfilled[i], 1, __ATOMIC_RELEASE);
    omp_fulfill_event(evs[i]);
    if (k % 8 == 7) {
      struct timespec s = {0, 1000 * 1000};
      nanosleep(&s, NULL);
    }
  }
  return NULL;
}

/* ---- untied / tied ------------------------------------------------------------------------ */
static int untied_moved, untied_waits;

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

static long fib_untied(int n) {
  if (n < 2) return n;
  long a = -1, b = -1;
  #pragma omp task untied shared(a) firstprivate(n)
  a = fib_untied(n - 1);
  #pragma omp task untied shared(b) firstprivate(n)
  b = fib_untied(n - 2);
  int me = omp_get_thread_num();
  long tid = my_tid();
  #pragma omp taskwait
  __atomic_fetch_add(&untied_waits, 1, __ATOMIC_RELAXED);
  if (omp_get_thread_num() != me || my_tid() != tid) __atomic_fetch_add(&untied_moved, 1, __ATOMIC_RELAXED);
  return a + b;
}

/* Called from tied tasks (and the implicit task) only. */
static long fib_tied(int n) {
  if (n < 2) return n;
  long a = -1, b = -1;
  #pragma omp task shared(a) firstprivate(n)
  a = fib_tied(n - 1);
  #pragma omp task shared(b) firstprivate(n)
  b = fib_tied(n - 2);
  int me = omp_get_thread_num();
  long tid = my_tid();
  #pragma omp taskwait
  CHECK(omp_get_thread_num() == me, "tied task at fib(%d) resumed after taskwait on thread %d, was on %d", n,
        omp_get_thread_num(), me);
  CHECK(my_tid() == tid, "tied task at fib(%d) resumed after taskwait on another OS thread (%ld, was %ld)", n,
        my_tid(), tid);
  return a + b;
}

/* ---- chain -------------------------------------------------------------------------------- */
#ifndef CHAIN_DEPTH
#define CHAIN_DEPTH 5000  /* libgomp at -O2: 10000 passes, 20000 overflows an 8 MiB stack */
#endif
static int chain_max;

static int chain(int depth) {
  if (depth == CHAIN_DEPTH) {
    chain_max = depth;
    return 0;
  }
  int r = -1;
  #pragma omp task shared(r) firstprivate(depth)
  r = chain(depth + 1);
  #pragma omp taskwait
  return r + 1;
}

/* ---- bounded buffer ----------------------------------------------------------------------- */
#define CAP 4
#define ITEMS 1000
struct ring {
  int buf[CAP];
  unsigned head, tail;  /* consumer advances head, producer tail */
};

static void produce(struct ring *r, int items) {
  for (int i = 0; i < items; i++) {
    int spins = 0;
    while (__atomic_load_n(&r->tail, __ATOMIC_RELAXED) - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == CAP) {
      #pragma omp taskyield
      if (++spins % 64 == 0) sched_yield();  /* oversubscribed cores: let the consumer's thread run */
    }
    unsigned t = r->tail;
    r->buf[t % CAP] = i * 7 + 1;
    __atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
  }
}

static long consume(struct ring *r, int items) {
  long sum = 0;
  for (int i = 0; i < items; i++) {
    int spins = 0;
    while (__atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) == __atomic_load_n(&r->head, __ATOMIC_RELAXED)) {
      #pragma omp taskyield
      if (++spins % 64 == 0) sched_yield();
    }
    unsigned h = r->head;
    int v = r->buf[h % CAP];
    CHECK(v == i * 7 + 1, "consumer got %d for item %d", v, i);
    sum += v;
    __atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
  }
  return sum;
}

static void case_detach_later_siblings(void) {
  PHASE("detach: events fulfilled by later sibling tasks");
  for (int rep = 0; rep < 5; rep++) {
    reset_detach();
    #pragma omp parallel
    #pragma omp single
    {
      for (int i = 0; i < ND; i++) detach_and_dependent(i);
      for (int i = 0; i < ND; i++) {
        #pragma omp task firstprivate(i)
        {
          omp_test_spin(200);
          __atomic_store_n(&fulfilled[i], 1, __ATOMIC_RELEASE);
          omp_fulfill_event(evs[i]);
        }
      }
      #pragma omp taskwait
      check_all_done("later siblings");
    }
  }
}

static void case_detach_reverse(void) {
  PHASE("detach: events fulfilled in reverse order by one later task");
  for (int rep = 0; rep < 5; rep++) {
    reset_detach();
    #pragma omp parallel
    #pragma omp single
    {
      for (int i = 0; i < ND; i++) detach_and_dependent(i);
      #pragma omp task
      for (int i = ND - 1; i >= 0; i--) {
        omp_test_spin(300);
        /* the dependents of events not fulfilled yet have not started */
        for (int k = 0; k <= i; k++)
          CHECK(__atomic_load_n(&dep_ran[k], __ATOMIC_ACQUIRE) == 0, "dependent %d ran before its event", k);
        __atomic_store_n(&fulfilled[i], 1, __ATOMIC_RELEASE);
        omp_fulfill_event(evs[i]);
      }
      #pragma omp taskwait
      check_all_done("reverse order");
    }
  }
}

static void case_detach_pthread_taskwait(void) {
  PHASE("detach: events fulfilled by a plain pthread while the team waits in taskwait");
  for (int rep = 0; rep < 4; rep++) {
    reset_detach();
    pthread_t th;
    CHECK(pthread_create(&th, NULL, pthread_fulfiller, (void *)(long)(rep & 1)) == 0, "pthread_create");
    #pragma omp parallel
    #pragma omp single
    {
      for (int i = 0; i < ND; i++) detach_and_dependent(i);
      __atomic_store_n(&published, ND, __ATOMIC_RELEASE);
      #pragma omp taskwait
      check_all_done("pthread");
    }
    CHECK(pthread_join(th, NULL) == 0, "pthread_join");
  }
}

static void case_detach_pthread_barrier(void) {
  PHASE("detach: events fulfilled by a plain pthread, barrier waits");
  {
    reset_detach();
    pthread_t th;
    CHECK(pthread_create(&th, NULL, pthread_fulfiller, (void *)1L) == 0, "pthread_create");
    #pragma omp parallel
    {
      #pragma omp single nowait
      {
        for (int i = 0; i < ND; i++) detach_and_dependent(i);
        __atomic_store_n(&published, ND, __ATOMIC_RELEASE);
      }
      #pragma omp barrier
      check_all_done("barrier");
    }
    CHECK(pthread_join(th, NULL) == 0, "pthread_join");
  }
}

static void case_untied_fib(void) {
  PHASE("untied fib(20) with taskwait");
  {
    long r = -1;
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp task untied shared(r)
      r = fib_untied(20);
      #pragma omp taskwait
    }
    CHECK(r == fib_seq(20), "untied fib(20) = %ld, expected %ld", r, fib_seq(20));
    CHECK(untied_waits == 10945, "untied taskwaits %d", untied_waits);  /* internal nodes of fib(20) */
  }
}

static void case_tied_fib(void) {
  PHASE("tied fib(20): same thread before and after taskwait");
  {
    long r = -1;
    #pragma omp parallel
    #pragma omp single
    r = fib_tied(20);
    CHECK(r == fib_seq(20), "tied fib(20) = %ld, expected %ld", r, fib_seq(20));
  }
}

static void case_taskyield_tied_untied(void) {
  PHASE("untied and tied tasks with taskyield loops");
  {
    int sum_u = 0, sum_t = 0;
    #pragma omp parallel
    #pragma omp single
    {
      for (int i = 0; i < 100; i++) {
        #pragma omp task untied shared(sum_u) firstprivate(i)
        {
          for (int k = 0; k < 5; k++) {
            int me = omp_get_thread_num();
            #pragma omp taskyield
            if (omp_get_thread_num() != me) __atomic_fetch_add(&untied_moved, 1, __ATOMIC_RELAXED);
            omp_test_spin(50);
          }
          __atomic_fetch_add(&sum_u, i, __ATOMIC_RELAXED);
        }
        #pragma omp task shared(sum_t) firstprivate(i)
        {
          for (int k = 0; k < 5; k++) {
            int me = omp_get_thread_num();
            long tid = my_tid();
            #pragma omp taskyield
            CHECK(omp_get_thread_num() == me && my_tid() == tid, "tied task %d moved from thread %d to %d at taskyield",
                  i, me, omp_get_thread_num());
            omp_test_spin(50);
          }
          __atomic_fetch_add(&sum_t, i, __ATOMIC_RELAXED);
        }
      }
    }
    CHECK(sum_u == 4950 && sum_t == 4950, "untied sum %d, tied sum %d", sum_u, sum_t);
  }
}

static void case_chain(void) {
  PHASE("chain of nested tasks, each waiting for its child");
  for (int rep = 0; rep < 3; rep++) {
    int r = -1;
    chain_max = 0;
    #pragma omp parallel
    #pragma omp single
    r = chain(0);
    CHECK(r == CHAIN_DEPTH && chain_max == CHAIN_DEPTH, "chain returned %d (deepest %d), expected %d", r, chain_max,
          CHAIN_DEPTH);
  }
}

static void case_producer_consumer(void) {
  PHASE("producer and consumer tasks with a bounded buffer (2+ threads)");
  if (omp_test_threads() >= 2) {
    for (int rep = 0; rep < 3; rep++) {
      struct ring ring = {{0}, 0, 0};
      long sum = -1;
      #pragma omp parallel
      #pragma omp single
      {
        if (rep & 1) {
          #pragma omp task shared(ring, sum)
          sum = consume(&ring, ITEMS);
          #pragma omp task shared(ring)
          produce(&ring, ITEMS);
        } else {
          #pragma omp task shared(ring)
          produce(&ring, ITEMS);
          #pragma omp task shared(ring, sum)
          sum = consume(&ring, ITEMS);
        }
      }
      CHECK(sum == 7L * ITEMS * (ITEMS - 1) / 2 + ITEMS, "consumer sum %ld", sum);
    }
  }
}

static const struct {
  const char *name;
  void (*run)(void);
} cases[] = {
    {"detach_later_siblings", case_detach_later_siblings},
    {"detach_reverse", case_detach_reverse},
    {"detach_pthread_taskwait", case_detach_pthread_taskwait},
    {"detach_pthread_barrier", case_detach_pthread_barrier},
    {"untied_fib", case_untied_fib},
    {"tied_fib", case_tied_fib},
    {"taskyield_tied_untied", case_taskyield_tied_untied},
    {"chain", case_chain},
    {"producer_consumer", case_producer_consumer},
};

/* OMPTEST_CASE=name runs only that case (for reproducing one); unset: all, in order. */
int main(void) {
  const char *only = getenv("OMPTEST_CASE");
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    if (!only || !*only || strcmp(only, cases[k].name) == 0) cases[k].run();
  if (getenv("OMPTEST_VERBOSE"))
    printf("untied tasks resumed on another thread: %d\n", untied_moved);
  PASS();
}
