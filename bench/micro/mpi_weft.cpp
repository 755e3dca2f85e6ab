// micro_mpi: what task-aware MPI costs (issue 9), on 2 ranks of one machine, 1 worker each.
//
//   pattern=poller-idle  rank 0's main program calls weft_taskyield N times with nothing to run:
//                        every call is a scheduling point that runs the pollers. Run once with the
//                        layer on and once with WEFT_MPI_TASK_AWARE=0 (no poller): the difference
//                        per call is one idle pass of the MPI poller (nothing pending).
//   pattern=resume       rank 1 waits D µs (spinning), stamps the clock and sends 8 bytes; rank 0
//                        receives them inside a task (blocking MPI_Recv: the task suspends, the
//                        worker idles and polls) and stamps the clock when the call returns in the
//                        task. latency = return - send stamp (CLOCK_MONOTONIC is shared by the
//                        processes of one machine). The same exchange with MPI_Recv on the main
//                        program (no task, plain MPI) is the baseline: the difference is what weft
//                        adds between the request's completion and the task running again.
// One line per measurement:
//   pattern=<p> runtime=weft ranks=2 n=<N> param=<what> ns=<median> min=<min> max=<max> unit=<op>
#include <weft/mpi.h>
#include <weft/weft.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace {

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void spin_for(std::int64_t ns) {
  std::int64_t end = now_ns() + ns;
  while (now_ns() < end) {
  }
}

void print(const char* pattern, long n, const char* param, std::vector<std::int64_t>& v, const char* unit) {
  std::sort(v.begin(), v.end());
  std::printf("pattern=%s runtime=weft ranks=2 n=%ld param=%s ns=%lld min=%lld max=%lld unit=%s\n", pattern, n, param,
              static_cast<long long>(v[v.size() / 2]), static_cast<long long>(v.front()),
              static_cast<long long>(v.back()), unit);
  std::fflush(stdout);
}

void poller_idle(int rank, long n) {
  if (rank != 0) return;
  std::vector<std::int64_t> per_call;
  for (int rep = 0; rep < 7; ++rep) {
    std::int64_t t0 = now_ns();
    for (long i = 0; i < n; ++i) weft_taskyield();
    per_call.push_back((now_ns() - t0) / n);
  }
  print("poller-idle", n, weft_mpi_task_aware() ? "yield-with-poller" : "yield-without-poller", per_call, "call");
}

struct stamp {
  std::int64_t sent;
};

void resume(int rank, long n, std::int64_t delay_ns) {
  for (int in_task = 0; in_task < 2; ++in_task) {
    std::vector<std::int64_t> lat;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < n; ++i) {
      if (rank == 1) {
        spin_for(delay_ns);
        stamp s{now_ns()};
        MPI_Send(&s, sizeof s, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        MPI_Recv(nullptr, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);  // the next round
      } else {
        std::int64_t latency = 0;
        if (in_task) {
          std::int64_t* out = &latency;
          weft_task_t* t = weft_task_create(
              [](void* p) {
                stamp s;
                MPI_Recv(&s, sizeof s, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                **static_cast<std::int64_t**>(p) = now_ns() - s.sent;
              },
              &out, sizeof out, WEFT_TASK_DEFAULT);
          weft_task_submit(t);
          weft_taskwait();
        } else {
          stamp s;
          MPI_Recv(&s, sizeof s, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          latency = now_ns() - s.sent;
        }
        lat.push_back(latency);
        MPI_Send(nullptr, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
      }
    }
    if (rank == 0) {
      char param[64];
      std::snprintf(param, sizeof param, "%s-delay%lldus", in_task ? "task" : "plain",
                    static_cast<long long>(delay_ns / 1000));
      print("resume", n, param, lat, "message");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* pattern = argc > 1 ? argv[1] : "all";
  long n = argc > 2 ? std::atol(argv[2]) : 2000;
  if (size != 2 || n <= 0 ||
      (std::strcmp(pattern, "all") && std::strcmp(pattern, "poller-idle") && std::strcmp(pattern, "resume"))) {
    if (rank == 0) std::fprintf(stderr, "usage: mpiexec -n 2 micro_mpi [all|poller-idle|resume] [N > 0]\n");
    MPI_Finalize();
    return 2;
  }
  if (weft_init() != WEFT_OK) return 1;
  if (!std::strcmp(pattern, "all") || !std::strcmp(pattern, "poller-idle")) poller_idle(rank, n * 500);
  if ((!std::strcmp(pattern, "all") || !std::strcmp(pattern, "resume")) && weft_mpi_task_aware()) {
    for (std::int64_t delay : {0, 20'000, 200'000, 2'000'000}) resume(rank, delay >= 2'000'000 ? n / 10 : n, delay);
  }
  weft_finalize();
  MPI_Finalize();
  return 0;
}
