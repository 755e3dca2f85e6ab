/* Distributed 2-D heat (bench/apps, issue 9): what heat_mpi_omp.c (gcc -fopenmp + MPI) and
 * heat_mpi_weft.cpp (native weft + libweft-mpi) share: the slab decomposition, the ghost rows, the
 * message tags, the start and end of a run (MPI_Init_thread, timing, the gathered check, the RESULT
 * line). The grid, its start, the block updates and the serial sweeps are heat_kernels.h's
 * (bench/micro/graph_kernels.h): the same code, so the same bits. C11 and C++20; everything static.
 *
 * The global (n + 2) x (n + 2) grid of heat_kernels.h is cut in slabs of whole block rows: rank r owns
 * block rows [r nb / R, (r + 1) nb / R) (nb = n / b, R ranks; nb >= R). Its local array holds
 * lrows + 2 rows of n + 2 doubles: a ghost row, its lrows = lnb * b interior rows, a ghost row. The
 * ghost rows of the first and last rank are the fixed boundary rows; the others are received from the
 * neighbour ranks. A block keeps its address in the local array, so heat_block() and the gk_ kernels
 * work on it with local block rows as they are.
 *
 * Per sweep k, rank r exchanges whole rows (n + 2 doubles) with its neighbours:
 *   jacobi (src -> dst, the arrays swap every sweep): my first row of src to the rank above, my last to
 *     the rank below; the ghost rows of src from them. The blocks of sweep k read the ghost rows.
 *   gauss-seidel (in place): my first row as sweep k-1 left it to the rank above (before my sweep k
 *     touches it), the ghost row below from the rank below (its first row as sweep k-1 left it); the
 *     ghost row above from the rank above once its sweep k is done with its last block row; my last
 *     row after my sweep k to the rank below. Each cell then sees exactly what the serial row-major
 *     blocked sweep of the whole grid shows it: the result is the same bits; ranks run as a pipeline
 *     (rank r's sweep k behind rank r-1's), with no barrier.
 * Tag of a message: sweep (mod 2^14) and direction, so that messages of two sweeps in flight at once
 * between the same ranks (tasks post them from any thread, in any order) never match each other.
 *
 * Check: the result is gathered on rank 0 and compared bit for bit (max |difference| = 0) with the
 * serial blocked sweep of the whole grid run there. time = max over the ranks of (end - start) between
 * a barrier and the end of the solve. RESULT line on rank 0 only, with ranks=R; tasks and edges are
 * summed over the ranks. Starting MPI, the quiet parse, option errors and those reductions are
 * app_mpi.h's. */
#ifndef WEFT_BENCH_HEAT_MPI_H
#define WEFT_BENCH_HEAT_MPI_H

#include "app_common.h"
#include "app_mpi.h"
#include "heat_kernels.h"

/* The direction a row travels: to the rank above (lower rows) or below. */
enum { HEAT_TO_UP = 0, HEAT_TO_DOWN = 1 };

typedef struct heat_slab {
  int rank, ranks;
  int up, down;   /* neighbour ranks; MPI_PROC_NULL at the ends */
  int bi0, lnb;   /* my block rows: global bi0 .. bi0 + lnb - 1 */
  int lrows;      /* lnb * b interior rows */
  double *a, *b;  /* (lrows + 2) x stride each; b only for Jacobi */
  /* Dependence tokens of the communication tasks (addresses only): link[l][k & 1][0] is written by
   * the send, [1] by the receive of sweep k on link l (0: with the rank above, 1: below), and both
   * read the two tokens of sweep k-1 on that link. So a link's messages of sweep k are posted only
   * once those of sweep k-1 have completed: without that, Jacobi's receive of sweep k+1 (another
   * array's ghost row) could be posted beside the one of sweep k, and with blocking calls two threads
   * could sit in receives on both ranks while no thread is left to send. */
  char link[2][2][2];
} heat_slab;

static HEAT_UNUSED int heat_mpi_tag(long k, int dir) { return (int)((k & 0x3fff) << 1) | dir; }

/* Rows of the local array (the ghost row above is u itself): first and last interior rows, ghost
 * row below. */
