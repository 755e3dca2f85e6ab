/* The OpenMP detach idiom on weft: a task posts its request, hands it to weft_mpi_detach with the
 * event of its detach clause and returns; the task completes (and its successors run) only once
 * the request has, fulfilled by weft's poller. One thread per rank, receives created before the
 * sends they wait for. Run on weft only: the program finds weft_mpi_detach at run time. */
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>

#include "mpi_test.h"

enum { rounds = 40, words = 256 };
typedef int (*detach_fn)(MPI_Request *, MPI_Status *, uintptr_t);

int main(int argc, char **argv) {
  int rank, size;
  test_init(&argc, &argv, &rank, &size);
  detach_fn detach = (detach_fn)dlsym(RTLD_DEFAULT, "weft_mpi_detach");
  CHECK(detach != NULL);
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  static int in[words], out[words];
  long sum = 0;
#pragma omp parallel
#pragma omp single
  for (int r = 0; r < rounds; ++r) {
    omp_event_handle_t recv_done, send_done;
#pragma omp task depend(out : in) detach(recv_done) firstprivate(r)
    {
      MPI_Request req;
      CHECK(MPI_Irecv(in, words, MPI_INT, prev, r, MPI_COMM_WORLD, &req) == MPI_SUCCESS);
      CHECK(detach(&req, MPI_STATUS_IGNORE, (uintptr_t)recv_done) == MPI_SUCCESS);
      CHECK(req == MPI_REQUEST_NULL);
    }
#pragma omp task depend(inout : out) detach(send_done) firstprivate(r)
    {
      for (int i = 0; i < words; ++i) out[i] = rank * 10000 + r * 100 + i % 100;
      MPI_Request req;
      CHECK(MPI_Isend(out, words, MPI_INT, next, r, MPI_COMM_WORLD, &req) == MPI_SUCCESS);
      CHECK(detach(&req, MPI_STATUS_IGNORE, (uintptr_t)send_done) == MPI_SUCCESS);
    }
#pragma omp task depend(in : in) firstprivate(r) shared(sum)
    {
      for (int i = 0; i < words; ++i) CHECK(in[i] == prev * 10000 + r * 100 + i % 100);
      sum += in[1];
    }
  }
  long expect = 0;
  for (int r = 0; r < rounds; ++r) expect += prev * 10000 + r * 100 + 1;
  CHECK(sum == expect);
  if (rank == 0) printf("detach_idiom: %d ranks, %d thread(s): ok\n", size, omp_get_max_threads());
  MPI_Finalize();
  return 0;
}
