// cholesky_mpi_weft: distributed tiled Cholesky (cholesky_mpi.h) as native weft tasks, linked to
// libweft and libweft-mpi (task-aware MPI, weft/mpi.h).
//
//   blocking  send tasks call MPI_Send, recv tasks MPI_Recv: libweft-mpi turns them into the
//             non-blocking calls and suspends the task until the request completes, so the worker
//             runs other tasks meanwhile (the same source deadlocks on a plain OpenMP runtime).
//   iwait     send/recv tasks post MPI_Isend/MPI_Irecv and hand the request to
//             weft_mpi_iwait(&req, MPI_STATUS_IGNORE): the body returns at once and the task's
//             successors are released when the request completes.
//
// One weft::spawn per op of cholesky_mpi.h's walk, accesses on the tiles and receive buffers, then
// weft::taskwait; MPI_Barrier before the clock, the time is the slowest rank's. tasks = the sum over
// the ranks of the tasks created (compute, send and recv), edges = weft's, summed over the ranks.
// --mark-sends gives send tasks weft::priority(1). Tasks are labelled potrf / trsm / syrk / gemm /
// send / recv for traces (WEFT_TRACE=file; each rank writes its own, see weft_trace_set_rank in
// weft.h). -p T sets WEFT_NUM_THREADS=T before weft_init. BLAS inside tasks is single-threaded.
// MPI_Init_thread (MPI_THREAD_MULTIPLE, required) comes before weft_init.
// The MPI C API only: Open MPI's deprecated C++ bindings do not compile cleanly with -Wextra.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <weft/mpi.h>
#include <weft/weft.hpp>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "cholesky_mpi.h"

