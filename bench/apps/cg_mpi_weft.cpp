// cg_mpi_weft: distributed conjugate gradient (cg_mpi.h) on native weft with task-aware MPI
// (libweft-mpi, weft/mpi.h), the peer of cg_mpi_omp's tasks variant.
//
//   mpirun -np R cg_mpi_weft [--variant weft] [-n NX] [-i ITERS] [-t T] [-p P] [--no-check]
//
// Variant weft: the task graph of cg_mpi_omp's tasks variant through weft::spawn (run-time access
// lists as weft::accesses), one weft_taskwait after the last iteration. Per iteration and neighbour a
// send task (in: the p chunks holding the plane it sends) and a receive task (out: the ghost plane;
// in: beta, cg_mpi.h says why), with the BLOCKING MPI_Send / MPI_Recv inside; SpMV chunks also read
// the ghost planes their rows touch; the alpha and beta tasks call the BLOCKING MPI_Allreduce.
// libweft-mpi turns the calls into non-blocking ones and suspends the task until the request
// completes, so a worker never sits in MPI; task_aware_mpi= on the RESULT line says whether it is on
// (MPI gave MPI_THREAD_MULTIPLE). Tasks are labelled (send-lower, recv-lower, send-upper, recv-upper,
// spmv, dot-pq, alpha, axpy-x, axpy-r, dot-rr, beta, xpby) for WEFT_TRACE. -p P sets WEFT_NUM_THREADS
// (workers per rank) before MPI and weft start. Check, error= and gflops as cg_mpi_omp.
#include <weft/mpi.h>
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "app_common.h"
#include "cg_mpi.h"

