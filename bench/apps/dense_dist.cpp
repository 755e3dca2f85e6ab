// dense_dist: multi-matvec, multi-matmul and dense Jacobi (dense_mpi.h) on the distributed taskiter
// (libweft-dist, weft/dist.h), the paper's own variant.
//
//   mpirun -np R dense_dist --app matvec|matmul|jacobi|all [--variant dist|dist-iteration] [-n N] [-b B]
//                           [-s S] [-p P] [--no-check]
//
// Every array lives in the symmetric heap (weft_dist_alloc), cut into registered regions with the
// block-row owner (dense_mpi.h) as home: matvec A's row blocks, y's blocks, x whole (home rank 0:
// every rank reads it, the initial fetch copies it); matmul every tile of A, B and C (the home of a
// tile is the owner of its row of tiles; B's tiles are read by every rank: fetched once); jacobi the
// row blocks of R, d, b and of both vectors. Each rank initialises only what it is home of (the
// heap is zero elsewhere, so a missing fetch shows in the check). The loop is one weft::graph in
// mode WEFT_GRAPH_DISTRIBUTED with iterations = STEPS, recorded once on every rank (jacobi: unroll 2,
// as the vectors swap), every task of every rank in the round, each run by the home of the block it
// writes (owner computes); libweft-dist inserts the transfers (jacobi: every new block to every
// other rank) and replays the round with no control message. Variants: the graph's policy,
// immediate successor (dist) or iteration priority (dist-iteration).
//
// After weft::graph::end each region is back home: the check gathers the home blocks. seconds= is
// the iterations only (weft_dist_last_timings' run, the slowest rank's); the start-up cost follows
// on the RESULT line, the slowest rank's of each: record= check= plan= fetch= (startup= their sum),
// write_back=, wall= (graph begin to end), tasks of the round (round_tasks=, all ranks') and
// transfers= per round. -p P sets WEFT_NUM_THREADS before MPI and weft start. The control code of
// each app lies between LOC markers (bench/apps/loc.sh).
#include <weft/dist.h>
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

constexpr const char* prog = "dense_dist";
const char* const variants[] = {"dist", "dist-iteration", nullptr};

// The arrays, in the symmetric heap (the same addresses on every rank).
struct heap_data {
  double *A = nullptr, *B = nullptr, *C = nullptr, *x = nullptr, *y = nullptr, *diag = nullptr, *rhs = nullptr;
  double* v[2] = {nullptr, nullptr};
};

double* heap_alloc(std::size_t count) {
  auto* p = static_cast<double*>(weft_dist_alloc(count * sizeof(double)));
  if (!p) app_die("%s: weft_dist_alloc of %zu doubles failed", prog, count);
  return p;
}

void region(const double* p, std::size_t count, int home) {
  if (int st = weft_dist_region(p, count * sizeof(double), home); st != WEFT_OK)
    app_die("%s: weft_dist_region: %s", prog, weft_strerror(st));
}

// Allocation (collective, the same order everywhere), regions, and this rank's home values.
heap_data build(const dm_options& o, const dm_layout& L) {
  const long n = o.n, b = o.b, nb = L.nb;
  const std::size_t nn = static_cast<std::size_t>(n) * n, rowblock = static_cast<std::size_t>(b) * n,
                    tile = static_cast<std::size_t>(b) * b;
  heap_data h;
  if (o.app == DM_MATMUL) {
    h.A = heap_alloc(nn);
    h.B = heap_alloc(nn);
    h.C = heap_alloc(nn);
    for (long ti = 0; ti < nb; ++ti)
      for (long tj = 0; tj < nb; ++tj) {
        const int home = dm_owner(nb, ti, L.ranks);
        for (double* M : {h.A, h.B, h.C}) region(mm_tile(M, nb, b, ti, tj), tile, home);
        if (home != L.rank) continue;
        mm_init_tile(MM_A, n, b, ti, tj, mm_tile(h.A, nb, b, ti, tj));
        mm_init_tile(MM_B, n, b, ti, tj, mm_tile(h.B, nb, b, ti, tj));
      }
    return h;
  }
  h.A = heap_alloc(nn);
  for (long k = 0; k < nb; ++k) region(h.A + k * rowblock, rowblock, dm_owner(nb, k, L.ranks));
  if (o.app == DM_MATVEC) {
    h.x = heap_alloc(static_cast<std::size_t>(n));
    h.y = heap_alloc(static_cast<std::size_t>(n));
    region(h.x, static_cast<std::size_t>(n), 0);
    for (long k = 0; k < nb; ++k) region(h.y + k * b, static_cast<std::size_t>(b), dm_owner(nb, k, L.ranks));
    mv_matvec_init_rows(n, h.A + L.r0 * n, L.r0, L.r1);
    if (L.rank == 0) mv_matvec_init_x(n, h.x);
    return h;
  }
  h.diag = heap_alloc(static_cast<std::size_t>(n));
  h.rhs = heap_alloc(static_cast<std::size_t>(n));
  h.v[0] = heap_alloc(static_cast<std::size_t>(n));
  h.v[1] = heap_alloc(static_cast<std::size_t>(n));
  for (long k = 0; k < nb; ++k)
    for (double* v : {h.diag, h.rhs, h.v[0], h.v[1]}) region(v + k * b, static_cast<std::size_t>(b), dm_owner(nb, k, L.ranks));
  mv_jacobi_init_rows(n, h.A + L.r0 * n, h.diag + L.r0, h.rhs + L.r0, L.r0, L.r1);
  return h;
}

void heap_free(heap_data& h) {
  for (double* p : {h.A, h.B, h.C, h.x, h.y, h.diag, h.rhs, h.v[0], h.v[1]})
    if (p) weft_dist_free(p);
}

