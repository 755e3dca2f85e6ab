/* dense_mpi_omp: multi-matvec, multi-matmul and dense Jacobi (dense_mpi.h) as fork-join MPI + OpenMP,
 * the paper's baseline: plain C built with gcc -O2 -fopenmp and linked to MPI only. One binary for
 * every OpenMP runtime: libgomp as linked, LLVM libomp (LD_PRELOAD=libomp.so.5) or weft's OpenMP door
 * (LD_PRELOAD="libweft.so libweft-mpi.so"); runtime= names the one that answered.
 *
 *   mpirun -np R dense_mpi_omp --app matvec|matmul|jacobi|all [--variant fork-join] [-n N] [-b B] [-s S]
 *                              [-p P] [--no-check]
 *
 * Variant fork-join: per step one `omp parallel for` over this rank's blocks (matmul: its tiles of
 * C, each summing over the row of A tiles in order), whose end is the barrier; then the MPI of the
 * step, on the master: none for matvec and matmul, an MPI_Allgatherv of the new vector for jacobi
 * (every rank's rows to every rank). MPI_THREAD_FUNNELED: only the master calls MPI, outside the
 * parallel regions. The control code of each app lies between LOC markers (bench/apps/loc.sh). */
#define _GNU_SOURCE
#include <omp.h>

#include "app_common.h"
#include "dense_mpi.h"

#define PROG "dense_mpi_omp"

static const char *const variants[] = {"fork-join", NULL};

static void matvec_loop(const dm_options *o, const dm_layout *L, dm_local *d) {
  const long n = o->n, b = o->b;
  long s, k;
  /* LOC-BEGIN matvec */
  for (s = 0; s < o->steps; ++s) {
#pragma omp parallel for schedule(static)
    for (k = 0; k < L->lnb; ++k) mv_matvec_rows(d->A, n, d->x, d->y, k * b, (k + 1) * b);
  }
  /* LOC-END */
}

static void matmul_loop(const dm_options *o, const dm_layout *L, dm_local *d) {
  const long b = o->b, nt = L->nb;
  long s, ti, tj, tk;
  /* LOC-BEGIN matmul */
  for (s = 0; s < o->steps; ++s) {
#pragma omp parallel for collapse(2) schedule(static) private(tj)
    for (ti = 0; ti < L->lnb; ++ti)
      for (tk = 0; tk < nt; ++tk)
        for (tj = 0; tj < nt; ++tj)
          mm_tile_gemm(mm_tile(d->A, nt, b, ti, tj), mm_tile(d->B, nt, b, tj, tk), mm_tile(d->C, nt, b, ti, tk), b);
  }
  /* LOC-END */
}

/* Step s reads v[s % 2] (whole) and writes this rank's rows of v[(s + 1) % 2], then gathers the rest. */
static void jacobi_loop(const dm_options *o, const dm_layout *L, dm_local *d) {
  const long n = o->n, b = o->b;
  long s, k;
  /* LOC-BEGIN jacobi */
  for (s = 0; s < o->steps; ++s) {
    const double *xo = d->v[s & 1];
    double *xn = d->v[(s + 1) & 1];
#pragma omp parallel for schedule(static)
    for (k = 0; k < L->lnb; ++k) mv_jacobi_rows(d->A, d->diag, d->rhs, n, xo, xn + L->r0, k * b, (k + 1) * b);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, xn, d->counts, d->displs, MPI_DOUBLE, MPI_COMM_WORLD);
  }
  /* LOC-END */
}

/* One app: its data, the timed loop, the check and the RESULT line. Returns ok. */
static int run_app(const dm_options *o, int team) {
  dm_layout L;
  dm_local d;
  double t0, seconds;
  int ok;
  dm_layout_init(&L, o, PROG);
  dm_local_build(&d, o, &L, PROG);

  MPI_Barrier(MPI_COMM_WORLD);
  t0 = app_now();
  dm_distribute_inputs(&d, o, &L, PROG);
  if (o->app == DM_MATVEC) matvec_loop(o, &L, &d);
  else if (o->app == DM_MATMUL) matmul_loop(o, &L, &d);
  else jacobi_loop(o, &L, &d);
  seconds = app_now() - t0;

  ok = dm_finish(o, &L, dm_local_result(&d, o, &L), seconds, app_omp_runtime(), team, -1, -1, NULL, PROG);
  dm_local_free(&d);
  return ok;
}

int main(int argc, char **argv) {
  dm_options o;
  int team = 1, ok = 1, app;

  dm_mpi_parse(&o, argc, argv, PROG, variants);
  app_mpi_init_thread(&argc, &argv, MPI_THREAD_FUNNELED, PROG, "variant fork-join");
  if (o.threads > 0) omp_set_num_threads(o.threads);
  /* Starts the team before the clock (and learns its size). */
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  for (app = dm_first_app(&o); app <= dm_last_app(&o); ++app) {
    dm_options one = dm_for_app(&o, app);
    ok &= run_app(&one, team);
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
