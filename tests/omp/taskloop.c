/* taskloop: every iteration exactly once; each generated task runs a contiguous increasing
 * range; grainsize(g) gives tasks of g..2g-1 iterations, grainsize(strict: g) exactly g (the last
 * may be shorter), num_tasks(k) exactly min(k, n) tasks, num_tasks(strict: k) likewise; default
 * (no clause); nogroup + taskwait; implicit taskgroup waits for descendants; if(0); final,
 * untied, mergeable, priority; collapse(2); lastprivate/firstprivate; negative step; unsigned
 * long long iterations above LONG_MAX (GOMP_taskloop_ull); taskloop simd; parallel masked
 * taskloop / parallel master taskloop combined forms; taskloop from all threads. */
#include "omp_test.h"

#define PRAGMA(...) _Pragma(#__VA_ARGS__)
#define MAXN 2000
typedef unsigned long long ull;

static int hits[MAXN], task_of[MAXN];
static int next_task_id;
/* file scope: gcc 12 wrongly treats a block-scope static declared inside a parallel region as
   firstprivate in task/taskloop constructs */
static int h2[30][20];

#define TASKLOOP(fname, ...)                                                       \
  static void fname(long lo, long hi) {                                            \
    int tid = -1;                                                                  \
    PRAGMA(omp taskloop firstprivate(tid) __VA_ARGS__)                             \
    for (long i = lo; i < hi; i++) {                                               \
      if (tid < 0) tid = __atomic_fetch_add(&next_task_id, 1, __ATOMIC_RELAXED);   \
      __atomic_fetch_add(&hits[i - lo], 1, __ATOMIC_RELAXED);                      \
      task_of[i - lo] = tid;                                                       \
    }                                                                              \
  }
TASKLOOP(tl_default, )
TASKLOOP(tl_grain7, grainsize(7))
TASKLOOP(tl_grain1, grainsize(1))
TASKLOOP(tl_grain_strict7, grainsize(strict : 7))
TASKLOOP(tl_num5, num_tasks(5))
TASKLOOP(tl_num_strict3, num_tasks(strict : 3))
TASKLOOP(tl_num1000, num_tasks(1000))
TASKLOOP(tl_untied, untied grainsize(16))
TASKLOOP(tl_mergeable, mergeable num_tasks(4))
TASKLOOP(tl_final, final(1) grainsize(9))
TASKLOOP(tl_priority, priority(1) grainsize(11))
TASKLOOP(tl_if0, if(0) num_tasks(6))

enum kind { ANY, GRAIN, GRAIN_STRICT, NUM, NUM_STRICT };

static void check(const char *name, long n, enum kind kind, long param) {
  int ntasks = next_task_id;
  static int size[MAXN], first[MAXN], last[MAXN];
  for (int t = 0; t < ntasks; t++) size[t] = 0, first[t] = -1, last[t] = -1;
  for (long k = 0; k < n; k++) {
    CHECK(hits[k] == 1, "%s n=%ld: iteration %ld ran %d times", name, n, k, hits[k]);
    int t = task_of[k];
    CHECK(t >= 0 && t < ntasks, "%s: bad task id %d", name, t);
    if (first[t] < 0) first[t] = (int)k;
    else CHECK(last[t] == k - 1, "%s n=%ld: task %d's range not contiguous at %ld", name, n, t, k);
    last[t] = (int)k;
    size[t]++;
  }
  for (long k = n; k < MAXN; k++) CHECK(hits[k] == 0, "%s: iteration %ld out of range ran", name, k);
  int used = 0;
  for (int t = 0; t < ntasks; t++) used += size[t] > 0;
  if (n > 0) CHECK(used == ntasks, "%s: %d task ids but %d tasks with iterations", name, ntasks, used);
  if (kind == GRAIN && n > 0)
    for (int t = 0; t < ntasks; t++)
      CHECK(size[t] >= (param < n ? param : n) && size[t] < 2 * param, "%s n=%ld: task with %d iterations for grainsize %ld", name, n, size[t], param);
  if (kind == GRAIN_STRICT)
    for (int t = 0; t < ntasks; t++)
      CHECK(size[t] == param || (last[t] == n - 1 && size[t] < param), "%s n=%ld: strict grainsize task with %d iterations", name, n, size[t]);
  if ((kind == NUM || kind == NUM_STRICT) && n > 0)
    CHECK(ntasks == (param < n ? param : n), "%s n=%ld: %d tasks for num_tasks(%ld)", name, n, ntasks, param);
  memset(hits, 0, sizeof hits);
  memset(task_of, -1, sizeof task_of);
  next_task_id = 0;
}

