/* Worksharing-loop schedules: static, static,chunk, dynamic[,chunk], guided[,chunk], auto,
 * runtime (after omp_set_schedule for every kind, with and without the monotonic modifier),
 * monotonic:/nonmonotonic: modifiers, and the combined parallel-for forms of each. Checked: every
 * iteration exactly once (several trip counts incl. 0 and < team size, positive lower bounds and
 * strides), static distribution exactly as the spec defines it, chunk contiguity for dynamic,
 * per-thread increasing order for monotonic schedules, and that two static loops with the same
 * bounds map iterations to the same threads. */
#include "omp_test.h"
#include <limits.h>

#define MAXN 2048
#define MAXT 64
#define PRAGMA(...) _Pragma(#__VA_ARGS__)

static int hits[MAXN], owner[MAXN];
static int nonmono;

typedef void (*loop_fn)(long lo, long hi, long step);

#define DEFINE_LOOP(fname, ...)                                                   \
  static void fname(long lo, long hi, long step) {                                \
    PRAGMA(omp parallel)                                                          \
    {                                                                             \
      long last = LONG_MIN;                                                       \
      int me = omp_get_thread_num();                                              \
      PRAGMA(omp for __VA_ARGS__)                                                 \
      for (long i = lo; i < hi; i += step) {                                      \
        long k = (i - lo) / step;                                                 \
        __atomic_fetch_add(&hits[k], 1, __ATOMIC_RELAXED);                        \
        __atomic_store_n(&owner[k], me, __ATOMIC_RELAXED);                        \
        if (i <= last) __atomic_fetch_add(&nonmono, 1, __ATOMIC_RELAXED);         \
        last = i;                                                                 \
        if ((k & 15) == 0) omp_test_spin(50);                                     \
      }                                                                           \
    }                                                                             \
  }

static long plast[MAXT];
#define DEFINE_PLOOP(fname, ...)                                                  \
  static void fname(long lo, long hi, long step) {                                \
    for (int t = 0; t < MAXT; t++) plast[t] = LONG_MIN;                           \
    PRAGMA(omp parallel for __VA_ARGS__)                                          \
    for (long i = lo; i < hi; i += step) {                                        \
      long k = (i - lo) / step;                                                   \
      int me = omp_get_thread_num();                                              \
      __atomic_fetch_add(&hits[k], 1, __ATOMIC_RELAXED);                          \
      __atomic_store_n(&owner[k], me, __ATOMIC_RELAXED);                          \
      if (i <= plast[me]) __atomic_fetch_add(&nonmono, 1, __ATOMIC_RELAXED);      \
      plast[me] = i;                                                              \
    }                                                                             \
  }

DEFINE_LOOP(l_static, schedule(static))
DEFINE_LOOP(l_static3, schedule(static, 3))
DEFINE_LOOP(l_static1, schedule(static, 1))
DEFINE_LOOP(l_dynamic, schedule(dynamic))
DEFINE_LOOP(l_dynamic5, schedule(dynamic, 5))
DEFINE_LOOP(l_mono_dynamic3, schedule(monotonic : dynamic, 3))
DEFINE_LOOP(l_nonmono_dynamic, schedule(nonmonotonic : dynamic))
DEFINE_LOOP(l_nonmono_dynamic4, schedule(nonmonotonic : dynamic, 4))
DEFINE_LOOP(l_guided, schedule(guided))
DEFINE_LOOP(l_guided7, schedule(guided, 7))
DEFINE_LOOP(l_mono_guided, schedule(monotonic : guided))
DEFINE_LOOP(l_nonmono_guided2, schedule(nonmonotonic : guided, 2))
DEFINE_LOOP(l_auto, schedule(auto))
DEFINE_LOOP(l_default, )
DEFINE_LOOP(l_runtime, schedule(runtime))
DEFINE_LOOP(l_mono_runtime, schedule(monotonic : runtime))
DEFINE_LOOP(l_nonmono_runtime, schedule(nonmonotonic : runtime))
DEFINE_PLOOP(p_static, schedule(static))
DEFINE_PLOOP(p_static2, schedule(static, 2))
DEFINE_PLOOP(p_dynamic, schedule(dynamic))
DEFINE_PLOOP(p_dynamic3, schedule(dynamic, 3))
DEFINE_PLOOP(p_mono_dynamic, schedule(monotonic : dynamic, 2))
DEFINE_PLOOP(p_guided, schedule(guided))
DEFINE_PLOOP(p_guided4, schedule(guided, 4))
DEFINE_PLOOP(p_nonmono_guided, schedule(nonmonotonic : guided))
DEFINE_PLOOP(p_runtime, schedule(runtime))
DEFINE_PLOOP(p_auto, schedule(auto))

