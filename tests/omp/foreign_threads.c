/* Threads the program starts itself (pthreads) entering OpenMP: each runs its own parallel
 * regions with tasks concurrently with the others, a task is fulfilled (detach) from a thread
 * that is not an OpenMP thread, omp_* queries answer for a thread outside any region, and more
 * short-lived threads enter OpenMP one after the other than there are worker slots. */
#include <pthread.h>
#include <stdint.h>

#include "omp_test.h"

#define NTHREADS 4
#define REPS 30
static int counts[NTHREADS];

static void *regions(void *arg) {
  int id = (int)(intptr_t)arg;
  CHECK(omp_get_thread_num() == 0 && omp_get_level() == 0 && !omp_in_parallel(), "a new thread starts outside any region");
  for (int rep = 0; rep < REPS; rep++) {
    int s = 0;
    #pragma omp parallel num_threads(2) reduction(+ : s)
    {
      s += omp_get_thread_num() + 1;
      #pragma omp single
      for (int i = 0; i < 8; i++) {
        #pragma omp task
        __atomic_fetch_add(&counts[id], 1, __ATOMIC_RELAXED);
      }
    }
    CHECK(s == 3, "a team of 2 threads summed %d (expected 1 + 2)", s);
  }
  return NULL;
}

static int ran;
static void *one_region(void *arg) {
  (void)arg;
  #pragma omp parallel num_threads(2)
  __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
  return NULL;
}

static omp_event_handle_t pending_event;
static volatile int event_ready;

static void *fulfiller(void *arg) {
  (void)arg;
  while (!__atomic_load_n(&event_ready, __ATOMIC_ACQUIRE)) sched_yield();
  omp_fulfill_event(pending_event);
  return NULL;
}

int main(void) {
  PHASE("parallel regions from several pthreads at once");
  pthread_t t[NTHREADS];
  for (intptr_t i = 0; i < NTHREADS; i++) pthread_create(&t[i], NULL, regions, (void *)i);
  for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < NTHREADS; i++) CHECK(counts[i] == REPS * 8, "thread %d: %d of %d tasks ran", i, counts[i], REPS * 8);

  PHASE("more short-lived threads than a runtime has worker slots");
  for (int i = 0; i < 1100; i++) {  /* more than the 1024 worker slots */
    pthread_t s;
    pthread_create(&s, NULL, one_region, NULL);
    pthread_join(s, NULL);
  }
  CHECK(ran == 2200, "%d of 2200 region members ran", ran);

  PHASE("detach fulfilled from a pthread");
  {
    int after = 0, done = 0;
    pthread_t f;
    pthread_create(&f, NULL, fulfiller, NULL);
    #pragma omp parallel num_threads(2)
    #pragma omp single
    {
      omp_event_handle_t ev;
      #pragma omp task detach(ev) shared(done)
      {
        pending_event = ev;
        __atomic_store_n(&done, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&event_ready, 1, __ATOMIC_RELEASE);
      }
      #pragma omp taskwait
      after = __atomic_load_n(&done, __ATOMIC_RELAXED);
    }
    pthread_join(f, NULL);
    CHECK(after == 1, "taskwait returned before the detached task's body ran");
  }
  PASS();
}
