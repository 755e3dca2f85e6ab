/* Uses an installed weft::mpi: a blocking MPI call inside a task, on one rank talking to itself. */
#include <mpi.h>
#include <stdio.h>
#include <weft/mpi.h>
#include <weft/weft.h>

static int sent = 42, got = 0;

static void exchange(void *args) {
  (void)args;
  MPI_Sendrecv(&sent, 1, MPI_INT, 0, 7, &got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  weft_task_submit(weft_task_create(exchange, NULL, 0, WEFT_TASK_DEFAULT));
  weft_taskwait();
  int aware = weft_mpi_task_aware();
  printf("weft::mpi: task-aware %d, received %d\n", aware, got);
  int ok = got == 42 && aware == (provided == MPI_THREAD_MULTIPLE);
  weft_finalize();
  MPI_Finalize();
  return ok ? 0 : 1;
}
