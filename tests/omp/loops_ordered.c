/* ordered: the ordered regions of a loop run in sequential iteration order, for schedules static,
 * static,chunk, dynamic, dynamic,chunk, guided, runtime, auto; negative step, collapse(2),
 * unsigned long long iterations (GOMP_loop_ull_ordered_*), combined parallel for ordered, and
 * work outside the ordered region. */
#include "omp_test.h"

#define PRAGMA(...) _Pragma(#__VA_ARGS__)
#define N 600
typedef unsigned long long ull;

static long seq[4 * N];
static int pos;
static int body_runs;

#define ORDERED_LOOP(fname, ...)                                            \
  static void fname(int lo, int hi, int step) {                             \
    PRAGMA(omp parallel)                                                    \
    {                                                                       \
      PRAGMA(omp for ordered __VA_ARGS__)                                   \
      for (int i = lo; i < hi; i += step) {                                 \
        __atomic_fetch_add(&body_runs, 1, __ATOMIC_RELAXED);                \
        if (i % 5 == 0) omp_test_spin(100);                                 \
        PRAGMA(omp ordered)                                                 \
        seq[pos++] = i;                                                     \
      }                                                                     \
    }                                                                       \
  }
ORDERED_LOOP(o_static, schedule(static))
ORDERED_LOOP(o_static3, schedule(static, 3))
ORDERED_LOOP(o_dynamic, schedule(dynamic))
ORDERED_LOOP(o_dynamic4, schedule(dynamic, 4))
ORDERED_LOOP(o_guided, schedule(guided))
ORDERED_LOOP(o_guided2, schedule(guided, 2))
ORDERED_LOOP(o_runtime, schedule(runtime))
ORDERED_LOOP(o_auto, schedule(auto))
ORDERED_LOOP(o_default, )

static void check_seq(const char *name, int lo, int hi, int step) {
  int k = 0;
  for (int i = lo; i < hi; i += step, k++)
    CHECK(seq[k] == i, "%s: ordered position %d holds %ld, expected %d", name, k, seq[k], i);
  CHECK(pos == k && body_runs == k, "%s: %d ordered regions, %d bodies, expected %d", name, pos, body_runs, k);
  pos = 0;
  body_runs = 0;
}

int main(void) {
  struct { const char *name; void (*fn)(int, int, int); } loops[] = {
    {"static", o_static}, {"static,3", o_static3}, {"dynamic", o_dynamic}, {"dynamic,4", o_dynamic4},
    {"guided", o_guided}, {"guided,2", o_guided2}, {"runtime", o_runtime}, {"auto", o_auto}, {"default", o_default}};
  int bounds[][3] = {{0, N, 1}, {-17, 400, 3}, {0, 0, 1}, {5, 6, 1}};
  omp_set_schedule(omp_sched_dynamic, 2);
  for (unsigned l = 0; l < sizeof loops / sizeof loops[0]; l++)
    for (unsigned b = 0; b < 4; b++) {
      PHASE(loops[l].name);
      loops[l].fn(bounds[b][0], bounds[b][1], bounds[b][2]);
      check_seq(loops[l].name, bounds[b][0], bounds[b][1], bounds[b][2]);
    }

  PHASE("negative step ordered");
  #pragma omp parallel for ordered schedule(dynamic, 3)
  for (int i = N; i > 0; i -= 2) {
    #pragma omp ordered
    seq[pos++] = i;
  }
  {
    int k = 0;
    for (int i = N; i > 0; i -= 2, k++) CHECK(seq[k] == i, "negative step position %d: %ld", k, seq[k]);
    CHECK(pos == k, "negative step count %d", pos);
    pos = 0;
  }

  PHASE("collapse(2) ordered");
  #pragma omp parallel for ordered collapse(2) schedule(static, 2)
  for (int i = 0; i < 20; i++)
    for (int j = 0; j < 15; j++) {
      #pragma omp ordered
      seq[pos++] = i * 100 + j;
    }
  {
    int k = 0;
    for (int i = 0; i < 20; i++)
      for (int j = 0; j < 15; j++, k++) CHECK(seq[k] == i * 100 + j, "collapse ordered position %d: %ld", k, seq[k]);
    pos = 0;
  }

  PHASE("ull ordered");
  {
    ull base = 0xF000000000000000ULL;
    #pragma omp parallel for ordered schedule(dynamic)
    for (ull i = base; i < base + 500; i += 1) {
      #pragma omp ordered
      seq[pos++] = (long)(i - base);
    }
    #pragma omp parallel for ordered schedule(guided)
    for (ull i = base + 500; i > base; i -= 1) {
      #pragma omp ordered
      seq[pos++] = (long)(i - base);
    }
    #pragma omp parallel for ordered schedule(static, 5)
    for (ull i = base; i < base + 100; i += 1) {
      #pragma omp ordered
      seq[pos++] = (long)(i - base);
    }
    #pragma omp parallel for ordered schedule(runtime)
    for (ull i = base; i < base + 100; i += 1) {
      #pragma omp ordered
      seq[pos++] = (long)(i - base);
    }
    int k = 0;
    for (int i = 0; i < 500; i++, k++) CHECK(seq[k] == i, "ull up position %d: %ld", k, seq[k]);
    for (int i = 500; i > 0; i--, k++) CHECK(seq[k] == i, "ull down position %d: %ld", k, seq[k]);
    for (int i = 0; i < 100; i++, k++) CHECK(seq[k] == i, "ull static position %d: %ld", k, seq[k]);
    for (int i = 0; i < 100; i++, k++) CHECK(seq[k] == i, "ull runtime position %d: %ld", k, seq[k]);
    pos = 0;
  }

  PHASE("ordered with threads clause and work outside");
  {
    long acc = 0;
    #pragma omp parallel for ordered schedule(dynamic, 5) reduction(+ : acc)
    for (int i = 0; i < N; i++) {
      acc += i;
      #pragma omp ordered threads
      seq[pos++] = i;
    }
    CHECK(acc == (long)N * (N - 1) / 2, "sum outside ordered %ld", acc);
    for (int i = 0; i < N; i++) CHECK(seq[i] == i, "position %d: %ld", i, seq[i]);
    pos = 0;
  }
  PASS();
}
