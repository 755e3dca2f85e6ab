/* Persistent task graphs from an OpenMP program (weft/omp_ext.h): a loop of
 * `#pragma omp task depend(...) firstprivate(it, b)` inside parallel/single, wrapped in
 * weft_graph_begin / weft_graph_iteration / weft_graph_end. A 1-D blocked Gauss-Seidel-like sweep
 * (inout: own block, in: both neighbours) over 30 iterations, whose update uses the firstprivate
 * iteration value: the result must equal the sequential sweep exactly (integer arithmetic), on
 * weft (where the loop is recorded once and replayed: graph_replayed > 0) and on libgomp (where
 * the graph calls do nothing). Also: a taskiter-mode loop through weft_graph_begin_with (on libgomp
 * the user loop then runs only the recorded iterations, so the expected result depends on
 * weft_omp_graphs_available()), persistent tasks that leave a child task running (the implicit
 * barrier at the end of the parallel region must wait for it), and ordinary tasks afterwards. */
#define _GNU_SOURCE
#include "omp_test.h"

#include <dlfcn.h>
#include <link.h>
#include <weft/omp_ext.h>

#pragma weak weft_get_stats
#pragma weak weft_reset_stats

#define NB 12          /* blocks */
#define BS 8           /* cells per block */
#define ITERS 30
#define N ((NB + 2) * BS) /* blocks 0 and NB+1 are constant halos */

static unsigned long long x[N], ref[N];

static void init(unsigned long long *g) {
  for (int i = 0; i < N; i++) g[i] = (unsigned long long)(i * 7919 % 1000 + 1);
}

/* Gauss-Seidel-like in-place update of block b (1..NB) in iteration it. */
static void update_block(unsigned long long *g, int b, int it) {
  for (int i = b * BS; i < (b + 1) * BS; i++)
    g[i] = g[i - 1] * 3 + g[i] * 5 + g[i + 1] * 7 + (unsigned long long)it * 1000003ULL + (unsigned long long)b;
}

static int has_libweft;
static int find_libweft(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  if (info->dlpi_name && strstr(info->dlpi_name, "libweft")) has_libweft = 1;
  return 0;
}

static unsigned long long replayed(void) {
  if (!weft_get_stats) return 0;
  weft_stats_t s;
  memset(&s, 0, sizeof s);
  CHECK(weft_get_stats(&s) == 0, "weft_get_stats failed");
  return s.graph_replayed;
}

