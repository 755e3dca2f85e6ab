/* heat_omp: the 2-D heat equation (heat_kernels.h) as OpenMP, plain C built with gcc -O2 -fopenmp. One
 * binary for every OpenMP runtime: libgomp as linked, LLVM libomp (LD_PRELOAD=libomp.so.5) or weft's
 * OpenMP door (LD_PRELOAD=libweft.so); runtime= names the one that answered. Not linked to weft:
 * weft/omp_ext.h's graph calls are weak and do nothing where weft is not loaded.
 *
 *   heat_omp [--method gauss-seidel|jacobi] [--variant V] [-n N] [-b B] [-s S] [-p P] [--no-check]
 *
 * Variants:
 *   parallel-for            fork-join, one parallel region per solve. Jacobi: `omp for` over the blocks
 *                           of each sweep. Gauss-Seidel: the anti-diagonals of the block grid in order,
 *                           one `omp for` per diagonal (its blocks share no edge); implicit barriers.
 *   omp-tasks               one task per block per sweep with depend clauses, no barrier between sweeps
 *                           (Gauss-Seidel: inout own block, in 4 neighbours; Jacobi: out new block, in
 *                           old block and its 4 neighbours in the old array).
 *   omp-persistent          the same task loop inside weft_graph_begin_with (re-execute mode; Jacobi
 *                           unroll 2, since the arrays swap) / weft_graph_iteration per sweep /
 *                           weft_graph_end: replayed on weft, plain tasks elsewhere.
 *   omp-persistent-barrier  the same with options.barrier = 1 (each recorded round waits for the
 *                           previous one; for Jacobi a round is 2 sweeps). Same as omp-tasks off weft.
 *   serial                  the row-major blocked sweep on one thread (baseline; no OpenMP).
 *   serial-random           one thread, blocks in a random dependence-respecting order (Gauss-Seidel:
 *                           sweeps overlapping): checks that any such order gives the serial bits.
 *
 * A neighbour block outside the grid is named by the block itself in the depend clauses (a task may
 * name an address twice: the strongest access counts), so that every task has the same clauses.
 * After the timed solve the serial reference runs in the same process; error= is the largest
 * difference to it, which must be 0 (check=FAIL and exit 1 otherwise). */
#define _GNU_SOURCE
#include <omp.h>

#include <weft/omp_ext.h>

#include "app_common.h"
#include "heat_kernels.h"

static const char *const variants[] = {"parallel-for", "omp-tasks", "omp-persistent", "omp-persistent-barrier",
                                       "serial", "serial-random", NULL};
enum { V_FOR, V_TASKS, V_PERSISTENT, V_PERSISTENT_BARRIER, V_SERIAL, V_SERIAL_RANDOM };

/* Opens the persistent graph of the persistent variants (weak calls: nothing off weft). */
static void graph_begin(int variant, int unroll) {
  weft_graph_options_t o;
  int s;
  if (variant != V_PERSISTENT && variant != V_PERSISTENT_BARRIER) return;
  memset(&o, 0, sizeof o);
  o.mode = WEFT_GRAPH_REEXECUTE;
  o.unroll = unroll;
  o.barrier = variant == V_PERSISTENT_BARRIER;
  s = weft_graph_begin_with(&o);
  if (s != 0) app_die("heat_omp: weft_graph_begin_with failed (status %d)", s);
}
static void graph_iteration(int variant) {
  if (variant != V_PERSISTENT && variant != V_PERSISTENT_BARRIER) return;
  int s = weft_graph_iteration();
  if (s != 0) app_die("heat_omp: weft_graph_iteration failed (status %d)", s);
}
static void graph_end(int variant) {
  if (variant != V_PERSISTENT && variant != V_PERSISTENT_BARRIER) {
#pragma omp taskwait
    return;
  }
  int s = weft_graph_end();
  if (s != 0) app_die("heat_omp: weft_graph_end failed (status %d)", s);
}

