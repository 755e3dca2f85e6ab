/* Random nesting stress (issue 26): seeded random trees of constructs, run by the OpenMP runtime
 * and evaluated sequentially, compared slot by slot. Run with OMP_MAX_ACTIVE_LEVELS=4 (the
 * program also sets it). OMPTEST_SEED=<n> runs that one tree (default: TREES fixed seeds);
 * OMPTEST_VERBOSE=1 prints each tree's node counts.
 *
 * The root is `parallel` (OMP_NUM_THREADS members); every node is one of
 *   LEAF      adds a value to its slot that depends on the node, omp_get_level() and, in an implicit
 *             task (where it is deterministic), omp_get_thread_num()
 *   TASK      `task` whose body runs the node's children (undeferred or not; tied)
 *   PAR(k)    `parallel num_threads(k)`, k = 1..4: every member runs the children; checks team
 *             size, level, active level, ancestor thread number and team sizes
 *   BARRIER   `barrier` (in implicit tasks only): afterwards no task made by the team since the
 *             region began is still unfinished (checked, then a second barrier)
 *   TASKWAIT  `taskwait`: afterwards every child task of the current task has finished (checked)
 *   FOR(n)    `for schedule(dynamic)` over n iterations (in implicit tasks only): the team adds
 *             each iteration's value once
 * up to MAXDEPTH deep, with at most 3 PAR levels under the root (4 levels in all) and a product of
 * team sizes under the root of at most 8 (so at most 64 members at 8 threads on libgomp, which
 * makes threads for them: the whole test stays well under 2 s there on 2 cores). Every member of a
 * team runs the same child list, so all members meet the same barriers. */
#include "omp_test.h"

#define TREES 60
#define MAXNODES 160
#define MAXCHILD 4
#define MAXDEPTH 5
#define MAXPAR 3
#define MAXMULT 8
#define MAXCOUNTERS (1 << 16)

enum kind { LEAF, TASK, PAR, BARRIER, TASKWAIT, FOR };
static const char *const kind_name[] = {"leaf", "task", "parallel", "barrier", "taskwait", "for"};

struct node {
  enum kind kind;
  int param;                /* PAR: team size; FOR: iterations */
  int nchild;
  int child[MAXCHILD];
};

static struct node nodes[MAXNODES];
static int nnodes;
static long got[MAXNODES], want[MAXNODES];
static unsigned long long gen_state;

static unsigned rnd(unsigned n) { return (unsigned)(omp_test_rand(&gen_state) % n); }

/* implicit: the node runs in an implicit task (barrier and for allowed); par: PAR levels above it
 * (under the root); mult: product of the team sizes above it (under the root). */
static int gen(int depth, int implicit, int par, int mult) {
  int id = nnodes++;
  struct node *n = &nodes[id];
  memset(n, 0, sizeof *n);
  for (;;) {
    unsigned r = rnd(100);
    int leafonly = depth >= MAXDEPTH || nnodes > MAXNODES - 2 * MAXCHILD;
    if (r < 16 || leafonly) n->kind = LEAF;
    else if (r < 46) n->kind = TASK;
    else if (r < 67) n->kind = PAR;
    else if (r < 78) n->kind = BARRIER;
    else if (r < 89) n->kind = TASKWAIT;
    else n->kind = FOR;
    if ((n->kind == BARRIER || n->kind == FOR) && !implicit) continue;
    if (n->kind == PAR) {
      if (par >= MAXPAR) continue;
      n->param = 1 + (int)rnd(4);
      while (mult * n->param > MAXMULT) n->param--;
    }
    if (n->kind == FOR) n->param = 1 + (int)rnd(40);
    break;
  }
  if (n->kind == TASK || n->kind == PAR) {
    int k = 1 + (int)rnd(MAXCHILD);
    for (int i = 0; i < k && nnodes < MAXNODES - MAXCHILD; i++) {
      int c = n->kind == PAR ? gen(depth + 1, 1, par + 1, mult * n->param) : gen(depth + 1, 0, par, mult);
      nodes[id].child[nodes[id].nchild++] = c;
    }
  }
  return id;
}

