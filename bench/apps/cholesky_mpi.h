/* Distributed tiled Cholesky (issue 9) shared by cholesky_mpi_omp, cholesky_mpi_weft and
 * cholesky_scalapack: the command line, the 2-D block-cyclic distribution, each rank's tiles of the
 * deterministic SPD matrix of cholesky_kernels.h, the communication plan, the walk of the loop nest
 * that the task programs turn into tasks, the gather-and-check on rank 0 and the RESULT line.
 *
 * Distribution: the nt x nt tiles of b x b (n = nt * b) over a P x Q grid of ranks (P * Q = ranks;
 * by default Q is the largest divisor of the rank count <= its square root, so P >= Q and the grid is
 * as square as possible; -P P overrides). Tile (i, j) belongs to grid position (i mod P, j mod Q),
 * i.e. to rank (i mod P) * Q + (j mod Q): the row-major numbering of BLACS's "Row" grids, so
 * ScaLAPACK with the same P x Q and block b holds exactly the same tiles on the same ranks.
 *
 * Every rank walks the whole right-looking loop nest of cholesky_kernels.h and emits only:
 *   - its compute tasks: potrf, trsm, syrk, gemm on the tiles it owns;
 *   - send: a tile it owns, once final (after its potrf or trsm), to each rank that reads it (one
 *     send per tile and destination);
 *   - recv: a tile of another rank it reads, received once into a buffer of its own that all its
 *     local readers then name in their dependences.
 * Only the panel tiles (i, k), i >= k, travel, each after its last update: a receive buffer is
 * written once and never reused, so no message can overwrite a tile still being read, and the
 * dependences on tile addresses (own tiles and receive buffers) order everything: one task graph
 * per rank, no barrier. The cost is memory: every received tile keeps its buffer until the end,
 * about n^2 (1/P + 1/Q) / 2 doubles per rank on top of its n^2 / (2 P Q) own ones.
 * Messages: tag = i * nt + j (checked against MPI_TAG_UB), one message per (tile, destination), so
 * (source, tag) names a message; the ordered emission below (a tile's send after the task that
 * finishes it, a buffer's recv before its readers) is the same on every rank.
 *
 * The check gathers L on rank 0 (tile by tile, in a fixed order) and computes chol_residual there
 * against the regenerated matrix: the same test and threshold as the shared-memory programs.
 * Timing: MPI_Barrier, then each rank's clock from there to the end of its factorisation; the
 * reported time is the maximum over the ranks (app_mpi_max_time). GFLOP/s = n^3/3 / time.
 * Starting MPI, option errors and the reductions over ranks are app_mpi.h's.
 *
 * C11 and C++20 alike; everything is static, each executable includes it once. */
#ifndef WEFT_BENCH_CHOLESKY_MPI_H
#define WEFT_BENCH_CHOLESKY_MPI_H

#include "app_mpi.h"
#include "cholesky_kernels.h"

/* --- command line --------------------------------------------------------------------------- */

typedef struct cmpi_opts {
  chol_opts c;    /* variant, n, b, nt, threads (-p), reps (-r), check */
  int P, Q;       /* the process grid */
  int mark_sends; /* --mark-sends: send tasks get priority 1 */
} cmpi_opts;

enum { CMPI_OPT_MARK_SENDS = 1 }; /* options a program accepts beyond the common ones */

static APP_UNUSED void cmpi_usage(const char *prog, const char *const *variants, unsigned flags) {
  printf("usage: mpirun -np R %s [--variant V] [-n N] [-b B] [-P P] [-p T] [-r REPS]%s [--no-check] [-h]\n"
         "  distributed tiled Cholesky (lower) of a deterministic n x n SPD matrix in b x b tiles,\n"
         "  2-D block-cyclic over a P x Q grid of the R ranks (tile (i,j) on rank (i%%P)*Q + j%%Q)\n"
         "  --variant V   one of:",
         prog, flags & CMPI_OPT_MARK_SENDS ? " [--mark-sends]" : "");
  for (const char *const *v = variants; *v; ++v) printf(" %s", *v);
  printf(" (default %s)\n"
         "  -n N          matrix order (default 4096), a multiple of B\n"
         "  -b B          tile size (default 256)\n"
         "  -P P          grid rows, a divisor of R (default: the squarest grid with P >= Q)\n"
         "  -p T          threads per rank (default 0: the runtime's default)\n"
         "  -r REPS       repetitions in this process, each on a freshly generated matrix (default 1)\n",
         variants[0]);
  if (flags & CMPI_OPT_MARK_SENDS) printf("  --mark-sends  send tasks get priority 1\n");
  printf("  --no-check    skip the residual check (gather on rank 0, ||A - L L^T||_F / ||A||_F)\n"
         "  -h            this help\n");
}

