// Ranks started by mpiexec --bind-to none share one affinity mask. weft must spread them: each
// rank's worker 0 on its own core (rank r of n starts at core r*cores/n), not all on the first.
// Every rank reports the core its main thread (worker 0) is bound to; rank 0 checks they differ
// whenever the machine has a core per rank.
#include <weft/mpi.h>
#include <weft/weft.hpp>

#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

extern "C" {
#include "mpi_test.h"
}

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  test_init(&argc, &argv, &rank, &size);
  weft::spawn([] {});  // starts the runtime (worker 0 is this thread)
  weft::taskwait();
  cpu_set_t set;
  CPU_ZERO(&set);
  CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
  int bound = CPU_COUNT(&set) == 1 ? -1 : -2;  // -2: not bound to a single cpu
  for (int c = 0; c < CPU_SETSIZE && bound == -1; ++c)
    if (CPU_ISSET(c, &set)) bound = c;
  std::vector<int> cores(static_cast<std::size_t>(size));
  CHECK(MPI_Gather(&bound, 1, MPI_INT, cores.data(), 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (rank == 0) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (int r = 0; r < size; ++r) {
      std::printf("rank %d: worker 0 on cpu %d\n", r, cores[static_cast<std::size_t>(r)]);
      CHECK(cores[static_cast<std::size_t>(r)] >= 0);
      for (int q = 0; q < r && size <= cpus; ++q) CHECK(cores[static_cast<std::size_t>(q)] != cores[static_cast<std::size_t>(r)]);
    }
  }
  MPI_Finalize();
  return 0;
}