/* --- Gauss-Seidel ------------------------------------------------------------------------------------- */

static void gs_parallel_for(const gk_grid *g, double *u, long sweeps) {
  const int nb = g->nb;
#pragma omp parallel
  {
    long k;
    int d;
    for (k = 0; k < sweeps; ++k) {
      for (d = 0; d <= 2 * nb - 2; ++d) {
        int lo = d < nb ? 0 : d - nb + 1, hi = d < nb ? d : nb - 1, bi;
#pragma omp for schedule(static)
        for (bi = lo; bi <= hi; ++bi) gk_gs_block(g, u, bi, d - bi);
      }
    }
  }
}

static void gs_tasks(const gk_grid *g, double *u, long sweeps, int variant) {
  const int nb = g->nb;
#pragma omp parallel
#pragma omp single
  {
    long k;
    int bi, bj;
    graph_begin(variant, 1);
    for (k = 0; k < sweeps; ++k) {
      graph_iteration(variant);
      for (bi = 0; bi < nb; ++bi) {
        for (bj = 0; bj < nb; ++bj) {
          double *c = heat_block(g, u, bi, bj);
          double *no = bi > 0 ? heat_block(g, u, bi - 1, bj) : c;
          double *so = bi + 1 < nb ? heat_block(g, u, bi + 1, bj) : c;
          double *we = bj > 0 ? heat_block(g, u, bi, bj - 1) : c;
          double *ea = bj + 1 < nb ? heat_block(g, u, bi, bj + 1) : c;
#pragma omp task firstprivate(bi, bj) depend(inout : *c) depend(in : *no, *so, *we, *ea)
          gk_gs_block(g, u, bi, bj);
        }
      }
    }
    graph_end(variant);
  }
}

/* --- Jacobi --------------------------------------------------------------------------------------------- */

/* Sweep k reads (k odd ? b : a) and writes the other; the result is in (sweeps odd ? b : a). */
static void jacobi_parallel_for(const gk_grid *g, double *a, double *b, long sweeps) {
  const int nb = g->nb;
#pragma omp parallel
  {
    long k;
    int bi, bj;
    for (k = 0; k < sweeps; ++k) {
      const double *src = (k & 1) ? b : a;
      double *dst = (k & 1) ? a : b;
#pragma omp for collapse(2) schedule(static)
      for (bi = 0; bi < nb; ++bi)
        for (bj = 0; bj < nb; ++bj) gk_jacobi_block(g, dst, src, bi, bj);
    }
  }
}

static void jacobi_tasks(const gk_grid *g, double *a, double *b, long sweeps, int variant) {
  const int nb = g->nb;
#pragma omp parallel
#pragma omp single
  {
    long k;
    int bi, bj;
    graph_begin(variant, 2);
    for (k = 0; k < sweeps; ++k) {
      double *src = (k & 1) ? b : a;
      double *dst = (k & 1) ? a : b;
      graph_iteration(variant);
      for (bi = 0; bi < nb; ++bi) {
        for (bj = 0; bj < nb; ++bj) {
          double *mine = heat_block(g, dst, bi, bj);
          double *c = heat_block(g, src, bi, bj);
          double *no = bi > 0 ? heat_block(g, src, bi - 1, bj) : c;
          double *so = bi + 1 < nb ? heat_block(g, src, bi + 1, bj) : c;
          double *we = bj > 0 ? heat_block(g, src, bi, bj - 1) : c;
          double *ea = bj + 1 < nb ? heat_block(g, src, bi, bj + 1) : c;
#pragma omp task firstprivate(bi, bj, src, dst) depend(out : *mine) depend(in : *c, *no, *so, *we, *ea)
          gk_jacobi_block(g, dst, src, bi, bj);
        }
      }
    }
    graph_end(variant);
  }
}

