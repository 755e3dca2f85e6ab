// heat_mpi_weft: the distributed 2-D heat equation (heat_mpi.h) on native weft with task-aware MPI
// (libweft-mpi, weft/mpi.h), the peer of heat_mpi_omp's tasks variant.
//
//   mpirun -np R heat_mpi_weft [--method gauss-seidel|jacobi] [--variant weft] [-n N] [-b B] [-s S] [-p P]
//                              [--no-check]
//
// Variant weft: the task graph of heat_mpi_omp's tasks variant through weft::spawn, one
// weft::taskwait after the last sweep. Per sweep and neighbour rank a send task (in: the nb blocks of
// the block row it sends) and a receive task (out: the ghost row), each calling the BLOCKING
// MPI_Send / MPI_Recv; libweft-mpi turns them into non-blocking calls and suspends the task until the
// request completes, so a worker never sits in MPI. The block tasks as heat_weft's, the ghost row
// standing for the neighbour block row beyond the slab's edge; the communication tasks of a link are
// ordered sweep after sweep (heat_slab.link) as in the OpenMP program, so that both run one graph.
// task_aware_mpi= on the RESULT line says whether the layer is on (MPI gave MPI_THREAD_MULTIPLE); off,
// the blocking calls hold their worker. -p P sets WEFT_NUM_THREADS (workers per rank) before MPI and
// weft start. The grid is gathered on rank 0 and compared with the serial sweep (must be 0).
#include <weft/mpi.h>
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "app_common.h"
#include "heat_mpi.h"

