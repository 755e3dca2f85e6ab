/* micro_starpu: the micro-benchmark patterns as StarPU tasks (starpu_task_insert on registered
 * variables, CPU codelets, sequential consistency giving the dependences).
 *
 * StarPU's workers are threads of their own: the main thread only submits. -p sets the number of
 * CPU workers (starpu_conf.ncpus; STARPU_NCPU in the environment overrides it), with no CUDA or
 * OpenCL worker. A task's small argument travels in the cl_arg pointer itself (STARPU_CL_ARGS_NFREE,
 * no copy), the cheapest way StarPU offers. inoutset has no StarPU counterpart (STARPU_COMMUTE is
 * mutexinoutset): that pattern reports unsupported. */
#include <starpu.h>
#include <stdint.h>

#include "common.h"

static int width_now; /* stencil width, for the bodies to split their index */

static void *index_arg(long i) { return (void *)(intptr_t)i; }
static long arg_index(void *cl_arg) { return (long)(intptr_t)cl_arg; }

static void indep_cpu(void *buffers[], void *cl_arg) {
  (void)buffers;
  (void)cl_arg;
  bench_indep_body();
}
static void chain_cpu(void *buffers[], void *cl_arg) {
  (void)buffers;
  bench_chain_body(arg_index(cl_arg));
}
static unsigned long spin_now; /* METG: busy iterations of the current point */
static void stencil_cpu(void *buffers[], void *cl_arg) {
  long i = arg_index(cl_arg);
  (void)buffers;
  if (spin_now) bench_spin(spin_now);
  bench_stencil_body(i / width_now, (int)(i % width_now), width_now);
}
static void gate_cpu(void *buffers[], void *cl_arg) {
  (void)buffers;
  (void)cl_arg;
  bench_gate_body();
}
static void pending_cpu(void *buffers[], void *cl_arg) {
  (void)buffers;
  (void)cl_arg;
  bench_pending_body();
}

static struct starpu_codelet indep_cl, chain_cl, stencil_cl, gate_cl, pending_cl;

static void codelets_init(void) {
  starpu_codelet_init(&indep_cl);
  indep_cl.cpu_funcs[0] = indep_cpu;
  indep_cl.nbuffers = 0;
  starpu_codelet_init(&chain_cl);
  chain_cl.cpu_funcs[0] = chain_cpu;
  chain_cl.nbuffers = 1;
  chain_cl.modes[0] = STARPU_RW;
  starpu_codelet_init(&stencil_cl);
  stencil_cl.cpu_funcs[0] = stencil_cpu;
  stencil_cl.nbuffers = STARPU_VARIABLE_NBUFFERS; /* 2 to 4 handles: duplicates are dropped */
  starpu_codelet_init(&gate_cl);
  gate_cl.cpu_funcs[0] = gate_cpu;
  gate_cl.nbuffers = 1;
  gate_cl.modes[0] = STARPU_W;
  starpu_codelet_init(&pending_cl);
  pending_cl.cpu_funcs[0] = pending_cpu;
  pending_cl.nbuffers = 2;
  pending_cl.modes[0] = STARPU_R;
  pending_cl.modes[1] = STARPU_W;
}

static void check(int status, const char *what) {
  if (status != 0) {
    fprintf(stderr, "micro_starpu: %s failed: %d\n", what, status);
    exit(1);
  }
}

static starpu_data_handle_t register_long(long *cell) {
  starpu_data_handle_t h;
  starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)cell, sizeof *cell);
  return h;
}

static double run_indep(long n) {
  double t0 = bench_now_ns();
  for (long i = 0; i < n; ++i) check(starpu_task_insert(&indep_cl, 0), "starpu_task_insert");
  starpu_task_wait_for_all();
  return bench_now_ns() - t0;
}

static double run_chain(long n) {
  long x = 0;
  starpu_data_handle_t h = register_long(&x);
  double t0 = bench_now_ns();
  for (long i = 0; i < n; ++i)
    check(starpu_task_insert(&chain_cl, STARPU_RW, h, STARPU_CL_ARGS_NFREE, index_arg(i), (size_t)0, 0),
          "starpu_task_insert");
  starpu_task_wait_for_all();
  double t1 = bench_now_ns();
  starpu_data_unregister(h);
  return t1 - t0;
}

