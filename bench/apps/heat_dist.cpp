// heat_dist: the distributed 2-D heat equation (heat_mpi.h) as a distributed taskiter (libweft-dist,
// weft/dist.h): the third variant beside heat_mpi_omp (fork-join MPI + OpenMP, and tasks) and
// heat_mpi_weft (tasks with task-aware MPI written by hand).
//
//   mpirun -np R heat_dist [--method gauss-seidel|jacobi] [-n N] [-b B] [-s S] [-p P] [--no-check]
//
// The whole grid lives in the symmetric heap, at the same address on every rank; a rank touches only
// its slab (heat_mpi.h's block rows) and the ghost rows next to it. Each block is three regions,
// homed on its slab's rank: its first row, its other rows but the last (a 2-D region), its last row.
// A block task names the rows it reads across a slab edge (the north block's last row, the south
// block's first row) and its west and east blocks whole; weft derives the transfers (one row segment
// per block edge between ranks), fetches nothing (owner computes), and runs every sweep with no
// control message: the sweeps overlap across ranks as a 3-D wavefront. The loop is recorded once
// (Jacobi: two sweeps, unroll 2) and the grid's final rows are home at the end, gathered on rank 0
// and compared bit for bit with the serial sweep. The RESULT line's time covers the whole loop,
// start-up included (its steps in extra=).
#include <weft/dist.h>
#include <weft/mpi.h>
#include <weft/weft.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app_common.h"
#include "heat_mpi.h"

