/* nthreads-var belongs to each task (found by a random-program search; libgomp and LLVM libomp
 * are right on each part):
 * - a task created before any member changed its ICVs starts from its creator's values, even when
 *   it runs on a member whose implicit task changed them meanwhile (weft gave it that member's);
 * - an untied task that changed its ICVs, waited, and resumed on another thread keeps its values
 *   (weft put them back on the thread it had left: the task read the other thread's values, and
 *   that thread's list of saved values was changed by two threads: heap corruption);
 * - an implicit task's change survives a taskyield that runs untied tasks which wait.
 * Registered also with 64 KiB stacks, where every wait parks. */
#include "omp_test.h"

#define ROUNDS 30

static int bad, seen;  /* shared by every task: counted with atomics */

#define spin omp_test_spin_value

static long rec(int d, long k) {
  if (d >= 3) return spin(k, 500) & 1;
  long r[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
#pragma omp task shared(r) firstprivate(i, d, k) untied
    r[i] = rec(d + 1, k * 31 + i);
  }
#pragma omp taskwait
  return r[0] + r[1] + 1;
}

int main(void) {
  const int initial = omp_get_max_threads();
  PHASE("tasks created before a member changed its ICVs");
#pragma omp parallel num_threads(2)
  {
#pragma omp sections
    {
#pragma omp section
      for (int j = 0; j < 20; j++) {
#pragma omp task
        {
          int m = omp_get_max_threads();
          spin(j, 100000);
#pragma omp atomic
          seen++;
          if (m != initial || omp_get_max_threads() != initial) {
#pragma omp atomic
            bad++;
          }
        }
      }
#pragma omp section
      omp_set_num_threads(initial + 7);  /* this implicit task's value only */
    }
  }
  CHECK(seen == 20 && bad == 0, "%d of %d tasks saw another task's nthreads-var", bad, seen);

  PHASE("an untied task's values across a wait");
  bad = 0;
#pragma omp parallel num_threads(3)
  for (int r = 0; r < ROUNDS; r++) {
    int dep = r;
#pragma omp task untied depend(inout: dep) firstprivate(dep)
    {
      omp_set_num_threads(3);
      long x = 0;
#pragma omp task shared(x)
      {
        if (omp_get_max_threads() != 3) {
#pragma omp atomic
          bad++;
        }
        omp_set_num_threads(4);
        x = spin(r, 2000);
      }
#pragma omp taskwait
      if (omp_get_max_threads() != 3) {
#pragma omp atomic
        bad++;
      }
      (void)x;
      (void)dep;
    }
#pragma omp taskwait
  }
  CHECK(bad == 0, "%d reads of nthreads-var gave another task's value", bad);

  PHASE("an implicit task's value across a taskyield");
  bad = 0;
#pragma omp parallel num_threads(2)
  for (int r = 0; r < ROUNDS; r++) {
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
#pragma omp taskyield
    int after = omp_get_max_threads();
    omp_set_num_threads(saved);
    long n = rec(0, r);
    if (after != 1 || n < 7) {
#pragma omp atomic
      bad++;
    }
  }
  CHECK(bad == 0, "%d reads of nthreads-var after a taskyield gave another task's value", bad);
  PASS();
}
