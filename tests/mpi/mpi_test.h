/* Shared by the tests/mpi programs: a failed check prints where and aborts every rank (a hang is
 * caught by the runner's timeout instead). */
#ifndef WEFT_TESTS_MPI_TEST_H
#define WEFT_TESTS_MPI_TEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                  \
  do {                                                                                               \
    if (!(cond)) {                                                                                   \
      int check_rank_ = -1;                                                                          \
      MPI_Comm_rank(MPI_COMM_WORLD, &check_rank_);                                                   \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", check_rank_, __FILE__, __LINE__, #cond); \
      fflush(stderr);                                                                                \
      MPI_Abort(MPI_COMM_WORLD, 3);                                                                  \
    }                                                                                                \
  } while (0)

/* MPI_THREAD_MULTIPLE or a clear failure: blocking calls are made from several threads. */
static inline void test_init(int *argc, char ***argv, int *rank, int *size) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "MPI did not provide MPI_THREAD_MULTIPLE (%d)\n", provided);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

#endif