namespace {

const char* const variants[] = {"weft", nullptr};

// The bytes a block spans in its array, and a whole row (informative: traces).
std::size_t block_bytes(const gk_grid& g) {
  return sizeof(double) * ((static_cast<std::size_t>(g.b) - 1) * g.stride + static_cast<std::size_t>(g.b));
}
std::size_t row_bytes(const gk_grid& g) { return sizeof(double) * g.stride; }

/* LOC-BEGIN heat */
// The accesses of the next communication task (the producer is one thread).
std::vector<weft::access> deps;

template <class F>
void spawn_comm(const char* label, F f) {
  weft::spawn(f, weft::accesses(deps), weft::label(label));
  deps.clear();
}

// in: the nb blocks of the block row whose first block is at u + first.
void block_row_in(const gk_grid* g, const double* u, std::size_t first) {
  for (int j = 0; j < g->nb; ++j) deps.push_back(weft::in(u + first + static_cast<std::size_t>(j) * g->b, block_bytes(*g)));
}

// The tokens of a communication task of sweep k on link l (0: above, 1: below), role 0 send, 1 receive.
void link_deps(heat_slab* s, int l, long k, int role) {
  deps.push_back(weft::out(s->link[l][k & 1][role]));
  deps.push_back(weft::in(s->link[l][(k - 1) & 1][0]));
  deps.push_back(weft::in(s->link[l][(k - 1) & 1][1]));
}

void send_row(const gk_grid* g, const double* row, int dest, int tag) {
  MPI_Send(row, static_cast<int>(g->stride), MPI_DOUBLE, dest, tag, MPI_COMM_WORLD);
}
void recv_row(const gk_grid* g, double* row, int source, int tag) {
  MPI_Recv(row, static_cast<int>(g->stride), MPI_DOUBLE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void spawn_send(heat_slab* s, const gk_grid* g, const double* u, std::size_t first, const double* row, int link, long k,
                int dest, int dir) {
  block_row_in(g, u, first);
  link_deps(s, link, k, 0);
  spawn_comm(link == 0 ? "send-up" : "send-down",
             [g, row, dest, tag = heat_mpi_tag(k, dir)] { send_row(g, row, dest, tag); });
}

void spawn_recv(heat_slab* s, const gk_grid* g, double* ghost, int link, long k, int source, int dir) {
  deps.push_back(weft::out(ghost, row_bytes(*g)));
  link_deps(s, link, k, 1);
  spawn_comm(link == 0 ? "recv-top" : "recv-bottom",
             [g, ghost, source, tag = heat_mpi_tag(k, dir)] { recv_row(g, ghost, source, tag); });
}

// Offsets (in doubles) of the first block of the slab's first and last block rows.
std::size_t first_block_row(const gk_grid* g) { return g->stride + 1; }
std::size_t last_block_row(const gk_grid* g, const heat_slab* s) {
  return (1 + static_cast<std::size_t>(s->lnb - 1) * g->b) * g->stride + 1;
}
/* LOC-END */

/* LOC-BEGIN heat */
// Sweep k reads (k odd ? b : a) and writes the other.
void jacobi_solve(const gk_grid* g, heat_slab* s, long sweeps) {
  const int nb = g->nb, lnb = s->lnb;
  const std::size_t len = block_bytes(*g), first = first_block_row(g), last = last_block_row(g, s);
  for (long k = 0; k < sweeps; ++k) {
    double* src = (k & 1) ? s->b : s->a;
    double* dst = (k & 1) ? s->a : s->b;
    double* top = src;
    double* bot = heat_ghost_bottom(g, s, src);
    if (s->up != MPI_PROC_NULL) {
      spawn_send(s, g, src, first, heat_first_row(g, src), 0, k, s->up, HEAT_TO_UP);
      spawn_recv(s, g, top, 0, k, s->up, HEAT_TO_DOWN);
    }
    if (s->down != MPI_PROC_NULL) {
      spawn_send(s, g, src, last, heat_last_row(g, s, src), 1, k, s->down, HEAT_TO_DOWN);
      spawn_recv(s, g, bot, 1, k, s->down, HEAT_TO_UP);
    }
    for (int bi = 0; bi < lnb; ++bi) {
      for (int bj = 0; bj < nb; ++bj) {
        const double* c = heat_block(g, src, bi, bj);
        const double* no = bi > 0 ? heat_block(g, src, bi - 1, bj) : top;
        const double* so = bi + 1 < lnb ? heat_block(g, src, bi + 1, bj) : bot;
        const double* we = bj > 0 ? heat_block(g, src, bi, bj - 1) : c;
        const double* ea = bj + 1 < nb ? heat_block(g, src, bi, bj + 1) : c;
        weft::spawn([g, dst, src, bi, bj] { gk_jacobi_block(g, dst, src, bi, bj); },
                    weft::out(heat_block(g, dst, bi, bj), len), weft::in(c, len), weft::in(no, len), weft::in(so, len),
                    weft::in(we, len), weft::in(ea, len), weft::label("jacobi-block"));
      }
    }
  }
  weft::taskwait();
/* LOC-END */
}

/* LOC-BEGIN heat */
// In place: the rows going up leave before the sweep touches them, those going down after it.
void gs_solve(const gk_grid* g, heat_slab* s, long sweeps) {
  const int nb = g->nb, lnb = s->lnb;
  const std::size_t len = block_bytes(*g), first = first_block_row(g), last = last_block_row(g, s);
  double* u = s->a;
  double* top = u;
  double* bot = heat_ghost_bottom(g, s, u);
  for (long k = 0; k < sweeps; ++k) {
    if (s->up != MPI_PROC_NULL) spawn_send(s, g, u, first, heat_first_row(g, u), 0, k, s->up, HEAT_TO_UP);
    if (s->down != MPI_PROC_NULL) spawn_recv(s, g, bot, 1, k, s->down, HEAT_TO_UP);
    if (s->up != MPI_PROC_NULL) spawn_recv(s, g, top, 0, k, s->up, HEAT_TO_DOWN);
    for (int bi = 0; bi < lnb; ++bi) {
      for (int bj = 0; bj < nb; ++bj) {
        const double* c = heat_block(g, u, bi, bj);
        const double* no = bi > 0 ? heat_block(g, u, bi - 1, bj) : top;
        const double* so = bi + 1 < lnb ? heat_block(g, u, bi + 1, bj) : bot;
        const double* we = bj > 0 ? heat_block(g, u, bi, bj - 1) : c;
        const double* ea = bj + 1 < nb ? heat_block(g, u, bi, bj + 1) : c;
        weft::spawn([g, u, bi, bj] { gk_gs_block(g, u, bi, bj); }, weft::inout(c, len), weft::in(no, len),
                    weft::in(so, len), weft::in(we, len), weft::in(ea, len), weft::label("gs-block"));
      }
    }
    if (s->down != MPI_PROC_NULL) spawn_send(s, g, u, last, heat_last_row(g, s, u), 1, k, s->down, HEAT_TO_DOWN);
  }
  weft::taskwait();
/* LOC-END */
}

int run(int argc, char** argv) {
  heat_options o;
  heat_mpi_parse(&o, argc, argv, "heat_mpi_weft", variants);
  // Before MPI_Init: libweft-mpi's MPI_Init_thread may be the first to start weft.
  if (o.threads > 0) setenv("WEFT_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  heat_slab s;
  heat_mpi_start(&s, &o, &argc, &argv, MPI_THREAD_MULTIPLE, "heat_mpi_weft");
  if (int st = weft_init(); st != WEFT_OK) app_die("heat_mpi_weft: weft_init: %s", weft_strerror(st));
  const gk_grid* g = &o.grid;
  const bool jacobi = o.method == HEAT_JACOBI;
  deps.reserve(static_cast<std::size_t>(g->nb) + 8);
  app_weft_reset_stats();

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = app_now();
  if (jacobi) jacobi_solve(g, &s, o.sweeps);
  else gs_solve(g, &s, o.sweeps);
  double seconds = app_now() - t0;
  weft_stats_t st;
  app_weft_stats(&st);

  int ok = heat_mpi_finish(&o, &s, jacobi && (o.sweeps & 1) ? s.b : s.a, seconds, "weft", weft_num_workers(),
                           heat_mpi_task_count(&o, &s), static_cast<long long>(st.edges_created),
                           weft_mpi_task_aware() ? "task_aware_mpi=yes" : "task_aware_mpi=no", "heat_mpi_weft");
  heat_mpi_free(&s);
  MPI_Finalize();  // before weft_finalize: libweft-mpi unregisters its poller from weft
  if (int st2 = weft_finalize(); st2 != WEFT_OK) app_die("heat_mpi_weft: weft_finalize: %s", weft_strerror(st2));
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heat_mpi_weft: %s\n", e.what());
    return 1;
  }
}
