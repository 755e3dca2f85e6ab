/* Loop shapes: collapse(2)/collapse(3) (with strides, downward inner loop), negative steps, unsigned
 * long long iteration variables above LONG_MAX counting up and down (the GOMP_loop_ull_* entry
 * points), nowait, lastprivate (static/dynamic/guided/collapse), lastprivate(conditional:),
 * linear, the loop construct, and parallel-for combined forms of these. */
#include "omp_test.h"

#define PRAGMA(...) _Pragma(#__VA_ARGS__)
typedef unsigned long long ull;

static int hits2[23][17];
static int hits3[7][5][9];
static int hits1[5000];

#define COLLAPSE2(fname, ...)                                            \
  static void fname(void) {                                              \
    PRAGMA(omp parallel for collapse(2) __VA_ARGS__)                     \
    for (int i = 0; i < 23; i++)                                         \
      for (int j = 0; j < 17; j++) __atomic_fetch_add(&hits2[i][j], 1, __ATOMIC_RELAXED); \
  }
COLLAPSE2(collapse2_static, schedule(static))
COLLAPSE2(collapse2_static5, schedule(static, 5))
COLLAPSE2(collapse2_dynamic, schedule(dynamic, 3))
COLLAPSE2(collapse2_guided, schedule(guided))
COLLAPSE2(collapse2_runtime, schedule(runtime))

static void check_collapse2(const char *name) {
  for (int i = 0; i < 23; i++)
    for (int j = 0; j < 17; j++) {
      CHECK(hits2[i][j] == 1, "%s: (%d,%d) ran %d times", name, i, j, hits2[i][j]);
      hits2[i][j] = 0;
    }
}

#define NEG(fname, ...)                                                  \
  static void fname(int lo, int hi, int step) {                          \
    PRAGMA(omp parallel for __VA_ARGS__)                                 \
    for (int i = hi; i > lo; i -= step) __atomic_fetch_add(&hits1[i - lo], 1, __ATOMIC_RELAXED); \
  }
NEG(neg_static, schedule(static))
NEG(neg_static3, schedule(static, 3))
NEG(neg_dynamic, schedule(dynamic, 2))
NEG(neg_guided, schedule(guided, 3))
NEG(neg_runtime, schedule(runtime))

#define ULL(fname, ...)                                                  \
  static void fname(ull base, ull n, ull step, int down) {               \
    if (!down) {                                                         \
      PRAGMA(omp parallel for __VA_ARGS__)                               \
      for (ull i = base; i < base + n * step; i += step)                 \
        __atomic_fetch_add(&hits1[(i - base) / step], 1, __ATOMIC_RELAXED); \
    } else {                                                             \
      PRAGMA(omp parallel for __VA_ARGS__)                               \
      for (ull i = base + n * step; i > base; i -= step)                 \
        __atomic_fetch_add(&hits1[(i - base) / step - 1], 1, __ATOMIC_RELAXED); \
    }                                                                    \
  }
ULL(ull_static, schedule(static))
ULL(ull_static7, schedule(static, 7))
ULL(ull_dynamic, schedule(dynamic))
ULL(ull_dynamic4, schedule(dynamic, 4))
ULL(ull_nonmono_dynamic, schedule(nonmonotonic : dynamic, 4))
ULL(ull_guided, schedule(guided))
ULL(ull_mono_guided, schedule(monotonic : guided, 2))
ULL(ull_runtime, schedule(runtime))
ULL(ull_nonmono_runtime, schedule(nonmonotonic : runtime))

static void check_hits1(const char *name, int n) {
  for (int k = 0; k < 5000; k++) {
    CHECK(hits1[k] == (k < n), "%s: logical iteration %d ran %d times (n=%d)", name, k, hits1[k], n);
    hits1[k] = 0;
  }
}

