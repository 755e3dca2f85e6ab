/* cholesky_starpu: tiled Cholesky with StarPU's C API (variant starpu).
 *
 * Each lower tile is registered as a b x b matrix data handle (in place, in main RAM); four CPU
 * codelets call the same tile kernels as the other programs; starpu_task_insert with STARPU_R /
 * STARPU_RW lets StarPU's sequential consistency derive the dependences; starpu_task_wait_for_all
 * ends a repetition. Timed from the first task inserted to the end of the wait; handles are
 * registered before the clock starts and unregistered after it stops. One RESULT line per
 * repetition.
 *
 * Environment, set before starpu_init unless the user set it: STARPU_SCHED=lws (works without
 * performance models: the codelets have none, so nothing is calibrated), STARPU_SILENT=1,
 * STARPU_NCUDA=0, STARPU_NOPENCL=0. -p P sets STARPU_NCPU=P (overriding the environment) and
 * starpu_conf.ncpus. threads = the number of CPU workers StarPU started. */
#include <starpu.h>

#include "cholesky_kernels.h"

static const char *const variants[] = {"starpu", NULL};

static void potrf_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  chol_potrf((double *)STARPU_MATRIX_GET_PTR(buffers[0]), (int)STARPU_MATRIX_GET_NX(buffers[0]));
}
static void trsm_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  chol_trsm((const double *)STARPU_MATRIX_GET_PTR(buffers[0]), (double *)STARPU_MATRIX_GET_PTR(buffers[1]),
            (int)STARPU_MATRIX_GET_NX(buffers[0]));
}
static void syrk_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  chol_syrk((const double *)STARPU_MATRIX_GET_PTR(buffers[0]), (double *)STARPU_MATRIX_GET_PTR(buffers[1]),
            (int)STARPU_MATRIX_GET_NX(buffers[0]));
}
static void gemm_cpu(void *buffers[], void *cl_arg) {
  (void)cl_arg;
  chol_gemm((const double *)STARPU_MATRIX_GET_PTR(buffers[0]), (const double *)STARPU_MATRIX_GET_PTR(buffers[1]),
            (double *)STARPU_MATRIX_GET_PTR(buffers[2]), (int)STARPU_MATRIX_GET_NX(buffers[0]));
}

static struct starpu_codelet potrf_cl, trsm_cl, syrk_cl, gemm_cl;

static void codelets_init(void) {
  starpu_codelet_init(&potrf_cl);
  potrf_cl.name = "potrf";
  potrf_cl.cpu_funcs[0] = potrf_cpu;
  potrf_cl.nbuffers = 1;
  potrf_cl.modes[0] = STARPU_RW;
  starpu_codelet_init(&trsm_cl);
  trsm_cl.name = "trsm";
  trsm_cl.cpu_funcs[0] = trsm_cpu;
  trsm_cl.nbuffers = 2;
  trsm_cl.modes[0] = STARPU_R;
  trsm_cl.modes[1] = STARPU_RW;
  starpu_codelet_init(&syrk_cl);
  syrk_cl.name = "syrk";
  syrk_cl.cpu_funcs[0] = syrk_cpu;
  syrk_cl.nbuffers = 2;
  syrk_cl.modes[0] = STARPU_R;
  syrk_cl.modes[1] = STARPU_RW;
  starpu_codelet_init(&gemm_cl);
  gemm_cl.name = "gemm";
  gemm_cl.cpu_funcs[0] = gemm_cpu;
  gemm_cl.nbuffers = 3;
  gemm_cl.modes[0] = STARPU_R;
  gemm_cl.modes[1] = STARPU_R;
  gemm_cl.modes[2] = STARPU_RW;
}

static void check(int status, const char *what) {
  if (status != 0) {
    fprintf(stderr, "cholesky_starpu: %s failed: %d (%s)\n", what, status, strerror(status < 0 ? -status : status));
    exit(1);
  }
}

