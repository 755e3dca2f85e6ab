/* Distributed dense benchmarks of the taskiter paper (003, Table 1): multi-matvec, multi-matmul and
 * dense Jacobi over MPI, each in three variants (Table 2's):
 *   dense_mpi_omp.c    fork-join MPI + OpenMP (gcc -fopenmp, never linked to weft)
 *   dense_mpi_weft.cpp TAMPI-style: native weft tasks with task-aware MPI (libweft-mpi)
 *   dense_dist.cpp     the distributed taskiter (libweft-dist)
 * What they share: the options, the block-row distribution, each rank's part of the problem, the
 * gathered bit-for-bit check against the serial run, and the RESULT line. C11 and C++20; static.
 *
 *   mpirun -np R <prog> --app matvec|matmul|jacobi|all [--variant V] [-n N] [-b B] [-s STEPS] [-p P]
 *                       [--no-check]
 *
 * --app all runs the three one after the other in one process, one RESULT line each (the tests).
 *
 * The problem (kernels: matvec_kernels.h, matmul_kernels.h): N x N matrices, B divides N, nb = N / B
 * blocks. matvec and jacobi: a block is B rows (of the matrix and of the vectors); matmul: a block is
 * a row of tiles (B x B tiles, nt = nb per dimension). Rank r owns blocks [nb r / R, nb (r+1) / R)
 * (nb >= R): their rows of A (jacobi: of R, d and b) and of the result.
 *   matvec  y += A x per step, x fixed: no communication; each rank holds its rows of A and y, and x.
 *   matmul  C += A B per step: no communication; each rank holds its rows of tiles of A and C, and
 *           all of B (read-only; every rank builds it, or, distributed, fetches it).
 *   jacobi  x' = D^-1 (b - R x), two vectors swapped every step: every block of step s reads the
 *           whole vector of step s - 1 (all-to-all).
 * The result (y, C, or the vector of the last step) is gathered on rank 0 (each rank's rows are
 * contiguous, in the tiled layout too) and compared with the serial run there (mv_serial,
 * mm_serial on the whole problem): error= is the largest difference, which must be 0 (the same
 * kernels in the same order per row / tile), check=FAIL and exit status 1 otherwise.
 *
 * RESULT line (app_common.h) on rank 0: app=matvec-mpi|matmul-mpi|jacobi-mpi, size=N, block=B,
 * iters=STEPS, seconds = the timed loop only (the slowest rank's; no set-up, no check), ranks=R;
 * then per_iter=seconds/STEPS and the variant's own fields. gflops: 2 N^2 STEPS (matmul 2 N^3 STEPS)
 * / seconds. */
#ifndef WEFT_BENCH_DENSE_MPI_H
#define WEFT_BENCH_DENSE_MPI_H

#include <limits.h>

#include "app_common.h"
#include "app_mpi.h"
#include "matmul_kernels.h"
#include "matvec_kernels.h"

enum { DM_ALL = -1, DM_MATVEC = 0, DM_MATMUL = 1, DM_JACOBI = 2 };

typedef struct dm_options {
  const char *variant;
  int variant_index;
  int app, threads, check;
  long n, b, steps;
} dm_options;

static APP_UNUSED const char *dm_app_name(int app) {
  return app == DM_MATVEC ? "matvec-mpi" : app == DM_MATMUL ? "matmul-mpi" : "jacobi-mpi";
}