static long leaf_value(int id, int level, int implicit, int thread) {
  return (long)(id % 7 + 1) * 1000 + level * 10 + (implicit ? thread + 1 : 0);
}
static long iter_value(int id, int i) { return (long)id * 31 + i; }

/* --- sequential evaluation --------------------------------------------------------------------- */
static void eval_seq(int id, int level, int implicit, int thread, int team);

static void eval_children_seq(int id, int level, int implicit, int thread, int team) {
  for (int i = 0; i < nodes[id].nchild; i++) eval_seq(nodes[id].child[i], level, implicit, thread, team);
}

/* thread: the member number when implicit; team: the team size when implicit. */
static void eval_seq(int id, int level, int implicit, int thread, int team) {
  struct node *n = &nodes[id];
  switch (n->kind) {
    case LEAF: want[id] += leaf_value(id, level, implicit, thread); break;
    case TASK: eval_children_seq(id, level, 0, -1, 0); break;
    case PAR:
      for (int m = 0; m < n->param; m++) eval_children_seq(id, level + 1, 1, m, n->param);
      break;
    case FOR:
      if (thread == 0) /* once per team */
        for (int i = 0; i < n->param; i++) want[id] += iter_value(id, i);
      (void)team;
      break;
    case BARRIER:
    case TASKWAIT: break;
  }
}

/* --- the parallel run ------------------------------------------------------------------------- */
/* Counters of unfinished child tasks, one per task (implicit or explicit) run: a child may outlive
 * its parent's frame, so they live here, not on the parent's stack. */
static int counters[MAXCOUNTERS];
static int ncounters;

static int *new_counter(void) {
  int i = __atomic_fetch_add(&ncounters, 1, __ATOMIC_RELAXED);
  CHECK(i < MAXCOUNTERS, "more than %d tasks in one tree", MAXCOUNTERS);
  return &counters[i];
}

/* What a team shares: its unfinished tasks (made in the team, at any depth of tasks). */
struct team_state {
  int pending;
};

struct ctx {
  int level, active, implicit;
  int thread; /* omp_get_thread_num() of the implicit task, -1 in an explicit task */
  struct team_state *team;
  int *children; /* unfinished child tasks of the current task */
};

static void run(int id, struct ctx *c);

static void run_children(int id, struct ctx *c) {
  for (int i = 0; i < nodes[id].nchild; i++) run(nodes[id].child[i], c);
}