int main(void) {
  struct { const char *name; void (*fn)(long, long); enum kind kind; long param; } c[] = {
    {"default", tl_default, ANY, 0},        {"grainsize(7)", tl_grain7, GRAIN, 7},
    {"grainsize(1)", tl_grain1, GRAIN, 1},  {"grainsize(strict:7)", tl_grain_strict7, GRAIN_STRICT, 7},
    {"num_tasks(5)", tl_num5, NUM, 5},      {"num_tasks(strict:3)", tl_num_strict3, NUM_STRICT, 3},
    {"num_tasks(1000)", tl_num1000, NUM, 1000}, {"untied", tl_untied, GRAIN, 16},
    {"mergeable", tl_mergeable, NUM, 4},    {"final", tl_final, GRAIN, 9},
    {"priority", tl_priority, GRAIN, 11},   {"if(0)", tl_if0, NUM, 6},
  };
  long ns[] = {0, 1, 2, 6, 50, 1001};
  memset(task_of, -1, sizeof task_of);
  for (unsigned k = 0; k < sizeof c / sizeof c[0]; k++)
    for (unsigned j = 0; j < sizeof ns / sizeof ns[0]; j++) {
      PHASE(c[k].name);
      #pragma omp parallel
      #pragma omp single
      c[k].fn(100, 100 + ns[j]);
      check(c[k].name, ns[j], c[k].kind, c[k].param);
      /* and outside any parallel region */
      c[k].fn(-50, -50 + ns[j]);
      check(c[k].name, ns[j], c[k].kind, c[k].param);
    }

  PHASE("implicit taskgroup waits for descendants; nogroup + taskwait");
  #pragma omp parallel
  #pragma omp single
  {
    int done = 0;
    #pragma omp taskloop grainsize(10) shared(done)
    for (int i = 0; i < 100; i++) {
      #pragma omp task shared(done)
      {
        omp_test_spin(100);
        #pragma omp atomic
        done++;
      }
    }
    CHECK(done == 100, "taskloop returned with %d of 100 descendant tasks done", done);
    int cnt = 0;
    #pragma omp taskloop nogroup num_tasks(8) shared(cnt)
    for (int i = 0; i < 64; i++) {
      #pragma omp atomic
      cnt++;
    }
    #pragma omp taskwait
    CHECK(cnt == 64, "nogroup taskloop + taskwait: %d", cnt);
  }

  PHASE("collapse, lastprivate, firstprivate, negative step");
  #pragma omp parallel
  #pragma omp single
  {
    #pragma omp taskloop collapse(2) grainsize(13)
    for (int i = 0; i < 30; i++)
      for (int j = 0; j < 20; j++) __atomic_fetch_add(&h2[i][j], 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 30; i++)
      for (int j = 0; j < 20; j++) CHECK(h2[i][j] == 1, "collapse (%d,%d) ran %d times", i, j, h2[i][j]);
    int lp = -1, fp = 7;
    #pragma omp taskloop lastprivate(lp) firstprivate(fp) num_tasks(7)
    for (int i = 0; i < 333; i++) {
      CHECK(fp >= 7, "firstprivate %d", fp);
      lp = i * 3 + fp;
    }
    CHECK(lp == 332 * 3 + 7, "taskloop lastprivate %d", lp);
    int neg[400] = {0};
    #pragma omp taskloop grainsize(5) shared(neg)
    for (int i = 399; i >= 0; i -= 3) __atomic_fetch_add(&neg[i], 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 400; i++) CHECK(neg[i] == ((399 - i) % 3 == 0), "negative step index %d ran %d times", i, neg[i]);
  }

  PHASE("unsigned long long taskloop");
  {
    ull base = 0xF000000000000000ULL;
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp taskloop grainsize(17)
      for (ull i = base; i < base + 1000; i++) __atomic_fetch_add(&hits[i - base], 1, __ATOMIC_RELAXED);
      #pragma omp taskloop num_tasks(9)
      for (ull i = base + 1000; i > base; i -= 2) __atomic_fetch_add(&hits[i - base - 1], 10, __ATOMIC_RELAXED);
    }
    for (int k = 0; k < 1000; k++) CHECK(hits[k] == 1 + ((999 - k) % 2 == 0 ? 10 : 0), "ull taskloop index %d: %d", k, hits[k]);
    memset(hits, 0, sizeof hits);
  }

  PHASE("taskloop simd and combined forms");
  {
    static float v[1024];
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp taskloop simd grainsize(64)
      for (int i = 0; i < 1024; i++) v[i] = (float)i * 2.0f;
    }
    for (int i = 0; i < 1024; i++) CHECK(v[i] == (float)i * 2.0f, "taskloop simd v[%d]", i);
    #pragma omp parallel masked taskloop num_tasks(4)
    for (int i = 0; i < 1024; i++) v[i] += 1.0f;
    #pragma omp parallel master taskloop grainsize(100)
    for (int i = 0; i < 1024; i++) v[i] += 1.0f;
    #pragma omp parallel
    {
      #pragma omp masked taskloop
      for (int i = 0; i < 1024; i++) v[i] += 1.0f;
    }
    for (int i = 0; i < 1024; i++) CHECK(v[i] == (float)i * 2.0f + 3.0f, "combined taskloops v[%d]=%f", i, (double)v[i]);
  }

  PHASE("taskloops from every thread");
  {
    long total = 0;
    #pragma omp parallel
    {
      #pragma omp taskloop grainsize(3) shared(total)
      for (int i = 0; i < 60; i++) {
        #pragma omp atomic
        total += i;
      }
    }
    CHECK(total == (long)omp_test_threads() * 59 * 60 / 2, "total %ld", total);
  }
  PASS();
}