namespace {

const char* const variants[] = {"blocking", "iwait", nullptr};

struct emitter {
  const cmpi_ctx* x;
  int b;
  std::size_t tb;  // a tile's bytes, for the accesses and traces
  bool iwait;
  int send_priority;
};

void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "cholesky_mpi_weft: %s failed (%d)\n", call, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

void emit(void* arg, const cmpi_op* op) {
  const emitter& e = *static_cast<const emitter*>(arg);
  const int b = e.b, count = b * b, peer = op->peer, tag = op->tag;
  const std::size_t tb = e.tb;
  const MPI_Comm comm = e.x->comm;
  double* t = op->out;  // the tile written (inout), or the receive buffer (out)
  const double* in1 = op->in1;
  const double* in2 = op->in2;
  switch (op->kind) {
    case CMPI_POTRF:
      weft::spawn([=] { chol_potrf(t, b); }, weft::inout(t, tb), weft::label("potrf"));
      break;
    case CMPI_TRSM:
      weft::spawn([=] { chol_trsm(in1, t, b); }, weft::in(in1, tb), weft::inout(t, tb), weft::label("trsm"));
      break;
    case CMPI_SYRK:
      weft::spawn([=] { chol_syrk(in1, t, b); }, weft::in(in1, tb), weft::inout(t, tb), weft::label("syrk"));
      break;
    case CMPI_GEMM:
      weft::spawn([=] { chol_gemm(in1, in2, t, b); }, weft::in(in1, tb), weft::in(in2, tb), weft::inout(t, tb),
                  weft::label("gemm"));
      break;
    case CMPI_SEND:
      if (e.iwait)
        weft::spawn(
            [=] {
              MPI_Request req;
              check_mpi(MPI_Isend(in1, count, MPI_DOUBLE, peer, tag, comm, &req), "MPI_Isend");
              check_mpi(weft_mpi_iwait(&req, MPI_STATUS_IGNORE), "weft_mpi_iwait");
            },
            weft::in(in1, tb), weft::priority(e.send_priority), weft::label("send"));
      else
        weft::spawn([=] { check_mpi(MPI_Send(in1, count, MPI_DOUBLE, peer, tag, comm), "MPI_Send"); },
                    weft::in(in1, tb), weft::priority(e.send_priority), weft::label("send"));
      break;
    case CMPI_RECV:
      if (e.iwait)
        weft::spawn(
            [=] {
              MPI_Request req;
              check_mpi(MPI_Irecv(t, count, MPI_DOUBLE, peer, tag, comm, &req), "MPI_Irecv");
              check_mpi(weft_mpi_iwait(&req, MPI_STATUS_IGNORE), "weft_mpi_iwait");
            },
            weft::out(t, tb), weft::label("recv"));
      else
        weft::spawn(
            [=] { check_mpi(MPI_Recv(t, count, MPI_DOUBLE, peer, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv"); },
            weft::out(t, tb), weft::label("recv"));
      break;
  }
}

long long weft_edges() {
  weft_stats_t s;
  return weft_get_stats(&s) == WEFT_OK ? static_cast<long long>(s.edges_created) : -1;
}

int run(const cmpi_opts* o, cmpi_ctx* x, const char* extra) {
  emitter e{x, static_cast<int>(x->b), static_cast<std::size_t>(x->b) * x->b * sizeof(double),
            std::strcmp(o->c.variant, "iwait") == 0, o->mark_sends ? 1 : 0};
  int failed = 0;
  for (int rep = 0; rep < o->c.reps; ++rep) {
    cmpi_generate(x);
    weft_reset_stats();
    MPI_Barrier(x->comm);
    const double t0 = app_now();
    const long long tasks = cmpi_walk(x, emit, &e);
    weft::taskwait();
    const double t1 = app_now();
    const double seconds = app_mpi_max_time(x->comm, t1 - t0);
    const long long all_tasks = app_mpi_sum_known1(x->comm, tasks), edges = app_mpi_sum_known1(x->comm, weft_edges());
    app_result r;
    cmpi_result_init(&r, o, x, "weft", weft_num_workers(), extra);
    r.seconds = seconds;
    r.gflops = chol_gflops(o->c.n, seconds, 1);
    r.tasks = all_tasks;
    r.edges = edges;
    cmpi_verify(&r, o, x, cmpi_own_tile, x, weft_num_workers());
    if (x->rank == 0) app_print_result(&r);
    failed |= !r.ok;
  }
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  app_mpi_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, "cholesky_mpi_weft", "MPI from tasks on any thread");
  cmpi_opts o;
  cmpi_parse(argc, argv, "cholesky_mpi_weft", variants, CMPI_OPT_MARK_SENDS, &o);
  cmpi_ctx x;
  cmpi_grid_init(&x, &o, MPI_COMM_WORLD, "cholesky_mpi_weft");
  app_blas_threads(1);
  if (o.c.threads > 0) {
    char text[32];
    std::snprintf(text, sizeof text, "%d", o.c.threads);
    setenv("WEFT_NUM_THREADS", text, 1);
  }
  if (int status = weft_init(); status != WEFT_OK) {
    std::fprintf(stderr, "cholesky_mpi_weft: weft_init: %s\n", weft_strerror(status));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int aware = weft_mpi_task_aware();
  if (!aware && x.rank == 0 && std::strcmp(o.c.variant, "blocking") == 0)
    std::fprintf(stderr, "cholesky_mpi_weft: warning: MPI calls in tasks are not task-aware here (weft_mpi_task_aware "
                 "is 0): blocking calls hold their worker and may deadlock\n");
  const char* policy = weft_mpi_policy();
  char extra[160];
  std::snprintf(extra, sizeof extra, "grid=%dx%d task_aware=%d policy=%s mark_sends=%d", o.P, o.Q, aware,
                policy ? policy : "-", o.mark_sends);
  cmpi_tiles_init(&x);
  int failed = 1;
  try {
    failed = run(&o, &x, extra);
  } catch (const std::exception& err) {
    std::fprintf(stderr, "cholesky_mpi_weft: %s\n", err.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  weft_finalize();
  cmpi_tiles_free(&x);
  MPI_Finalize();
  return failed ? 1 : 0;
}