namespace {

const char* const variants[] = {"dist", nullptr};

struct block_task {
  const gk_grid* g;
  double* dst;  // Gauss-Seidel: the grid; Jacobi: the array written
  const double* src;
  int bi, bj;
};

void gs_block(void* p) {
  const auto& a = *static_cast<const block_task*>(p);
  gk_gs_block(a.g, a.dst, a.bi, a.bj);
}
void jacobi_block(void* p) {
  const auto& a = *static_cast<const block_task*>(p);
  gk_jacobi_block(a.g, a.dst, a.src, a.bi, a.bj);
}

// The three regions of block (bi, bj) of array u: first row, middle rows, last row (null when the
// block has fewer rows).
struct block_rows {
  double* first;
  double* middle;
  double* last;
};
block_rows rows_of(const gk_grid* g, double* u, int bi, int bj) {
  double* c = heat_block(g, u, bi, bj);
  return {c, g->b > 2 ? c + g->stride : nullptr,
          g->b > 1 ? c + static_cast<std::size_t>(g->b - 1) * g->stride : nullptr};
}

double* last_row_of(const gk_grid* g, double* u, int bi, int bj) {
  block_rows r = rows_of(g, u, bi, bj);
  return r.last ? r.last : r.first;
}

int home_of(int bi, int nb, int ranks) {  // heat_mpi.h's slabs: block rows [r nb / R, (r + 1) nb / R)
  int r = static_cast<int>(static_cast<long>(bi) * ranks / nb);
  while (static_cast<long>(nb) * (r + 1) / ranks <= bi) ++r;
  while (static_cast<long>(nb) * r / ranks > bi) --r;
  return r;
}

/* LOC-BEGIN heat */
void register_blocks(const gk_grid* g, double* u, int ranks) {
  const std::size_t row = sizeof(double) * static_cast<std::size_t>(g->b), stride = sizeof(double) * g->stride;
  for (int bi = 0; bi < g->nb; ++bi)
    for (int bj = 0; bj < g->nb; ++bj) {
      const int home = home_of(bi, g->nb, ranks);
      block_rows r = rows_of(g, u, bi, bj);
      weft_dist_region(r.first, row, home);
      if (r.middle) weft_dist_region_2d(r.middle, static_cast<std::size_t>(g->b - 2), row, stride, home);
      if (r.last) weft_dist_region(r.last, row, home);
    }
}
/* LOC-END */

/* LOC-BEGIN heat */
// The accesses of a block task: `self` written (inout, or out for Jacobi's destination), the
// neighbour rows and blocks of `src` read.
void add_block(std::vector<weft_recorded_access_t>& deps, const gk_grid* g, double* u, int bi, int bj, int type) {
  block_rows r = rows_of(g, u, bi, bj);
  for (double* part : {r.first, r.middle, r.last})
    if (part) deps.push_back({part, type});
}
/* LOC-END */

/* LOC-BEGIN heat */
void spawn_block(weft_task_fn fn, const block_task& a, const std::vector<weft_recorded_access_t>& deps) {
  weft_task_t* t = weft_task_create(fn, &a, sizeof a, WEFT_TASK_DEFAULT);
  for (const auto& d : deps) weft_task_depend(t, static_cast<weft_dep_type>(d.type), d.address, 0);
  weft_task_submit(t);
}
/* LOC-END */

/* LOC-BEGIN heat */
void reads_around(std::vector<weft_recorded_access_t>& deps, const gk_grid* g, double* src, int bi, int bj) {
  const int nb = g->nb;
  if (bi > 0) deps.push_back({last_row_of(g, src, bi - 1, bj), WEFT_DEP_IN});
  if (bi + 1 < nb) deps.push_back({rows_of(g, src, bi + 1, bj).first, WEFT_DEP_IN});
  if (bj > 0) add_block(deps, g, src, bi, bj - 1, WEFT_DEP_IN);
  if (bj + 1 < nb) add_block(deps, g, src, bi, bj + 1, WEFT_DEP_IN);
}
/* LOC-END */

int solve(const heat_options& o, double* a, double* b) {
  const gk_grid* g = &o.grid;
  const bool jacobi = o.method == HEAT_JACOBI;
  std::vector<weft_recorded_access_t> deps;
  /* LOC-BEGIN heat */
  weft_graph_options_t opt{};
  opt.mode = WEFT_GRAPH_DISTRIBUTED;
  opt.iterations = o.sweeps;
  opt.unroll = jacobi ? 2 : 1;
  if (int s = weft_graph_begin_with(&opt); s != WEFT_OK) return s;
  for (int k = 0; k < opt.unroll; ++k) {
    weft_graph_iteration();
    double* src = jacobi && (k & 1) ? b : a;
    double* dst = jacobi ? ((k & 1) ? a : b) : a;
    for (int bi = 0; bi < g->nb; ++bi)
      for (int bj = 0; bj < g->nb; ++bj) {
        deps.clear();
        add_block(deps, g, dst, bi, bj, jacobi ? WEFT_DEP_OUT : WEFT_DEP_INOUT);
        if (jacobi) add_block(deps, g, src, bi, bj, WEFT_DEP_IN);
        reads_around(deps, g, src, bi, bj);
        spawn_block(jacobi ? jacobi_block : gs_block, block_task{g, dst, src, bi, bj}, deps);
      }
  }
  return weft_graph_end();
  /* LOC-END */
}

int run(int argc, char** argv) {
  heat_options o;
  heat_mpi_parse(&o, argc, argv, "heat_dist", variants);
  if (o.threads > 0) setenv("WEFT_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  const gk_grid* g = &o.grid;
  heat_slab s{};
  s.rank = app_mpi_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, "heat_dist", "variant dist");
  MPI_Comm_size(MPI_COMM_WORLD, &s.ranks);
  if (g->nb < s.ranks)
    app_mpi_leave(s.rank, 2, "heat_dist", "-n %d -b %d: %d block rows for %d ranks (each rank needs at least one)", o.n,
                  o.b, g->nb, s.ranks);
  if (int st = weft_init(); st != WEFT_OK) app_die("heat_dist: weft_init: %s", weft_strerror(st));
  s.bi0 = static_cast<int>(static_cast<long>(g->nb) * s.rank / s.ranks);
  s.lnb = static_cast<int>(static_cast<long>(g->nb) * (s.rank + 1) / s.ranks) - s.bi0;
  s.lrows = s.lnb * g->b;

  // The grids (Jacobi: two, alike at the start). Each rank writes its slab's rows and the fixed top
  // row (the heap is zero-filled: the rest of the boundary is there already).
  const bool jacobi = o.method == HEAT_JACOBI;
  const std::size_t row0 = 1 + static_cast<std::size_t>(s.bi0) * g->b;
  double* grids[2] = {nullptr, nullptr};
  for (int k = 0; k < (jacobi ? 2 : 1); ++k) {
    grids[k] = static_cast<double*>(weft_dist_alloc(sizeof(double) * gk_cells(g)));
    if (!grids[k]) app_die("heat_dist: rank %d: weft_dist_alloc failed", s.rank);
    heat_mpi_init_rows(g, grids[k] + row0 * g->stride, row0, static_cast<std::size_t>(s.lrows));
    for (std::size_t j = 0; j < g->stride; ++j) grids[k][j] = 1.0;
    register_blocks(g, grids[k], s.ranks);
  }
  app_weft_reset_stats();

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = app_now();
  int status = solve(o, grids[0], grids[1]);
  double seconds = app_now() - t0;
  if (status != WEFT_OK) app_die("heat_dist: rank %d: the distributed loop failed: %s", s.rank, weft_strerror(status));
  weft_stats_t st;
  app_weft_stats(&st);
  weft_dist_timings_t t{};
  weft_dist_last_timings(&t);
  char extra[256];
  std::snprintf(extra, sizeof extra,
                "startup_s=%.4f record_s=%.4f check_s=%.4f plan_s=%.4f fetch_s=%.4f run_s=%.4f writeback_s=%.4f "
                "accesses=%ld transfers=%ld",
                t.record + t.check + t.plan + t.fetch, t.record, t.check, t.plan, t.fetch, t.run, t.write_back,
                t.accesses, t.transfers);
  const double* result = jacobi && (o.sweeps & 1) ? grids[1] : grids[0];
  int ok = heat_mpi_finish(&o, &s, result + (row0 - 1) * g->stride, seconds, "weft", weft_num_workers(),
                           o.sweeps * static_cast<long long>(s.lnb) * g->nb, static_cast<long long>(st.edges_created),
                           extra, "heat_dist");
  for (double* u : grids)
    if (u) weft_dist_free(u);
  MPI_Finalize();
  if (int st2 = weft_finalize(); st2 != WEFT_OK) app_die("heat_dist: weft_finalize: %s", weft_strerror(st2));
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return run(argc, argv);
}