/* The fields are registered once per run, outside the timed region. */
static double run_stencil(int w, long steps, unsigned long iterations) {
  starpu_data_handle_t *h[2];
  double t0, t1;
  width_now = w;
  spin_now = iterations;
  for (int f = 0; f < 2; ++f) {
    h[f] = (starpu_data_handle_t *)malloc(sizeof(starpu_data_handle_t) * (size_t)w);
    if (!h[f]) check(1, "malloc");
    for (int c = 0; c < w; ++c) h[f][c] = register_long(&bench_field[f][c]);
  }
  t0 = bench_now_ns();
  for (long s = 0; s < steps; ++s) {
    starpu_data_handle_t *out = h[s & 1], *in = h[(s + 1) & 1];
    for (int c = 0; c < w; ++c) {
      int l = bench_left(c), r = bench_right(c, w);
      struct starpu_data_descr d[4];
      int k = 0;
      d[k].handle = out[c];
      d[k++].mode = STARPU_W;
      for (int p = l; p <= r; ++p) {
        d[k].handle = in[p];
        d[k++].mode = STARPU_R;
      }
      check(starpu_task_insert(&stencil_cl, STARPU_DATA_MODE_ARRAY, d, k, STARPU_CL_ARGS_NFREE,
                               index_arg(s * w + c), (size_t)0, 0),
            "starpu_task_insert");
    }
  }
  starpu_task_wait_for_all();
  t1 = bench_now_ns();
  for (int f = 0; f < 2; ++f) {
    for (int c = 0; c < w; ++c) starpu_data_unregister(h[f][c]);
    free(h[f]);
  }
  return t1 - t0;
}

/* The cells' handles are registered before the first reading: only the tasks are counted. */
static double run_pending(long n, long *rss_before, long *rss_after, int *held) {
  long g = 0;
  long *cells = (long *)calloc((size_t)n, sizeof(long));
  starpu_data_handle_t *hc = (starpu_data_handle_t *)malloc(sizeof(starpu_data_handle_t) * (size_t)n);
  starpu_data_handle_t hg = register_long(&g);
  double t0, t1;
  if (!cells || !hc) check(1, "malloc");
  for (long i = 0; i < n; ++i) hc[i] = register_long(&cells[i]);
  bench_is_producer = 1;
  check(starpu_task_insert(&gate_cl, STARPU_W, hg, 0), "starpu_task_insert");
  *rss_before = bench_rss_bytes();
  t0 = bench_now_ns();
  for (long i = 0; i < n; ++i)
    check(starpu_task_insert(&pending_cl, STARPU_R, hg, STARPU_W, hc[i], 0), "starpu_task_insert");
  t1 = bench_now_ns();
  *rss_after = bench_rss_bytes();
  *held = bench_gate_open();
  starpu_task_wait_for_all();
  bench_is_producer = 0;
  for (long i = 0; i < n; ++i) starpu_data_unregister(hc[i]);
  starpu_data_unregister(hg);
  free(hc);
  free(cells);
  return t1 - t0;
}

int main(int argc, char **argv) {
  bench_options o;
  bench_extra e = {{0}, 0};
  struct starpu_conf conf;
  const char *runtime = "starpu";
  char param[64] = "-";
  double wall = 0;
  long n = 0;
  int threads, status;

  bench_parse(argc, argv, &o);
  starpu_conf_init(&conf);
  if (o.threads > 0) conf.ncpus = o.threads;
  conf.ncuda = 0;
  conf.nopencl = 0;
  if (getenv("STARPU_SILENT") == NULL) setenv("STARPU_SILENT", "1", 0);
  check(starpu_init(&conf), "starpu_init");
  threads = (int)starpu_cpu_worker_get_count();
  codelets_init();
  run_indep(1000); /* warm-up */

  bench_verify = o.verify;
  const bench_runners runners = {run_indep, run_chain, run_stencil, NULL, run_pending};
  int ran = bench_run(&o, &runners, runtime, threads, &e, &n, &wall, param, sizeof param);
  if (ran < 0) check(1, "malloc");
  if (ran == 2) {
    starpu_shutdown();
    return 0;
  }
  if (ran == 0) {
    status = bench_unsupported(&o, runtime, threads, "starpu-has-no-inoutset");
    starpu_shutdown();
    return status;
  }
  status = bench_verify_result(&e, n);
  bench_print(&o, runtime, threads, n, param, wall / (double)n, &e);
  starpu_shutdown();
  return status;
}
