// dense_mpi_weft: multi-matvec, multi-matmul and dense Jacobi (dense_mpi.h) TAMPI-style: native weft
// tasks (weft::spawn) with task-aware MPI (libweft-mpi, weft/mpi.h), the peer of TAMPI + OmpSs-2 in the
// paper's Table 2.
//
//   mpirun -np R dense_mpi_weft --app matvec|matmul|jacobi|all [--variant tampi] [-n N] [-b B] [-s S] [-p P]
//                               [--no-check]
//
// Variant tampi: every step's tasks are created up front, one weft::taskwait after the last step, no
// barrier between steps.
//   matvec  a task per block of my rows: in x (whole), inout y block.
//   matmul  a task per tile product A(i,j) B(j,k) of my rows of tiles: in both, inout C(i,k) (so a
//           tile of C sums over j in order, as the serial run).
//   jacobi  a task per block of my rows: in every block of the old vector, out its block of the new;
//           then per peer rank a send task (in: my blocks of the new vector; MPI_Isend of my rows) and
//           a receive task (out: the peer's blocks; MPI_Irecv of its rows), each handing its request
//           to weft_mpi_iwait: the task returns at once, its successors wait for the request. The
//           next step's tasks read the received blocks through the dependencies; the tag is the step
//           (mod 2^15), so the messages of two steps in flight between two ranks never match.
// -p P sets WEFT_NUM_THREADS (workers per rank) before MPI and weft start. task_aware_mpi= on the
// RESULT line says whether the layer is on (MPI gave MPI_THREAD_MULTIPLE). The control code of each
// app lies between LOC markers (bench/apps/loc.sh).
#include <weft/mpi.h>
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "app_common.h"
#include "dense_mpi.h"