int main(void) {
  int available = weft_omp_graphs_available();
  dl_iterate_phdr(find_libweft, NULL);
  printf("weft_omp_graphs_available() = %d (libweft loaded: %s)\n", available, has_libweft ? "yes" : "no");
  /* On weft (preloaded or linked) the weak references resolve; on libgomp nothing defines them. */
  if (has_libweft) CHECK(available == 1, "libweft is loaded but the graph calls are not bound to it");

  /* ---- re-execute mode ------------------------------------------------------------------- */
  init(ref);
  for (int it = 0; it < ITERS; it++)
    for (int b = 1; b <= NB; b++) update_block(ref, b, it);

  for (int rep = 0; rep < 3; rep++) {
    PHASE("re-execute graph");
    init(x);
    if (available && weft_reset_stats) weft_reset_stats();
    int rc_begin = -1, rc_iter = 0, rc_end = -1;
    #pragma omp parallel
    #pragma omp single
    {
      rc_begin = weft_graph_begin();
      for (int it = 0; it < ITERS; it++) {
        int r = weft_graph_iteration();
        if (r != 0) rc_iter = r;
        for (int b = 1; b <= NB; b++) {
          #pragma omp task depend(inout: x[b * BS]) depend(in: x[(b - 1) * BS], x[(b + 1) * BS]) firstprivate(it, b)
          {
            omp_test_spin(200);
            update_block(x, b, it);
          }
        }
      }
      rc_end = weft_graph_end();
      #pragma omp taskwait
    }
    CHECK(rc_begin == 0, "weft_graph_begin returned %d", rc_begin);
    CHECK(rc_iter == 0, "weft_graph_iteration returned %d", rc_iter);
    CHECK(rc_end == 0, "weft_graph_end returned %d", rc_end);
    for (int i = 0; i < N; i++)
      CHECK(x[i] == ref[i], "rep %d: cell %d (block %d): expected %llu, got %llu", rep, i, i / BS, ref[i], x[i]);
    if (available) {
      unsigned long long r = replayed();
      printf("rep %d: graph_replayed = %llu\n", rep, r);
      CHECK(r > 0, "on weft, the loop should have been replayed (graph_replayed = 0)");
    }
  }

  /* ---- a depend clause that changes: detected and recorded again -------------------------- */
  {
    /* Each task also reads a halo cell (constant): x[0] in every iteration but iteration 10, where
     * it is x[1]. The changed address must be seen (the graph is recorded again), the order of
     * the sweep kept, and the replays on either side of it must match their recordings. */
    PHASE("changed depend clause");
    init(x);
    if (available && weft_reset_stats) weft_reset_stats();
    #pragma omp parallel
    #pragma omp single
    {
      weft_graph_begin();
      for (int it = 0; it < ITERS; it++) {
        weft_graph_iteration();
        int halo = it == 10;
        for (int b = 1; b <= NB; b++) {
          #pragma omp task depend(inout: x[b * BS]) depend(in: x[(b - 1) * BS], x[(b + 1) * BS], x[halo]) firstprivate(it, b)
          update_block(x, b, it);
        }
      }
      weft_graph_end();
    }
    for (int i = 0; i < N; i++)
      CHECK(x[i] == ref[i], "changed depend clause: cell %d (block %d): expected %llu, got %llu", i, i / BS, ref[i], x[i]);
    if (available) {
      weft_stats_t s;
      memset(&s, 0, sizeof s);
      CHECK(weft_get_stats(&s) == 0, "weft_get_stats failed");
      printf("changed depend clause: graph_recordings = %llu, graph_replayed = %llu\n",
             (unsigned long long)s.graph_recordings, (unsigned long long)s.graph_replayed);
      CHECK(s.graph_recordings == 2, "the changed iteration should be recorded again (graph_recordings = %llu)",
            (unsigned long long)s.graph_recordings);
      CHECK(s.graph_replayed > 0, "nothing was replayed");
    }
  }

  /* ---- taskiter mode: the user loop runs the recorded iteration only ----------------------- */
  {
    PHASE("taskiter graph");
    const int total = 17;
    weft_graph_options_t o;
    memset(&o, 0, sizeof o);
    o.mode = WEFT_GRAPH_TASKITER;
    o.iterations = total;
    init(x);
    init(ref);
    /* On weft the recorded iteration (it = 5) runs `total` times; elsewhere once. */
    int runs = available ? total : 1;
    for (int k = 0; k < runs; k++)
      for (int b = 1; b <= NB; b++) update_block(ref, b, 5);
    int rc_begin = -1, rc_end = -1;
    #pragma omp parallel
    #pragma omp single
    {
      rc_begin = weft_graph_begin_with(&o);
      int it = 5;
      weft_graph_iteration();
      for (int b = 1; b <= NB; b++) {
        #pragma omp task depend(inout: x[b * BS]) depend(in: x[(b - 1) * BS], x[(b + 1) * BS]) firstprivate(it, b)
        update_block(x, b, it);
      }
      rc_end = weft_graph_end();
      #pragma omp taskwait
    }
    CHECK(rc_begin == 0, "weft_graph_begin_with returned %d", rc_begin);
    CHECK(rc_end == 0, "weft_graph_end returned %d", rc_end);
    for (int i = 0; i < N; i++)
      CHECK(x[i] == ref[i], "taskiter: cell %d (block %d): expected %llu, got %llu", i, i / BS, ref[i], x[i]);
  }

  /* ---- children of persistent tasks: the end of the parallel region waits for them --------- */
  {
    PHASE("children of persistent tasks");
    static int child_runs[NB + 2];
    memset(child_runs, 0, sizeof child_runs);
    init(x);
    init(ref);
    for (int it = 0; it < ITERS; it++)
      for (int b = 1; b <= NB; b++) update_block(ref, b, it);
    #pragma omp parallel
    #pragma omp single
    {
      weft_graph_begin();
      for (int it = 0; it < ITERS; it++) {
        weft_graph_iteration();
        for (int b = 1; b <= NB; b++) {
          #pragma omp task depend(inout: x[b * BS]) depend(in: x[(b - 1) * BS], x[(b + 1) * BS]) firstprivate(it, b)
          {
            update_block(x, b, it);
            /* a child nobody waits for inside the task: the implicit barrier must */
            #pragma omp task firstprivate(b)
            {
              omp_test_spin(2000);
              __atomic_fetch_add(&child_runs[b], 1, __ATOMIC_RELAXED);
            }
          }
        }
      }
      weft_graph_end();
    }
    for (int b = 1; b <= NB; b++)
      CHECK(__atomic_load_n(&child_runs[b], __ATOMIC_ACQUIRE) == ITERS,
            "after the parallel region: %d of %d children of block %d's tasks ran", child_runs[b], ITERS, b);
    for (int i = 0; i < N; i++)
      CHECK(x[i] == ref[i], "children phase: cell %d: expected %llu, got %llu", i, ref[i], x[i]);
  }

  /* ---- ordinary tasks after the graphs still work ------------------------------------------ */
  {
    PHASE("plain tasks after graphs");
    init(x);
    init(ref);
    for (int b = 1; b <= NB; b++) update_block(ref, b, 99);
    #pragma omp parallel
    #pragma omp single
    for (int b = 1; b <= NB; b++) {
      #pragma omp task depend(inout: x[b * BS]) depend(in: x[(b - 1) * BS], x[(b + 1) * BS]) firstprivate(b)
      update_block(x, b, 99);
    }
    for (int i = 0; i < N; i++) CHECK(x[i] == ref[i], "plain tasks: cell %d: expected %llu, got %llu", i, ref[i], x[i]);
  }
  PASS();
}