/* Combined forms with compile-time-constant bounds: only these make gcc call
 * GOMP_parallel_loop_<kind> (the team's threads then call only GOMP_loop_<kind>_next). */
#define CONST_N 1000
#define DEFINE_CLOOP(fname, ...)                                                  \
  static void fname(long lo, long hi, long step) {                                \
    (void)lo, (void)hi, (void)step;                                               \
    for (int t = 0; t < MAXT; t++) plast[t] = LONG_MIN;                           \
    PRAGMA(omp parallel for __VA_ARGS__)                                          \
    for (long i = 0; i < CONST_N; i++) {                                          \
      int me = omp_get_thread_num();                                              \
      __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);                          \
      __atomic_store_n(&owner[i], me, __ATOMIC_RELAXED);                          \
      if (i <= plast[me]) __atomic_fetch_add(&nonmono, 1, __ATOMIC_RELAXED);      \
      plast[me] = i;                                                              \
    }                                                                             \
  }
DEFINE_CLOOP(c_static, schedule(static))
DEFINE_CLOOP(c_static3, schedule(static, 3))
DEFINE_CLOOP(c_dynamic, schedule(dynamic))
DEFINE_CLOOP(c_dynamic4, schedule(dynamic, 4))
DEFINE_CLOOP(c_mono_dynamic2, schedule(monotonic : dynamic, 2))
DEFINE_CLOOP(c_guided, schedule(guided))
DEFINE_CLOOP(c_mono_guided3, schedule(monotonic : guided, 3))
DEFINE_CLOOP(c_nonmono_guided, schedule(nonmonotonic : guided, 2))
DEFINE_CLOOP(c_runtime, schedule(runtime))
DEFINE_CLOOP(c_mono_runtime, schedule(monotonic : runtime))
DEFINE_CLOOP(c_nonmono_runtime, schedule(nonmonotonic : runtime))
DEFINE_CLOOP(c_auto, schedule(auto))

static void c_static_down(long lo, long hi, long step) {
  (void)lo, (void)hi, (void)step;
  #pragma omp parallel for schedule(dynamic, 3)
  for (long i = 3 * (CONST_N - 1) - 5; i >= -5; i -= 3) {
    long k = (3 * (CONST_N - 1) - 5 - i) / 3;
    __atomic_fetch_add(&hits[k], 1, __ATOMIC_RELAXED);
    __atomic_store_n(&owner[k], omp_get_thread_num(), __ATOMIC_RELAXED);
  }
}

enum shape { ANY, STATIC_BLOCK, STATIC_CHUNK, DYN_CHUNK, CONST = 16 };

static void run_case(const char *name, loop_fn fn, int shape, long chunk, int monotonic) {
  static const long los[] = {0, 0, 0, 0, 0, -37, 1000};
  static const long his[] = {0, 1, 5, 97, 1000, 200, 1000 + 3 * 500};
  static const long steps[] = {1, 1, 1, 1, 1, 3, 3};
  int T = omp_get_max_threads();
  int is_const = shape & CONST;
  shape &= ~CONST;
  for (unsigned c = 0; c < sizeof los / sizeof los[0]; c++) {
    long lo = los[c], hi = his[c], step = steps[c];
    if (is_const) {
      if (c > 0) break;
      lo = 0, hi = CONST_N, step = 1;
    }
    long n = hi > lo ? (hi - lo + step - 1) / step : 0;
    for (long k = 0; k < MAXN; k++) hits[k] = 0, owner[k] = -1;
    nonmono = 0;
    PHASE(name);
    fn(lo, hi, step);
    for (long k = 0; k < MAXN; k++)
      CHECK(hits[k] == (k < n), "%s [%ld,%ld) step %ld: logical iteration %ld ran %d times", name, lo, hi, step, k, hits[k]);
    for (long k = 0; k < n; k++) CHECK(owner[k] >= 0 && owner[k] < T, "%s: owner %d", name, owner[k]);
    if (monotonic) CHECK(nonmono == 0, "%s: %d non-monotonic iteration pairs on a thread", name, nonmono);
    if (shape == STATIC_BLOCK) {
      /* one contiguous, approximately equal chunk per thread, in thread order */
      for (long k = 1; k < n; k++)
        CHECK(owner[k] >= owner[k - 1], "%s n=%ld: static owners not in thread order at %ld (%d after %d)", name, n, k, owner[k], owner[k - 1]);
      long q = n / T;
      int cnt[MAXT] = {0};
      for (long k = 0; k < n; k++) cnt[owner[k]]++;
      for (int t = 0; t < T; t++)
        CHECK(cnt[t] == q || cnt[t] == q + 1, "%s n=%ld: thread %d got %d iterations (T=%d)", name, n, t, cnt[t], T);
    } else if (shape == STATIC_CHUNK) {
      for (long k = 0; k < n; k++)
        CHECK(owner[k] == (k / chunk) % T, "%s n=%ld: iteration %ld on thread %d, expected %ld", name, n, k, owner[k], (k / chunk) % T);
    } else if (shape == DYN_CHUNK) {
      for (long k = 0; k < n; k++)
        CHECK(owner[k] == owner[k - k % chunk], "%s n=%ld: chunk of %ld split at %ld", name, n, chunk, k);
    }
  }
}

