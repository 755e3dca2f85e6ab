/* depend(in/out/inout) on random task graphs (fixed seeds): a few hundred sibling tasks over a
 * handful of addresses. At creation the generating task computes, per address, how many writer
 * tasks precede the new one and how many readers came after the last writer; every task checks at
 * start and end that exactly those predecessors have completed and that no conflicting task runs
 * concurrently (the sequential-order semantics of OpenMP dependences). Clause shapes: fixed lists
 * (old depend-array format) and iterator-modifier lists of varying length. Also run with
 * generating tasks nested inside tasks (one dependence domain per parent). */
#include "omp_test.h"

#define MAXK 10
#define MAXTASKS 400

struct task_desc {
  int nin, nout;
  int ins[4], outs[4];
  int exp_w[MAXK], exp_r[MAXK];
  int work;
  int shape;
};

struct graph {
  int k, ntasks;
  int slots[MAXK];            /* the dependence addresses */
  int version[MAXK];          /* completed writers per address */
  int rdone[MAXK];            /* completed readers since the last writer */
  int wactive[MAXK], ractive[MAXK];
  int completed;
  struct task_desc t[MAXTASKS];
};

static struct graph graphs[6];

static void build(struct graph *g, int k, int ntasks, unsigned long long seed) {
  memset(g, 0, sizeof *g);
  g->k = k;
  g->ntasks = ntasks;
  int writers[MAXK] = {0}, readers_since[MAXK] = {0};
  for (int n = 0; n < ntasks; n++) {
    struct task_desc *d = &g->t[n];
    int used[MAXK] = {0};
    int nin = (int)(omp_test_rand(&seed) % 3);
    int nout = (int)(omp_test_rand(&seed) % 3);
    if (nin + nout == 0) nout = 1;
    for (int j = 0; j < nout; j++) {
      int a;
      do a = (int)(omp_test_rand(&seed) % (unsigned)k); while (used[a]);
      used[a] = 2;
      d->outs[d->nout++] = a;
    }
    for (int j = 0; j < nin; j++) {
      int a, tries = 0;
      do a = (int)(omp_test_rand(&seed) % (unsigned)k); while (used[a] && ++tries < 20);
      if (used[a]) break;
      used[a] = 1;
      d->ins[d->nin++] = a;
    }
    for (int a = 0; a < k; a++) {
      d->exp_w[a] = writers[a];
      d->exp_r[a] = readers_since[a];
      if (used[a] == 2) {
        writers[a]++;
        readers_since[a] = 0;
      } else if (used[a] == 1) {
        readers_since[a]++;
      }
    }
    d->work = (int)(omp_test_rand(&seed) % 400);
    d->shape = (int)(omp_test_rand(&seed) % 4);
  }
}

