/* Every call weft interposes gives the same results inside a task as outside: the data, the
 * statuses (source, tag, count), and the error codes (on a communicator with MPI_ERRORS_RETURN:
 * an invalid rank or root at the post, a truncated receive at completion, MPI_ERR_IN_STATUS from
 * MPI_Waitall). The suite runs once on the main thread, then once as a chain of tasks (one task
 * per operation, in order), and both logs must be equal and right. */
#include <dlfcn.h>
#include <omp.h>
#include <string.h>
#include <weft/weft.h>

#include "mpi_test.h"

enum { log_max = 4096, n = 64 };

static int rank, size, next, prev;
static long log_[2][log_max];
static int log_len[2];
static int phase; /* 0: outside tasks, 1: inside tasks */
static MPI_Comm ret_comm; /* MPI_ERRORS_RETURN */

static void put(long v) {
  CHECK(log_len[phase] < log_max);
  log_[phase][log_len[phase]++] = v;
}
static void put_status(const MPI_Status *st, MPI_Datatype type) {
  int count = -1;
  MPI_Get_count(st, type, &count);
  put(st->MPI_SOURCE);
  put(st->MPI_TAG);
  put(count);
}
static int err_class(int code) {
  int c = code;
  if (code != MPI_SUCCESS) MPI_Error_class(code, &c);
  return c;
}
static void fill(int *b, int count, int seed) {
  for (int i = 0; i < count; ++i) b[i] = seed * 1000 + i;
}
static long sum_of(const int *b, int count) {
  long s = 0;
  for (int i = 0; i < count; ++i) s += (long)b[i] * (i + 1);
  return s;
}