int main(int argc, char **argv) {
  heat_options o;
  const gk_grid *g;
  double *u, *u2 = NULL, *result, *ref = NULL, t0, seconds;
  int team = 1, ok = 1, variant, jacobi;
  double error = 0.0;
  weft_stats_t st;
  app_result r;

  heat_parse(&o, argc, argv, "heat_omp", variants);
  g = &o.grid;
  variant = o.variant_index;
  jacobi = o.method == HEAT_JACOBI;
  u = gk_alloc(g);
  if (jacobi) u2 = gk_alloc(g);
  if (!u || (jacobi && !u2)) app_die("heat_omp: out of memory for a %d x %d grid", o.n + 2, o.n + 2);
  gk_init(g, u);
  if (jacobi) gk_init(g, u2);
  if (o.threads > 0) omp_set_num_threads(o.threads);
  if (variant != V_SERIAL && variant != V_SERIAL_RANDOM) {
    /* Starts the team before the clock (and learns its size). */
#pragma omp parallel
    {
#pragma omp single
      team = omp_get_num_threads();
    }
  }
  app_weft_reset_stats();

  t0 = app_now();
  result = u;
  if (!jacobi) {
    switch (variant) {
      case V_FOR: gs_parallel_for(g, u, o.sweeps); break;
      case V_SERIAL: gk_gs_serial(g, u, o.sweeps); break;
      case V_SERIAL_RANDOM:
        if (heat_gs_random_order(g, u, o.sweeps, 12345) != 0) app_die("heat_omp: serial-random found no ready block");
        break;
      default: gs_tasks(g, u, o.sweeps, variant); break;
    }
  } else {
    switch (variant) {
      case V_FOR: jacobi_parallel_for(g, u, u2, o.sweeps); break;
      case V_SERIAL: gk_jacobi_serial(g, u, u2, o.sweeps); break;
      case V_SERIAL_RANDOM:
        if (!heat_jacobi_random_order(g, u, u2, o.sweeps, 12345)) app_die("heat_omp: out of memory");
        break;
      default: jacobi_tasks(g, u, u2, o.sweeps, variant); break;
    }
    result = (o.sweeps & 1) ? u2 : u;
  }
  seconds = app_now() - t0;
  app_weft_stats(&st);

  if (o.check) {
    /* The reference after the clock: Gauss-Seidel in a fresh array; Jacobi in the array the solve
     * did not end in, and one fresh array. */
    double *expect;
    ref = gk_alloc(g);
    if (!ref) app_die("heat_omp: out of memory for the reference grid");
    gk_init(g, ref);
    if (!jacobi) {
      gk_gs_serial(g, ref, o.sweeps);
      expect = ref;
    } else {
      double *other = result == u ? u2 : u;
      gk_init(g, other);
      expect = gk_jacobi_serial(g, other, ref, o.sweeps);
    }
    error = heat_max_diff(g, result, expect);
    ok = error == 0.0;
  }

  memset(&r, 0, sizeof r);
  r.app = jacobi ? "heat-jacobi" : "heat-gs";
  r.variant = o.variant;
  r.runtime = app_omp_runtime(); /* serial variants too: variant= says they ran on one thread */
  r.threads = team;
  r.size = o.n;
  r.block = o.b;
  r.iters = o.sweeps;
  r.seconds = seconds;
  r.gflops = heat_gflops(&o, seconds);
  r.tasks = (variant == V_TASKS || variant == V_PERSISTENT || variant == V_PERSISTENT_BARRIER)
                ? o.sweeps * (long long)g->nb * g->nb
                : -1;
  r.edges = strcmp(app_omp_runtime(), "weft") == 0 && variant != V_SERIAL && variant != V_SERIAL_RANDOM
                ? (long long)st.edges_created
                : -1;
  r.ok = ok;
  r.error = error;
  app_print_result(&r);
  free(u);
  free(u2);
  free(ref);
  return ok ? 0 : 1;
}