int main(void) {
  int T = omp_test_threads();

  PHASE("collapse(2)");
  collapse2_static(); check_collapse2("collapse2 static");
  collapse2_static5(); check_collapse2("collapse2 static,5");
  collapse2_dynamic(); check_collapse2("collapse2 dynamic,3");
  collapse2_guided(); check_collapse2("collapse2 guided");
  omp_set_schedule(omp_sched_dynamic, 2);
  collapse2_runtime(); check_collapse2("collapse2 runtime");

  PHASE("collapse(3) inside a parallel region, nowait + explicit barrier");
  #pragma omp parallel
  {
    #pragma omp for collapse(3) schedule(dynamic) nowait
    for (int i = 0; i < 7; i++)
      for (int j = 0; j < 5; j++)
        for (int k = 0; k < 9; k++) __atomic_fetch_add(&hits3[i][j][k], 1, __ATOMIC_RELAXED);
    #pragma omp barrier
    #pragma omp for collapse(3) schedule(static)
    for (int i = 0; i < 7; i++)
      for (int j = 0; j < 5; j++)
        for (int k = 0; k < 9; k++) __atomic_fetch_add(&hits3[i][j][k], 10, __ATOMIC_RELAXED);
  }
  for (int i = 0; i < 7; i++)
    for (int j = 0; j < 5; j++)
      for (int k = 0; k < 9; k++) CHECK(hits3[i][j][k] == 11, "collapse3 (%d,%d,%d) = %d", i, j, k, hits3[i][j][k]);

  /* (No non-rectangular collapse here: gcc 12 miscompiles e.g. "for (j = i - 5; j < i + 3; j++)"
     under collapse(2), with -Wmaybe-uninitialized on its own .count temporaries and wrong
     iteration counts under -fsanitize=address, even with libgomp.) */
  PHASE("collapse(2) with strides and a downward inner loop");
  {
    #pragma omp parallel for collapse(2) schedule(dynamic, 2)
    for (int i = 1; i < 23; i += 3)
      for (int j = 16; j >= 0; j -= 2) __atomic_fetch_add(&hits2[i][j], 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 23; i++)
      for (int j = 0; j < 17; j++) {
        int expect = (i % 3 == 1 && j % 2 == 0) ? 1 : 0;
        CHECK(hits2[i][j] == expect, "strided collapse (%d,%d) ran %d times", i, j, hits2[i][j]);
        hits2[i][j] = 0;
      }
  }

  PHASE("negative steps");
  {
    struct { int lo, hi, step; } c[] = {{-1, 0, 1}, {-1, 99, 1}, {-50, 1000, 1}, {-1000, 2000, 3}, {7, 8, 5}, {0, 4000, 7}};
    for (unsigned r = 0; r < sizeof c / sizeof c[0]; r++) {
      /* iterations i = hi, hi-step, ... > lo; hits1 indexed by i - lo */
      int expect[5000] = {0};
      for (int i = c[r].hi; i > c[r].lo; i -= c[r].step) expect[i - c[r].lo] = 1;
      void (*fns[])(int, int, int) = {neg_static, neg_static3, neg_dynamic, neg_guided, neg_runtime};
      for (unsigned f = 0; f < 5; f++) {
        fns[f](c[r].lo, c[r].hi, c[r].step);
        for (int k = 0; k < 5000; k++) {
          CHECK(hits1[k] == expect[k], "negative step fn %u case %u: index %d ran %d times", f, r, k, hits1[k]);
          hits1[k] = 0;
        }
      }
    }
  }

  PHASE("unsigned long long iteration variables");
  {
    ull bases[] = {0xF000000000000000ULL, 0x8000000000000000ULL - 300, 5};
    ull ns[] = {0, 1, 777, 4999};
    ull steps[] = {1, 3, 1000003};
    void (*fns[])(ull, ull, ull, int) = {ull_static, ull_static7, ull_dynamic, ull_dynamic4, ull_nonmono_dynamic,
                                         ull_guided, ull_mono_guided, ull_runtime, ull_nonmono_runtime};
    omp_set_schedule(omp_sched_guided, 3);
    for (unsigned b = 0; b < 3; b++)
      for (unsigned n = 0; n < 4; n++)
        for (unsigned s = 0; s < 3; s++)
          for (unsigned f = 0; f < sizeof fns / sizeof fns[0]; f++)
            for (int down = 0; down < 2; down++) {
              fns[f](bases[b], ns[n], steps[s], down);
              check_hits1("ull loop", (int)ns[n]);
            }
  }

  PHASE("lastprivate");
  {
    int x = -1, y = -1, z = -1;
    double d = 0;
    #pragma omp parallel
    {
      #pragma omp for lastprivate(x) schedule(static)
      for (int i = 0; i < 1001; i++) x = i * 2;
      #pragma omp for lastprivate(y, d) schedule(dynamic, 3)
      for (int i = 0; i < 1001; i++) { y = i + 5; d = i * 0.5; }
      #pragma omp for lastprivate(z) schedule(guided) collapse(2)
      for (int i = 0; i < 31; i++)
        for (int j = 0; j < 29; j++) z = i * 100 + j;
    }
    CHECK(x == 2000, "lastprivate static: %d", x);
    CHECK(y == 1005 && d == 500.0, "lastprivate dynamic: %d %f", y, d);
    CHECK(z == 3028, "lastprivate collapse: %d", z);
    int w = -1;
    ull u = 0;
    #pragma omp parallel for lastprivate(w) schedule(runtime)
    for (int i = 100; i > -3; i -= 2) w = i;
    CHECK(w == -2, "lastprivate negative step: %d", w);
    #pragma omp parallel for lastprivate(u) schedule(dynamic)
    for (ull i = 0xF000000000000000ULL; i < 0xF000000000000000ULL + 100; i++) u = i;
    CHECK(u == 0xF000000000000000ULL + 99, "lastprivate ull: %llx", u);
    int iv = -1;
    #pragma omp parallel for schedule(dynamic) lastprivate(iv)
    for (iv = 0; iv < 77; iv++) omp_test_spin(1);
    CHECK(iv == 77, "loop variable after the loop %d", iv);
  }

  PHASE("lastprivate(conditional:)");
  {
    static int a[2000];
    for (int i = 0; i < 2000; i++) a[i] = (i * 37) % 101;
    int last_big = -1, last_big_dyn = -1, expect = -1;
    for (int i = 0; i < 2000; i++) if (a[i] > 90) expect = i;
    #pragma omp parallel for lastprivate(conditional : last_big) schedule(static)
    for (int i = 0; i < 2000; i++)
      if (a[i] > 90) last_big = i;
    #pragma omp parallel for lastprivate(conditional : last_big_dyn) schedule(dynamic, 7)
    for (int i = 0; i < 2000; i++)
      if (a[i] > 90) last_big_dyn = i;
    CHECK(last_big == expect && last_big_dyn == expect, "lastprivate(conditional:) %d %d, expected %d", last_big, last_big_dyn, expect);
    double dv = -1.0;
    #pragma omp parallel
    {
      #pragma omp for lastprivate(conditional : dv) schedule(guided)
      for (int i = 0; i < 2000; i++)
        if (a[i] == 0) dv = i * 0.25;
    }
    double dexp = -1.0;
    for (int i = 0; i < 2000; i++) if (a[i] == 0) dexp = i * 0.25;
    CHECK(dv == dexp, "lastprivate(conditional:) double %f, expected %f", dv, dexp);
  }

  PHASE("linear");
  {
    static int out[1000];
    int j = 0;
    #pragma omp parallel for linear(j : 3) schedule(static)
    for (int i = 0; i < 1000; i++) {
      out[i] = j;
      j += 3;
    }
    for (int i = 0; i < 1000; i++) CHECK(out[i] == 3 * i, "linear: out[%d]=%d", i, out[i]);
    CHECK(j == 3000, "linear final value %d", j);
  }

  PHASE("loop construct");
  {
    static int out[3000];
    #pragma omp parallel loop
    for (int i = 0; i < 3000; i++) out[i] = i + 1;
    #pragma omp parallel
    {
      #pragma omp loop bind(parallel)
      for (int i = 0; i < 3000; i++) out[i] *= 2;
    }
    for (int i = 0; i < 3000; i++) CHECK(out[i] == 2 * (i + 1), "loop construct: out[%d]=%d", i, out[i]);
  }

  PHASE("nowait loops then barrier");
  {
    static int a[4000], b[4000];
    #pragma omp parallel
    {
      #pragma omp for schedule(dynamic, 16) nowait
      for (int i = 0; i < 4000; i++) a[i] = i;
      #pragma omp for schedule(guided) nowait
      for (int i = 0; i < 4000; i++) b[i] = -i;
      #pragma omp barrier
      #pragma omp for schedule(static)
      for (int i = 0; i < 4000; i++) CHECK(a[i] == i && b[i] == -i, "nowait results at %d", i);
    }
  }
  (void)T;
  PASS();
}
