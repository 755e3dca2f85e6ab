/* depobj: construct (depend(kind: x)), use in depend(depobj: o) on tasks and on taskwait, update
 * to another kind, destroy, mixing depobj with plain dependences in one clause list (new
 * depend-array format), and a mutexinoutset depobj. */
#include "omp_test.h"

static int x, y, z;
static int inside;

int main(void) {
  PHASE("depobj out / in / update / destroy");
  for (int rep = 0; rep < 20; rep++) {
    x = y = 0;
    #pragma omp parallel
    #pragma omp single
    {
      omp_depend_t ox, oy;
      #pragma omp depobj(ox) depend(out : x)
      #pragma omp depobj(oy) depend(inout : y)
      #pragma omp task depend(depobj : ox)
      {
        omp_test_spin(500);
        x = 1;
      }
      #pragma omp depobj(ox) update(in)
      int seen[4] = {0, 0, 0, 0};
      for (int i = 0; i < 4; i++) {
        #pragma omp task depend(depobj : ox) shared(seen) firstprivate(i)
        seen[i] = x;
      }
      #pragma omp task depend(depobj : oy) depend(in : x)
      {
        CHECK(x == 1, "depobj+in task ran before the writer of x");
        y = x + 1;
      }
      #pragma omp depobj(ox) update(inout)
      #pragma omp task depend(depobj : ox) shared(seen)
      {
        for (int i = 0; i < 4; i++) CHECK(seen[i] == 1, "reader %d saw %d", i, seen[i]);
        x = 10;
      }
      #pragma omp taskwait depend(depobj : oy)
      CHECK(y == 2, "taskwait depend(depobj) returned before the writer of y (y=%d)", y);
      #pragma omp taskwait depend(in : x)
      CHECK(x == 10, "taskwait depend(in: x) returned early (x=%d)", x);
      #pragma omp depobj(ox) destroy
      #pragma omp depobj(oy) destroy
      #pragma omp taskwait
    }
  }

  PHASE("depobj mixed with plain dependences and mutexinoutset depobj");
  for (int rep = 0; rep < 20; rep++) {
    z = 0;
    #pragma omp parallel
    #pragma omp single
    {
      omp_depend_t om;
      #pragma omp depobj(om) depend(mutexinoutset : z)
      #pragma omp task depend(out : z)
      z = 1;
      for (int i = 0; i < 8; i++) {
        #pragma omp task depend(depobj : om) depend(in : x)
        {
          CHECK(__atomic_add_fetch(&inside, 1, __ATOMIC_ACQ_REL) == 1, "mutexinoutset depobj tasks overlap");
          CHECK(z >= 1, "ran before the out task");
          z++;
          __atomic_sub_fetch(&inside, 1, __ATOMIC_ACQ_REL);
        }
      }
      #pragma omp task depend(in : z)
      CHECK(z == 9, "in after the mutexinoutset set saw z=%d", z);
      #pragma omp taskwait
      #pragma omp depobj(om) destroy
    }
  }
  PASS();
}