/* After MPI_Init. variants: NULL-terminated, the first is the default. Leaves (every rank) with 0
 * after -h, 2 on a bad option, naming it. */
static APP_UNUSED void cmpi_parse(int argc, char **argv, const char *prog, const char *const *variants,
                                  unsigned flags, cmpi_opts *o) {
  int rank, size;
  long P = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  memset(o, 0, sizeof *o);
  o->c.variant = variants[0];
  o->c.n = 4096;
  o->c.b = 256;
  o->c.reps = 1;
  o->c.check = 1;
  for (int a = 1; a < argc; ++a) {
    const char *arg = argv[a];
    const char *next = a + 1 < argc ? argv[a + 1] : NULL;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      if (rank == 0) cmpi_usage(prog, variants, flags);
      app_mpi_leave(rank, 0, prog, NULL);
    } else if (!strcmp(arg, "--variant")) {
      int known = 0;
      if (!next) app_mpi_leave(rank, 2, prog, "option --variant needs a value");
      for (const char *const *v = variants; *v; ++v)
        if (!strcmp(*v, next)) known = 1;
      if (!known) app_mpi_leave(rank, 2, prog, "option --variant: '%s' is not a variant of this program", next);
      o->c.variant = next;
      ++a;
    } else if (!strcmp(arg, "-n")) {
      o->c.n = app_mpi_parse_long(rank, prog, "-n", next, 1, 1L << 20), ++a;
    } else if (!strcmp(arg, "-b")) {
      o->c.b = app_mpi_parse_long(rank, prog, "-b", next, 1, 1L << 14), ++a;
    } else if (!strcmp(arg, "-P")) {
      P = app_mpi_parse_long(rank, prog, "-P", next, 1, size), ++a;
    } else if (!strcmp(arg, "-p")) {
      o->c.threads = (int)app_mpi_parse_long(rank, prog, "-p", next, 0, 1 << 16), ++a;
    } else if (!strcmp(arg, "-r")) {
      o->c.reps = (int)app_mpi_parse_long(rank, prog, "-r", next, 1, 1 << 20), ++a;
    } else if (!strcmp(arg, "--mark-sends") && (flags & CMPI_OPT_MARK_SENDS)) {
      o->mark_sends = 1;
    } else if (!strcmp(arg, "--no-check")) {
      app_check_skipped = 1;
      o->c.check = 0;
    } else {
      app_mpi_leave(rank, 2, prog, "unknown option '%s'", arg);
    }
  }
  if (o->c.b > o->c.n) app_mpi_leave(rank, 2, prog, "option -b: %ld is larger than -n %ld", o->c.b, o->c.n);
  if (o->c.n % o->c.b != 0) app_mpi_leave(rank, 2, prog, "option -n: %ld is not a multiple of -b %ld", o->c.n, o->c.b);
  o->c.nt = o->c.n / o->c.b;
  if (P == 0) {
    int q = 1;
    for (int d = 1; (long)d * d <= size; ++d)
      if (size % d == 0) q = d;
    o->Q = q;
    o->P = size / q;
  } else {
    if (size % P != 0) app_mpi_leave(rank, 2, prog, "option -P: %ld does not divide the %d ranks", P, size);
    o->P = (int)P;
    o->Q = size / (int)P;
  }
}

/* --- distribution and plan -------------------------------------------------------------------- */

typedef struct cmpi_ctx {
  MPI_Comm comm;
  int rank, size, P, Q, myrow, mycol;
  long n, b, nt;
  /* The task programs only (cmpi_tiles_init): */
  double **tile;        /* nt * nt, index i * nt + j: this rank's lower tiles, NULL elsewhere */
  double **rbuf;        /* nt * nt: receive buffers of the remote tiles this rank reads */
  unsigned char *reads; /* (i * nt + j) * size + r: rank r reads tile (i, j) and does not own it */
  double *own_pool, *recv_pool;
  long own_tiles, recv_tiles, send_msgs; /* this rank's */
} cmpi_ctx;

static APP_UNUSED int cmpi_owner(const cmpi_ctx *x, long i, long j) {
  return (int)(i % x->P) * x->Q + (int)(j % x->Q);
}
static APP_UNUSED int cmpi_tag(const cmpi_ctx *x, long i, long j) { return (int)(i * x->nt + j); }