namespace {

const char* const variants[] = {"weft", nullptr};

void check(int status, const char* call) {
  if (status != WEFT_OK) app_die("cg_mpi_weft: %s: %s", call, weft_strerror(status));
}

// The accesses of the next task (reused: the producer is one thread).
std::vector<weft::access> deps;

template <class F>
void spawn(const char* label, F f) {
  weft::spawn(f, weft::accesses(deps), weft::label(label));
  deps.clear();
}

// Chunk c of vector v: its first element names it, its bytes are the length (traces).
weft::access chunk(weft_dep_type type, const double* v, const cg_chunks& ck, int c) {
  return {type, v + ck.lo[c], static_cast<std::size_t>(ck.lo[c + 1] - ck.lo[c]) * sizeof(double)};
}

// The tasks of one iteration; every closure holds the slab's address, a chunk index or a tag only.
void submit_iteration(cgm_slab* s, long it) {
  const cg_chunks& ck = s->ck;
  cg_state& st = s->st;
  const int T = ck.T;
  const std::size_t plane_bytes = static_cast<std::size_t>(s->plane) * sizeof(double);
  double* glo = cgm_ghost_lo(s);
  double* ghi = cgm_ghost_hi(s);
  if (s->lower != MPI_PROC_NULL) {
    for (int j = 0; j <= s->first_hi; ++j) deps.push_back(chunk(WEFT_DEP_IN, st.p, ck, j));
    spawn("send-lower", [s, tag = cgm_tag(it, CGM_TO_LOWER)] {
      MPI_Send(s->st.p, static_cast<int>(s->plane), MPI_DOUBLE, s->lower, tag, MPI_COMM_WORLD);
    });
    deps.push_back(weft::out(glo, plane_bytes));
    deps.push_back(weft::in(st.s->beta));
    spawn("recv-lower", [s, tag = cgm_tag(it, CGM_TO_UPPER)] {
      MPI_Recv(cgm_ghost_lo(s), static_cast<int>(s->plane), MPI_DOUBLE, s->lower, tag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    });
  }
  if (s->upper != MPI_PROC_NULL) {
    for (int j = s->last_lo; j < T; ++j) deps.push_back(chunk(WEFT_DEP_IN, st.p, ck, j));
    spawn("send-upper", [s, tag = cgm_tag(it, CGM_TO_UPPER)] {
      MPI_Send(s->st.p + s->rows - s->plane, static_cast<int>(s->plane), MPI_DOUBLE, s->upper, tag, MPI_COMM_WORLD);
    });
    deps.push_back(weft::out(ghi, plane_bytes));
    deps.push_back(weft::in(st.s->beta));
    spawn("recv-upper", [s, tag = cgm_tag(it, CGM_TO_LOWER)] {
      MPI_Recv(cgm_ghost_hi(s), static_cast<int>(s->plane), MPI_DOUBLE, s->upper, tag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    });
  }
  for (int c = 0; c < T; ++c) {
    for (int j = ck.reach_lo[c]; j <= ck.reach_hi[c]; ++j) deps.push_back(chunk(WEFT_DEP_IN, st.p, ck, j));
    if (s->need_lo[c]) deps.push_back(weft::in(glo, plane_bytes));
    if (s->need_hi[c]) deps.push_back(weft::in(ghi, plane_bytes));
    deps.push_back(chunk(WEFT_DEP_OUT, st.q, ck, c));
    spawn("spmv", [s, c] { cg_spmv(&s->A, s->pext, s->st.q, s->ck.lo[c], s->ck.lo[c + 1]); });
  }
  for (int c = 0; c < T; ++c) {
    deps.push_back(chunk(WEFT_DEP_IN, st.p, ck, c));
    deps.push_back(chunk(WEFT_DEP_IN, st.q, ck, c));
    deps.push_back(weft::out(st.pq_part[c]));
    spawn("dot-pq", [s, c] { s->st.pq_part[c] = cg_dot(s->st.p, s->st.q, s->ck.lo[c], s->ck.lo[c + 1]); });
  }
  for (int c = 0; c < T; ++c) deps.push_back(weft::in(st.pq_part[c]));
  deps.push_back(weft::in(st.s->rr));
  deps.push_back(weft::out(st.s->alpha));
  spawn("alpha", [s] { cgm_alpha_step(s->st.s, s->st.pq_part, s->ck.T); });
  for (int c = 0; c < T; ++c) {
    deps.push_back(weft::in(st.s->alpha));
    deps.push_back(chunk(WEFT_DEP_IN, st.p, ck, c));
    deps.push_back(chunk(WEFT_DEP_INOUT, st.x, ck, c));
    spawn("axpy-x", [s, c] { cg_axpy(s->st.x, s->st.s->alpha, s->st.p, s->ck.lo[c], s->ck.lo[c + 1]); });
  }
  for (int c = 0; c < T; ++c) {
    deps.push_back(weft::in(st.s->alpha));
    deps.push_back(chunk(WEFT_DEP_IN, st.q, ck, c));
    deps.push_back(chunk(WEFT_DEP_INOUT, st.r, ck, c));
    spawn("axpy-r", [s, c] { cg_axpy(s->st.r, -s->st.s->alpha, s->st.q, s->ck.lo[c], s->ck.lo[c + 1]); });
  }
  for (int c = 0; c < T; ++c) {
    deps.push_back(chunk(WEFT_DEP_IN, st.r, ck, c));
    deps.push_back(weft::out(st.rr_part[c]));
    spawn("dot-rr", [s, c] { s->st.rr_part[c] = cg_dot(s->st.r, s->st.r, s->ck.lo[c], s->ck.lo[c + 1]); });
  }
  for (int c = 0; c < T; ++c) deps.push_back(weft::in(st.rr_part[c]));
  deps.push_back(weft::inout(st.s->rr));
  deps.push_back(weft::out(st.s->beta));
  spawn("beta", [s] { cgm_beta_step(s->st.s, s->st.rr_part, s->ck.T); });
  for (int c = 0; c < T; ++c) {
    deps.push_back(weft::in(st.s->beta));
    deps.push_back(chunk(WEFT_DEP_IN, st.r, ck, c));
    deps.push_back(chunk(WEFT_DEP_INOUT, st.p, ck, c));
    spawn("xpby", [s, c] { cg_xpby(s->st.p, s->st.r, s->st.s->beta, s->ck.lo[c], s->ck.lo[c + 1]); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  cg_options o;
  cgm_parse(&o, argc, argv, "cg_mpi_weft", variants);
  // Before MPI_Init: libweft-mpi's MPI_Init_thread may be the first to start weft.
  if (o.threads > 0) setenv("WEFT_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  cgm_slab s;
  cgm_start(&s, &o, &argc, &argv, MPI_THREAD_MULTIPLE, "cg_mpi_weft");
  check(weft_init(), "weft_init");
  deps.reserve(static_cast<std::size_t>(o.T) + 8);
  weft_reset_stats();

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = app_now();
  try {
    for (long it = 0; it < o.iters; ++it) submit_iteration(&s, it);
    weft::taskwait();
  } catch (const weft::error& e) {
    app_die("cg_mpi_weft: %s", e.what());
  }
  double seconds = app_now() - t0;
  weft_stats_t stats;
  weft_get_stats(&stats);

  int ok = cgm_finish(&o, &s, seconds, "weft", weft_num_workers(), cgm_task_count(&o, &s),
                      static_cast<long long>(stats.edges_created),
                      weft_mpi_task_aware() ? "task_aware_mpi=yes" : "task_aware_mpi=no", "cg_mpi_weft");
  cgm_free(&s);
  MPI_Finalize();  // before weft_finalize: libweft-mpi unregisters its poller from weft
  check(weft_finalize(), "weft_finalize");
  return ok ? 0 : 1;
}
