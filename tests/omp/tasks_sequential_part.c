/* Tasks outside any parallel region and depend iterators (issue 23). In the sequential part (the
 * implicit team of one) libgomp runs every task at once, dependent ones included, and programs
 * read a task's result right after creating it, with no taskwait. A depend(iterator(...)) clause
 * whose range is empty declares nothing (gcc passes a total count of 0 and leaves the per-kind
 * counts unset); a non-empty one orders like the listed dependences. */
#include "omp_test.h"

#define M 16

/* Two tasks whose iterators declare nothing: unordered, so each counts itself atomically. */
static int empty_range(int n, int* order) {
  int x = 0, ran = 0;
  (void)x; /* gcc 12 counts neither the iterator's bound nor a depend clause as a use */
  (void)n;
  (void)order;
  #pragma omp task depend(iterator(j = 0 : n), in : order[j]) shared(ran)
  {
    #pragma omp atomic update
    ran++;
  }
  #pragma omp task depend(iterator(j = 0 : n), out : order[j]) depend(inout : x) shared(ran)
  {
    #pragma omp atomic update
    ran++;
  }
  #pragma omp taskwait
  return ran;
}

int main(void) {
  PHASE("dependent tasks in the sequential part run at once");
  {
    int x = 0, y = 0, z = 0;
    #pragma omp task depend(out : x) shared(x)
    x = 1;
    CHECK(x == 1, "a dependent task outside parallel did not run at once: x=%d", x);
    #pragma omp task depend(in : x) depend(out : y) shared(x, y)
    y = x + 1;
    CHECK(y == 2, "its successor did not run at once: y=%d", y);
    #pragma omp task depend(inout : x, y) depend(mutexinoutset : z) shared(x, y, z)
    z = x + y;
    CHECK(z == 3, "an inout/mutexinoutset task did not run at once: z=%d", z);
    int order[4] = {0}, pos = 0;
    for (int i = 0; i < 4; i++) {
      #pragma omp task depend(inout : pos) shared(order, pos) firstprivate(i)
      order[pos++] = i;
      CHECK(pos == i + 1, "task %d of a chain had not run when its creator went on (pos %d)", i, pos);
    }
    for (int i = 0; i < 4; i++) CHECK(order[i] == i, "chain order[%d]=%d", i, order[i]);
  }

  PHASE("empty depend iterator, sequential part");
  {
    int order[M];
    for (int n = 0; n >= -3; n -= 3) {
      int ran = empty_range(n, order);
      CHECK(ran == 2, "range 0:%d: %d tasks ran", n, ran);
    }
  }

  PHASE("empty and non-empty depend iterators in a parallel region");
  #pragma omp parallel
  #pragma omp single
  {
    int order[M];
    for (int n = 0; n >= -3; n -= 3) {
      int ran = empty_range(n, order);
      CHECK(ran == 2, "range 0:%d: %d tasks ran", n, ran);
    }
    int cells[M] = {0}, sum = -1;
    for (int i = 0; i < M; i++) {
      #pragma omp task depend(out : cells[i]) shared(cells) firstprivate(i)
      cells[i] = i + 1;
    }
    int n = M;
    (void)n; /* read by the iterator, which gcc 12 does not count as a use */
    #pragma omp task depend(iterator(j = 0 : n), in : cells[j]) shared(cells, sum)
    {
      int s = 0;
      for (int j = 0; j < M; j++) s += cells[j];
      sum = s;
    }
    #pragma omp taskwait
    CHECK(sum == M * (M + 1) / 2, "a task depending on an iterator of %d cells saw sum %d", M, sum);
  }
  return 0;
}