static void op_send_recv(void) {
  int out[n], in[n];
  MPI_Status st;
  fill(out, n, rank);
  /* Even ranks send first, odd ranks receive first: works with any number of ranks >= 2. */
  if (rank % 2 == 0) {
    CHECK(MPI_Send(out, n, MPI_INT, next, 11, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(MPI_Recv(in, n, MPI_INT, prev, 11, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
  } else {
    CHECK(MPI_Recv(in, n, MPI_INT, prev, 11, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
    CHECK(MPI_Send(out, n, MPI_INT, next, 11, MPI_COMM_WORLD) == MPI_SUCCESS);
  }
  put_status(&st, MPI_INT);
  put(sum_of(in, n));
}

static void op_ssend(void) {
  int out[n], in[n];
  MPI_Status st;
  fill(out, n, rank + 7);
  if (rank % 2 == 0) {
    CHECK(MPI_Ssend(out, n, MPI_INT, next, 12, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(MPI_Recv(in, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
  } else {
    CHECK(MPI_Recv(in, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
    CHECK(MPI_Ssend(out, n, MPI_INT, next, 12, MPI_COMM_WORLD) == MPI_SUCCESS);
  }
  put_status(&st, MPI_INT);
  put(sum_of(in, n));
}

static void op_sendrecv(void) {
  int out[n], in[n];
  MPI_Status st;
  fill(out, n, rank + 3);
  CHECK(MPI_Sendrecv(out, n, MPI_INT, next, 13, in, n, MPI_INT, prev, 13, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
  put_status(&st, MPI_INT);
  put(sum_of(in, n));
  fill(out, n, rank + 4);
  CHECK(MPI_Sendrecv_replace(out, n, MPI_INT, next, 14, prev, 14, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
  put_status(&st, MPI_INT);
  put(sum_of(out, n));
}

static void op_probe(void) {
  int out[n], in[n];
  MPI_Status st;
  int len = 10 + rank; /* the receiver learns the length from the probe */
  fill(out, len, rank + 5);
  MPI_Request req;
  CHECK(MPI_Isend(out, len, MPI_INT, next, 15, MPI_COMM_WORLD, &req) == MPI_SUCCESS);
  CHECK(MPI_Probe(prev, 15, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
  int count = 0;
  MPI_Get_count(&st, MPI_INT, &count);
  put(count);
  CHECK(MPI_Recv(in, count, MPI_INT, prev, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  put(sum_of(in, count));
  CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);
  CHECK(req == MPI_REQUEST_NULL);
}

static void op_waits(void) {
  enum { k = 4 };
  int out[k][n], in[k][n];
  MPI_Request reqs[2 * k];
  MPI_Status sts[2 * k];
  for (int i = 0; i < k; ++i) {
    fill(out[i], n, rank * 10 + i);
    CHECK(MPI_Irecv(in[i], n, MPI_INT, prev, 20 + i, MPI_COMM_WORLD, &reqs[i]) == MPI_SUCCESS);
  }
  for (int i = 0; i < k; ++i) CHECK(MPI_Isend(out[i], n, MPI_INT, next, 20 + i, MPI_COMM_WORLD, &reqs[k + i]) == MPI_SUCCESS);
  /* Waitany until the receives are done, then Waitall for the sends. */
  int seen = 0;
  for (int done = 0; done < k;) {
    int index = -1;
    MPI_Status st;
    CHECK(MPI_Waitany(k, reqs, &index, &st) == MPI_SUCCESS);
    CHECK(index >= 0 && index < k && reqs[index] == MPI_REQUEST_NULL);
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 20 + index);
    seen |= 1 << index;
    ++done;
  }
  put(seen);
  int index = 5;
  CHECK(MPI_Waitany(k, reqs, &index, MPI_STATUS_IGNORE) == MPI_SUCCESS); /* all null now */
  put(index == MPI_UNDEFINED);
  CHECK(MPI_Waitall(k, reqs + k, sts + k) == MPI_SUCCESS);
  for (int i = 0; i < k; ++i) put(sum_of(in[i], n) + (reqs[k + i] == MPI_REQUEST_NULL));
  /* Waitsome: a second round, collected as they come. */
  for (int i = 0; i < k; ++i) CHECK(MPI_Irecv(in[i], n, MPI_INT, prev, 30 + i, MPI_COMM_WORLD, &reqs[i]) == MPI_SUCCESS);
  for (int i = 0; i < k; ++i) CHECK(MPI_Isend(out[i], n, MPI_INT, next, 30 + i, MPI_COMM_WORLD, &reqs[k + i]) == MPI_SUCCESS);
  int got = 0, mask = 0;
  while (got < 2 * k) {
    int outcount = 0, idx[2 * k];
    CHECK(MPI_Waitsome(2 * k, reqs, &outcount, idx, sts) == MPI_SUCCESS);
    CHECK(outcount >= 1 && outcount <= 2 * k);
    for (int j = 0; j < outcount; ++j) {
      CHECK(reqs[idx[j]] == MPI_REQUEST_NULL && !(mask & (1 << idx[j])));
      if (idx[j] < k) CHECK(sts[j].MPI_SOURCE == prev && sts[j].MPI_TAG == 30 + idx[j]);
      mask |= 1 << idx[j];
    }
    got += outcount;
  }
  int outcount = 0, idx[2 * k];
  CHECK(MPI_Waitsome(2 * k, reqs, &outcount, idx, sts) == MPI_SUCCESS);
  put(outcount == MPI_UNDEFINED);
  put(mask);
  for (int i = 0; i < k; ++i) put(sum_of(in[i], n));
}

static void op_collectives(void) {
  int a[n], b[n * 8], c[n * 8];
  int counts[8], displs[8];
  CHECK(size <= 8);
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
  fill(a, n, rank == 1 ? 42 : 0);
  CHECK(MPI_Bcast(a, n, MPI_INT, 1, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(sum_of(a, n));
  fill(a, n, rank + 1);
  memset(b, 0, sizeof b);
  CHECK(MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(rank == 0 ? sum_of(b, n) : 0);
  CHECK(MPI_Allreduce(a, b, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(sum_of(b, n));
  memcpy(b, a, sizeof a);
  CHECK(MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(sum_of(b, n));
  CHECK(MPI_Gather(a, n, MPI_INT, c, n, MPI_INT, size - 1, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(rank == size - 1 ? sum_of(c, n * size) : 0);
  for (int r = 0; r < size; ++r) counts[r] = 1 + r, displs[r] = r * n;
  CHECK(MPI_Gatherv(a, 1 + rank, MPI_INT, c, counts, displs, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(rank == 0 ? c[displs[size - 1] + size - 1] + c[0] : 0);
  fill(c, n * size, 9);
  CHECK(MPI_Scatter(c, n, MPI_INT, a, n, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(sum_of(a, n));
  CHECK(MPI_Scatterv(c, counts, displs, MPI_INT, a, 1 + rank, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(sum_of(a, 1 + rank));
  fill(a, n, rank * 3);
  CHECK(MPI_Allgather(a, n, MPI_INT, c, n, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(sum_of(c, n * size));
  CHECK(MPI_Allgatherv(a, 1 + rank, MPI_INT, c, counts, displs, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(c[displs[size - 1] + size - 1]);
  fill(b, n * size, rank + 2);
  CHECK(MPI_Alltoall(b, n, MPI_INT, c, n, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(sum_of(c, n * size));
  int sc[8], sd[8], rc[8], rd[8];
  for (int r = 0; r < size; ++r) sc[r] = 1 + r, sd[r] = r * n, rc[r] = 1 + rank, rd[r] = r * n;
  CHECK(MPI_Alltoallv(b, sc, sd, MPI_INT, c, rc, rd, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS);
  put(c[rd[size - 1] + rank] + c[0]);
}

static void op_errors(void) {
  int buf[2 * n] = {0};
  MPI_Status st;
  /* At the post: an invalid destination, source and root. */
  put(err_class(MPI_Send(buf, 1, MPI_INT, size, 0, ret_comm)));
  put(err_class(MPI_Recv(buf, 1, MPI_INT, size + 3, 0, ret_comm, &st)));
  put(err_class(MPI_Bcast(buf, 1, MPI_INT, size, ret_comm)));
  /* At completion: a message longer than the receive buffer. Even ranks post the receive before
   * the peer sends (inside a task it completes in the poller), odd ranks after (at once). */
  int small[n];
  MPI_Request req;
  fill(buf, 2 * n, rank);
  for (int turn = 0; turn < 2; ++turn) {
    st.MPI_ERROR = 12345; /* single completions leave it alone */
    if ((rank + turn) % 2 == 0) {
      put(err_class(MPI_Recv(small, n, MPI_INT, prev, 40 + turn, ret_comm, &st)));
      CHECK(MPI_Send(buf, 2 * n, MPI_INT, next, 40 + turn, ret_comm) == MPI_SUCCESS);
    } else {
      CHECK(MPI_Isend(buf, 2 * n, MPI_INT, next, 40 + turn, ret_comm, &req) == MPI_SUCCESS);
      put(err_class(MPI_Recv(small, n, MPI_INT, prev, 40 + turn, ret_comm, &st)));
      CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    put(st.MPI_ERROR);
  }
  /* No MPI_Waitall with a truncated request here: Open MPI 4.1.4 hangs in it under
   * MPI_THREAD_MULTIPLE with 3 ranks or more, with or without weft. */
  MPI_Barrier(MPI_COMM_WORLD);
}

typedef void (*op_fn)(void);
static const op_fn ops[] = {op_send_recv, op_ssend, op_sendrecv, op_probe, op_waits, op_collectives, op_errors};
enum { op_count = sizeof ops / sizeof ops[0] };

int main(int argc, char **argv) {
  test_init(&argc, &argv, &rank, &size);
  CHECK(size >= 2);
  next = (rank + 1) % size;
  prev = (rank + size - 1) % size;
  MPI_Comm_dup(MPI_COMM_WORLD, &ret_comm);
  MPI_Comm_set_errhandler(ret_comm, MPI_ERRORS_RETURN);

  phase = 0;
  for (int i = 0; i < op_count; ++i) ops[i]();

  phase = 1;
  int token = 0;
#pragma omp parallel
#pragma omp single
  for (int i = 0; i < op_count; ++i) {
#pragma omp task depend(inout : token) firstprivate(i)
    ops[i]();
  }
  (void)token;

  /* On weft (preloaded or linked) the calls in tasks went through the task-aware layer: some of
   * them waited for a peer, so tasks were suspended. */
  int (*task_aware)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "weft_mpi_task_aware");
  int (*get_stats)(weft_stats_t *) = (int (*)(weft_stats_t *))dlsym(RTLD_DEFAULT, "weft_get_stats");
  if (task_aware && get_stats) {
    weft_stats_t stats;
    CHECK(task_aware() == 1 && get_stats(&stats) == 0);
    CHECK(stats.suspensions > 0);
  }
  CHECK(log_len[0] == log_len[1]);
  for (int i = 0; i < log_len[0]; ++i) {
    if (log_[0][i] != log_[1][i]) {
      fprintf(stderr, "rank %d: entry %d differs: %ld outside tasks, %ld inside\n", rank, i, log_[0][i], log_[1][i]);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  /* And right, not just equal: a few entries checked against their known values. */
  CHECK(log_[1][0] == prev && log_[1][1] == 11 && log_[1][2] == n); /* MPI_Recv's status */
  int e = 0;
  while (e < log_len[1] && log_[1][e] != MPI_ERR_RANK) ++e; /* op_errors starts with it */
  CHECK(e + 6 < log_len[1]);
  CHECK(log_[1][e + 1] == MPI_ERR_RANK && log_[1][e + 2] == MPI_ERR_ROOT);
  CHECK(log_[1][e + 3] == MPI_ERR_TRUNCATE && log_[1][e + 4] == 12345);
  CHECK(log_[1][e + 5] == MPI_ERR_TRUNCATE && log_[1][e + 6] == 12345);
  MPI_Comm_free(&ret_comm);
  if (rank == 0) printf("calls_match: %d ranks, %d thread(s), %d logged results equal: ok\n", size, omp_get_max_threads(), log_len[0]);
  MPI_Finalize();
  return 0;
}