static APP_UNUSED void dm_usage(FILE *f, const char *prog, const char *const *variants) {
  int k;
  fprintf(f,
          "usage: mpirun -np R %s [--app matvec|matmul|jacobi|all] [--variant V] [-n N] [-b B] [-s STEPS] [-p P]\n"
          "       [--no-check]\n"
          "  matvec: y += A x repeated; matmul: C += A B repeated (tiles); jacobi: dense Jacobi (all-to-all).\n"
          "  Block rows distributed over the ranks; the result is checked against the serial run (bits).\n"
          "  --app A       matvec | matmul | jacobi | all (one after the other)  [matvec]\n"
          "  --variant V   one of:",
          prog);
  for (k = 0; variants[k]; ++k) fprintf(f, " %s", variants[k]);
  fprintf(f,
          " [%s]\n"
          "  -n N          matrix order                               [4096; matmul 1024]\n"
          "  -b B          block: rows (matvec, jacobi), tile side (matmul); divides N  [256; matmul 128]\n"
          "  -s STEPS      steps (iterations)                         [20; matmul 3]\n"
          "  -p P          threads per rank (0: the runtime's default) [0]\n"
          "  --no-check    skip the gather and the serial run\n",
          variants[0]);
}

/* --app all runs the three apps one after the other in one process (the tests: one launch). */
static APP_UNUSED int dm_first_app(const dm_options *o) { return o->app == DM_ALL ? DM_MATVEC : o->app; }
static APP_UNUSED int dm_last_app(const dm_options *o) { return o->app == DM_ALL ? DM_JACOBI : o->app; }

/* The options of one app: o's, with that app's defaults for what the command line did not say. */
static APP_UNUSED dm_options dm_for_app(const dm_options *o, int app) {
  dm_options a = *o;
  a.app = app;
  if (a.n < 0) a.n = app == DM_MATMUL ? 1024 : 4096;
  if (a.b < 0) a.b = app == DM_MATMUL ? 128 : 256;
  if (a.steps < 0) a.steps = app == DM_MATMUL ? 3 : 20;
  return a;
}

/* variants: NULL-terminated, the first is the default. Exits 0 on -h, 2 on a bad option. N, B and
 * STEPS stay -1 where not given: dm_for_app fills them per app. */
static APP_UNUSED void dm_parse(dm_options *o, int argc, char **argv, const char *prog, const char *const *variants) {
  int i;
  memset(o, 0, sizeof *o);
  o->variant = variants[0];
  o->app = DM_MATVEC;
  o->n = o->b = o->steps = -1;
  o->check = 1;
  for (i = 1; i < argc; ++i) {
    const char *a = argv[i], *v;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      dm_usage(stdout, prog, variants);
      exit(0);
    }
    if (strcmp(a, "--no-check") == 0) {
      app_check_skipped = 1;
      o->check = 0;
      continue;
    }
    if (strcmp(a, "--app") != 0 && strcmp(a, "--variant") != 0 && strcmp(a, "-n") != 0 && strcmp(a, "-b") != 0 &&
        strcmp(a, "-s") != 0 && strcmp(a, "-p") != 0)
      app_bad(prog, "unknown option '%s'", a);
    if (i + 1 >= argc) app_bad(prog, "option %s needs a value", a);
    v = argv[++i];
    if (strcmp(a, "--app") == 0) {
      if (strcmp(v, "matvec") == 0) o->app = DM_MATVEC;
      else if (strcmp(v, "matmul") == 0) o->app = DM_MATMUL;
      else if (strcmp(v, "jacobi") == 0) o->app = DM_JACOBI;
      else if (strcmp(v, "all") == 0) o->app = DM_ALL;
      else app_bad(prog, "option --app: unknown app '%s' (matvec | matmul | jacobi | all)", v);
    } else if (strcmp(a, "--variant") == 0) {
      int k, found = -1;
      for (k = 0; variants[k]; ++k)
        if (strcmp(v, variants[k]) == 0) found = k;
      if (found < 0) app_bad(prog, "option --variant: unknown variant '%s' for this program", v);
      o->variant = variants[found];
      o->variant_index = found;
    } else if (strcmp(a, "-n") == 0) {
      o->n = app_parse_long(prog, a, v, 1, 1L << 20);
    } else if (strcmp(a, "-b") == 0) {
      o->b = app_parse_long(prog, a, v, 1, 1L << 20);
    } else if (strcmp(a, "-s") == 0) {
      o->steps = app_parse_long(prog, a, v, 1, 100000000L);
    } else {
      o->threads = (int)app_parse_long(prog, a, v, 0, 4096);
    }
  }
  for (i = dm_first_app(o); i <= dm_last_app(o); ++i) {
    dm_options a = dm_for_app(o, i);
    if (a.b > a.n || a.n % a.b != 0) app_bad(prog, "option -b: %ld does not divide -n %ld (%s)", a.b, a.n, dm_app_name(i));
  }
}

