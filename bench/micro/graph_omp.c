/* graph_omp: the heat (Gauss-Seidel) pattern of micro_graph as an OpenMP `parallel for` wavefront,
 * plain C built with gcc -O2 -fopenmp: the loop-parallel way to write it, the peer of weft's tasks.
 *
 *   graph_omp heat -n N -b B -s S [--variant wavefront|serial] [-p P]
 *
 * One parallel region for the whole run; per sweep, the anti-diagonals d = bi + bj of the block grid
 * in order, each a `for` over its blocks (schedule static, implicit barrier at its end). The blocks
 * of one diagonal share no edge, so the sweep computes the bits of the serial row-major sweep, which
 * the process checks (bit for bit) after the timed run. Runs on libgomp as linked, or on LLVM libomp
 * with LD_PRELOAD=libomp.so.5 (runtime= says which answered). Prints one line in common.h's format:
 *   pattern=heat runtime=gomp-wavefront threads=2 n=<blocks x sweeps> param=NxB/S ns_per_task=...
 *   rss_kb=... ms=... us_per_sweep=... hash=<FNV-1a of the grid> check=ok|FAIL diff_cells=... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <omp.h>

#include "common.h"
#include "graph_kernels.h"

static const char *runtime_name(void) {
  if (dlsym(RTLD_DEFAULT, "weft_init")) return "weft-omp";
  if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call")) return "llvm-omp";
  return "gomp";
}

static void usage(const char *msg) {
  fprintf(stderr,
          "graph_omp: %s\n"
          "usage: graph_omp heat -n N -b B -s S [--variant wavefront|serial] [-p P]\n",
          msg);
  exit(2);
}

static int team_size = 1;

static double run_wavefront(const gk_grid *g, double *u, long sweeps) {
  double t0 = 0, t1 = 0;
  const int nb = g->nb;
#pragma omp parallel
  {
#pragma omp single
    {
      team_size = omp_get_num_threads();
      t0 = bench_now_ns();
    }
    for (long s = 0; s < sweeps; ++s) {
      for (int d = 0; d <= 2 * nb - 2; ++d) {
        int lo = d < nb ? 0 : d - nb + 1;
        int hi = d < nb ? d : nb - 1;
#pragma omp for schedule(static)
        for (int bi = lo; bi <= hi; ++bi) gk_gs_block(g, u, bi, d - bi);
      }
    }
#pragma omp single
    t1 = bench_now_ns();
  }
  return t1 - t0;
}

int main(int argc, char **argv) {
  int n = 1024, b = 64, threads = 0, serial = 0, i;
  long sweeps = 50;
  gk_grid g;
  double *u, *ref, wall;
  size_t bad;
  bench_options o;
  bench_extra e = {{0}, 0};
  char param[64];
  const char *rt;
  char runtime[64];

  if (argc < 2 || strcmp(argv[1], "heat") != 0) usage("the one pattern is heat");
  for (i = 2; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) usage("an option needs a value");
    if (strcmp(a, "-n") == 0) n = (int)bench_parse_long(v, a);
    else if (strcmp(a, "-b") == 0) b = (int)bench_parse_long(v, a);
    else if (strcmp(a, "-s") == 0) sweeps = bench_parse_long(v, a);
    else if (strcmp(a, "-p") == 0) threads = (int)bench_parse_long(v, a);
    else if (strcmp(a, "--variant") == 0) {
      if (strcmp(v, "serial") == 0) serial = 1;
      else if (strcmp(v, "wavefront") != 0) usage("unknown variant");
    } else usage("unknown option");
    ++i;
  }
  if (sweeps < 1 || !gk_make(&g, n, b)) usage("-n must be a multiple of -b, -s >= 1");
  if (threads > 0) omp_set_num_threads(threads);
  rt = runtime_name();
  u = gk_alloc(&g);
  ref = gk_alloc(&g);
  if (!u || !ref) usage("out of memory");
  gk_init(&g, ref);
  gk_gs_serial(&g, ref, sweeps); /* the reference, and the warm-up of the pages */
  gk_init(&g, u);
  if (serial) {
    double t0 = bench_now_ns();
    gk_gs_serial(&g, u, sweeps);
    wall = bench_now_ns() - t0;
    team_size = 1;
    snprintf(runtime, sizeof runtime, "omp-serial");
  } else {
    run_wavefront(&g, u, 2); /* warm-up: starts the team */
    gk_init(&g, u);
    wall = run_wavefront(&g, u, sweeps);
    snprintf(runtime, sizeof runtime, "%s-wavefront", rt);
  }
  bad = gk_diff(&g, u, ref);
  bench_add(&e, "ms=%.3f us_per_sweep=%.2f hash=%016" PRIx64 " check=%s diff_cells=%zu", wall / 1e6,
            wall / 1e3 / (double)sweeps, gk_hash(&g, u), bad ? "FAIL" : "ok", bad);
  memset(&o, 0, sizeof o);
  o.pattern_name = "heat";
  snprintf(param, sizeof param, "%dx%d/%ld", n, b, sweeps);
  bench_print(&o, runtime, team_size, sweeps * g.nb * g.nb, param, wall / (double)(sweeps * g.nb * g.nb), &e);
  free(u);
  free(ref);
  return bad ? 1 : 0;
}
