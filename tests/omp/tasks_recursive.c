/* Recursive task parallelism: fib with tasks + taskwait (with and without a cutoff via if()),
 * a tree sum with taskwait inside nested tasks, tasks created inside nested parallel regions
 * (inner teams run their own tasks; barriers of inner teams wait for them), and tasks that
 * themselves start a parallel region. */
#include "omp_test.h"

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

static long fib(int n) {
  if (n < 2) return n;
  long a, b;
  #pragma omp task shared(a) firstprivate(n)
  a = fib(n - 1);
  #pragma omp task shared(b) firstprivate(n)
  b = fib(n - 2);
  #pragma omp taskwait
  return a + b;
}

static long fib_cutoff(int n) {
  if (n < 2) return n;
  long a, b;
  #pragma omp task shared(a) if(n > 10) mergeable
  a = fib_cutoff(n - 1);
  #pragma omp task shared(b) final(n <= 8)
  b = fib_cutoff(n - 2);
  #pragma omp taskwait
  return a + b;
}

struct node { long value; struct node *left, *right; };
static struct node nodes[1 << 12];
static int next_node;

static struct node *build(int depth) {
  struct node *n = &nodes[next_node++];
  n->value = next_node;
  n->left = depth > 0 ? build(depth - 1) : NULL;
  n->right = depth > 0 ? build(depth - 1) : NULL;
  return n;
}

static long tree_sum(struct node *n) {
  if (!n) return 0;
  long l = 0, r = 0;
  #pragma omp task shared(l)
  l = tree_sum(n->left);
  #pragma omp task shared(r)
  r = tree_sum(n->right);
  #pragma omp taskwait
  return l + r + n->value;
}

int main(void) {
  PHASE("fib");
  {
    long r = -1;
    #pragma omp parallel
    #pragma omp single
    r = fib(17);
    CHECK(r == fib_seq(17), "fib(17) = %ld", r);
    r = -1;
    #pragma omp parallel
    #pragma omp single nowait
    r = fib_cutoff(21);
    CHECK(r == fib_seq(21), "fib_cutoff(21) = %ld", r);
  }

  PHASE("tree sum with nested taskwaits");
  {
    struct node *root = build(10);
    long expect = (long)next_node * (next_node + 1) / 2;
    long r = 0;
    #pragma omp parallel
    {
      #pragma omp single
      r = tree_sum(root);
    }
    CHECK(r == expect, "tree sum %ld, expected %ld", r, expect);
  }

  PHASE("tasks inside nested parallel regions");
  omp_set_max_active_levels(2);
  {
    long per_inner[4] = {0, 0, 0, 0};
    int inner_sizes[4] = {0, 0, 0, 0};
    #pragma omp parallel num_threads(2)
    {
      int o = omp_get_thread_num();
      #pragma omp parallel num_threads(2) shared(per_inner)
      {
        int slot = o * 2 + omp_get_thread_num();
        inner_sizes[slot] = omp_get_num_threads();
        #pragma omp single
        {
          for (int i = 0; i < 30; i++) {
            #pragma omp task firstprivate(i, o)
            {
              CHECK(omp_get_level() == 2 && omp_get_ancestor_thread_num(1) == o,
                    "inner task bound to the wrong team (level %d, ancestor %d, o %d)", omp_get_level(), omp_get_ancestor_thread_num(1), o);
              CHECK(omp_get_team_size(2) == 2, "inner task team size %d", omp_get_team_size(2));
              #pragma omp atomic
              per_inner[o * 2] += i;
            }
          }
        }
        /* barrier: inner team's tasks complete */
        if (omp_get_thread_num() == 0) CHECK(per_inner[o * 2] == 435, "inner team %d: tasks sum %ld at barrier", o, per_inner[o * 2]);
      }
      long r = -1;
      #pragma omp single copyprivate(r)
      r = fib(12);
      CHECK(r == 144, "fib in outer team: %ld", r);
    }
    for (int s = 0; s < 4; s++) CHECK(inner_sizes[s] == 2, "inner team size %d", inner_sizes[s]);
  }

  PHASE("a task starts a parallel region");
  {
    int counts[8] = {0};
    #pragma omp parallel num_threads(2)
    #pragma omp single
    {
      for (int t = 0; t < 8; t++) {
        #pragma omp task firstprivate(t) shared(counts)
        {
          #pragma omp parallel num_threads(2)
          {
            #pragma omp atomic
            counts[t]++;
            #pragma omp barrier
          }
        }
      }
    }
    for (int t = 0; t < 8; t++) CHECK(counts[t] == 2, "task %d's region had %d threads", t, counts[t]);
  }
  PASS();
}