weft_graph_options_t graph_options(const dm_options& o, int unroll) {
  weft_graph_options_t g{};
  g.mode = WEFT_GRAPH_DISTRIBUTED;
  g.iterations = o.steps;
  g.unroll = unroll;
  g.policy = o.variant_index == 1 ? WEFT_GRAPH_ITERATION_PRIORITY : WEFT_GRAPH_IMMEDIATE_SUCCESSOR;
  return g;
}

void matvec_loop(const dm_options& o, const dm_layout& L, heap_data& h) {
  const long n = o.n, b = o.b;
  const double *A = h.A, *x = h.x;
  double* y = h.y;
  /* LOC-BEGIN matvec */
  weft::graph g(graph_options(o, 1));
  g.iteration([&] {
    for (long k = 0; k < L.nb; ++k)
      weft::spawn([=] { mv_matvec_rows(A, n, x, y, k * b, (k + 1) * b); }, weft::in(A + k * b * n, b * n * sizeof(double)),
                  weft::in(x, n * sizeof(double)), weft::inout(y + k * b, b * sizeof(double)));
  });
  g.end();
  /* LOC-END */
}

void matmul_loop(const dm_options& o, const dm_layout& L, heap_data& h) {
  const long b = o.b, nt = L.nb;
  const std::size_t tile = sizeof(double) * b * b;
  /* LOC-BEGIN matmul */
  weft::graph g(graph_options(o, 1));
  g.iteration([&] {
    for (long ti = 0; ti < nt; ++ti)
      for (long tk = 0; tk < nt; ++tk)
        for (long tj = 0; tj < nt; ++tj) {
          const double *a = mm_tile(h.A, nt, b, ti, tj), *bt = mm_tile(h.B, nt, b, tj, tk);
          double* c = mm_tile(h.C, nt, b, ti, tk);
          weft::spawn([=] { mm_tile_gemm(a, bt, c, b); }, weft::in(a, tile), weft::in(bt, tile), weft::inout(c, tile));
        }
  });
  g.end();
  /* LOC-END */
}

void jacobi_loop(const dm_options& o, const dm_layout& L, heap_data& h) {
  const long n = o.n, b = o.b, nb = L.nb;
  const std::size_t bytes = sizeof(double) * b;
  const double *R = h.A, *diag = h.diag, *rhs = h.rhs;
  std::vector<weft::access> deps;
  /* LOC-BEGIN jacobi */
  weft::graph g(graph_options(o, 2));
  for (int s = 0; s < 2; ++s)
    g.iteration([&] {
      const double* xo = h.v[s];
      double* xn = h.v[1 - s];
      for (long k = 0; k < nb; ++k) {
        deps = {weft::out(xn + k * b, bytes), weft::in(R + k * b * n, bytes * n), weft::in(diag + k * b, bytes),
                weft::in(rhs + k * b, bytes)};
        for (long j = 0; j < nb; ++j) deps.push_back(weft::in(xo + j * b, bytes));
        weft::spawn([=] { mv_jacobi_rows(R, diag, rhs, n, xo, xn, k * b, (k + 1) * b); }, weft::accesses(deps));
      }
    });
  g.end();
  /* LOC-END */
}

// One app: the heap, the loop, the check and the RESULT line. Returns ok.
bool run_app(const dm_options& o) {
  dm_layout L;
  dm_layout_init(&L, &o, prog);
  heap_data h = build(o, L);
  weft_reset_stats();

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = app_now();
  if (o.app == DM_MATVEC) matvec_loop(o, L, h);
  else if (o.app == DM_MATMUL) matmul_loop(o, L, h);
  else jacobi_loop(o, L, h);
  double wall = app_now() - t0;
  weft_stats_t st;
  weft_get_stats(&st);
  weft_dist_timings_t t{};
  weft_dist_last_timings(&t);

  // The slowest rank's of each start-up step; the round's tasks (all ranks') and transfers.
  double mine[7] = {t.record, t.check, t.plan, t.fetch, t.record + t.check + t.plan + t.fetch, t.write_back, wall};
  double worst[7] = {0, 0, 0, 0, 0, 0, 0};
  MPI_Reduce(mine, worst, 7, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  const long long round_tasks = app_mpi_sum_known1(MPI_COMM_WORLD, t.local_tasks);
  const int unroll = o.app == DM_JACOBI ? 2 : 1;
  char extra[320];
  std::snprintf(extra, sizeof extra,
                "record=%.6f check=%.6f plan=%.6f fetch=%.6f startup=%.6f write_back=%.6f wall=%.6f round_tasks=%lld "
                "transfers=%ld unroll=%d",
                worst[0], worst[1], worst[2], worst[3], worst[4], worst[5], worst[6], round_tasks, t.transfers, unroll);
  // Tasks run: this rank's per round (transfers included) times the rounds (a last one cut short
  // counted whole).
  const long long tasks = static_cast<long long>(t.local_tasks) * ((o.steps + unroll - 1) / unroll);
  const double* result = o.app == DM_MATVEC ? h.y + L.r0
                         : o.app == DM_MATMUL ? mm_tile(h.C, L.nb, o.b, L.k0, 0)
                                              : h.v[o.steps & 1] + L.r0;
  int ok = dm_finish(&o, &L, result, t.run, "weft", weft_num_workers(), tasks, static_cast<long long>(st.edges_created),
                     extra, prog);
  heap_free(h);
  return ok != 0;
}

int run(int argc, char** argv) {
  dm_options o;
  dm_mpi_parse(&o, argc, argv, prog, variants);
  // Before MPI_Init: libweft-mpi's MPI_Init_thread may be the first to start weft.
  if (o.threads > 0) setenv("WEFT_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  app_mpi_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, prog, "the distributed taskiter");
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