static long long factor_tasks(starpu_data_handle_t *h, long nt) {
  long long tasks = 0;
#define H(i, j) h[(size_t)(j) * (size_t)nt + (size_t)(i)]
  for (long k = 0; k < nt; ++k) {
    check(starpu_task_insert(&potrf_cl, STARPU_RW, H(k, k), 0), "starpu_task_insert(potrf)");
    ++tasks;
    for (long i = k + 1; i < nt; ++i) {
      check(starpu_task_insert(&trsm_cl, STARPU_R, H(k, k), STARPU_RW, H(i, k), 0), "starpu_task_insert(trsm)");
      ++tasks;
    }
    for (long i = k + 1; i < nt; ++i) {
      for (long j = k + 1; j < i; ++j) {
        check(starpu_task_insert(&gemm_cl, STARPU_R, H(i, k), STARPU_R, H(j, k), STARPU_RW, H(i, j), 0),
              "starpu_task_insert(gemm)");
        ++tasks;
      }
      check(starpu_task_insert(&syrk_cl, STARPU_R, H(i, k), STARPU_RW, H(i, i), 0), "starpu_task_insert(syrk)");
      ++tasks;
    }
  }
#undef H
  return tasks;
}

int main(int argc, char **argv) {
  chol_opts o;
  chol_matrix a, w;
  struct starpu_conf conf;
  starpu_data_handle_t *h;
  int failed = 0;
  chol_parse(argc, argv, "cholesky_starpu", variants, &o);
  app_blas_threads(1);
  if (o.threads > 0) {
    char text[32];
    snprintf(text, sizeof text, "%d", o.threads);
    setenv("STARPU_NCPU", text, 1);
  }
  setenv("STARPU_NCUDA", "0", 0);
  setenv("STARPU_NOPENCL", "0", 0);
  setenv("STARPU_SILENT", "1", 0);
  setenv("STARPU_SCHED", "lws", 0);
  starpu_conf_init(&conf);
  if (o.threads > 0) conf.ncpus = o.threads;
  conf.ncuda = 0;
  conf.nopencl = 0;
  check(starpu_init(&conf), "starpu_init");
  codelets_init();

  chol_alloc(&a, &o);
  chol_alloc(&w, &o);
  chol_generate(&a);
  h = (starpu_data_handle_t *)calloc((size_t)o.nt * (size_t)o.nt, sizeof *h);
  if (!h) {
    fprintf(stderr, "cholesky_starpu: out of memory\n");
    return 1;
  }
  for (int rep = 0; rep < o.reps; ++rep) {
    app_result r;
    long long tasks;
    chol_copy(&w, &a);
    for (long j = 0; j < o.nt; ++j)
      for (long i = j; i < o.nt; ++i)
        starpu_matrix_data_register(&h[j * o.nt + i], STARPU_MAIN_RAM, (uintptr_t)chol_tile(&w, i, j),
                                    (uint32_t)o.b, (uint32_t)o.b, (uint32_t)o.b, sizeof(double));
    double t0 = app_now();
    tasks = factor_tasks(h, o.nt);
    check(starpu_task_wait_for_all(), "starpu_task_wait_for_all");
    double t1 = app_now();
    for (long j = 0; j < o.nt; ++j)
      for (long i = j; i < o.nt; ++i) starpu_data_unregister(h[j * o.nt + i]);
    chol_result_init(&r, &o, "starpu", (int)starpu_cpu_worker_get_count());
    r.seconds = t1 - t0;
    r.gflops = chol_gflops(o.n, r.seconds, 1);
    r.tasks = tasks;
    /* Idle StarPU workers poll: paused, they leave the cores to the check's BLAS threads. */
    starpu_pause();
    chol_verify(&r, &o, &a, &w, (int)starpu_cpu_worker_get_count());
    starpu_resume();
    app_print_result(&r);
    failed |= !r.ok;
  }
  starpu_shutdown();
  free(h);
  free(a.t);
  free(w.t);
  return failed ? 1 : 0;
}
