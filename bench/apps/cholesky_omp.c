/* cholesky_omp: tiled Cholesky as OpenMP tasks (gcc -O2 -fopenmp), one binary run on libgomp, LLVM
 * libomp (LD_PRELOAD=libomp.so.5) or weft's OpenMP door (LD_PRELOAD=libweft.so). Not linked to weft.
 *
 *   omp-tasks       one parallel region per repetition; inside `single`, the task loop with
 *                   depend() on tile addresses, then taskwait. Timed from the first task created to
 *                   the end of the taskwait (inside the region: the team is already up, a warm-up
 *                   region runs first). One RESULT line per repetition.
 *   omp-persistent  one parallel region for all R repetitions, the loop between weft_graph_begin /
 *                   weft_graph_iteration / weft_graph_end (weft/omp_ext.h): recorded at the first
 *                   repetition and replayed after on weft, plain tasks on libgomp and libomp. Every
 *                   repetition factorises the same buffer, so it starts with one copy task per lower
 *                   tile (depend(inout: tile), the original tile copied back), which orders it after
 *                   the previous repetition's tasks on that tile without any barrier. There is no
 *                   point between repetitions to read a clock at, so the variant prints ONE RESULT
 *                   line: iters=R, seconds = all R repetitions (copy tasks included, from the first
 *                   task created to the end of weft_graph_end + taskwait), gflops = R n^3/3 / seconds,
 *                   tasks = all tasks of the R repetitions (copy tasks included), edges over all of
 *                   them. The check runs once, on the last repetition's result.
 *   openblas        the reference: LAPACKE dpotrf on the whole matrix (ordinary column-major layout,
 *                   converted from the tiles before the clock starts and back after it stops),
 *                   OpenBLAS threaded with -p threads (default: its own default). tasks = -.
 *
 * BLAS inside tasks is single-threaded (Debian's OpenBLAS is the pthreads build). */
#include <omp.h>
#include <weft/omp_ext.h>

#include "cholesky_kernels.h"

static const char *const variants[] = {"omp-tasks", "omp-persistent", "openblas", NULL};

/* The task loop of one factorisation of m; returns the number of tasks created. */
static long long factor_tasks(chol_matrix *m) {
  long nt = m->nt;
  int b = (int)m->b;
  long long tasks = 0;
  for (long k = 0; k < nt; ++k) {
    double *akk = chol_tile(m, k, k);
#pragma omp task depend(inout : akk[0]) firstprivate(akk, b)
    chol_potrf(akk, b);
    ++tasks;
    for (long i = k + 1; i < nt; ++i) {
      double *aik = chol_tile(m, i, k);
#pragma omp task depend(in : akk[0]) depend(inout : aik[0]) firstprivate(akk, aik, b)
      chol_trsm(akk, aik, b);
      ++tasks;
    }
    for (long i = k + 1; i < nt; ++i) {
      double *aik = chol_tile(m, i, k);
      for (long j = k + 1; j < i; ++j) {
        double *ajk = chol_tile(m, j, k), *aij = chol_tile(m, i, j);
#pragma omp task depend(in : aik[0], ajk[0]) depend(inout : aij[0]) firstprivate(aik, ajk, aij, b)
        chol_gemm(aik, ajk, aij, b);
        ++tasks;
      }
      double *aii = chol_tile(m, i, i);
#pragma omp task depend(in : aik[0]) depend(inout : aii[0]) firstprivate(aik, aii, b)
      chol_syrk(aik, aii, b);
      ++tasks;
    }
  }
  return tasks;
}

/* One task per lower tile of w: the tile of a copied back, after every earlier task on it. */
static long long copy_tasks(chol_matrix *w, const chol_matrix *a) {
  long nt = w->nt, b = w->b;
  long long tasks = 0;
  for (long j = 0; j < nt; ++j)
    for (long i = j; i < nt; ++i) {
      double *dst = chol_tile(w, i, j);
      const double *src = chol_tile(a, i, j);
#pragma omp task depend(inout : dst[0]) firstprivate(dst, src, b)
      chol_copy_tile(dst, src, b);
      ++tasks;
    }
  return tasks;
}

static long long weft_edges(void) {
  weft_stats_t s;
  return app_weft_stats(&s) == 0 ? (long long)s.edges_created : -1;
}

