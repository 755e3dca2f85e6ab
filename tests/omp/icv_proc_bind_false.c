/* OMP_PROC_BIND=false with OMP_PLACES set (the CTest registration sets both): no thread is bound,
 * and libgomp then keeps no place list: omp_get_num_places() is 0 and omp_get_place_num() -1, in
 * and outside a region. weft reported the place of whatever CPU a thread ran on (both threads of a
 * team of two "in place 1"). */
#include "omp_test.h"

int main(void) {
  CHECK(getenv("OMP_PLACES") != NULL && omp_test_env_is("OMP_PROC_BIND", "false"),
        "the harness must set OMP_PLACES and OMP_PROC_BIND=false");
  CHECK(omp_get_proc_bind() == omp_proc_bind_false, "proc bind %d, expected false", (int)omp_get_proc_bind());
  CHECK(omp_get_num_places() == 0, "%d places, expected none", omp_get_num_places());
  CHECK(omp_get_place_num() == -1, "place %d outside a region, expected -1", omp_get_place_num());
  int bad = 0;
  #pragma omp parallel reduction(+: bad)
  bad += omp_get_place_num() != -1 || omp_get_partition_num_places() != 0;
  CHECK(bad == 0, "%d threads report a place or a partition", bad);
  PASS();
}
