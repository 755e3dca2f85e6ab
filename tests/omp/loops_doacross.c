/* Doacross loops: ordered(n) with depend(sink: ...) / depend(source), a 2-D wavefront
 * a[i][j] = f(a[i-1][j], a[i][j-1], a[i-1][j-1]) checked exactly against the sequential result,
 * 1-D recurrences with distance 1 and 3, several schedules, task reductions (reduction(task, ...)
 * with in_reduction tasks) on a doacross loop, and an unsigned long long variant. */
#include "omp_test.h"

#define PRAGMA(...) _Pragma(#__VA_ARGS__)
#define NI 12
#define NJ 10
typedef unsigned long long ull;

static unsigned a[NI][NJ], ref[NI][NJ];

static unsigned f3(unsigned up, unsigned left, unsigned diag, int i, int j) {
  return up * 31u + left * 17u + diag + (unsigned)(i * 7 + j);
}

#define WAVEFRONT(fname, ...)                                                       \
  static void fname(void) {                                                         \
    PRAGMA(omp parallel for ordered(2) __VA_ARGS__)                                 \
    for (int i = 1; i < NI; i++)                                                    \
      for (int j = 1; j < NJ; j++) {                                                \
        PRAGMA(omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1) depend(sink : i - 1, j - 1)) \
        a[i][j] = f3(a[i - 1][j], a[i][j - 1], a[i - 1][j - 1], i, j);             \
        PRAGMA(omp ordered depend(source))                                          \
      }                                                                             \
  }
WAVEFRONT(w_static, schedule(static))
WAVEFRONT(w_static1, schedule(static, 1))
WAVEFRONT(w_dynamic, schedule(dynamic))
WAVEFRONT(w_guided, schedule(guided))
WAVEFRONT(w_runtime, schedule(runtime))

#define ULL_M 24
static long ull_x[ULL_M + 1] = {1}, ull_x2[ULL_M + 1] = {1};

/* Non-constant unsigned long long bounds: gcc uses GOMP_loop_ull_doacross_* and
 * GOMP_doacross_ull_post/wait (constant bounds would be folded to the long variants). */
__attribute__((noinline)) static void ull_doacross(ull lo, ull hi, ull base, long *x) {
  #pragma omp parallel for ordered(1) schedule(dynamic)
  for (ull i = lo; i < hi; i++) {
    #pragma omp ordered depend(sink : i - 1)
    x[i - base] = x[i - base - 1] * 2 % 1000003 + 1;
    #pragma omp ordered depend(source)
  }
}
__attribute__((noinline)) static void ull_doacross_static(ull lo, ull hi, ull base, long *x) {
  #pragma omp parallel for ordered(1) schedule(static, 1)
  for (ull i = lo; i < hi; i++) {
    #pragma omp ordered depend(sink : i - 1)
    x[i - base] = x[i - base - 1] * 2 % 1000003 + 1;
    #pragma omp ordered depend(source)
  }
}

static void init(void) {
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) a[i][j] = (i == 0 || j == 0) ? (unsigned)(i * 3 + j * 5 + 1) : 0;
}

int main(void) {
  init();
  for (int i = 1; i < NI; i++)
    for (int j = 1; j < NJ; j++) a[i][j] = f3(a[i - 1][j], a[i][j - 1], a[i - 1][j - 1], i, j);
  memcpy(ref, a, sizeof a);

  struct { const char *name; void (*fn)(void); } w[] = {
    {"static", w_static}, {"static,1", w_static1}, {"dynamic", w_dynamic}, {"guided", w_guided}, {"runtime", w_runtime}};
  omp_set_schedule(omp_sched_dynamic, 1);
  for (unsigned k = 0; k < sizeof w / sizeof w[0]; k++) {
    PHASE(w[k].name);
    init();
    w[k].fn();
    for (int i = 0; i < NI; i++)
      for (int j = 0; j < NJ; j++)
        CHECK(a[i][j] == ref[i][j], "wavefront %s: a[%d][%d]=%u, expected %u", w[k].name, i, j, a[i][j], ref[i][j]);
  }

  PHASE("1-D recurrence, distances 1 and 3");
  {
    enum { M = 200 };
    static long x[M], xr[M];
    for (int i = 0; i < M; i++) xr[i] = x[i] = i < 3 ? i + 1 : 0;
    for (int i = 3; i < M; i++) xr[i] = (xr[i - 1] * 3 + xr[i - 3]) % 1000003;
    #pragma omp parallel
    {
      #pragma omp for ordered(1) schedule(dynamic, 2)
      for (int i = 3; i < M; i++) {
        #pragma omp ordered depend(sink : i - 1) depend(sink : i - 3)
        x[i] = (x[i - 1] * 3 + x[i - 3]) % 1000003;
        #pragma omp ordered depend(source)
      }
    }
    for (int i = 0; i < M; i++) CHECK(x[i] == xr[i], "recurrence x[%d]=%ld, expected %ld", i, x[i], xr[i]);
  }

  PHASE("task reduction on a doacross loop");
  for (int rep = 0; rep < 5; rep++) {
    enum { M = 300 };
    static long y[M];
    long sum = 0, tasks = 0;
    y[0] = 1;
    #pragma omp parallel
    {
      #pragma omp for ordered(1) schedule(dynamic, 3) reduction(task, + : sum) reduction(+ : tasks)
      for (int i = 1; i < M; i++) {
        #pragma omp ordered depend(sink : i - 1)
        y[i] = (y[i - 1] * 7 + i) % 10007;
        #pragma omp ordered depend(source)
        long v = y[i];
        #pragma omp task in_reduction(+ : sum) firstprivate(v)
        sum += v;
        tasks++;
      }
    }
    long expect = 0, yi = 1;
    for (int i = 1; i < M; i++) {
      yi = (yi * 7 + i) % 10007;
      expect += yi;
    }
    CHECK(tasks == M - 1, "doacross loop ran %ld iterations, expected %d", tasks, M - 1);
    CHECK(sum == expect, "rep %d: task reduction over a doacross loop gave %ld, expected %ld", rep, sum, expect);
  }

  PHASE("ull doacross");
  {
    const ull base = 0xF000000000000000ULL;
    ull_doacross(base + 1, base + ULL_M + 1, base, ull_x);
    ull_doacross_static(base + 1, base + ULL_M + 1, base, ull_x2);
    long e = 1;
    for (int i = 1; i <= ULL_M; i++) {
      e = e * 2 % 1000003 + 1;
      CHECK(ull_x[i] == e && ull_x2[i] == e, "ull doacross x[%d]=%ld/%ld, expected %ld", i, ull_x[i], ull_x2[i], e);
    }
  }
  PASS();
}
