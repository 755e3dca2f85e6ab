/* OMP_ALLOCATOR sets def-allocator-var (the registration sets it, and OMPTEST_ALLOCATOR says what
 * to expect):
 *   OMPTEST_ALLOCATOR=<n>     a predefined allocator name, handle n (e.g. omp_cgroup_mem_alloc, 6);
 *   OMPTEST_ALLOCATOR=traits  the OpenMP 5.1 form omp_default_mem_space:alignment=64,
 *                             pool_size=65536,fallback=null_fb (GCC 13's libgomp and weft).
 * The initial thread, every thread of a team and of a nested team start with that default;
 * omp_alloc with omp_null_allocator and the allocate clause use it (alignment and pool). */
#include "omp_test.h"
#include <stdint.h>

int main(void) {
  const char *expect = getenv("OMPTEST_ALLOCATOR");
  CHECK(expect && getenv("OMP_ALLOCATOR"), "the harness must set OMP_ALLOCATOR and OMPTEST_ALLOCATOR");
  int traits = strcmp(expect, "traits") == 0;

  PHASE("initial thread");
  omp_allocator_handle_t def = omp_get_default_allocator();
  if (traits)
    CHECK(def > omp_thread_mem_alloc, "OMP_ALLOCATOR=%s gave predefined handle %lu", getenv("OMP_ALLOCATOR"),
          (unsigned long)def);
  else
    CHECK(def == (omp_allocator_handle_t)strtoul(expect, NULL, 10), "OMP_ALLOCATOR=%s gave handle %lu",
          getenv("OMP_ALLOCATOR"), (unsigned long)def);

  PHASE("teams inherit it");
  omp_set_max_active_levels(2);
  int bad = 0;
  #pragma omp parallel reduction(+ : bad)
  {
    if (omp_get_default_allocator() != def) bad++;
    #pragma omp parallel num_threads(2) reduction(+ : bad)
    if (omp_get_default_allocator() != def) bad++;
  }
  CHECK(bad == 0, "%d threads did not start with OMP_ALLOCATOR's allocator", bad);

  PHASE("allocations through the default allocator");
  bad = 0;
  int x = 0;
  #pragma omp parallel firstprivate(x) allocate(x) reduction(+ : bad)
  {
    void *p = omp_alloc(100, omp_null_allocator);
    if (!p) bad++;
    if (traits && ((uintptr_t)p % 64 != 0 || (uintptr_t)&x % 64 != 0)) bad++;
    omp_free(p, omp_null_allocator);
  }
  CHECK(bad == 0, "%d threads: omp_alloc or the allocate clause with the default allocator", bad);
  if (traits) {
    CHECK(omp_alloc(70000, omp_null_allocator) == NULL, "pool_size=65536 with null_fb served 70000 bytes");
    void *p = omp_alloc(60000, omp_null_allocator);
    CHECK(p != NULL, "60000 bytes from a pool of 65536");
    CHECK(omp_alloc(10000, omp_null_allocator) == NULL, "the pool served 70000 bytes in two blocks");
    omp_free(p, omp_null_allocator);
  }
  PASS();
}