/* dm_parse before MPI_Init (-p must set WEFT_NUM_THREADS before anything starts weft), said once. */
static APP_UNUSED void dm_mpi_parse(dm_options *o, int argc, char **argv, const char *prog,
                                    const char *const *variants) {
  app_mpi_quiet q;
  app_mpi_quiet_begin(&q);
  dm_parse(o, argc, argv, prog, variants);
  app_mpi_quiet_end(&q);
}

/* --- distribution ------------------------------------------------------------------------------ */

typedef struct dm_layout {
  int rank, ranks;
  long nb;      /* blocks: N / B */
  long k0, k1;  /* my blocks [k0, k1) */
  long lnb;     /* k1 - k0 */
  long r0, r1;  /* my rows [r0, r1) = [k0 B, k1 B) */
} dm_layout;

static APP_UNUSED long dm_first_block(long nb, int r, int ranks) { return (long)((long long)nb * r / ranks); }

/* The rank that owns block k (its home in the distributed variant). */
static APP_UNUSED int dm_owner(long nb, long k, int ranks) {
  int r = 0;
  while (r + 1 < ranks && dm_first_block(nb, r + 1, ranks) <= k) ++r;
  return r;
}

/* After MPI_Init: this rank's blocks; every rank leaves with status 2 when a rank would get none. */
static APP_UNUSED void dm_layout_init(dm_layout *L, const dm_options *o, const char *prog) {
  memset(L, 0, sizeof *L);
  MPI_Comm_rank(MPI_COMM_WORLD, &L->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &L->ranks);
  L->nb = o->n / o->b;
  if (L->nb < L->ranks)
    app_mpi_leave(L->rank, 2, prog, "-n %ld -b %ld: %ld blocks for %d ranks (each rank needs at least one)", o->n,
                  o->b, L->nb, L->ranks);
  L->k0 = dm_first_block(L->nb, L->rank, L->ranks);
  L->k1 = dm_first_block(L->nb, L->rank + 1, L->ranks);
  L->lnb = L->k1 - L->k0;
  L->r0 = L->k0 * o->b;
  L->r1 = L->k1 * o->b;
}

/* The result's elements a rank owns, [offset, offset + count) of the whole (vector of N, or C by
 * tiles): the same formula for every rank r. */
static APP_UNUSED void dm_chunk(const dm_options *o, const dm_layout *L, int r, long long *offset, long long *count) {
  const long long per_block = o->app == DM_MATMUL ? (long long)L->nb * o->b * o->b : o->b;
  const long k0 = dm_first_block(L->nb, r, L->ranks), k1 = dm_first_block(L->nb, r + 1, L->ranks);
  *offset = k0 * per_block;
  *count = (k1 - k0) * per_block;
}

/* --- one rank's data in private memory (the fork-join and TAMPI-style variants) ------------------ */

typedef struct dm_local {
  /* matvec: A (my rows x N), x (N), y (my rows); jacobi: A = R (my rows x N), diag and rhs (my
   * rows), v[0], v[1] (N each, whole: every block reads all of the old one); matmul: A and C (my
   * rows of tiles: lnb x nt tiles), B (nt x nt tiles). Row / tile row 0 of a local array is the
   * rank's first (r0, k0). */
  double *A, *B, *C, *x, *y, *diag, *rhs, *v[2];
  int *counts, *displs; /* jacobi: rows per rank and their first rows (MPI_Allgatherv) */
} dm_local;

