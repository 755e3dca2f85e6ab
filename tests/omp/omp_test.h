/* Shared helpers for the self-checking OpenMP programs in tests/omp.
 *
 * Every program exits 0 on success. On a failed check it prints the file, line, the failed
 * condition and a message to stderr and exits 1 at once with _Exit (no atexit handlers, so a
 * runtime's shutdown code cannot hang a failing test). A watchdog (SIGALRM, default 45 s, env
 * OMPTEST_ALARM, 0 = off) reports the phase a hung program was in before CTest's timeout kills
 * it. OMPTEST_EXIT_AT_START=1 makes the program exit 0 before main (binding checks).
 */
#ifndef WEFT_OMP_TEST_H
#define WEFT_OMP_TEST_H

#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The phase the program is in (set by PHASE, printed by the watchdog). */
static const char *volatile omp_test_phase = "start";

#define PHASE(name) (omp_test_phase = (name))

static int omp_test_failed;

/* Only the first failing thread reports; the others wait for its _Exit. */
static inline void omp_test_fail_begin(void) {
  if (__atomic_exchange_n(&omp_test_failed, 1, __ATOMIC_ACQ_REL))
    for (;;) pause();
}

static inline void omp_test_fail_exit(void) {
  fflush(stdout);
  fflush(stderr);
  _Exit(1);
}

#define CHECK(cond, ...)                                                                    \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      omp_test_fail_begin();                                                                \
      fprintf(stderr, "FAIL %s:%d [phase %s, thread %d/%d, level %d]: CHECK(%s): ",         \
              __FILE__, __LINE__, omp_test_phase, omp_get_thread_num(),                     \
              omp_get_num_threads(), omp_get_level(), #cond);                               \
      fprintf(stderr, __VA_ARGS__);                                                         \
      fputc('\n', stderr);                                                                  \
      omp_test_fail_exit();                                                                 \
    }                                                                                       \
  } while (0)

static void omp_test_alarm_handler(int sig) {
  (void)sig;
  static const char msg[] = "FAIL: watchdog: program hung in phase: ";
  ssize_t r = write(2, msg, sizeof msg - 1);
  const char *p = omp_test_phase;
  r = write(2, p, strlen(p));
  r = write(2, "\n", 1);
  (void)r;
  _Exit(1);
}

__attribute__((constructor)) static void omp_test_install_watchdog(void) {
  /* Used by the symbol-binding check: with LD_BIND_NOW every symbol is bound before this runs. */
  if (getenv("OMPTEST_EXIT_AT_START")) _exit(0);
  int seconds = 45;
  const char *e = getenv("OMPTEST_ALARM");
  if (e && *e) seconds = atoi(e);
  if (seconds > 0) {
    signal(SIGALRM, omp_test_alarm_handler);
    alarm((unsigned)seconds);
  }
}

/* Team size the harness asked for (OMP_NUM_THREADS=<T>); the default nthreads-var. */
static inline int omp_test_threads(void) { return omp_get_max_threads(); }

/* Small deterministic PRNG (xorshift64*), thread-safe when each user owns its state. */
static inline unsigned long long omp_test_rand(unsigned long long *s) {
  unsigned long long x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 2685821657736338717ULL;
}

/* A little busy work so that tasks overlap and scheduling orders vary. */
static inline void omp_test_spin(int n) {
  volatile unsigned sink = 0; /* unsigned: long spins wrap instead of overflowing */
  for (int i = 0; i < n; i++) sink = sink + (unsigned)i;
  (void)sink;
}

/* Busy work with a result (an LCG stepped n times from x), for tasks whose values are checked. */
static inline long omp_test_spin_value(long x, int n) {
  unsigned long u = (unsigned long)x; /* unsigned: the generator wraps */
  for (int i = 0; i < n; i++) {
    u = u * 6364136223846793005UL + 1442695040888963407UL;
    __asm__ volatile("" : "+r"(u));
  }
  return (long)(u >> 1);
}

static inline int omp_test_env_is(const char *name, const char *value) {
  const char *e = getenv(name);
  return e && strcmp(e, value) == 0;
}

#define PASS()                                                                              \
  do {                                                                                      \
    printf("PASS %s (threads=%d)\n", __FILE__, omp_get_max_threads());                      \
    return 0;                                                                               \
  } while (0)

#ifdef __cplusplus
}
#endif

#endif