static APP_UNUSED void *cmpi_alloc(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
    fprintf(stderr, "cholesky-mpi: out of memory (%zu bytes)\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}

/* The grid and this rank's place in it; checks that every tile tag fits MPI_TAG_UB. */
static APP_UNUSED void cmpi_grid_init(cmpi_ctx *x, const cmpi_opts *o, MPI_Comm comm, const char *prog) {
  int *tag_ub = NULL, flag = 0;
  memset(x, 0, sizeof *x);
  x->comm = comm;
  MPI_Comm_rank(comm, &x->rank);
  MPI_Comm_size(comm, &x->size);
  x->P = o->P;
  x->Q = o->Q;
  x->myrow = x->rank / x->Q;
  x->mycol = x->rank % x->Q;
  x->n = o->c.n;
  x->b = o->c.b;
  x->nt = o->c.nt;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &flag);
  if (!flag || (double)x->nt * (double)x->nt - 1 > (double)*tag_ub) {
    if (x->rank == 0)
      fprintf(stderr, "%s: %ld x %ld tiles need tags up to %ld, above MPI_TAG_UB (%d): use a larger -b\n", prog,
              x->nt, x->nt, x->nt * x->nt - 1, flag ? *tag_ub : -1);
    MPI_Finalize();
    exit(2);
  }
}

/* reads[] for the final panel tile (i, k), i >= k: the owners of its readers, less its own owner.
 * (k, k) is read by trsm(m, k), m > k; (i, k), i > k, by syrk(i, i), gemm(i, j) for k < j < i (as
 * A_ik) and gemm(m, i) for m > i (as A_jk). */
static APP_UNUSED void cmpi_mark_readers(cmpi_ctx *x, long i, long k) {
  unsigned char *r = x->reads + ((size_t)i * (size_t)x->nt + (size_t)k) * (size_t)x->size;
  long nt = x->nt;
  if (i == k) {
    for (long m = k + 1; m < nt; ++m) r[cmpi_owner(x, m, k)] = 1;
  } else {
    r[cmpi_owner(x, i, i)] = 1;
    for (long j = k + 1; j < i; ++j) r[cmpi_owner(x, i, j)] = 1;
    for (long m = i + 1; m < nt; ++m) r[cmpi_owner(x, m, i)] = 1;
  }
  r[cmpi_owner(x, i, k)] = 0;
}

/* The task programs: own tiles, the plan, the receive buffers. */
static APP_UNUSED void cmpi_tiles_init(cmpi_ctx *x) {
  long nt = x->nt, own = 0, recv = 0, sends = 0;
  size_t tile_doubles = (size_t)x->b * (size_t)x->b;
  x->tile = (double **)calloc((size_t)(nt * nt), sizeof(double *));
  x->rbuf = (double **)calloc((size_t)(nt * nt), sizeof(double *));
  x->reads = (unsigned char *)calloc((size_t)(nt * nt) * (size_t)x->size, 1);
  if (!x->tile || !x->rbuf || !x->reads) {
    fprintf(stderr, "cholesky-mpi: out of memory for the plan\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (long k = 0; k < nt; ++k)
    for (long i = k; i < nt; ++i) {
      const unsigned char *r = x->reads + ((size_t)i * (size_t)nt + (size_t)k) * (size_t)x->size;
      cmpi_mark_readers(x, i, k);
      if (cmpi_owner(x, i, k) == x->rank) {
        ++own;
        for (int d = 0; d < x->size; ++d) sends += r[d];
      } else if (r[x->rank]) {
        ++recv;
      }
    }
  x->own_pool = (double *)cmpi_alloc((size_t)own * tile_doubles * sizeof(double));
  x->recv_pool = (double *)cmpi_alloc((size_t)recv * tile_doubles * sizeof(double));
  own = recv = 0;
  for (long k = 0; k < nt; ++k)
    for (long i = k; i < nt; ++i) {
      if (cmpi_owner(x, i, k) == x->rank)
        x->tile[i * nt + k] = x->own_pool + (size_t)own++ * tile_doubles;
      else if (x->reads[((size_t)i * (size_t)nt + (size_t)k) * (size_t)x->size + (size_t)x->rank])
        x->rbuf[i * nt + k] = x->recv_pool + (size_t)recv++ * tile_doubles;
    }
  x->own_tiles = own;
  x->recv_tiles = recv;
  x->send_msgs = sends;
}

static APP_UNUSED void cmpi_tiles_free(cmpi_ctx *x) {
  free(x->tile);
  free(x->rbuf);
  free(x->reads);
  free(x->own_pool);
  free(x->recv_pool);
}

/* The tile (i, j) as this rank reads it: its own, or the buffer it receives it in. */
static APP_UNUSED double *cmpi_tile(const cmpi_ctx *x, long i, long j) {
  double *t = x->tile[i * x->nt + j];
  return t ? t : x->rbuf[i * x->nt + j];
}

/* Entry (gr, gc) of the matrix of chol_generate (cholesky_kernels.h), for any gr, gc. */
static APP_UNUSED double cmpi_entry(long n, long gr, long gc) {
  double v = gr >= gc ? chol_entry(gr, gc) : chol_entry(gc, gr);
  return gr == gc ? v + (double)n : v;
}

/* This rank's tiles of A (the values of chol_generate). */
static APP_UNUSED void cmpi_generate(cmpi_ctx *x) {
  long b = x->b, nt = x->nt;
  for (long j = 0; j < nt; ++j)
    for (long i = j; i < nt; ++i) {
      double *t = x->tile[i * nt + j];
      if (!t) continue;
      for (long c = 0; c < b; ++c)
        for (long r = 0; r < b; ++r) t[c * b + r] = cmpi_entry(x->n, i * b + r, j * b + c);
    }
}

/* --- the walk ---------------------------------------------------------------------------------
 * What this rank creates, in creation order: the task programs turn each op into a task.
 *   POTRF  inout out                       TRSM  in in1 (L_kk), inout out
 *   SYRK   in in1, inout out               GEMM  in in1, in in2, inout out
 *   SEND   in in1 (the tile), to peer      RECV  out out (the buffer), from peer
 * count = b * b doubles per message, tag as cmpi_tag. */
typedef enum { CMPI_POTRF, CMPI_TRSM, CMPI_SYRK, CMPI_GEMM, CMPI_SEND, CMPI_RECV } cmpi_kind;

typedef struct cmpi_op {
  cmpi_kind kind;
  double *out;
  const double *in1, *in2;
  int peer, tag;
} cmpi_op;

typedef void (*cmpi_emit_fn)(void *arg, const cmpi_op *op);

static APP_UNUSED const char *cmpi_kind_name(cmpi_kind k) {
  static const char *const names[] = {"potrf", "trsm", "syrk", "gemm", "send", "recv"};
  return names[k];
}

/* The final panel tile (i, k): owned -> one SEND per reader rank; read here -> one RECV. */
static APP_UNUSED long long cmpi_walk_panel(const cmpi_ctx *x, long i, long k, cmpi_emit_fn emit, void *arg) {
  const unsigned char *r = x->reads + ((size_t)i * (size_t)x->nt + (size_t)k) * (size_t)x->size;
  int owner = cmpi_owner(x, i, k);
  long long ops = 0;
  cmpi_op op;
  memset(&op, 0, sizeof op);
  op.tag = cmpi_tag(x, i, k);
  if (owner == x->rank) {
    op.kind = CMPI_SEND;
    op.in1 = x->tile[i * x->nt + k];
    /* Start from the next rank: the ranks do not all serve rank 0 first. */
    for (int s = 1; s < x->size; ++s) {
      int d = (x->rank + s) % x->size;
      if (!r[d]) continue;
      op.peer = d;
      emit(arg, &op);
      ++ops;
    }
  } else if (r[x->rank]) {
    op.kind = CMPI_RECV;
    op.out = x->rbuf[i * x->nt + k];
    op.peer = owner;
    emit(arg, &op);
    ++ops;
  }
  return ops;
}

/* One factorisation: this rank's ops, in the order of cholesky_omp.c's loop nest, each panel
 * tile's sends right after the task that finishes it and its recv before its first reader.
 * Returns the number of ops (tasks) emitted. */
static APP_UNUSED long long cmpi_walk(const cmpi_ctx *x, cmpi_emit_fn emit, void *arg) {
  long nt = x->nt;
  int me = x->rank;
  long long ops = 0;
  cmpi_op op;
  memset(&op, 0, sizeof op);
  for (long k = 0; k < nt; ++k) {
    if (cmpi_owner(x, k, k) == me) {
      op.kind = CMPI_POTRF;
      op.out = x->tile[k * nt + k];
      op.in1 = op.in2 = NULL;
      emit(arg, &op);
      ++ops;
    }
    ops += cmpi_walk_panel(x, k, k, emit, arg);
    for (long i = k + 1; i < nt; ++i) {
      if (cmpi_owner(x, i, k) == me) {
        op.kind = CMPI_TRSM;
        op.in1 = cmpi_tile(x, k, k);
        op.in2 = NULL;
        op.out = x->tile[i * nt + k];
        emit(arg, &op);
        ++ops;
      }
      ops += cmpi_walk_panel(x, i, k, emit, arg);
    }
    for (long i = k + 1; i < nt; ++i) {
      for (long j = k + 1; j < i; ++j)
        if (cmpi_owner(x, i, j) == me) {
          op.kind = CMPI_GEMM;
          op.in1 = cmpi_tile(x, i, k);
          op.in2 = cmpi_tile(x, j, k);
          op.out = x->tile[i * nt + j];
          emit(arg, &op);
          ++ops;
        }
      if (cmpi_owner(x, i, i) == me) {
        op.kind = CMPI_SYRK;
        op.in1 = cmpi_tile(x, i, k);
        op.in2 = NULL;
        op.out = x->tile[i * nt + i];
        emit(arg, &op);
        ++ops;
      }
    }
  }
  return ops;
}

/* The compute ops (the kernels of cholesky_kernels.h). */
static APP_UNUSED void cmpi_compute(const cmpi_op *op, int b) {
  switch (op->kind) {
  case CMPI_POTRF: chol_potrf(op->out, b); break;
  case CMPI_TRSM: chol_trsm(op->in1, op->out, b); break;
  case CMPI_SYRK: chol_syrk(op->in1, op->out, b); break;
  case CMPI_GEMM: chol_gemm(op->in1, op->in2, op->out, b); break;
  default: break;
  }
}

/* --- timing, gather and check, result ------------------------------------------------------------ */

/* Returns the b x b tile (i, j) this rank owns, column-major with leading dimension b (packed into
 * scratch if it is not stored that way). */
typedef const double *(*cmpi_tile_fn)(void *arg, long i, long j, double *scratch);

static APP_UNUSED const double *cmpi_own_tile(void *arg, long i, long j, double *scratch) {
  (void)scratch;
  return ((const cmpi_ctx *)arg)->tile[i * ((const cmpi_ctx *)arg)->nt + j];
}

/* Gathers L on rank 0 and checks it there (unless --no-check), fills r->ok and r->error on every
 * rank (rank 0's verdict, broadcast), a failed potrf on any rank included. Collective. */
static APP_UNUSED void cmpi_verify(app_result *r, const cmpi_opts *o, const cmpi_ctx *x, cmpi_tile_fn get,
                                   void *arg, int blas_threads) {
  int failed = __atomic_load_n(&chol_potrf_failed, __ATOMIC_RELAXED), any_failed = 0, ok = 0;
  double error = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, x->comm);
  if (any_failed) __atomic_store_n(&chol_potrf_failed, 1, __ATOMIC_RELAXED);
  if (o->c.check) {
    long b = x->b, nt = x->nt;
    int count = (int)(b * b);
    double *scratch = (double *)cmpi_alloc((size_t)count * sizeof(double));
    if (x->rank == 0) {
      chol_matrix a, l;
      chol_alloc(&a, &o->c);
      chol_alloc(&l, &o->c);
      chol_generate(&a);
      /* Every owner sends its tiles in this same order: no message waits on a later one. */
      for (long j = 0; j < nt; ++j)
        for (long i = j; i < nt; ++i) {
          int owner = cmpi_owner(x, i, j);
          if (owner == 0)
            chol_copy_tile(chol_tile(&l, i, j), get(arg, i, j, scratch), b);
          else
            MPI_Recv(chol_tile(&l, i, j), count, MPI_DOUBLE, owner, cmpi_tag(x, i, j), x->comm, MPI_STATUS_IGNORE);
        }
      error = chol_residual(&a, &l, blas_threads);
      free(a.t);
      free(l.t);
    } else {
      for (long j = 0; j < nt; ++j)
        for (long i = j; i < nt; ++i)
          if (cmpi_owner(x, i, j) == x->rank)
            MPI_Send(get(arg, i, j, scratch), count, MPI_DOUBLE, 0, cmpi_tag(x, i, j), x->comm);
    }
    free(scratch);
  }
  ok = x->rank == 0 ? chol_passed(o->c.n, error) : 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, x->comm);
  MPI_Bcast(&error, 1, MPI_DOUBLE, 0, x->comm);
  r->ok = ok;
  r->error = error;
}

/* app=cholesky-mpi, ranks=; extra (e.g. "grid=2x1 ...") must outlive the print. threads: per rank. */
static APP_UNUSED void cmpi_result_init(app_result *r, const cmpi_opts *o, const cmpi_ctx *x, const char *runtime,
                                        int threads, const char *extra) {
  chol_result_init(r, &o->c, runtime, threads);
  r->app = "cholesky-mpi";
  r->ranks = x->size;
  r->extra = extra;
}

#endif /* WEFT_BENCH_CHOLESKY_MPI_H */
