/* Every rank creates its receive task before its send task, with one thread per rank: the receive
 * blocks in MPI_Recv, and the send that would unblock the peer sits behind it. A runtime that
 * holds the core for the blocked task deadlocks (libgomp, LLVM libomp); weft suspends it.
 * Rounds of a ring exchange, plus a chain of dependent tasks per round so that the receive's
 * successors only run once the data is there. */
#include <omp.h>

#include "mpi_test.h"

enum { rounds = 50, words = 1024 };

int main(int argc, char **argv) {
  int rank, size;
  test_init(&argc, &argv, &rank, &size);
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  static int in[words], out[words];
  long sum = 0;
#pragma omp parallel
#pragma omp single
  for (int r = 0; r < rounds; ++r) {
#pragma omp task depend(out : in) firstprivate(r)
    {
      MPI_Status st;
      CHECK(MPI_Recv(in, words, MPI_INT, prev, r, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
      int count = -1;
      MPI_Get_count(&st, MPI_INT, &count);
      CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == r && count == words);
    }
#pragma omp task depend(inout : out) firstprivate(r)
    {
      for (int i = 0; i < words; ++i) out[i] = rank * 100000 + r * 1000 + i % 1000;
      CHECK(MPI_Send(out, words, MPI_INT, next, r, MPI_COMM_WORLD) == MPI_SUCCESS);
    }
#pragma omp task depend(in : in) firstprivate(r) shared(sum)
    {
      for (int i = 0; i < words; ++i) CHECK(in[i] == prev * 100000 + r * 1000 + i % 1000);
      sum += in[0];
    }
  }
  long expect = 0;
  for (int r = 0; r < rounds; ++r) expect += prev * 100000 + r * 1000;
  CHECK(sum == expect);
  if (rank == 0) printf("recv_before_send: %d ranks, %d rounds, %d thread(s) per rank: ok\n", size, rounds, omp_get_max_threads());
  MPI_Finalize();
  return 0;
}
