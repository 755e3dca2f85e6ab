/* A parallel region's proc_bind clause becomes bind-var inside it (run with OMP_PROC_BIND=true,
 * a one-value list that names no nested level): omp_get_proc_bind() in the region is the clause's
 * kind, nested regions without a clause inherit it, and a region under OMP_PROC_BIND=false would
 * keep false (not exercised here). Inactive (if(0)) and active teams alike, as on libgomp. */
#include "omp_test.h"

int main(void) {
  CHECK(omp_test_env_is("OMP_PROC_BIND", "true"), "the harness must set OMP_PROC_BIND=true");
  omp_set_max_active_levels(4);

  PHASE("inactive regions");
  int level1 = -1, spread = -1, primary = -1, primary_nested = -1, spread_in_primary = -1;
  CHECK(omp_get_proc_bind() == omp_proc_bind_true, "proc bind %d outside, expected true", (int)omp_get_proc_bind());
  #pragma omp parallel if (0)
  {
    level1 = omp_get_proc_bind();
    #pragma omp parallel if (0) proc_bind(spread)
    spread = omp_get_proc_bind();
    #pragma omp parallel if (0) proc_bind(master)
    {
      primary = omp_get_proc_bind();
      #pragma omp parallel if (0)
      primary_nested = omp_get_proc_bind();
      #pragma omp parallel if (0) proc_bind(spread)
      spread_in_primary = omp_get_proc_bind();
    }
  }
  CHECK(level1 == omp_proc_bind_true, "no clause: %d, expected true", level1);
  CHECK(spread == omp_proc_bind_spread, "proc_bind(spread): %d", spread);
  CHECK(primary == omp_proc_bind_master, "proc_bind(master): %d", primary);
  CHECK(primary_nested == omp_proc_bind_master, "nested in proc_bind(master) without a clause: %d", primary_nested);
  CHECK(spread_in_primary == omp_proc_bind_spread, "proc_bind(spread) inside proc_bind(master): %d", spread_in_primary);

  PHASE("active teams");
  int outer[8], inner[8];
  for (int i = 0; i < 8; i++) outer[i] = inner[i] = -1;
  #pragma omp parallel num_threads(2) proc_bind(close)
  {
    int me = omp_get_thread_num();
    outer[me] = omp_get_proc_bind();
    #pragma omp parallel num_threads(2) proc_bind(spread)
    #pragma omp single
    inner[me] = omp_get_proc_bind();
  }
  int n = 0;
  #pragma omp parallel num_threads(2)
  #pragma omp single
  n = omp_get_num_threads();
  for (int i = 0; i < n; i++) {
    CHECK(outer[i] == omp_proc_bind_close, "member %d of a proc_bind(close) team: %d", i, outer[i]);
    CHECK(inner[i] == omp_proc_bind_spread, "member %d's proc_bind(spread) team: %d", i, inner[i]);
  }
  PASS();
}