static int run_tasks(const chol_opts *o, const chol_matrix *a, chol_matrix *w) {
  int failed = 0;
  for (int rep = 0; rep < o->reps; ++rep) {
    double t0 = 0, t1 = 0;
    long long tasks = 0;
    int threads = 0;
    app_result r;
    chol_copy(w, a);
    app_weft_reset_stats();
#pragma omp parallel
#pragma omp single
    {
      threads = omp_get_num_threads();
      t0 = app_now();
      tasks = factor_tasks(w);
#pragma omp taskwait
      t1 = app_now();
    }
    chol_result_init(&r, o, app_omp_runtime(), threads);
    r.seconds = t1 - t0;
    r.gflops = chol_gflops(o->n, r.seconds, 1);
    r.tasks = tasks;
    r.edges = weft_edges();
    chol_verify(&r, o, a, w, threads);
    app_print_result(&r);
    failed |= !r.ok;
  }
  return failed;
}

static int run_persistent(const chol_opts *o, const chol_matrix *a, chol_matrix *w) {
  double t0 = 0, t1 = 0;
  long long tasks = 0;
  int threads = 0, status = 0;
  app_result r;
  app_weft_reset_stats();
#pragma omp parallel
#pragma omp single
  {
    threads = omp_get_num_threads();
    t0 = app_now();
    status = weft_graph_begin();
    for (int rep = 0; rep < o->reps && status == 0; ++rep) {
      status = weft_graph_iteration();
      if (status != 0) break;
      tasks += copy_tasks(w, a);
      tasks += factor_tasks(w);
    }
    int end_status = weft_graph_end();
    if (status == 0) status = end_status;
#pragma omp taskwait
    t1 = app_now();
  }
  if (status != 0) {
    fprintf(stderr, "cholesky_omp: weft graph call failed: status %d\n", status);
    return 1;
  }
  chol_result_init(&r, o, app_omp_runtime(), threads);
  r.iters = o->reps;
  r.seconds = t1 - t0;
  r.gflops = chol_gflops(o->n, r.seconds, o->reps);
  r.tasks = tasks;
  r.edges = weft_edges();
  chol_verify(&r, o, a, w, threads);
  app_print_result(&r);
  return !r.ok;
}

static int run_openblas(const chol_opts *o, const chol_matrix *a, chol_matrix *w, int blas_default) {
  int threads = o->threads > 0 ? o->threads : blas_default, failed = 0;
  double *full = NULL;
  if (posix_memalign((void **)&full, 64, (size_t)o->n * (size_t)o->n * sizeof(double)) != 0) {
    fprintf(stderr, "cholesky_omp: out of memory\n");
    return 1;
  }
  for (int rep = 0; rep < o->reps; ++rep) {
    app_result r;
    chol_tiles_to_full(full, a);
    app_blas_threads(threads); /* the check sets it back to 1 */
    double t0 = app_now();
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)o->n, full, (lapack_int)o->n);
    double t1 = app_now();
    if (info != 0) __atomic_store_n(&chol_potrf_failed, 1, __ATOMIC_RELAXED);
    chol_full_to_tiles(w, full);
    chol_result_init(&r, o, "openblas", threads);
    r.seconds = t1 - t0;
    r.gflops = chol_gflops(o->n, r.seconds, 1);
    chol_verify(&r, o, a, w, threads);
    app_print_result(&r);
    failed |= !r.ok;
  }
  free(full);
  return failed;
}

int main(int argc, char **argv) {
  chol_opts o;
  chol_matrix a, w;
  int blas_default = chol_blas_get_threads(), failed;
  chol_parse(argc, argv, "cholesky_omp", variants, &o);
  app_blas_threads(1);
  if (o.threads > 0) omp_set_num_threads(o.threads);
  chol_alloc(&a, &o);
  chol_alloc(&w, &o);
  chol_generate(&a);
  if (!strcmp(o.variant, "openblas")) {
    failed = run_openblas(&o, &a, &w, blas_default);
  } else {
#pragma omp parallel
    { /* warm-up: the team exists before the first timed region */
    }
    failed = strcmp(o.variant, "omp-tasks") == 0 ? run_tasks(&o, &a, &w) : run_persistent(&o, &a, &w);
  }
  free(a.t);
  free(w.t);
  return failed ? 1 : 0;
}
