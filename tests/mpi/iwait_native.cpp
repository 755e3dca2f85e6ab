// weft_mpi_iwait / weft_mpi_iwaitall in native weft tasks (TAMPI_Iwait semantics): the task's body
// returns at once, and its successors run only once the requests have completed, with the data
// and the statuses in place. One worker per rank is the hard case: the body must not block, or
// the send that completes the receive could never run.
#include <weft/mpi.h>
#include <weft/weft.hpp>

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

extern "C" {
#include "mpi_test.h"
}

namespace {

constexpr int rounds = 40;
constexpr int words = 512;

int rank_, size_, next_, prev_;

void iwait_rounds() {
  std::vector<int> in(words), out(words);
  std::atomic<int> early_returns{0};
  long sum = 0;
  for (int r = 0; r < rounds; ++r) {
    // Receive first, on one worker: its body must hand the request over and return.
    weft::spawn(
        [&, r] {
          MPI_Request req;
          CHECK(MPI_Irecv(in.data(), words, MPI_INT, prev_, r, MPI_COMM_WORLD, &req) == MPI_SUCCESS);
          int flag = 0;
          MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
          if (!flag) {
            CHECK(weft_mpi_iwait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            CHECK(req == MPI_REQUEST_NULL);  // taken over
            early_returns.fetch_add(1, std::memory_order_relaxed);
          }
        },
        weft::out(in[0]));
    weft::spawn(
        [&, r] {
          for (int i = 0; i < words; ++i) out[i] = rank_ * 1000 + r * 10 + i % 10;
          MPI_Request req;
          CHECK(MPI_Isend(out.data(), words, MPI_INT, next_, r, MPI_COMM_WORLD, &req) == MPI_SUCCESS);
          CHECK(weft_mpi_iwait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        },
        weft::inout(out[0]));
    // Runs only once the receive completed: the whole message is there.
    weft::spawn(
        [&, r] {
          for (int i = 0; i < words; ++i) CHECK(in[i] == prev_ * 1000 + r * 10 + i % 10);
          sum += in[1];
        },
        weft::in(in[0]));
  }
  weft::taskwait();
  long expect = 0;
  for (int r = 0; r < rounds; ++r) expect += prev_ * 1000 + r * 10 + 1;
  CHECK(sum == expect);
  if (rank_ == 0)
    std::printf("iwait_native: %d of %d receive tasks returned before their message came\n", early_returns.load(),
                rounds);
}

void iwaitall_statuses() {
  constexpr int k = 3;
  std::vector<int> in(k * words), out(k * words);
  MPI_Status statuses[k];
  weft::spawn(
      [&] {
        MPI_Request reqs[k];
        for (int j = 0; j < k; ++j) {
          CHECK(MPI_Irecv(&in[j * words], words, MPI_INT, MPI_ANY_SOURCE, 100 + j, MPI_COMM_WORLD, &reqs[j]) ==
                MPI_SUCCESS);
        }
        CHECK(weft_mpi_iwaitall(k, reqs, statuses) == MPI_SUCCESS);
        for (int j = 0; j < k; ++j) CHECK(reqs[j] == MPI_REQUEST_NULL);
      },
      weft::out(in[0]));
  weft::spawn(
      [&] {
        for (int j = 0; j < k * words; ++j) out[j] = rank_ + j;
        MPI_Request reqs[k];
        for (int j = k - 1; j >= 0; --j) {  // reverse order: completion order is not posting order
          CHECK(MPI_Isend(&out[j * words], words, MPI_INT, next_, 100 + j, MPI_COMM_WORLD, &reqs[j]) == MPI_SUCCESS);
        }
        CHECK(weft_mpi_iwaitall(k, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
      },
      weft::inout(out[0]));
  weft::spawn(
      [&] {
        for (int j = 0; j < k; ++j) {
          int count = -1;
          MPI_Get_count(&statuses[j], MPI_INT, &count);
          CHECK(statuses[j].MPI_SOURCE == prev_ && statuses[j].MPI_TAG == 100 + j && count == words);
        }
        for (int j = 0; j < k * words; ++j) CHECK(in[j] == prev_ + j);
      },
      weft::in(in[0]));
  weft::taskwait();
}

// A taskwait in the parent waits for a child whose requests are still in flight.
void taskwait_waits_for_bound_child() {
  int value = -1;
  weft::spawn([&] {
    MPI_Request req;
    CHECK(MPI_Irecv(&value, 1, MPI_INT, prev_, 200, MPI_COMM_WORLD, &req) == MPI_SUCCESS);
    CHECK(weft_mpi_iwait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  });
  weft::spawn([&] {
    int mine = rank_ * 7;
    CHECK(MPI_Send(&mine, 1, MPI_INT, next_, 200, MPI_COMM_WORLD) == MPI_SUCCESS);
  });
  weft::taskwait();
  CHECK(value == prev_ * 7);
}

// A bound request that fails later (a truncated message, under MPI_ERRORS_RETURN) reaches the
// parent's taskwait by name instead of vanishing. Two ranks or more: Open MPI 4.1 truncates a
// message a rank sends itself without reporting it (MPI_Testsome: MPI_SUCCESS, MPI_ERROR 0).
void bound_error_reaches_taskwait() {
  if (size_ < 2) return;
  MPI_Comm comm;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm) == MPI_SUCCESS);
  CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN) == MPI_SUCCESS);
  int status = WEFT_OK, error_class = MPI_SUCCESS;
  std::string message;
  weft::spawn([&] {
    int one = -1;
    weft::spawn([&one, comm] {
      MPI_Request req;
      CHECK(MPI_Irecv(&one, 1, MPI_INT, prev_, 400, comm, &req) == MPI_SUCCESS);
      CHECK(weft_mpi_iwait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);  // nothing sent yet: pending
      int go = 1;  // only now may the previous rank send (two ints into room for one)
      CHECK(MPI_Send(&go, 1, MPI_INT, prev_, 401, comm) == MPI_SUCCESS);
    });
    weft::spawn([comm] {
      int go = 0, two[2] = {1, 2};
      CHECK(MPI_Recv(&go, 1, MPI_INT, next_, 401, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      CHECK(MPI_Send(two, 2, MPI_INT, next_, 400, comm) == MPI_SUCCESS);
    });
    status = weft_taskwait();
    void (*release)(void*) = nullptr;
    void* payload = weft_take_error(&release);
    if (const weft_mpi_error_t* e = weft_mpi_error_of(payload, release)) {
      MPI_Error_class(e->code, &error_class);
      message = e->message;
    }
    if (release) release(payload);
  });
  weft::taskwait();
  CHECK(status == WEFT_ERR_TASK_FAILED);
  CHECK(error_class == MPI_ERR_TRUNCATE);
  CHECK(message.rfind("weft_mpi_iwait: ", 0) == 0);
  if (rank_ == 0) std::printf("iwait_native: a truncated bound receive reported as \"%s\"\n", message.c_str());
  MPI_Comm_free(&comm);
}

}  // namespace

int main(int argc, char** argv) {
  test_init(&argc, &argv, &rank_, &size_);
  next_ = (rank_ + 1) % size_;
  prev_ = (rank_ + size_ - 1) % size_;
  CHECK(weft_mpi_task_aware() == 1);
  // Outside a task, iwait is MPI_Wait.
  int token = rank_, got = -1;
  MPI_Request req;
  MPI_Irecv(&got, 1, MPI_INT, prev_, 300, MPI_COMM_WORLD, &req);
  MPI_Send(&token, 1, MPI_INT, next_, 300, MPI_COMM_WORLD);
  CHECK(weft_mpi_iwait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS && got == prev_ && req == MPI_REQUEST_NULL);

  CHECK(weft_init() == WEFT_OK);
  iwait_rounds();
  iwaitall_statuses();
  taskwait_waits_for_bound_child();
  bound_error_reaches_taskwait();
  if (rank_ == 0) std::printf("iwait_native: %d ranks, %d worker(s): ok\n", size_, weft_num_workers());
  CHECK(weft_finalize() == WEFT_OK);
  MPI_Finalize();
  return 0;
}
