/* cholesky_mpi_omp: distributed tiled Cholesky (cholesky_mpi.h) as OpenMP tasks, MPI inside tasks.
 * gcc -O2 -fopenmp, linked to MPI and never to weft: one binary run on libgomp, on LLVM libomp
 * (LD_PRELOAD=libomp.so.5) and on weft (libweft.so, with libweft-mpi for task-aware MPI, preloaded).
 *
 *   blocking  send tasks call MPI_Send, recv tasks MPI_Recv, inside `#pragma omp task depend(...)`.
 *             A blocked call holds its thread, and a recv task is ready as soon as it is created
 *             (it only writes its own buffer): threads that pick recvs of later tiles wait on
 *             messages whose senders wait too, and nothing is left to run the send that would
 *             unblock them. Seen here (2 and 4 ranks): libgomp, which takes the oldest ready task,
 *             deadlocks with 1, 2 and 4 threads per rank; LLVM libomp deadlocks with 2, and finishes
 *             with 1 (a team of one runs each task at its creation, i.e. in the walk's order, the
 *             same on every rank). The harness records the timeouts; weft's task-aware MPI
 *             (libweft-mpi preloaded) suspends the blocked task instead and finishes.
 *   detach    send/recv tasks with detach(ev) post MPI_Isend/MPI_Irecv and return; ev is fulfilled
 *             when the request completes, by weft_mpi_detach when the process has it (weft with
 *             libweft-mpi: found with dlsym) or else by a progress thread of this program (MPI_Testsome
 *             over the pending requests, omp_fulfill_event, 20 us sleeps when nothing completed).
 *             The RESULT line says which: progress=weft-mpi or progress=thread. A runtime whose
 *             GOMP_task ignores detach (LLVM libomp 14's GOMP layer: the event stays 0) is found
 *             by a probe task before anything else: the program says so and exits 3.
 *   blocking-serial  blocking, with every send and recv task also depend(inout) on one sentinel:
 *             they run one at a time, in the order of the walk, which is the same on every rank, so
 *             a blocked call always waits on a message its peer is about to post (the usual way
 *             around the deadlock without task-aware MPI, at the cost of any overlap between
 *             messages). Not in the list; a baseline that finishes on libgomp and libomp.
 *
 * One parallel region per repetition; inside `single`: MPI_Barrier, the clock, the walk of
 * cholesky_mpi.h as tasks, taskwait, the clock. The time is the slowest rank's; tasks = the sum over
 * the ranks of the tasks created (compute, send and recv), edges = weft's, summed, when every rank
 * runs on weft. --mark-sends gives send tasks priority(1) (libgomp and libomp honour it only with
 * OMP_MAX_TASK_PRIORITY >= 1). BLAS inside tasks is single-threaded. */
#include <omp.h>
#include <pthread.h>

#include "cholesky_mpi.h"

static const char *const variants[] = {"detach", "blocking", "blocking-serial", NULL};

/* blocking-serial: every send and recv task is inout on it. */
static char comm_sentinel;

typedef struct run_state {
  const cmpi_ctx *x;
  int b, detach, serial, prio;
} run_state;

/* --- progress for the detach variant ---------------------------------------------------------- */

typedef int (*weft_mpi_detach_fn)(MPI_Request *request, MPI_Status *status, uintptr_t omp_event);
static weft_mpi_detach_fn weft_detach;

/* The portable engine: tasks append (request, event) pairs to `incoming` under the lock; the
 * thread moves them to its own arrays and tests those without the lock. */
typedef struct pending {
  MPI_Request req;
  omp_event_handle_t ev;
} pending;

static struct {
  pthread_mutex_t lock;
  pthread_t thread;
  pending *in;
  int in_n, in_cap, stop, running;
} pg = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *grow(void *p, int *cap, int need, size_t elem) {
  if (need <= *cap) return p;
  int c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  p = realloc(p, (size_t)c * elem);
  if (!p) {
    fprintf(stderr, "cholesky_mpi_omp: out of memory in the progress engine\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  *cap = c;
  return p;
}

static void *progress_main(void *arg) {
  MPI_Request *req = NULL;
  omp_event_handle_t *ev = NULL;
  int *done = NULL, n = 0, req_cap = 0, ev_cap = 0, done_cap = 0;
  const struct timespec nap = {0, 20000};
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&pg.lock);
    int stop = pg.stop;
    if (pg.in_n) {
      req = (MPI_Request *)grow(req, &req_cap, n + pg.in_n, sizeof *req);
      ev = (omp_event_handle_t *)grow(ev, &ev_cap, n + pg.in_n, sizeof *ev);
      for (int e = 0; e < pg.in_n; ++e, ++n) req[n] = pg.in[e].req, ev[n] = pg.in[e].ev;
      pg.in_n = 0;
    }
    pthread_mutex_unlock(&pg.lock);
    int completed = 0;
    if (n > 0) {
      done = (int *)grow(done, &done_cap, n, sizeof *done);
      MPI_Testsome(n, req, &completed, done, MPI_STATUSES_IGNORE);
      if (completed == MPI_UNDEFINED) completed = 0;
      for (int c = 0; c < completed; ++c) omp_fulfill_event(ev[done[c]]);
      if (completed > 0) { /* the completed requests are MPI_REQUEST_NULL now */
        int m = 0;
        for (int e = 0; e < n; ++e)
          if (req[e] != MPI_REQUEST_NULL) req[m] = req[e], ev[m++] = ev[e];
        n = m;
      }
    } else if (stop) {
      break;
    }
    if (!completed) nanosleep(&nap, NULL);
  }
  free(req);
  free(ev);
  free(done);
  return NULL;
}

