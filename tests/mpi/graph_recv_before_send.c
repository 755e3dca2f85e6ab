/* recv_before_send in a persistent graph: each round's receive task is recorded before its send
 * task, and the graph replays them, re-executed and in taskiter mode. With one worker per rank weft
 * runs taskiter rounds inline, in recorded order, on the producer's stack: the receive blocks there,
 * and the round's send must still go out (docs/decisions.md, "A gang of one runs taskiter rounds
 * inline"), or every rank waits forever. On libgomp and LLVM libomp the graph calls do nothing
 * (weak references), the loop runs as ordinary tasks and hangs like recv_before_send.
 *
 * Every message has tag 0 (a taskiter round replays the recorded arguments): MPI delivers one
 * sender's messages in order, and each task counts its own runs to know its round. */
#include <omp.h>
#include <weft/omp_ext.h>

#include "mpi_test.h"

enum { rounds = 40, words = 256 };

static int in[words], out[words];
static int sent, received, checked; /* runs so far; each task follows its own previous run */
static long sum;

static int value(int rank, int round, int i) { return rank * 100000 + round * 1000 + i % 1000; }

static void exchange(int mode, int rank, int prev, int next) {
  weft_graph_options_t o = {0};
  o.mode = mode;
  if (mode == WEFT_GRAPH_TASKITER) o.iterations = rounds;
  CHECK(weft_graph_begin_with(&o) == 0);
  /* Off weft the body runs every round: nothing replays it. */
  int body_rounds = mode == WEFT_GRAPH_TASKITER && weft_omp_graphs_available() ? 1 : rounds;
  for (int r = 0; r < body_rounds; ++r) {
    CHECK(weft_graph_iteration() == 0);
#pragma omp task depend(out : in)
    {
      MPI_Status st;
      CHECK(MPI_Recv(in, words, MPI_INT, prev, 0, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
      int count = -1;
      MPI_Get_count(&st, MPI_INT, &count);
      CHECK(st.MPI_SOURCE == prev && count == words);
      ++received;
    }
#pragma omp task depend(inout : out)
    {
      for (int i = 0; i < words; ++i) out[i] = value(rank, sent, i);
      CHECK(MPI_Send(out, words, MPI_INT, next, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
      ++sent;
    }
#pragma omp task depend(in : in)
    {
      CHECK(checked == received - 1);
      for (int i = 0; i < words; ++i) CHECK(in[i] == value(prev, checked, i));
      sum += in[0];
      ++checked;
    }
  }
  CHECK(weft_graph_end() == 0);
}

int main(int argc, char **argv) {
  int rank, size;
  test_init(&argc, &argv, &rank, &size);
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
#pragma omp parallel
#pragma omp single
  {
    exchange(WEFT_GRAPH_REEXECUTE, rank, prev, next);
    exchange(WEFT_GRAPH_TASKITER, rank, prev, next);
  }
  CHECK(sent == 2 * rounds && received == 2 * rounds && checked == 2 * rounds);
  long expect = 0;
  for (int k = 0; k < 2 * rounds; ++k) expect += value(prev, k, 0);
  CHECK(sum == expect);
  if (rank == 0)
    printf("graph_recv_before_send: %d ranks, %d rounds re-executed and %d in taskiter mode, %d thread(s) per rank, "
           "graphs %s: ok\n",
           size, rounds, rounds, omp_get_max_threads(), weft_omp_graphs_available() ? "on" : "off (not weft)");
  MPI_Finalize();
  return 0;
}