static inline double *heat_first_row(const gk_grid *g, double *u) { return u + g->stride; }
static inline double *heat_last_row(const gk_grid *g, const heat_slab *s, double *u) {
  return u + (size_t)s->lrows * g->stride;
}
static inline double *heat_ghost_bottom(const gk_grid *g, const heat_slab *s, double *u) {
  return u + ((size_t)s->lrows + 1) * g->stride;
}

/* Global rows first .. first + count - 1 of gk_init's grid into u: the same generator, run from the
 * top so that the random interior matches bit for bit (O(rows x n) steps, not timed). */
static HEAT_UNUSED void heat_mpi_init_rows(const gk_grid *g, double *u, size_t first, size_t count) {
  size_t i, j, s = g->stride;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (i = 0; i < first + count && i < s; ++i) {
    for (j = 0; j < s; ++j) {
      double v;
      if (i == 0) v = 1.0;
      else if (i == s - 1 || j == 0 || j == s - 1) v = 0.0;
      else {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v = (double)(x >> 11) * (1.0 / 9007199254740992.0);
      }
      if (i >= first) u[(i - first) * s + j] = v;
    }
  }
}

/* heat_parse before MPI_Init (so that WEFT_NUM_THREADS can be set from -p before anything starts
 * weft), silent on every rank but the first: a bad option exits 2 everywhere, printed once. */
static HEAT_UNUSED void heat_mpi_parse(heat_options *o, int argc, char **argv, const char *prog,
                                       const char *const *variants) {
  app_mpi_quiet q;
  app_mpi_quiet_begin(&q);
  heat_parse(o, argc, argv, prog, variants);
  app_mpi_quiet_end(&q);
}

/* MPI_Init_thread asking for `level` (MPI_THREAD_MULTIPLE where tasks call MPI from any thread,
 * MPI_THREAD_FUNNELED where only the master does); exits 1 with a clear message when MPI gives
 * less. Then the slab of this rank, allocated and set to its part of the initial grid. */
static HEAT_UNUSED void heat_mpi_start(heat_slab *s, const heat_options *o, int *argc, char ***argv, int level,
                                       const char *prog) {
  const gk_grid *g = &o->grid;
  size_t cells, row0;
  char who[96];
  memset(s, 0, sizeof *s);
  snprintf(who, sizeof who, "variant %s", o->variant);
  s->rank = app_mpi_init_thread(argc, argv, level, prog, who);
  MPI_Comm_size(MPI_COMM_WORLD, &s->ranks);
  if (g->nb < s->ranks)
    app_mpi_leave(s->rank, 2, prog, "-n %d -b %d: %d block rows for %d ranks (each rank needs at least one)", o->n,
                  o->b, g->nb, s->ranks);
  s->up = s->rank > 0 ? s->rank - 1 : MPI_PROC_NULL;
  s->down = s->rank + 1 < s->ranks ? s->rank + 1 : MPI_PROC_NULL;
  s->bi0 = (int)((long)g->nb * s->rank / s->ranks);
  s->lnb = (int)((long)g->nb * (s->rank + 1) / s->ranks) - s->bi0;
  s->lrows = s->lnb * g->b;
  cells = ((size_t)s->lrows + 2) * g->stride;
  row0 = 1 + (size_t)s->bi0 * (size_t)g->b; /* global row of my first interior row */
  s->a = (double *)malloc(sizeof(double) * cells);
  if (o->method == HEAT_JACOBI) s->b = (double *)malloc(sizeof(double) * cells);
  if (!s->a || (o->method == HEAT_JACOBI && !s->b)) app_die("%s: rank %d: out of memory for its slab", prog, s->rank);
  heat_mpi_init_rows(g, s->a, row0 - 1, (size_t)s->lrows + 2);
  if (s->b) memcpy(s->b, s->a, sizeof(double) * cells);
}

/* Communication tasks per rank and sweep: a send and a receive per neighbour. */
static HEAT_UNUSED long long heat_mpi_task_count(const heat_options *o, const heat_slab *s) {
  int links = (s->up != MPI_PROC_NULL) + (s->down != MPI_PROC_NULL);
  return o->sweeps * ((long long)s->lnb * o->grid.nb + 2LL * links);
}