namespace {

constexpr const char* prog = "dense_mpi_weft";
const char* const variants[] = {"tampi", nullptr};

void matvec_loop(const dm_options& o, const dm_layout& L, dm_local& d) {
  const long n = o.n, b = o.b;
  const double *A = d.A, *x = d.x;
  double* y = d.y;
  /* LOC-BEGIN matvec */
  for (long s = 0; s < o.steps; ++s)
    for (long k = 0; k < L.lnb; ++k)
      weft::spawn([=] { mv_matvec_rows(A, n, x, y, k * b, (k + 1) * b); }, weft::in(x, n * sizeof(double)),
                  weft::inout(y + k * b, b * sizeof(double)));
  weft::taskwait();
  /* LOC-END */
}

void matmul_loop(const dm_options& o, const dm_layout& L, dm_local& d) {
  const long b = o.b, nt = L.nb;
  const std::size_t tile = sizeof(double) * b * b;
  /* LOC-BEGIN matmul */
  for (long s = 0; s < o.steps; ++s)
    for (long ti = 0; ti < L.lnb; ++ti)
      for (long tk = 0; tk < nt; ++tk)
        for (long tj = 0; tj < nt; ++tj) {
          const double *a = mm_tile(d.A, nt, b, ti, tj), *bt = mm_tile(d.B, nt, b, tj, tk);
          double* c = mm_tile(d.C, nt, b, ti, tk);
          weft::spawn([=] { mm_tile_gemm(a, bt, c, b); }, weft::in(a, tile), weft::in(bt, tile), weft::inout(c, tile));
        }
  weft::taskwait();
  /* LOC-END */
}

// The accesses of the next jacobi task (the producer is one thread).
std::vector<weft::access> deps;

/* LOC-BEGIN jacobi */
// Blocks k0..k1-1 of v (B doubles each) from or to peer, as one message.
void exchange(double* v, long b, long k0, long k1, int peer, int tag, bool send) {
  deps.clear();
  for (long k = k0; k < k1; ++k)
    deps.push_back(send ? weft::in(v + k * b, b * sizeof(double)) : weft::out(v + k * b, b * sizeof(double)));
  weft::spawn(
      [=] {
        MPI_Request request;
        const int count = static_cast<int>((k1 - k0) * b);
        if (send) MPI_Isend(v + k0 * b, count, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &request);
        else MPI_Irecv(v + k0 * b, count, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &request);
        weft_mpi_iwait(&request, MPI_STATUS_IGNORE);
      },
      weft::accesses(deps));
}
/* LOC-END */

void jacobi_loop(const dm_options& o, const dm_layout& L, dm_local& d) {
  const long n = o.n, b = o.b, nb = L.nb, k0 = L.k0;
  const double *R = d.A, *diag = d.diag, *rhs = d.rhs;
  /* LOC-BEGIN jacobi */
  for (long s = 0; s < o.steps; ++s) {
    const double* xo = d.v[s & 1];
    double* xn = d.v[(s + 1) & 1];
    for (long k = L.k0; k < L.k1; ++k) {
      deps.clear();
      for (long j = 0; j < nb; ++j) deps.push_back(weft::in(xo + j * b, b * sizeof(double)));
      deps.push_back(weft::out(xn + k * b, b * sizeof(double)));
      weft::spawn([=] { mv_jacobi_rows(R, diag, rhs, n, xo, xn + k0 * b, (k - k0) * b, (k - k0 + 1) * b); },
                  weft::accesses(deps));
    }
    const int tag = static_cast<int>(s & 0x7fff);
    for (int p = 0; p < L.ranks; ++p) {
      if (p == L.rank) continue;
      exchange(xn, b, L.k0, L.k1, p, tag, true);
      exchange(xn, b, dm_first_block(nb, p, L.ranks), dm_first_block(nb, p + 1, L.ranks), p, tag, false);
    }
  }
  weft::taskwait();
  /* LOC-END */
}

// One app: its data, the timed loop, the check and the RESULT line. Returns ok.
bool run_app(const dm_options& o) {
  dm_layout L;
  dm_layout_init(&L, &o, prog);
  dm_local d;
  dm_local_build(&d, &o, &L, prog);
  deps.reserve(static_cast<std::size_t>(L.nb) + 1);
  weft_reset_stats();

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = app_now();
  dm_distribute_inputs(&d, &o, &L, prog);
  if (o.app == DM_MATVEC) matvec_loop(o, L, d);
  else if (o.app == DM_MATMUL) matmul_loop(o, L, d);
  else jacobi_loop(o, L, d);
  double seconds = app_now() - t0;
  weft_stats_t st;
  weft_get_stats(&st);

  long long tasks = (dm_compute_tasks(&o, &L) + (o.app == DM_JACOBI ? 2LL * (L.ranks - 1) : 0)) * o.steps;
  int ok = dm_finish(&o, &L, dm_local_result(&d, &o, &L), seconds, "weft", weft_num_workers(), tasks,
                     static_cast<long long>(st.edges_created),
                     weft_mpi_task_aware() ? "task_aware_mpi=yes" : "task_aware_mpi=no", prog);
  dm_local_free(&d);
  return ok != 0;
}

int run(int argc, char** argv) {
  dm_options o;
  dm_mpi_parse(&o, argc, argv, prog, variants);
  // Before MPI_Init: libweft-mpi's MPI_Init_thread may be the first to start weft.
  if (o.threads > 0) setenv("WEFT_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  app_mpi_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, prog, "variant tampi");
  if (int st = weft_init(); st != WEFT_OK) app_die("%s: weft_init: %s", prog, weft_strerror(st));
  bool ok = true;
  for (int app = dm_first_app(&o); app <= dm_last_app(&o); ++app) ok &= run_app(dm_for_app(&o, app));
  MPI_Finalize();  // before weft_finalize: libweft-mpi unregisters its poller from weft
  if (int st2 = weft_finalize(); st2 != WEFT_OK) app_die("%s: weft_finalize: %s", prog, weft_strerror(st2));
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", prog, e.what());
    return 1;
  }
}
