/* cholesky_scalapack: the reference for the distributed Cholesky programs, ScaLAPACK's pdpotrf
 * (Debian's libscalapack-openmpi, BLACS inside it) on the matrix of cholesky_mpi.h.
 *
 *   scalapack  one process per rank, BLACS grid P x Q in row-major order (rank = prow * Q + pcol,
 *              the numbering of cholesky_mpi.h), block size b x b, source (0, 0): every rank holds
 *              exactly the tiles it holds in cholesky_mpi_omp / cholesky_mpi_weft, stored the
 *              ScaLAPACK way (one column-major local array). pdpotrf('L') between an MPI_Barrier
 *              and the clock; the time is the slowest rank's. OpenBLAS runs -p threads per rank
 *              (default 1). tasks = -, edges = -.
 * The check gathers the lower tiles of L on rank 0 and computes the residual of cholesky_kernels.h,
 * as the task programs do. Bad options exit 2; --mark-sends is not an option here. */
#include "cholesky_mpi.h"

/* BLACS (C interface) and ScaLAPACK (Fortran: arguments by reference, the hidden length of a
 * CHARACTER argument last). */
extern void Cblacs_pinfo(int *mypnum, int *nprocs);
extern void Cblacs_get(int context, int what, int *value);
extern void Cblacs_gridinit(int *context, const char *order, int nprow, int npcol);
extern void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int context);
extern int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
extern void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc,
                      const int *icsrc, const int *ictxt, const int *lld, int *info);
extern void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia, const int *ja, const int *desca,
                     int *info, size_t uplo_len);

static const char *const variants[] = {"scalapack", NULL};

typedef struct local_matrix {
  const cmpi_ctx *x;
  int mloc, nloc, lld;
  double *a; /* mloc x nloc, column-major, leading dimension lld */
} local_matrix;

/* This rank's part of A: local row lr is global row ((lr / b) * P + myrow) * b + lr % b, likewise
 * for columns with Q and mycol. The whole local array is filled (pdpotrf reads only the lower part). */
static void fill(local_matrix *m) {
  const cmpi_ctx *x = m->x;
  long b = x->b;
  for (long lc = 0; lc < m->nloc; ++lc) {
    long gc = ((lc / b) * x->Q + x->mycol) * b + lc % b;
    double *col = m->a + (size_t)lc * (size_t)m->lld;
    for (long lr = 0; lr < m->mloc; ++lr) col[lr] = cmpi_entry(x->n, ((lr / b) * x->P + x->myrow) * b + lr % b, gc);
  }
}

/* The tile (i, j) this rank holds, packed into scratch (b x b, leading dimension b). */
static const double *pack_tile(void *arg, long i, long j, double *scratch) {
  const local_matrix *m = (const local_matrix *)arg;
  long b = m->x->b, lr = (i / m->x->P) * b, lc = (j / m->x->Q) * b;
  for (long c = 0; c < b; ++c)
    memcpy(scratch + c * b, m->a + (size_t)(lc + c) * (size_t)m->lld + (size_t)lr, (size_t)b * sizeof(double));
  return scratch;
}

int main(int argc, char **argv) {
  cmpi_opts o;
  cmpi_ctx x;
  local_matrix m;
  int ctxt = 0, nprow = 0, npcol = 0, myrow = 0, mycol = 0, me = 0, np = 0, info = 0, failed = 0;
  char extra[64];
  MPI_Init(&argc, &argv); /* MPI from the main thread only: OpenBLAS's threads make no MPI calls */
  cmpi_parse(argc, argv, "cholesky_scalapack", variants, 0, &o);
  cmpi_grid_init(&x, &o, MPI_COMM_WORLD, "cholesky_scalapack");
  int threads = o.c.threads > 0 ? o.c.threads : 1;
  app_blas_threads(threads);

  Cblacs_pinfo(&me, &np);
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", o.P, o.Q);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  if (me != x.rank || myrow != x.myrow || mycol != x.mycol) {
    fprintf(stderr, "cholesky_scalapack: rank %d is BLACS process %d at (%d, %d), expected (%d, %d)\n", x.rank, me,
            myrow, mycol, x.myrow, x.mycol);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int n = (int)o.c.n, nb = (int)o.c.b, zero = 0, one = 1;
  m.x = &x;
  m.mloc = numroc_(&n, &nb, &myrow, &zero, &nprow);
  m.nloc = numroc_(&n, &nb, &mycol, &zero, &npcol);
  m.lld = m.mloc > 1 ? m.mloc : 1;
  m.a = (double *)cmpi_alloc((size_t)m.lld * (size_t)(m.nloc > 0 ? m.nloc : 1) * sizeof(double));
  int desc[9];
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctxt, &m.lld, &info);
  if (info != 0) {
    fprintf(stderr, "cholesky_scalapack: descinit returned %d\n", info);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  snprintf(extra, sizeof extra, "grid=%dx%d", o.P, o.Q);

  for (int rep = 0; rep < o.c.reps; ++rep) {
    app_result r;
    fill(&m);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = app_now();
    pdpotrf_("L", &n, m.a, &one, &one, desc, &info, 1);
    double t1 = app_now();
    if (info != 0) __atomic_store_n(&chol_potrf_failed, 1, __ATOMIC_RELAXED);
    double seconds = app_mpi_max_time(x.comm, t1 - t0);
    cmpi_result_init(&r, &o, &x, "scalapack", threads, extra);
    r.seconds = seconds;
    r.gflops = chol_gflops(o.c.n, seconds, 1);
    cmpi_verify(&r, &o, &x, pack_tile, &m, threads);
    app_blas_threads(threads); /* the check set it back to 1 */
    if (x.rank == 0) app_print_result(&r);
    failed |= !r.ok;
  }
  free(m.a);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return failed ? 1 : 0;
}