static inline int ld(int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

static void task_body(struct graph *g, int n) {
  struct task_desc *d = &g->t[n];
  for (int j = 0; j < d->nout; j++) {
    int a = d->outs[j];
    int wa = __atomic_add_fetch(&g->wactive[a], 1, __ATOMIC_ACQ_REL);
    CHECK(wa == 1, "task %d: another writer of address %d is running", n, a);
    CHECK(ld(&g->ractive[a]) == 0, "task %d: a reader of address %d runs during its writer", n, a);
    CHECK(ld(&g->version[a]) == d->exp_w[a], "task %d (writer of %d): %d writers done, expected %d", n, a, ld(&g->version[a]), d->exp_w[a]);
    CHECK(ld(&g->rdone[a]) == d->exp_r[a], "task %d (writer of %d): %d readers done, expected %d", n, a, ld(&g->rdone[a]), d->exp_r[a]);
  }
  for (int j = 0; j < d->nin; j++) {
    int a = d->ins[j];
    __atomic_add_fetch(&g->ractive[a], 1, __ATOMIC_ACQ_REL);
    CHECK(ld(&g->wactive[a]) == 0, "task %d: a writer of address %d runs during its reader", n, a);
    CHECK(ld(&g->version[a]) == d->exp_w[a], "task %d (reader of %d): %d writers done, expected %d", n, a, ld(&g->version[a]), d->exp_w[a]);
  }
  omp_test_spin(d->work);
  for (int j = 0; j < d->nin; j++) {
    int a = d->ins[j];
    CHECK(ld(&g->version[a]) == d->exp_w[a], "task %d: address %d written while it read it", n, a);
    __atomic_sub_fetch(&g->ractive[a], 1, __ATOMIC_ACQ_REL);
    __atomic_add_fetch(&g->rdone[a], 1, __ATOMIC_ACQ_REL);
  }
  for (int j = 0; j < d->nout; j++) {
    int a = d->outs[j];
    CHECK(ld(&g->rdone[a]) == d->exp_r[a], "task %d: a later reader of %d ran before it finished", n, a);
    __atomic_store_n(&g->rdone[a], 0, __ATOMIC_RELEASE);
    __atomic_store_n(&g->version[a], d->exp_w[a] + 1, __ATOMIC_RELEASE);
    __atomic_sub_fetch(&g->wactive[a], 1, __ATOMIC_ACQ_REL);
  }
  __atomic_add_fetch(&g->completed, 1, __ATOMIC_ACQ_REL);
}

static void spawn_graph(struct graph *g) {
  int *s = g->slots;
  (void)s;
  for (int n = 0; n < g->ntasks; n++) {
    struct task_desc *d = &g->t[n];
    int nin = d->nin, nout = d->nout;
    int *ins = d->ins, *outs = d->outs;
    if (d->shape == 0 && nin == 0 && nout == 1) {
      #pragma omp task depend(out : s[outs[0]]) firstprivate(g, n)
      task_body(g, n);
    } else if (d->shape == 1 && nin == 1 && nout == 1) {
      #pragma omp task depend(in : s[ins[0]]) depend(inout : s[outs[0]]) firstprivate(g, n)
      task_body(g, n);
    } else if (d->shape == 2 && nin == 2 && nout == 1) {
      #pragma omp task depend(in : s[ins[0]], s[ins[1]]) depend(out : s[outs[0]]) firstprivate(g, n)
      task_body(g, n);
    } else if (d->shape == 3 && nin == 1 && nout == 0) {
      #pragma omp task depend(in : s[ins[0]]) firstprivate(g, n)
      task_body(g, n);
    } else if (d->shape == 0 && nin == 0 && nout == 2) {
      #pragma omp task depend(inout : s[outs[0]]) depend(out : s[outs[1]]) firstprivate(g, n)
      task_body(g, n);
    } else {
      #pragma omp task depend(iterator(int j = 0 : nin), in : s[ins[j]]) \
                       depend(iterator(int j = 0 : nout), inout : s[outs[j]]) firstprivate(g, n)
      task_body(g, n);
    }
    (void)nin, (void)nout, (void)ins, (void)outs;
  }
  #pragma omp taskwait
  CHECK(g->completed == g->ntasks, "%d of %d tasks completed at taskwait", g->completed, g->ntasks);
  for (int a = 0; a < g->k; a++) CHECK(g->wactive[a] == 0 && g->ractive[a] == 0, "address %d still active", a);
}

int main(void) {
  PHASE("flat random graphs");
  int ks[3] = {3, 6, 10};
  for (int r = 0; r < 3; r++) {
    build(&graphs[0], ks[r], 300, 0x9E3779B97F4A7C15ULL + (unsigned)r);
    #pragma omp parallel
    #pragma omp single
    spawn_graph(&graphs[0]);
  }

  PHASE("graphs generated from all threads' tasks (separate domains)");
  for (int p = 0; p < 6; p++) build(&graphs[p], 4 + p, 120, 12345ULL * (unsigned)(p + 1));
  #pragma omp parallel
  #pragma omp single
  {
    for (int p = 0; p < 6; p++) {
      #pragma omp task firstprivate(p)
      spawn_graph(&graphs[p]);
    }
    #pragma omp taskwait
  }
  for (int p = 0; p < 6; p++) CHECK(graphs[p].completed == 120, "nested graph %d: %d completed", p, graphs[p].completed);

  PHASE("same addresses used by different parents do not order their children");
  for (int p = 0; p < 2; p++) build(&graphs[p], 5, 100, 777ULL + (unsigned)p);
  #pragma omp parallel
  {
    /* both threads' implicit tasks generate into the same address space; deps only order siblings,
       so each graph is checked on its own counters */
    #pragma omp for schedule(static, 1)
    for (int p = 0; p < 2; p++) spawn_graph(&graphs[p]);
  }
  PASS();
}
