/* Shared by the application benchmarks (bench/apps): clocks, the runtime a process runs on, weft's
 * statistics when weft answers, single-threaded BLAS inside tasks, and the result line that
 * bench/apps/run.sh parses.
 *
 * C11 and C++20 alike: the OpenMP programs (gcc -fopenmp, one binary run on libgomp, LLVM libomp or
 * weft's OpenMP door), the native weft programs and the StarPU programs include it. Everything is
 * static: each executable includes it once. */
#ifndef WEFT_BENCH_APP_COMMON_H
#define WEFT_BENCH_APP_COMMON_H

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <weft/weft.h> /* weft_stats_t; the calls themselves are looked up with dlsym */

#if defined(__GNUC__)
#define APP_UNUSED __attribute__((unused))
#else
#define APP_UNUSED
#endif

static APP_UNUSED double app_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Which runtime resolved the OpenMP calls of this process: weft and LLVM libomp export symbols
 * libgomp does not. A native weft or StarPU program names itself instead. */
static APP_UNUSED const char *app_omp_runtime(void) {
  if (dlsym(RTLD_DEFAULT, "weft_init")) return "weft";
  if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call")) return "llvm-omp";
  return "gomp";
}

/* weft's task and edge counters, when this process runs on weft (native or preloaded). */
typedef int (*app_stats_fn)(weft_stats_t *);
static APP_UNUSED int app_weft_reset_stats(void) {
  int (*reset)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "weft_reset_stats");
  return reset ? reset() : -1;
}
static APP_UNUSED int app_weft_stats(weft_stats_t *s) {
  app_stats_fn get = (app_stats_fn)dlsym(RTLD_DEFAULT, "weft_get_stats");
  memset(s, 0, sizeof *s);
  return get ? get(s) : -1;
}

/* Inside tasks BLAS must run on one thread (the runtime owns the cores); the reference variant
 * gives OpenBLAS all of them. OpenBLAS's setter is looked up so that any BLAS links. */
static APP_UNUSED void app_blas_threads(int n) {
  void (*set)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  if (set) set(n);
}

/* One machine-readable line per run, parsed by bench/apps/run.sh:
 *   RESULT app=cholesky variant=omp-tasks runtime=gomp threads=2 size=4096 block=256 iters=1
 *          seconds=1.234567 gflops=12.345 tasks=5984 edges=17000 check=ok error=1.2e-16
 * gflops <= 0 and tasks/edges < 0 print as "-" (not meaningful or not known). check is ok, FAIL or
 * skipped (--no-check); error is the app's own measure (residual, difference to the serial sweep).
 * The MPI programs add ranks=<number of ranks> (ranks > 0) and their own fields (extra, as is) at the
 * end of the line, after every field above: run.sh reads fields by name. */
typedef struct app_result {
  const char *app, *variant, *runtime;
  int threads;
  long size, block, iters;
  double seconds, gflops;
  long long tasks, edges;
  int ok;
  double error;
  int ranks;         /* MPI programs: ranks=, printed when > 0 */
  const char *extra; /* appended as is when not NULL, e.g. "grid=2x1 progress=thread" */
} app_result;

/* Set by the option parsers on --no-check: the line then says check=skipped, not ok. */
static int app_check_skipped;

static APP_UNUSED void app_print_result(const app_result *r) {
  char gf[32], tk[32], ed[32];
  if (r->gflops > 0) snprintf(gf, sizeof gf, "%.3f", r->gflops); else strcpy(gf, "-");
  if (r->tasks >= 0) snprintf(tk, sizeof tk, "%lld", r->tasks); else strcpy(tk, "-");
  if (r->edges >= 0) snprintf(ed, sizeof ed, "%lld", r->edges); else strcpy(ed, "-");
  printf("RESULT app=%s variant=%s runtime=%s threads=%d size=%ld block=%ld iters=%ld seconds=%.6f gflops=%s "
         "tasks=%s edges=%s check=%s error=%.3e",
         r->app, r->variant, r->runtime, r->threads, r->size, r->block, r->iters, r->seconds, gf, tk, ed,
         app_check_skipped ? "skipped" : r->ok ? "ok" : "FAIL", app_check_skipped ? 0.0 : r->error);
  if (r->ranks > 0) printf(" ranks=%d", r->ranks);
  if (r->extra) printf(" %s", r->extra);
  putchar('\n');
  fflush(stdout);
}

static APP_UNUSED void app_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(2);
}

/* One line on stderr: "prog: <message> (see -h)". */
static APP_UNUSED void app_vcomplain(const char *prog, const char *fmt, va_list ap) {
  fprintf(stderr, "%s: ", prog);
  vfprintf(stderr, fmt, ap);
  fputs(" (see -h)\n", stderr);
}

/* The programs' option parsers: a bad option exits 2 with one line naming it. */
static APP_UNUSED void app_bad(const char *prog, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  app_vcomplain(prog, fmt, ap);
  va_end(ap);
  exit(2);
}

static APP_UNUSED long app_parse_long(const char *prog, const char *opt, const char *text, long lo, long hi) {
  char *end = NULL;
  long v;
  if (!text) app_bad(prog, "option %s needs a value", opt);
  errno = 0;
  v = strtol(text, &end, 10);
  if (errno || end == text || *end) app_bad(prog, "option %s: '%s' is not an integer", opt, text);
  if (v < lo || v > hi) app_bad(prog, "option %s: %s is out of range (%ld..%ld)", opt, text, lo, hi);
  return v;
}

#endif /* WEFT_BENCH_APP_COMMON_H */