/* The slab's interior rows gathered on rank 0 (rows in global order) and compared with the serial
 * sweep of the whole grid. Returns ok on every rank; *error (rank 0) = the largest difference. */
static HEAT_UNUSED int heat_mpi_check(const heat_options *o, const heat_slab *s, const double *result, double *error,
                                      const char *prog) {
  const gk_grid *g = &o->grid;
  MPI_Datatype row;
  double *all = NULL, *ref = NULL, *ref2 = NULL;
  int *counts = NULL, *displs = NULL, ok = 1, r;
  *error = 0.0;
  MPI_Type_contiguous((int)g->stride, MPI_DOUBLE, &row);
  MPI_Type_commit(&row);
  if (s->rank == 0) {
    all = gk_alloc(g);
    counts = (int *)malloc(sizeof(int) * (size_t)s->ranks);
    displs = (int *)malloc(sizeof(int) * (size_t)s->ranks);
    if (!all || !counts || !displs) app_die("%s: out of memory for the gathered grid", prog);
    gk_init(g, all); /* the boundary rows; the interior is overwritten */
    for (r = 0; r < s->ranks; ++r) {
      int lo = (int)((long)g->nb * r / s->ranks), hi = (int)((long)g->nb * (r + 1) / s->ranks);
      counts[r] = (hi - lo) * g->b;
      displs[r] = lo * g->b;
    }
  }
  MPI_Gatherv(result + g->stride, s->lrows, row, all ? all + g->stride : NULL, counts, displs, row, 0, MPI_COMM_WORLD);
  MPI_Type_free(&row);
  if (s->rank == 0) {
    const double *expect;
    ref = gk_alloc(g);
    if (!ref) app_die("%s: out of memory for the reference grid", prog);
    gk_init(g, ref);
    if (o->method == HEAT_GS) {
      gk_gs_serial(g, ref, o->sweeps);
      expect = ref;
    } else {
      ref2 = gk_alloc(g);
      if (!ref2) app_die("%s: out of memory for the reference grid", prog);
      gk_init(g, ref2);
      expect = gk_jacobi_serial(g, ref, ref2, o->sweeps);
    }
    *error = heat_max_diff(g, all, expect);
    ok = *error == 0.0;
    if (!ok) fprintf(stderr, "%s: %zu cells differ from the serial sweep\n", prog, gk_diff(g, all, expect));
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(all);
  free(ref);
  free(ref2);
  free(counts);
  free(displs);
  return ok;
}

/* After the timed solve: the check (unless --no-check), the time (max over ranks), tasks and edges
 * (sums; < 0 on a rank: unknown), and the RESULT line on rank 0. Returns ok. */
static HEAT_UNUSED int heat_mpi_finish(const heat_options *o, const heat_slab *s, const double *result, double seconds,
                                       const char *runtime, int threads, long long tasks, long long edges,
                                       const char *extra, const char *prog) {
  double worst = app_mpi_max_time(MPI_COMM_WORLD, seconds), error = 0.0;
  long long counts[2] = {tasks, edges}, sums[2] = {0, 0};
  int ok = 1;
  app_result r;
  app_mpi_sum_known(MPI_COMM_WORLD, counts, sums, 2);
  if (o->check) ok = heat_mpi_check(o, s, result, &error, prog);
  if (s->rank == 0) {
    memset(&r, 0, sizeof r);
    r.app = o->method == HEAT_JACOBI ? "heat-mpi-jacobi" : "heat-mpi-gs";
    r.variant = o->variant;
    r.runtime = runtime;
    r.threads = threads;
    r.size = o->n;
    r.block = o->b;
    r.iters = o->sweeps;
    r.seconds = worst;
    r.gflops = heat_gflops(o, worst);
    r.tasks = sums[0];
    r.edges = sums[1];
    r.ok = ok;
    r.error = error;
    r.ranks = s->ranks;
    r.extra = extra;
    app_print_result(&r);
  }
  return ok;
}

static HEAT_UNUSED void heat_mpi_free(heat_slab *s) {
  free(s->a);
  free(s->b);
  s->a = s->b = NULL;
}

#endif /* WEFT_BENCH_HEAT_MPI_H */
