/* depend(mutexinoutset: x): tasks of one mutexinoutset set exclude each other (never run
 * concurrently), are ordered after the preceding out/inout/in tasks on x and before the following
 * in/out/inout tasks; sets separated by an in/out task do not mix; mutexinoutset on two
 * addresses at once; mixed with plain dependences on other addresses. (libgomp 12 treats
 * mutexinoutset like out, which satisfies all of this.) */
#include "omp_test.h"

static int x, y;
static int inside_x, inside_y;
static int set_done[4];

int main(void) {
  PHASE("out -> mutexinoutset set -> in");
  for (int rep = 0; rep < 10; rep++) {
    x = 0;
    memset(set_done, 0, sizeof set_done);
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp task depend(out : x)
      {
        omp_test_spin(1000);
        x = 1;
      }
      for (int i = 0; i < 20; i++) {
        #pragma omp task depend(mutexinoutset : x) firstprivate(i)
        {
          CHECK(__atomic_add_fetch(&inside_x, 1, __ATOMIC_ACQ_REL) == 1, "two mutexinoutset tasks on x at once");
          CHECK(x >= 1, "mutexinoutset task ran before the out task (x=%d)", x);
          int v = x;
          omp_test_spin(50 * (i % 4));
          x = v + 1;
          __atomic_sub_fetch(&inside_x, 1, __ATOMIC_ACQ_REL);
          __atomic_add_fetch(&set_done[0], 1, __ATOMIC_ACQ_REL);
        }
      }
      #pragma omp task depend(in : x)
      CHECK(x == 21 && set_done[0] == 20, "in task after the set saw x=%d, %d done", x, set_done[0]);
      #pragma omp task depend(in : x)
      CHECK(x == 21, "second in task saw x=%d", x);
      /* second set: must wait for both in tasks, must not overlap the first set */
      for (int i = 0; i < 10; i++) {
        #pragma omp task depend(mutexinoutset : x)
        {
          CHECK(__atomic_add_fetch(&inside_x, 1, __ATOMIC_ACQ_REL) == 1, "two mutexinoutset tasks on x at once (set 2)");
          CHECK(set_done[0] == 20 && x >= 21, "set 2 started early: x=%d", x);
          x += 100;
          __atomic_sub_fetch(&inside_x, 1, __ATOMIC_ACQ_REL);
        }
      }
      #pragma omp task depend(inout : x)
      {
        CHECK(x == 1021, "inout after set 2 saw x=%d", x);
        x = -5;
      }
      #pragma omp taskwait
      CHECK(x == -5, "final x=%d", x);
    }
  }

  PHASE("mutexinoutset on two addresses, plus plain dependences");
  for (int rep = 0; rep < 10; rep++) {
    x = 0;
    y = 0;
    int z = 0;
    #pragma omp parallel
    #pragma omp single
    {
      for (int i = 0; i < 30; i++) {
        if (i % 3 == 0) {
          #pragma omp task depend(mutexinoutset : x, y)
          {
            CHECK(__atomic_add_fetch(&inside_x, 1, __ATOMIC_ACQ_REL) == 1, "x held twice");
            CHECK(__atomic_add_fetch(&inside_y, 1, __ATOMIC_ACQ_REL) == 1, "y held twice");
            x++;
            y++;
            __atomic_sub_fetch(&inside_y, 1, __ATOMIC_ACQ_REL);
            __atomic_sub_fetch(&inside_x, 1, __ATOMIC_ACQ_REL);
          }
        } else if (i % 3 == 1) {
          #pragma omp task depend(mutexinoutset : x) depend(inout : z)
          {
            CHECK(__atomic_add_fetch(&inside_x, 1, __ATOMIC_ACQ_REL) == 1, "x held twice");
            x += 10;
            z++;
            __atomic_sub_fetch(&inside_x, 1, __ATOMIC_ACQ_REL);
          }
        } else {
          #pragma omp task depend(mutexinoutset : y) depend(in : z)
          {
            CHECK(__atomic_add_fetch(&inside_y, 1, __ATOMIC_ACQ_REL) == 1, "y held twice");
            y += 10;
            __atomic_sub_fetch(&inside_y, 1, __ATOMIC_ACQ_REL);
          }
        }
      }
      #pragma omp task depend(in : x, y, z)
      CHECK(x == 10 + 100 && y == 10 + 100 && z == 10, "after mixed sets x=%d y=%d z=%d", x, y, z);
      #pragma omp taskwait
    }
  }
  PASS();
}