static APP_UNUSED double *dm_alloc_or_die(size_t count, const char *prog, int rank) {
  double *p = (double *)mv_alloc(count * sizeof(double));
  if (!p) app_die("%s: rank %d: out of memory (%zu doubles)", prog, rank, count);
  memset(p, 0, count * sizeof(double));
  return p;
}

/* Allocates and initialises this rank's part of the problem (not timed): what it is home of in
 * dense_dist (x on rank 0, its own rows of B's tiles); dm_distribute_inputs sends the rest. */
static APP_UNUSED void dm_local_build(dm_local *d, const dm_options *o, const dm_layout *L, const char *prog) {
  const long n = o->n, b = o->b, nt = L->nb, rows = L->r1 - L->r0;
  const size_t tile = (size_t)b * (size_t)b;
  long ti, tj;
  int r;
  memset(d, 0, sizeof *d);
  switch (o->app) {
    case DM_MATVEC:
      d->A = dm_alloc_or_die((size_t)rows * (size_t)n, prog, L->rank);
      d->x = dm_alloc_or_die((size_t)n, prog, L->rank);
      d->y = dm_alloc_or_die((size_t)rows, prog, L->rank);
      mv_matvec_init_rows(n, d->A, L->r0, L->r1);
      if (L->rank == 0) mv_matvec_init_x(n, d->x);
      break;
    case DM_MATMUL:
      d->A = dm_alloc_or_die((size_t)L->lnb * (size_t)nt * tile, prog, L->rank);
      d->B = dm_alloc_or_die((size_t)nt * (size_t)nt * tile, prog, L->rank);
      d->C = dm_alloc_or_die((size_t)L->lnb * (size_t)nt * tile, prog, L->rank);
      for (ti = 0; ti < nt; ++ti)
        for (tj = 0; tj < nt; ++tj) {
          if (ti < L->k0 || ti >= L->k1) continue;
          mm_init_tile(MM_B, n, b, ti, tj, mm_tile(d->B, nt, b, ti, tj));
          mm_init_tile(MM_A, n, b, ti, tj, mm_tile(d->A, nt, b, ti - L->k0, tj));
        }
      break;
    default:
      d->A = dm_alloc_or_die((size_t)rows * (size_t)n, prog, L->rank);
      d->diag = dm_alloc_or_die((size_t)rows, prog, L->rank);
      d->rhs = dm_alloc_or_die((size_t)rows, prog, L->rank);
      d->v[0] = dm_alloc_or_die((size_t)n, prog, L->rank);
      d->v[1] = dm_alloc_or_die((size_t)n, prog, L->rank);
      mv_jacobi_init_rows(n, d->A, d->diag, d->rhs, L->r0, L->r1);
      d->counts = (int *)malloc(sizeof(int) * (size_t)L->ranks);
      d->displs = (int *)malloc(sizeof(int) * (size_t)L->ranks);
      if (!d->counts || !d->displs) app_die("%s: out of memory", prog);
      for (r = 0; r < L->ranks; ++r) {
        d->displs[r] = (int)(dm_first_block(L->nb, r, L->ranks) * b);
        d->counts[r] = (int)(dm_first_block(L->nb, r + 1, L->ranks) * b) - d->displs[r];
      }
      break;
  }
}

/* Inside the timed region, before the loop: what the distributed taskiter's start-up fetches (its
 * step 4), the hand-written variants receive too, so that every variant starts from each rank
 * holding only what it is home of: x from rank 0 (matvec), every rank's rows of B's tiles (matmul),
 * the first vector's blocks (jacobi; zeros, as dense_dist fetches them all the same). */