static void run(int id, struct ctx *c) {
  struct node *n = &nodes[id];
  switch (n->kind) {
    case LEAF: {
      CHECK(omp_get_level() == c->level, "node %d: level %d, expected %d", id, omp_get_level(), c->level);
      if (c->implicit)
        CHECK(omp_get_thread_num() == c->thread, "node %d: thread %d, expected %d", id, omp_get_thread_num(), c->thread);
      long v = leaf_value(id, omp_get_level(), c->implicit, c->implicit ? omp_get_thread_num() : -1);
      #pragma omp atomic update
      got[id] += v;
      break;
    }
    case TASK: {
      struct team_state *team = c->team;
      int *parent_children = c->children;
      int level = c->level, active = c->active;
      __atomic_add_fetch(&team->pending, 1, __ATOMIC_SEQ_CST);
      __atomic_add_fetch(parent_children, 1, __ATOMIC_SEQ_CST);
      #pragma omp task firstprivate(id, team, parent_children, level, active) if (id % 5 != 0)
      {
        struct ctx tc = {level, active, 0, -1, team, new_counter()};
        CHECK(omp_get_level() == level && omp_get_active_level() == active, "task %d: levels %d %d, expected %d %d",
              id, omp_get_level(), omp_get_active_level(), level, active);
        run_children(id, &tc);
        /* its own children finish with the team (a barrier or the region's end) or a taskwait */
        __atomic_sub_fetch(parent_children, 1, __ATOMIC_SEQ_CST);
        __atomic_sub_fetch(&team->pending, 1, __ATOMIC_SEQ_CST);
      }
      break;
    }
    case PAR: {
      const int k = n->param;
      const int enc = omp_get_thread_num();
      const int level = c->level, active = c->active;
      const int exp_active = active + (k > 1);
      struct team_state team = {0};
      #pragma omp parallel num_threads(k) shared(team)
      {
        int me = omp_get_thread_num();
        CHECK(omp_get_num_threads() == k, "parallel %d: team of %d, asked for %d", id, omp_get_num_threads(), k);
        CHECK(omp_get_level() == level + 1 && omp_get_active_level() == exp_active,
              "parallel %d: levels %d %d, expected %d %d", id, omp_get_level(), omp_get_active_level(), level + 1,
              exp_active);
        CHECK(omp_get_ancestor_thread_num(level) == enc, "parallel %d: ancestor(%d) %d, encountering thread %d", id,
              level, omp_get_ancestor_thread_num(level), enc);
        CHECK(omp_get_team_size(level + 1) == k, "parallel %d: team size %d", id, omp_get_team_size(level + 1));
        struct ctx mc = {level + 1, exp_active, 1, me, &team, new_counter()};
        run_children(id, &mc);
      }
      CHECK(team.pending == 0, "parallel %d: %d of its tasks unfinished after the region", id, team.pending);
      break;
    }
    case BARRIER: {
      #pragma omp barrier
      int p = __atomic_load_n(&c->team->pending, __ATOMIC_SEQ_CST);
      CHECK(p == 0, "barrier %d: %d tasks of the team unfinished after it", id, p);
      #pragma omp barrier
      break;
    }
    case TASKWAIT: {
      #pragma omp taskwait
      int p = __atomic_load_n(c->children, __ATOMIC_SEQ_CST);
      CHECK(p == 0, "taskwait %d: %d child tasks unfinished after it", id, p);
      break;
    }
    case FOR: {
      const int iters = n->param;
      #pragma omp for schedule(dynamic, 2)
      for (int i = 0; i < iters; i++) {
        CHECK(omp_get_level() == c->level, "for %d: level %d", id, omp_get_level());
        #pragma omp atomic update
        got[id] += iter_value(id, i);
      }
      break;
    }
  }
}

static char phase[96];

static void one_tree(unsigned long long seed) {
  snprintf(phase, sizeof phase, "tree of seed %llu", seed);
  PHASE(phase);
  gen_state = seed * 0x9E3779B97F4A7C15ULL + 1;
  nnodes = 0;
  /* The root: a PAR of OMP_NUM_THREADS members (its param is set below, not generated). */
  int root = nnodes++;
  nodes[root].kind = PAR;
  nodes[root].nchild = 0;
  int k = 2 + (int)rnd(3);
  for (int i = 0; i < k; i++) nodes[root].child[nodes[root].nchild++] = gen(1, 1, 0, 1);
  const int T = omp_test_threads();
  nodes[root].param = T;

  memset(got, 0, sizeof got);
  memset(counters, 0, sizeof counters);
  ncounters = 0;
  memset(want, 0, sizeof want);
  eval_seq(root, 0, 0, 0, 1);
  struct ctx c = {0, 0, 0, 0, NULL, new_counter()};
  struct team_state none = {0};
  c.team = &none;
  run(root, &c);
  if (getenv("OMPTEST_VERBOSE")) {
    int count[FOR + 1] = {0};
    for (int i = 0; i < nnodes; i++) count[nodes[i].kind]++;
    printf("seed %llu: %d nodes:", seed, nnodes);
    for (int kd = LEAF; kd <= FOR; kd++) printf(" %s %d", kind_name[kd], count[kd]);
    printf(", %d tasks run\n", ncounters - 1);
  }
  for (int i = 0; i < nnodes; i++)
    CHECK(got[i] == want[i], "seed %llu: node %d (%s, param %d) got %ld, expected %ld", seed, i,
          kind_name[nodes[i].kind], nodes[i].param, got[i], want[i]);
}

int main(void) {
  omp_set_max_active_levels(4);
  CHECK(omp_get_max_active_levels() == 4, "max active levels %d", omp_get_max_active_levels());
  const char *s = getenv("OMPTEST_SEED");
  if (s && *s) {
    one_tree(strtoull(s, NULL, 10));
  } else {
    for (unsigned long long seed = 1; seed <= TREES; seed++) one_tree(seed);
  }
  PHASE("exit (the runtime's shutdown)");
  PASS();
}
