/* heat_mpi_omp: the distributed 2-D heat equation (heat_mpi.h) as MPI + OpenMP, plain C built with
 * gcc -O2 -fopenmp and linked to MPI only. One binary for every OpenMP runtime: libgomp as linked, LLVM
 * libomp (LD_PRELOAD=libomp.so.5) or weft's OpenMP door (LD_PRELOAD=libweft.so, with libweft-mpi.so
 * beside it for task-aware MPI); runtime= names the one that answered, task_aware_mpi= whether
 * blocking MPI calls inside tasks suspend the task (libweft-mpi loaded and active) or hold the thread.
 *
 *   mpirun -np R heat_mpi_omp [--method gauss-seidel|jacobi] [--variant V] [-n N] [-b B] [-s S] [-p P]
 *                             [--no-check]
 *
 * Each rank owns a slab of whole block rows (heat_mpi.h). Variants:
 *   parallel-for  the classic bulk-synchronous code: one parallel region per solve; per sweep the master
 *                 exchanges the rows (MPI_Sendrecv; Gauss-Seidel: MPI_Sendrecv for the rows going up,
 *                 MPI_Recv before and MPI_Send after the sweep for those going down, which makes the
 *                 ranks a pipeline), a barrier, then `omp for` over the blocks (Jacobi) or over each
 *                 anti-diagonal of the slab's blocks in turn (Gauss-Seidel). MPI_THREAD_FUNNELED.
 *   tasks         one task graph for the whole solve, no barrier between sweeps: per sweep and
 *                 neighbour a send task (depend in: the blocks of the block row it reads, iterator) and
 *                 a receive task (depend out: the ghost row), with BLOCKING MPI_Send / MPI_Recv inside;
 *                 the block tasks as heat_omp's omp-tasks, a ghost row standing for the neighbour block
 *                 row beyond the slab's edge. The communication tasks of a link are ordered sweep after
 *                 sweep (heat_slab.link). MPI_THREAD_MULTIPLE. On libgomp / LLVM libomp a thread in a
 *                 blocking call is lost to the team: with one thread per rank the ranks can all wait in
 *                 receives and never send (a deadlock, expected); weft's task-aware MPI suspends the task
 *                 instead.
 * After the timed solve the grid is gathered on rank 0 and compared with the serial sweep (must be 0). */
#define _GNU_SOURCE
#include <omp.h>

#include "app_common.h"
#include "heat_mpi.h"

static const char *const variants[] = {"parallel-for", "tasks", NULL};
enum { V_FOR, V_TASKS };