static void progress_start(void) {
  if (pthread_create(&pg.thread, NULL, progress_main, NULL) != 0) {
    fprintf(stderr, "cholesky_mpi_omp: cannot start the progress thread\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  pg.running = 1;
}

/* After the last taskwait: nothing is pending any more. */
static void progress_stop(void) {
  if (!pg.running) return;
  pthread_mutex_lock(&pg.lock);
  pg.stop = 1;
  pthread_mutex_unlock(&pg.lock);
  pthread_join(pg.thread, NULL);
  free(pg.in);
  pg.running = 0;
}

/* The detached task's event is fulfilled once *req completes. */
static void progress_attach(MPI_Request *req, omp_event_handle_t ev) {
  if (!ev) { /* the probe in main makes this unreachable */
    fprintf(stderr, "cholesky_mpi_omp: the OpenMP runtime did not set the detach event\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (weft_detach) {
    int rc = weft_detach(req, MPI_STATUS_IGNORE, (uintptr_t)ev);
    if (rc != MPI_SUCCESS) {
      fprintf(stderr, "cholesky_mpi_omp: weft_mpi_detach failed (%d)\n", rc);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return;
  }
  pthread_mutex_lock(&pg.lock);
  pg.in = (pending *)grow(pg.in, &pg.in_cap, pg.in_n + 1, sizeof *pg.in);
  pg.in[pg.in_n].req = *req;
  pg.in[pg.in_n++].ev = ev;
  pthread_mutex_unlock(&pg.lock);
}

/* --- the tasks ---------------------------------------------------------------------------------- */

static void emit_task(void *arg, const cmpi_op *op) {
  const run_state *s = (const run_state *)arg;
  MPI_Comm comm = s->x->comm;
  int b = s->b, count = b * b, peer = op->peer, tag = op->tag, prio = s->prio;
  double *t = op->out; /* the tile written: inout, or the receive buffer: out */
  const double *in1 = op->in1, *in2 = op->in2;
  switch (op->kind) {
  case CMPI_POTRF:
#pragma omp task depend(inout : t[0]) firstprivate(t, b)
    chol_potrf(t, b);
    break;
  case CMPI_TRSM:
#pragma omp task depend(in : in1[0]) depend(inout : t[0]) firstprivate(in1, t, b)
    chol_trsm(in1, t, b);
    break;
  case CMPI_SYRK:
#pragma omp task depend(in : in1[0]) depend(inout : t[0]) firstprivate(in1, t, b)
    chol_syrk(in1, t, b);
    break;
  case CMPI_GEMM:
#pragma omp task depend(in : in1[0], in2[0]) depend(inout : t[0]) firstprivate(in1, in2, t, b)
    chol_gemm(in1, in2, t, b);
    break;
  case CMPI_SEND:
    if (s->detach) {
      omp_event_handle_t ev = (omp_event_handle_t)0; /* stays 0 where GOMP_task ignores detach */
#pragma omp task depend(in : in1[0]) detach(ev) priority(prio) firstprivate(in1, count, peer, tag, comm)
      {
        MPI_Request req;
        MPI_Isend(in1, count, MPI_DOUBLE, peer, tag, comm, &req);
        progress_attach(&req, ev);
      }
    } else if (s->serial) {
#pragma omp task depend(in : in1[0]) depend(inout : comm_sentinel) priority(prio) \
    firstprivate(in1, count, peer, tag, comm)
      MPI_Send(in1, count, MPI_DOUBLE, peer, tag, comm);
    } else {
#pragma omp task depend(in : in1[0]) priority(prio) firstprivate(in1, count, peer, tag, comm)
      MPI_Send(in1, count, MPI_DOUBLE, peer, tag, comm);
    }
    break;
  case CMPI_RECV:
    if (s->detach) {
      omp_event_handle_t ev = (omp_event_handle_t)0;
#pragma omp task depend(out : t[0]) detach(ev) firstprivate(t, count, peer, tag, comm)
      {
        MPI_Request req;
        MPI_Irecv(t, count, MPI_DOUBLE, peer, tag, comm, &req);
        progress_attach(&req, ev);
      }
    } else if (s->serial) {
#pragma omp task depend(out : t[0]) depend(inout : comm_sentinel) firstprivate(t, count, peer, tag, comm)
      MPI_Recv(t, count, MPI_DOUBLE, peer, tag, comm, MPI_STATUS_IGNORE);
    } else {
#pragma omp task depend(out : t[0]) firstprivate(t, count, peer, tag, comm)
      MPI_Recv(t, count, MPI_DOUBLE, peer, tag, comm, MPI_STATUS_IGNORE);
    }
    break;
  }
}

/* 1 when the runtime answering GOMP_task sets a detach event (LLVM libomp 14's GOMP layer ignores
 * the clause: the task's copy of the event stays 0 and fulfilling it crashes). */
static int detach_supported(void) {
  uintptr_t seen = 0;
#pragma omp parallel
#pragma omp single
  {
    omp_event_handle_t ev = (omp_event_handle_t)0;
#pragma omp task detach(ev) shared(seen)
    {
      seen = (uintptr_t)ev;
      if (ev) omp_fulfill_event(ev);
    }
#pragma omp taskwait
  }
  return seen != 0;
}

static long long weft_edges(void) {
  weft_stats_t s;
  return app_weft_stats(&s) == 0 ? (long long)s.edges_created : -1;
}

static int run(const cmpi_opts *o, cmpi_ctx *x, const char *extra) {
  run_state s = {x, (int)x->b, strcmp(o->c.variant, "detach") == 0, strcmp(o->c.variant, "blocking-serial") == 0,
                 o->mark_sends ? 1 : 0};
  int failed = 0;
  for (int rep = 0; rep < o->c.reps; ++rep) {
    double t0 = 0, t1 = 0;
    long long tasks = 0;
    int threads = 0;
    app_result r;
    cmpi_generate(x);
    app_weft_reset_stats();
#pragma omp parallel
#pragma omp single
    {
      threads = omp_get_num_threads();
      MPI_Barrier(x->comm);
      t0 = app_now();
      tasks = cmpi_walk(x, emit_task, &s);
#pragma omp taskwait
      t1 = app_now();
    }
    double seconds = app_mpi_max_time(x->comm, t1 - t0);
    long long all_tasks = app_mpi_sum_known1(x->comm, tasks), edges = app_mpi_sum_known1(x->comm, weft_edges());
    cmpi_result_init(&r, o, x, app_omp_runtime(), threads, extra);
    r.seconds = seconds;
    r.gflops = chol_gflops(o->c.n, seconds, 1);
    r.tasks = all_tasks;
    r.edges = edges;
    cmpi_verify(&r, o, x, cmpi_own_tile, x, threads);
    if (x->rank == 0) app_print_result(&r);
    failed |= !r.ok;
  }
  return failed;
}

int main(int argc, char **argv) {
  cmpi_opts o;
  cmpi_ctx x;
  char extra[128];
  app_mpi_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, "cholesky_mpi_omp", "MPI from tasks on any thread");
  cmpi_parse(argc, argv, "cholesky_mpi_omp", variants, CMPI_OPT_MARK_SENDS, &o);
  cmpi_grid_init(&x, &o, MPI_COMM_WORLD, "cholesky_mpi_omp");
  app_blas_threads(1);
  if (o.c.threads > 0) omp_set_num_threads(o.c.threads);
  const char *progress = "-";
  if (!strcmp(o.c.variant, "detach")) {
    int ok = detach_supported(), all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
      if (x.rank == 0)
        fprintf(stderr, "cholesky_mpi_omp: --variant detach is unsupported on this OpenMP runtime (%s): its "
                "GOMP_task ignores detach (LLVM libomp 14 does)\n", app_omp_runtime());
      MPI_Finalize();
      return 3;
    }
    weft_detach = (weft_mpi_detach_fn)dlsym(RTLD_DEFAULT, "weft_mpi_detach");
    progress = weft_detach ? "weft-mpi" : "thread";
    if (!weft_detach) progress_start();
  }
  snprintf(extra, sizeof extra, "grid=%dx%d progress=%s mark_sends=%d", o.P, o.Q, progress, o.mark_sends);
  cmpi_tiles_init(&x);
#pragma omp parallel
  { /* warm-up: the team exists before the first timed region */
  }
  int failed = run(&o, &x, extra);
  progress_stop();
  cmpi_tiles_free(&x);
  MPI_Finalize();
  return failed ? 1 : 0;
}
