/* threadprivate variables: copyin, persistence across consecutive parallel regions with the same
 * team size and dyn-var false (spec guarantee), single copyprivate of a threadprivate variable. */
#include "omp_test.h"

static int tp = -1;
#pragma omp threadprivate(tp)
static double tpd[4];
#pragma omp threadprivate(tpd)

int main(void) {
  int T = omp_test_threads();
  omp_set_dynamic(0);

  PHASE("copyin");
  tp = 1234;
  tpd[0] = 1.5; tpd[3] = -2.5;
  int bad = 0;
  #pragma omp parallel copyin(tp, tpd) reduction(+ : bad)
  {
    if (tp != 1234 || tpd[0] != 1.5 || tpd[3] != -2.5) bad++;
    tp = 100 + omp_get_thread_num();
    tpd[1] = omp_get_thread_num();
  }
  CHECK(bad == 0, "%d threads did not get the copyin values", bad);
  CHECK(tp == 100, "primary thread's tp %d", tp);

  PHASE("persistence across regions");
  for (int round = 0; round < 5; round++) {
    bad = 0;
    #pragma omp parallel reduction(+ : bad)
    {
      int me = omp_get_thread_num();
      if (tp != 100 + me + round || tpd[1] != me) bad++;
      tp++;
    }
    CHECK(bad == 0, "round %d: %d threads lost their threadprivate values (T=%d)", round, bad, T);
  }

  PHASE("copyprivate of threadprivate");
  bad = 0;
  #pragma omp parallel reduction(+ : bad)
  {
    #pragma omp single copyprivate(tp)
    tp = 777;
    if (tp != 777) bad++;
  }
  CHECK(bad == 0, "%d threads missed copyprivate", bad);
  PASS();
}
