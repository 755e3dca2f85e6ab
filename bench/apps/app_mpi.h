/* Shared by the distributed application benchmarks (bench/apps, issue 9: cholesky_mpi_*,
 * cholesky_scalapack, heat_mpi_*, cg_mpi_*): starting MPI at the thread level a variant needs, option
 * errors said once (by rank 0) while every rank leaves with the same status, and the reductions that
 * make one RESULT line out of R ranks (the slowest rank's time, sums of counters some ranks may not
 * know).
 *
 * Two ways to parse the command line:
 *   - before MPI_Init (heat, CG: -p must set WEFT_NUM_THREADS before anything starts weft, and
 *     libweft-mpi's MPI_Init_thread may be the first): the app's own parser, which exits 2 on a bad
 *     option, between app_mpi_quiet_begin / app_mpi_quiet_end, so that only the process the launcher
 *     calls rank 0 prints (every rank parses the same line and exits the same way);
 *   - after MPI_Init (Cholesky): app_mpi_parse_long and app_mpi_leave, which say it on rank 0 only
 *     and leave MPI before exiting.
 *
 * C11 and C++20 alike; everything is static (APP_UNUSED): each executable includes it once. */
#ifndef WEFT_BENCH_APP_MPI_H
#define WEFT_BENCH_APP_MPI_H

#include <mpi.h>
#include <fcntl.h>
#include <unistd.h>

#include "app_common.h"

/* --- before MPI_Init ------------------------------------------------------------------------------ */

/* The rank the launcher gave this process (Open MPI, MPICH/Hydra, PMIx), 0 when it does not say. */
static APP_UNUSED int app_mpi_launcher_rank(void) {
  const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
  int i;
  for (i = 0; i < 3; ++i) {
    const char *v = getenv(names[i]);
    if (v && *v) return atoi(v);
  }
  return 0;
}

/* On every process but the launcher's rank 0, stdout and stderr go to /dev/null from
 * app_mpi_quiet_begin to app_mpi_quiet_end (a parser run in between that exits leaves them there,
 * which is the point: its message is printed once). */
typedef struct app_mpi_quiet {
  int out, err; /* the saved descriptors, -1 when nothing was redirected */
} app_mpi_quiet;

static APP_UNUSED void app_mpi_quiet_begin(app_mpi_quiet *q) {
  q->out = q->err = -1;
  if (app_mpi_launcher_rank() != 0) {
    int devnull = open("/dev/null", O_WRONLY);
    fflush(stdout);
    fflush(stderr);
    q->out = dup(1);
    q->err = dup(2);
    if (devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
      close(devnull);
    }
  }
}

static APP_UNUSED void app_mpi_quiet_end(app_mpi_quiet *q) {
  if (q->out >= 0) {
    fflush(stdout);
    dup2(q->out, 1);
    close(q->out);
  }
  if (q->err >= 0) {
    fflush(stderr);
    dup2(q->err, 2);
    close(q->err);
  }
  q->out = q->err = -1;
}

/* --- start ---------------------------------------------------------------------------------------- */

static APP_UNUSED const char *app_mpi_level_name(int level) {
  return level == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
         : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
         : level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                          : "MPI_THREAD_SINGLE";
}

/* Rank 0 says "prog: <message> (see -h)" (nothing when fmt is NULL); every rank leaves MPI and exits
 * with status. Every rank must get here (they all parse the same command line). */
static APP_UNUSED void app_mpi_leave(int rank, int status, const char *prog, const char *fmt, ...) {
  if (rank == 0 && fmt) {
    va_list ap;
    va_start(ap, fmt);
    app_vcomplain(prog, fmt, ap);
    va_end(ap);
  }
  MPI_Finalize();
  exit(status);
}

/* app_parse_long after MPI_Init: a bad value leaves every rank with status 2, said once. */
static APP_UNUSED long app_mpi_parse_long(int rank, const char *prog, const char *opt, const char *text, long lo,
                                          long hi) {
  char *end = NULL;
  long v;
  if (!text) app_mpi_leave(rank, 2, prog, "option %s needs a value", opt);
  errno = 0;
  v = strtol(text, &end, 10);
  if (errno || end == text || *end) app_mpi_leave(rank, 2, prog, "option %s: '%s' is not an integer", opt, text);
  if (v < lo || v > hi) app_mpi_leave(rank, 2, prog, "option %s: %s is out of range (%ld..%ld)", opt, text, lo, hi);
  return v;
}

/* MPI_Init_thread asking for `level` (MPI_THREAD_MULTIPLE where tasks call MPI from any thread,
 * MPI_THREAD_FUNNELED where only the master does). When MPI gives less, rank 0 says
 * "prog: <who> needs <level>, MPI provided only <level>" and every rank leaves with status 1: a run
 * on a thread level that is not safe would be no measurement. Returns this rank in MPI_COMM_WORLD. */
static APP_UNUSED int app_mpi_init_thread(int *argc, char ***argv, int level, const char *prog, const char *who) {
  int provided = MPI_THREAD_SINGLE, rank = 0;
  if (MPI_Init_thread(argc, argv, level, &provided) != MPI_SUCCESS) app_die("%s: MPI_Init_thread failed", prog);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < level) {
    if (rank == 0)
      fprintf(stderr, "%s: %s needs %s, MPI provided only %s\n", prog, who, app_mpi_level_name(level),
              app_mpi_level_name(provided));
    MPI_Finalize();
    exit(1);
  }
  return rank;
}

/* 1 / 0 when libweft-mpi is in the process (linked, or preloaded beside weft) and blocking MPI calls
 * inside tasks suspend the task / hold the thread; -1 when it is not loaded. */
static APP_UNUSED int app_mpi_task_aware(void) {
  int (*aware)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "weft_mpi_task_aware");
  return aware ? aware() : -1;
}

/* --- one RESULT line for R ranks ---------------------------------------------------------------- */

/* The slowest rank's time on rank 0 (the others get their own back). Collective. */
static APP_UNUSED double app_mpi_max_time(MPI_Comm comm, double seconds) {
  double worst = seconds;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Reduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  return rank == 0 ? worst : seconds;
}

/* out[i] = the sum over the ranks of in[i], on rank 0; -1 where any rank does not know (in[i] < 0).
 * n <= 8. Collective. */
static APP_UNUSED void app_mpi_sum_known(MPI_Comm comm, const long long *in, long long *out, int n) {
  long long mine[8], unknown[8], any[8];
  int i;
  if (n > 8) app_die("app_mpi_sum_known: %d values, at most 8", n);
  for (i = 0; i < n; ++i) {
    mine[i] = in[i] < 0 ? 0 : in[i];
    unknown[i] = in[i] < 0;
    out[i] = 0;
    any[i] = 0;
  }
  MPI_Reduce(mine, out, n, MPI_LONG_LONG, MPI_SUM, 0, comm);
  MPI_Reduce(unknown, any, n, MPI_LONG_LONG, MPI_MAX, 0, comm);
  for (i = 0; i < n; ++i)
    if (any[i]) out[i] = -1;
}

/* One value: the sum on rank 0, -1 when any rank does not know. Collective. */
static APP_UNUSED long long app_mpi_sum_known1(MPI_Comm comm, long long v) {
  long long sum = 0;
  app_mpi_sum_known(comm, &v, &sum, 1);
  return sum;
}

#endif /* WEFT_BENCH_APP_MPI_H */
