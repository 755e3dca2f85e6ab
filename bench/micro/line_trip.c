/* line_trip: how long a cache line takes to go from one core to another and back, in ns.
 *
 *   line_trip [ROUNDS]      prints "line_trip_ns=<median of 5 passes>"
 *
 * Two threads, each pinned to one of the first two CPUs of the process mask, pass a counter back
 * and forth through two lines (store, then wait for the echo). A task runtime's cost on several
 * workers is mostly such transfers: on the project's 2-core VM a round trip takes 100-130 ns in
 * its usual phase and 500-620 ns in a slow one, and every runtime's 2-thread figures move with it
 * (docs/decisions.md, "Which line each writer touches"). bench scripts print it beside their
 * results so that a run says which phase it saw. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) atomic_long ping;
static _Alignas(64) atomic_long pong;
static long rounds = 20000;
static int cpus[2] = {-1, -1};

static void pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* best effort */
}

static void* echo(void* unused) {
  (void)unused;
  pin(cpus[1]);
  for (long i = 1; i <= 5 * rounds; ++i) {
    while (atomic_load_explicit(&ping, memory_order_acquire) != i) {
    }
    atomic_store_explicit(&pong, i, memory_order_release);
  }
  return NULL;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc > 1) rounds = atol(argv[1]);
  if (rounds < 1) {
    fprintf(stderr, "usage: line_trip [ROUNDS >= 1]\n");
    return 2;
  }
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
    for (int c = 0, found = 0; c < CPU_SETSIZE && found < 2; ++c)
      if (CPU_ISSET(c, &mask)) cpus[found++] = c;
  }
  if (cpus[1] < 0) {
    printf("line_trip_ns=none (one CPU)\n");
    return 0;
  }
  pin(cpus[0]);
  pthread_t t;
  if (pthread_create(&t, NULL, echo, NULL) != 0) {
    fprintf(stderr, "line_trip: pthread_create failed\n");
    return 1;
  }
  double pass[5];
  long i = 1;
  for (int p = 0; p < 5; ++p) {
    double t0 = now_ns();
    for (long k = 0; k < rounds; ++k, ++i) {
      atomic_store_explicit(&ping, i, memory_order_release);
      while (atomic_load_explicit(&pong, memory_order_acquire) != i) {
      }
    }
    pass[p] = (now_ns() - t0) / rounds;
  }
  pthread_join(t, NULL);
  qsort(pass, 5, sizeof pass[0], by_value);
  printf("line_trip_ns=%.0f\n", pass[2]);
  return 0;
}