/* Whole rows of n + 2 doubles, blocking. */
static void send_row(const gk_grid *g, const double *row, int dest, int tag) {
  MPI_Send(row, (int)g->stride, MPI_DOUBLE, dest, tag, MPI_COMM_WORLD);
}
static void recv_row(const gk_grid *g, double *row, int source, int tag) {
  MPI_Recv(row, (int)g->stride, MPI_DOUBLE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* --- bulk-synchronous ---------------------------------------------------------------------------- */

/* Sweep k reads (k odd ? b : a) and writes the other. */
/* LOC-BEGIN heat */
static void jacobi_parallel_for(const gk_grid *g, heat_slab *s, long sweeps) {
  const int nb = g->nb, lnb = s->lnb, len = (int)g->stride;
#pragma omp parallel
  {
    long k;
    int bi, bj;
    for (k = 0; k < sweeps; ++k) {
      double *src = (k & 1) ? s->b : s->a, *dst = (k & 1) ? s->a : s->b;
#pragma omp master
      {
        MPI_Sendrecv(heat_first_row(g, src), len, MPI_DOUBLE, s->up, heat_mpi_tag(k, HEAT_TO_UP),
                     heat_ghost_bottom(g, s, src), len, MPI_DOUBLE, s->down, heat_mpi_tag(k, HEAT_TO_UP), MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(heat_last_row(g, s, src), len, MPI_DOUBLE, s->down, heat_mpi_tag(k, HEAT_TO_DOWN), src, len,
                     MPI_DOUBLE, s->up, heat_mpi_tag(k, HEAT_TO_DOWN), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
#pragma omp barrier
#pragma omp for collapse(2) schedule(static)
      for (bi = 0; bi < lnb; ++bi)
        for (bj = 0; bj < nb; ++bj) gk_jacobi_block(g, dst, src, bi, bj);
    }
  }
}
/* LOC-END */

/* LOC-BEGIN heat */
static void gs_parallel_for(const gk_grid *g, heat_slab *s, long sweeps) {
  const int nb = g->nb, lnb = s->lnb, len = (int)g->stride;
  double *u = s->a;
#pragma omp parallel
  {
    long k;
    int d, bi;
    for (k = 0; k < sweeps; ++k) {
#pragma omp master
      {
        /* up: my first row as sweep k-1 left it; from below: its first row, likewise */
        MPI_Sendrecv(heat_first_row(g, u), len, MPI_DOUBLE, s->up, heat_mpi_tag(k, HEAT_TO_UP),
                     heat_ghost_bottom(g, s, u), len, MPI_DOUBLE, s->down, heat_mpi_tag(k, HEAT_TO_UP), MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        /* from above: its last row after its sweep k */
        MPI_Recv(u, len, MPI_DOUBLE, s->up, heat_mpi_tag(k, HEAT_TO_DOWN), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
#pragma omp barrier
      for (d = 0; d <= lnb + nb - 2; ++d) {
        int lo = d < nb ? 0 : d - nb + 1, hi = d < lnb ? d : lnb - 1;
#pragma omp for schedule(static)
        for (bi = lo; bi <= hi; ++bi) gk_gs_block(g, u, bi, d - bi);
      }
#pragma omp master
      MPI_Send(heat_last_row(g, s, u), len, MPI_DOUBLE, s->down, heat_mpi_tag(k, HEAT_TO_DOWN), MPI_COMM_WORLD);
    }
  }
}
/* LOC-END */

/* --- tasks --------------------------------------------------------------------------------------- */

/* The token of a communication task of sweep k on link l (0: above, 1: below), role 0 send, 1 receive
 * (heat_slab.link); named in the depend clauses directly (gcc 12 takes a variable used only there
 * for unused). */
#define LINK(l, k, role) s->link[l][(k) & 1][role]

/* Offsets (in doubles) of the first block of the slab's first and last block rows: a send task
 * depends on the nb blocks from there on, every b doubles. */
static size_t first_block_row(const gk_grid *g) { return g->stride + 1; }
static size_t last_block_row(const gk_grid *g, const heat_slab *s) {
  return (1 + (size_t)(s->lnb - 1) * (size_t)g->b) * g->stride + 1;
}

static void jacobi_tasks(const gk_grid *g, heat_slab *s, long sweeps) {
  const int nb = g->nb, lnb = s->lnb;
  const size_t b = (size_t)g->b, first = first_block_row(g), last = last_block_row(g, s);
#pragma omp parallel
#pragma omp single
  {
    long k;
    int bi, bj;
    for (k = 0; k < sweeps; ++k) {
      double *src = (k & 1) ? s->b : s->a, *dst = (k & 1) ? s->a : s->b;
      double *top = src, *bot = heat_ghost_bottom(g, s, src);
      if (s->up != MPI_PROC_NULL) {
#pragma omp task firstprivate(k, src) depend(iterator(int j = 0 : nb), in : src[first + (size_t)j * b]) \
    depend(out : LINK(0, k, 0)) depend(in : LINK(0, k - 1, 0), LINK(0, k - 1, 1))
        send_row(g, heat_first_row(g, src), s->up, heat_mpi_tag(k, HEAT_TO_UP));
#pragma omp task firstprivate(k, top) depend(out : *top, LINK(0, k, 1)) depend(in : LINK(0, k - 1, 0), LINK(0, k - 1, 1))
        recv_row(g, top, s->up, heat_mpi_tag(k, HEAT_TO_DOWN));
      }
      if (s->down != MPI_PROC_NULL) {
#pragma omp task firstprivate(k, src) depend(iterator(int j = 0 : nb), in : src[last + (size_t)j * b]) \
    depend(out : LINK(1, k, 0)) depend(in : LINK(1, k - 1, 0), LINK(1, k - 1, 1))
        send_row(g, heat_last_row(g, s, src), s->down, heat_mpi_tag(k, HEAT_TO_DOWN));
#pragma omp task firstprivate(k, bot) depend(out : *bot, LINK(1, k, 1)) depend(in : LINK(1, k - 1, 0), LINK(1, k - 1, 1))
        recv_row(g, bot, s->down, heat_mpi_tag(k, HEAT_TO_UP));
      }
      for (bi = 0; bi < lnb; ++bi) {
        for (bj = 0; bj < nb; ++bj) {
          double *mine = heat_block(g, dst, bi, bj);
          double *c = heat_block(g, src, bi, bj);
          double *no = bi > 0 ? heat_block(g, src, bi - 1, bj) : top;
          double *so = bi + 1 < lnb ? heat_block(g, src, bi + 1, bj) : bot;
          double *we = bj > 0 ? heat_block(g, src, bi, bj - 1) : c;
          double *ea = bj + 1 < nb ? heat_block(g, src, bi, bj + 1) : c;
#pragma omp task firstprivate(bi, bj, src, dst) depend(out : *mine) depend(in : *c, *no, *so, *we, *ea)
          gk_jacobi_block(g, dst, src, bi, bj);
        }
      }
    }
#pragma omp taskwait
  }
}

static void gs_tasks(const gk_grid *g, heat_slab *s, long sweeps) {
  const int nb = g->nb, lnb = s->lnb;
  const size_t b = (size_t)g->b, first = first_block_row(g), last = last_block_row(g, s);
  double *u = s->a, *top = s->a, *bot = heat_ghost_bottom(g, s, s->a);
#pragma omp parallel
#pragma omp single
  {
    long k;
    int bi, bj;
    for (k = 0; k < sweeps; ++k) {
      if (s->up != MPI_PROC_NULL) {
        /* created before this sweep's blocks: my first row as sweep k-1 left it */
#pragma omp task firstprivate(k) depend(iterator(int j = 0 : nb), in : u[first + (size_t)j * b]) \
    depend(out : LINK(0, k, 0)) depend(in : LINK(0, k - 1, 0), LINK(0, k - 1, 1))
        send_row(g, heat_first_row(g, u), s->up, heat_mpi_tag(k, HEAT_TO_UP));
      }
      if (s->down != MPI_PROC_NULL) {
#pragma omp task firstprivate(k) depend(out : *bot, LINK(1, k, 1)) depend(in : LINK(1, k - 1, 0), LINK(1, k - 1, 1))
        recv_row(g, bot, s->down, heat_mpi_tag(k, HEAT_TO_UP));
      }
      if (s->up != MPI_PROC_NULL) {
#pragma omp task firstprivate(k) depend(out : *top, LINK(0, k, 1)) depend(in : LINK(0, k - 1, 0), LINK(0, k - 1, 1))
        recv_row(g, top, s->up, heat_mpi_tag(k, HEAT_TO_DOWN));
      }
      for (bi = 0; bi < lnb; ++bi) {
        for (bj = 0; bj < nb; ++bj) {
          double *c = heat_block(g, u, bi, bj);
          double *no = bi > 0 ? heat_block(g, u, bi - 1, bj) : top;
          double *so = bi + 1 < lnb ? heat_block(g, u, bi + 1, bj) : bot;
          double *we = bj > 0 ? heat_block(g, u, bi, bj - 1) : c;
          double *ea = bj + 1 < nb ? heat_block(g, u, bi, bj + 1) : c;
#pragma omp task firstprivate(bi, bj) depend(inout : *c) depend(in : *no, *so, *we, *ea)
          gk_gs_block(g, u, bi, bj);
        }
      }
      if (s->down != MPI_PROC_NULL) {
        /* my last row after my sweep k */
#pragma omp task firstprivate(k) depend(iterator(int j = 0 : nb), in : u[last + (size_t)j * b]) \
    depend(out : LINK(1, k, 0)) depend(in : LINK(1, k - 1, 0), LINK(1, k - 1, 1))
        send_row(g, heat_last_row(g, s, u), s->down, heat_mpi_tag(k, HEAT_TO_DOWN));
      }
    }
#pragma omp taskwait
  }
}

int main(int argc, char **argv) {
  heat_options o;
  heat_slab s;
  const gk_grid *g;
  int team = 1, ok, variant, jacobi, aware;
  double t0, seconds;
  weft_stats_t st;
  const char *runtime;

  heat_mpi_parse(&o, argc, argv, "heat_mpi_omp", variants);
  g = &o.grid;
  variant = o.variant_index;
  jacobi = o.method == HEAT_JACOBI;
  heat_mpi_start(&s, &o, &argc, &argv, variant == V_TASKS ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED,
                 "heat_mpi_omp");
  if (o.threads > 0) omp_set_num_threads(o.threads);
  /* Starts the team before the clock (and learns its size). */
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  app_weft_reset_stats();

  MPI_Barrier(MPI_COMM_WORLD);
  t0 = app_now();
  if (jacobi) {
    if (variant == V_FOR) jacobi_parallel_for(g, &s, o.sweeps);
    else jacobi_tasks(g, &s, o.sweeps);
  } else {
    if (variant == V_FOR) gs_parallel_for(g, &s, o.sweeps);
    else gs_tasks(g, &s, o.sweeps);
  }
  seconds = app_now() - t0;
  app_weft_stats(&st);

  runtime = app_omp_runtime();
  aware = app_mpi_task_aware();
  ok = heat_mpi_finish(&o, &s, jacobi && (o.sweeps & 1) ? s.b : s.a, seconds, runtime, team,
                       variant == V_TASKS ? heat_mpi_task_count(&o, &s) : -1,
                       strcmp(runtime, "weft") == 0 ? (long long)st.edges_created : -1,
                       aware > 0 ? "task_aware_mpi=yes" : "task_aware_mpi=no", "heat_mpi_omp");
  heat_mpi_free(&s);
  MPI_Finalize();
  return ok ? 0 : 1;
}