static APP_UNUSED void dm_distribute_inputs(dm_local *d, const dm_options *o, const dm_layout *L, const char *prog) {
  if (o->app == DM_MATVEC) {
    if (o->n > INT_MAX) app_die("%s: N too large for one MPI_Bcast", prog);
    MPI_Bcast(d->x, (int)o->n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return;
  }
  if (o->app == DM_JACOBI) {
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, d->v[0], d->counts, d->displs, MPI_DOUBLE, MPI_COMM_WORLD);
    return;
  }
  int *counts = (int *)malloc(sizeof(int) * (size_t)L->ranks), *displs = (int *)malloc(sizeof(int) * (size_t)L->ranks);
  if (!counts || !displs) app_die("%s: out of memory", prog);
  for (int r = 0; r < L->ranks; ++r) {
    long long offset, count;
    dm_chunk(o, L, r, &offset, &count); /* a rank's rows of tiles: the same chunks for B as for C */
    if (offset + count > INT_MAX) app_die("%s: B too large for one MPI_Allgatherv", prog);
    displs[r] = (int)offset;
    counts[r] = (int)count;
  }
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, d->B, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  free(counts);
  free(displs);
}

/* This rank's part of the result after `steps` steps (dm_check's mine). */
static APP_UNUSED const double *dm_local_result(const dm_local *d, const dm_options *o, const dm_layout *L) {
  if (o->app == DM_MATVEC) return d->y;
  if (o->app == DM_MATMUL) return d->C;
  return d->v[o->steps & 1] + L->r0;
}

static APP_UNUSED void dm_local_free(dm_local *d) {
  free(d->A);
  free(d->B);
  free(d->C);
  free(d->x);
  free(d->y);
  free(d->diag);
  free(d->rhs);
  free(d->v[0]);
  free(d->v[1]);
  free(d->counts);
  free(d->displs);
  memset(d, 0, sizeof *d);
}

/* --- check and RESULT -------------------------------------------------------------------------- */

/* The serial run of the whole problem on rank 0: the result (vector of N, or C by tiles), malloc'ed. */
static APP_UNUSED double *dm_reference(const dm_options *o, const char *prog) {
  const long n = o->n, b = o->b;
  double *out;
  if (o->app == DM_MATMUL) {
    const long nt = n / b;
    const size_t nn = (size_t)n * (size_t)n;
    double *A = (double *)mv_alloc(nn * sizeof(double)), *B = (double *)mv_alloc(nn * sizeof(double));
    long ti, tj;
    out = (double *)mv_alloc(nn * sizeof(double));
    if (!A || !B || !out) app_die("%s: out of memory for the reference", prog);
    for (ti = 0; ti < nt; ++ti)
      for (tj = 0; tj < nt; ++tj) {
        mm_init_tile(MM_A, n, b, ti, tj, mm_tile(A, nt, b, ti, tj));
        mm_init_tile(MM_B, n, b, ti, tj, mm_tile(B, nt, b, ti, tj));
      }
    memset(out, 0, nn * sizeof(double));
    mm_serial(n, b, A, B, out, o->steps);
    free(A);
    free(B);
  } else {
    mv_problem pb;
    if (mv_build(&pb, o->app == DM_MATVEC ? MV_MATVEC : MV_JACOBI, n, (int)(n / b)) != 0)
      app_die("%s: out of memory for the reference", prog);
    mv_serial(&pb, o->steps);
    out = (double *)mv_alloc((size_t)n * sizeof(double));
    if (!out) app_die("%s: out of memory for the reference", prog);
    memcpy(out, mv_result(&pb, o->steps), (size_t)n * sizeof(double));
    mv_free(&pb);
  }
  return out;
}

/* Gathers every rank's part of the result (mine: its first element) on rank 0 and compares it with
 * the serial run. Collective; ok on every rank, *error (rank 0) the largest difference. */