static void static_reuse(void) {
  /* Two static loops with equal trip counts and chunk map iterations identically (nowait safe). */
  enum { NN = 777 };
  static int a[NN];
  int bad = 0;
  #pragma omp parallel reduction(+ : bad)
  {
    int me = omp_get_thread_num();
    #pragma omp for schedule(static) nowait
    for (int i = 0; i < NN; i++) a[i] = me;
    #pragma omp for schedule(static) nowait
    for (int i = 0; i < NN; i++) if (a[i] != me) bad++;
    #pragma omp barrier
    #pragma omp for schedule(static, 5) nowait
    for (int i = 0; i < NN; i++) a[i] = me + 1000;
    #pragma omp for schedule(static, 5) nowait
    for (int i = 0; i < NN; i++) if (a[i] != me + 1000) bad++;
  }
  CHECK(bad == 0, "static reuse: %d iterations on a different thread", bad);
}

int main(void) {
  run_case("static", l_static, STATIC_BLOCK, 0, 1);
  run_case("static,3", l_static3, STATIC_CHUNK, 3, 1);
  run_case("static,1", l_static1, STATIC_CHUNK, 1, 1);
  run_case("dynamic", l_dynamic, DYN_CHUNK, 1, 0);
  run_case("dynamic,5", l_dynamic5, DYN_CHUNK, 5, 0);
  run_case("monotonic:dynamic,3", l_mono_dynamic3, DYN_CHUNK, 3, 1);
  run_case("nonmonotonic:dynamic", l_nonmono_dynamic, DYN_CHUNK, 1, 0);
  run_case("nonmonotonic:dynamic,4", l_nonmono_dynamic4, DYN_CHUNK, 4, 0);
  run_case("guided", l_guided, ANY, 0, 0);
  run_case("guided,7", l_guided7, ANY, 0, 0);
  run_case("monotonic:guided", l_mono_guided, ANY, 0, 1);
  run_case("nonmonotonic:guided,2", l_nonmono_guided2, ANY, 0, 0);
  run_case("auto", l_auto, ANY, 0, 0);
  run_case("no schedule clause", l_default, ANY, 0, 0);
  run_case("parallel for static", p_static, STATIC_BLOCK, 0, 1);
  run_case("parallel for static,2", p_static2, STATIC_CHUNK, 2, 1);
  run_case("parallel for dynamic", p_dynamic, DYN_CHUNK, 1, 0);
  run_case("parallel for dynamic,3", p_dynamic3, DYN_CHUNK, 3, 0);
  run_case("parallel for monotonic:dynamic,2", p_mono_dynamic, DYN_CHUNK, 2, 1);
  run_case("parallel for guided", p_guided, ANY, 0, 0);
  run_case("parallel for guided,4", p_guided4, ANY, 0, 0);
  run_case("parallel for nonmonotonic:guided", p_nonmono_guided, ANY, 0, 0);
  run_case("parallel for auto", p_auto, ANY, 0, 0);

  run_case("const parallel for static", c_static, CONST | STATIC_BLOCK, 0, 1);
  run_case("const parallel for static,3", c_static3, CONST | STATIC_CHUNK, 3, 1);
  run_case("const parallel for dynamic", c_dynamic, CONST | DYN_CHUNK, 1, 0);
  run_case("const parallel for dynamic,4", c_dynamic4, CONST | DYN_CHUNK, 4, 0);
  run_case("const parallel for monotonic:dynamic,2", c_mono_dynamic2, CONST | DYN_CHUNK, 2, 1);
  run_case("const parallel for guided", c_guided, CONST | ANY, 0, 0);
  run_case("const parallel for monotonic:guided,3", c_mono_guided3, CONST | ANY, 0, 1);
  run_case("const parallel for nonmonotonic:guided,2", c_nonmono_guided, CONST | ANY, 0, 0);
  run_case("const parallel for auto", c_auto, CONST | ANY, 0, 0);
  run_case("const parallel for dynamic,3 downward", c_static_down, CONST | DYN_CHUNK, 3, 0);

  PHASE("static reuse");
  static_reuse();

  /* schedule(runtime) after omp_set_schedule */
  struct { omp_sched_t kind; int chunk; int shape; int mono; const char *name; } rt[] = {
    {omp_sched_static, 0, STATIC_BLOCK, 1, "runtime=static"},
    {omp_sched_static, 3, STATIC_CHUNK, 1, "runtime=static,3"},
    {omp_sched_dynamic, 1, DYN_CHUNK, 0, "runtime=dynamic,1"},
    {omp_sched_dynamic, 6, DYN_CHUNK, 0, "runtime=dynamic,6"},
    {omp_sched_guided, 0, ANY, 0, "runtime=guided"},
    {omp_sched_guided, 5, ANY, 0, "runtime=guided,5"},
    {omp_sched_auto, 0, ANY, 0, "runtime=auto"},
    {(omp_sched_t)(omp_sched_dynamic | omp_sched_monotonic), 2, DYN_CHUNK, 1, "runtime=monotonic:dynamic,2"},
    {(omp_sched_t)(omp_sched_guided | omp_sched_monotonic), 3, ANY, 1, "runtime=monotonic:guided,3"},
  };
  for (unsigned r = 0; r < sizeof rt / sizeof rt[0]; r++) {
    PHASE(rt[r].name);
    omp_set_schedule(rt[r].kind, rt[r].chunk);
    omp_sched_t k;
    int ch;
    omp_get_schedule(&k, &ch);
    CHECK((k & ~omp_sched_monotonic) == (rt[r].kind & ~omp_sched_monotonic), "%s: omp_get_schedule kind %d", rt[r].name, (int)k);
    if (rt[r].kind & omp_sched_monotonic) CHECK(k & omp_sched_monotonic, "%s: monotonic bit lost", rt[r].name);
    if (rt[r].chunk > 0) CHECK(ch == rt[r].chunk, "%s: omp_get_schedule chunk %d", rt[r].name, ch);
    int inner_ok = 0;
    #pragma omp parallel num_threads(2)
    {
      omp_sched_t k2;
      int ch2;
      omp_get_schedule(&k2, &ch2);
      #pragma omp master
      inner_ok = (k2 == k && ch2 == ch);
    }
    CHECK(inner_ok, "%s: run-sched-var not inherited by the region", rt[r].name);
    run_case(rt[r].name, l_runtime, rt[r].shape, rt[r].chunk, rt[r].mono);
    run_case(rt[r].name, p_runtime, rt[r].shape, rt[r].chunk, rt[r].mono);
    if (rt[r].mono || (rt[r].kind & ~omp_sched_monotonic) == omp_sched_static)
      run_case(rt[r].name, l_mono_runtime, rt[r].shape, rt[r].chunk, 1);
    run_case(rt[r].name, l_nonmono_runtime, ANY, 0, 0);
    run_case(rt[r].name, c_runtime, CONST | rt[r].shape, rt[r].chunk, rt[r].mono);
    run_case(rt[r].name, c_nonmono_runtime, CONST | ANY, 0, 0);
    if (rt[r].mono || (rt[r].kind & ~omp_sched_monotonic) == omp_sched_static)
      run_case(rt[r].name, c_mono_runtime, CONST | rt[r].shape, rt[r].chunk, 1);
  }
  PASS();
}