static APP_UNUSED int dm_check(const dm_options *o, const dm_layout *L, const double *mine, double *error,
                               const char *prog) {
  long long off, cnt, total = o->app == DM_MATMUL ? (long long)o->n * o->n : o->n;
  double *all = NULL;
  int *counts = NULL, *displs = NULL, ok = 1, r;
  *error = 0.0;
  if (total > INT_MAX) app_die("%s: -n %ld is too large for the gathered check (run with --no-check)", prog, o->n);
  dm_chunk(o, L, L->rank, &off, &cnt);
  if (L->rank == 0) {
    all = (double *)mv_alloc((size_t)total * sizeof(double));
    counts = (int *)malloc(sizeof(int) * (size_t)L->ranks);
    displs = (int *)malloc(sizeof(int) * (size_t)L->ranks);
    if (!all || !counts || !displs) app_die("%s: out of memory for the gathered result", prog);
    for (r = 0; r < L->ranks; ++r) {
      long long ro, rc;
      dm_chunk(o, L, r, &ro, &rc);
      displs[r] = (int)ro;
      counts[r] = (int)rc;
    }
  }
  MPI_Gatherv(mine, (int)cnt, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (L->rank == 0) {
    double *want = dm_reference(o, prog);
    long long i, differ = 0;
    for (i = 0; i < total; ++i) {
      double d = fabs(all[i] - want[i]);
      if (all[i] != want[i]) ++differ;
      if (!(d <= *error)) *error = d; /* a NaN counts */
    }
    ok = differ == 0;
    if (!ok) fprintf(stderr, "%s: %lld of %lld values differ from the serial run\n", prog, differ, total);
    free(want);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(all);
  free(counts);
  free(displs);
  return ok;
}

static APP_UNUSED double dm_gflops(const dm_options *o, double seconds) {
  double flops = 2.0 * (double)o->n * (double)o->n * (double)o->steps;
  if (o->app == DM_MATMUL) flops *= (double)o->n;
  return seconds > 0 ? flops / seconds / 1e9 : 0.0;
}

/* After the timed loop: the check (unless --no-check), the slowest rank's time, tasks and edges
 * summed (< 0 on a rank: unknown), and the RESULT line on rank 0, with per_iter= and extra. mine:
 * this rank's part of the result. Collective; returns ok. */
static APP_UNUSED int dm_finish(const dm_options *o, const dm_layout *L, const double *mine, double seconds,
                                const char *runtime, int threads, long long tasks, long long edges, const char *extra,
                                const char *prog) {
  double worst = app_mpi_max_time(MPI_COMM_WORLD, seconds), error = 0.0;
  long long counts[2] = {tasks, edges}, sums[2] = {0, 0};
  int ok = 1;
  app_mpi_sum_known(MPI_COMM_WORLD, counts, sums, 2);
  if (o->check) ok = dm_check(o, L, mine, &error, prog);
  if (L->rank == 0) {
    char fields[512];
    app_result r;
    snprintf(fields, sizeof fields, "per_iter=%.6e%s%s", worst / (double)o->steps, extra ? " " : "", extra ? extra : "");
    memset(&r, 0, sizeof r);
    r.app = dm_app_name(o->app);
    r.variant = o->variant;
    r.runtime = runtime;
    r.threads = threads;
    r.size = o->n;
    r.block = o->b;
    r.iters = o->steps;
    r.seconds = worst;
    r.gflops = dm_gflops(o, worst);
    r.tasks = sums[0];
    r.edges = sums[1];
    r.ok = ok;
    r.error = error;
    r.ranks = L->ranks;
    r.extra = fields;
    app_print_result(&r);
  }
  return ok;
}

/* Compute tasks per step on this rank (one per block; matmul one per tile product). */
static APP_UNUSED long long dm_compute_tasks(const dm_options *o, const dm_layout *L) {
  return o->app == DM_MATMUL ? (long long)L->lnb * L->nb * L->nb : L->lnb;
}

#endif /* WEFT_BENCH_DENSE_MPI_H */
