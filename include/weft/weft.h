/* weft — task-graph runtime. C API: the ABI weft promises.
 *
 * A task is created, given accesses (dependences) and a priority, then submitted. Accesses order a
 * task after earlier sibling tasks (tasks created by the same parent) that touch the same address,
 * with OpenMP 5.2 semantics. Every call returns a weft_status (0 = WEFT_OK) or, for the calls that
 * return a pointer, NULL with the reason in weft_last_error(). */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1

typedef enum weft_status {
  WEFT_OK = 0,
  WEFT_ERR_INVALID_ARGUMENT = 1, /* a null or out-of-range argument */
  WEFT_ERR_ALREADY_SUBMITTED = 2, /* depend/priority/submit on a task already submitted */
  WEFT_ERR_NOT_INITIALIZED = 3,  /* a call that needs a running runtime before weft_init */
  WEFT_ERR_NO_TASKGROUP = 4,     /* weft_taskgroup_end without a matching begin */
  WEFT_ERR_NOT_A_WORKER = 5,     /* a task call from a thread that is not a weft worker */
  WEFT_ERR_OUT_OF_MEMORY = 6,
  WEFT_ERR_TASK_FAILED = 7,      /* a child reported an error: fetch it with weft_take_error */
  WEFT_ERR_BUSY = 8,             /* finalize inside a task or on another thread than init's */
  WEFT_ERR_ARGS_TOO_LARGE = 9,   /* argument block over WEFT_MAX_ARGS_SIZE */
  WEFT_ERR_EVENT_FULFILLED = 10, /* weft_event_fulfill on an event already fulfilled (count times) */
  WEFT_ERR_EVENT_BOUND = 11,     /* weft_event_bind on an event already bound to a task */
  WEFT_ERR_STALLED = 12,         /* finalize: tasks wait on events nobody fulfilled (see stderr) */
  WEFT_ERR_GRAPH_CHANGED = 13,   /* a persistent graph's iteration differs from its recording */
  WEFT_ERR_GRAPH_STATE = 14      /* graph call out of order: iteration/end without begin, begin twice */
} weft_status;

/* Dependence types, OpenMP 5.2 semantics among sibling tasks. */
typedef enum weft_dep_type {
  WEFT_DEP_IN = 1,
  WEFT_DEP_OUT = 2,
  WEFT_DEP_INOUT = 3,           /* same ordering as OUT */
  WEFT_DEP_MUTEXINOUTSET = 4,   /* members run in any order but never at the same time */
  WEFT_DEP_INOUTSET = 5         /* members run concurrently, ordered against everything else */
} weft_dep_type;

/* Task flags (bitwise or). */
enum {
  WEFT_TASK_DEFAULT = 0,
  WEFT_TASK_UNDEFERRED = 1, /* run at submit on the submitting thread once its dependences are met */
  WEFT_TASK_TIED = 2        /* once started, resumes only on the worker it started on after a wait */
};

/* Largest argument block copied into a task; blocks up to WEFT_INLINE_ARGS_SIZE live inside the
 * task descriptor, larger ones in a pooled side buffer. */
#define WEFT_INLINE_ARGS_SIZE 64
#define WEFT_MAX_ARGS_SIZE 65536

typedef struct weft_task weft_task_t;
typedef void (*weft_task_fn)(void *args);

/* --- lifetime --------------------------------------------------------------------------------- */

/* Starts the workers (one per core of the affinity mask, or WEFT_NUM_THREADS). The calling thread
 * becomes worker 0. Idempotent: a second call returns WEFT_OK. Implicit on the first task call. */
WEFT_API int weft_init(void);
/* Waits for every task, stops the workers. Called from atexit too. WEFT_ERR_BUSY inside a task.
 * WEFT_ERR_TASK_FAILED (after stopping, with a message on stderr) when a task of the main program
 * reported an error, or threw, and nothing collected it. */
WEFT_API int weft_finalize(void);
WEFT_API int weft_initialized(void);

/* --- tasks ------------------------------------------------------------------------------------ */

/* Creates a task that will run fn(args_copy). args_size bytes are copied from args; args may be
 * NULL with args_size > 0 to leave the block uninitialised for the caller to fill through
 * weft_task_args before submitting. Returns NULL on error (see weft_last_error). */
WEFT_API weft_task_t *weft_task_create(weft_task_fn fn, const void *args, size_t args_size,
                                       unsigned flags);
/* The task's argument block (valid until the task finishes running). */
WEFT_API void *weft_task_args(weft_task_t *task);
/* Declares an access. len is informative (traces); ordering is by address. */
WEFT_API int weft_task_depend(weft_task_t *task, weft_dep_type type, const void *addr, size_t len);
/* 0 (default) .. weft_max_priority(); higher runs first. Larger values are clamped. */
WEFT_API int weft_task_set_priority(weft_task_t *task, int priority);
/* The task's priority: on a task being built, or on weft_task_self() (where it shows the level
 * priority propagation gave it). -1 with WEFT_ERR_INVALID_ARGUMENT on NULL. */
WEFT_API int weft_task_get_priority(const weft_task_t *task);

/* Priority propagation toward predecessors: a task whose result another process waits for (it
 * posts an MPI send) runs early, and so do the unfinished tasks it depends on (communication-aware
 * scheduling; task-aware MPI selects a mode with WEFT_MPI_PRIORITY). Process-wide; applies to
 * tasks submitted after the call. Persistent graphs take their levels from their recording. */
enum {
  WEFT_PRIORITY_AS_GIVEN = 0, /* default: priorities as set (MA-1 when the program marks its sends) */
  WEFT_PRIORITY_NONE = 1,     /* every task at priority 0: FIFO order, the baseline */
  WEFT_PRIORITY_PATH = 2,     /* a task given a priority raises its unfinished predecessors,
                                 transitively, to at least 1 (MA-2) */
  WEFT_PRIORITY_DEPTH = 3,    /* a task given a priority runs at weft_max_priority(); an unfinished
                                 predecessor d edges above it gets at least max - d (Algorithm 1; SA) */
  WEFT_PRIORITY_DETECT = 4    /* DEPTH with the marked tasks found by the runtime, without hints: a
                                 task submitted with the function, parent and number of predecessors
                                 of one that called weft_task_report_send (FA); the program's own
                                 priorities are ignored */
};
WEFT_API int weft_set_priority_propagation(int mode);
WEFT_API int weft_priority_propagation(void);
/* The running task posted a send (task-aware MPI calls it): its profile is remembered for
 * WEFT_PRIORITY_DETECT. WEFT_ERR_INVALID_ARGUMENT when task is not the caller's running task. */
WEFT_API int weft_task_report_send(weft_task_t *task);
/* Frees a task that was created but not submitted (its body never runs). */
WEFT_API int weft_task_discard(weft_task_t *task);
/* Hands the task to the runtime. The handle must not be used afterwards: a call on it returns
 * WEFT_ERR_ALREADY_SUBMITTED while the descriptor has not been recycled, and
 * WEFT_ERR_INVALID_ARGUMENT once it serves another task not yet submitted (a stamp in the handle,
 * 16 bits: a recycled descriptor goes unnoticed with odds of 1 in 32,768). */
WEFT_API int weft_task_submit(weft_task_t *task);

/* Waits for the children of the current task (or of the main program). The waiting worker runs
 * other ready tasks meanwhile. Returns WEFT_ERR_TASK_FAILED when a child reported an error. */
WEFT_API int weft_taskwait(void);
/* A taskgroup waits for every descendant created inside it. Groups nest. */
WEFT_API int weft_taskgroup_begin(void);
WEFT_API int weft_taskgroup_end(void);

/* Reports a failure of the running task to its parent: payload is handed to the parent's next
 * taskwait (or taskgroup end), which returns WEFT_ERR_TASK_FAILED; the parent claims the payload with
 * weft_take_error. Only the first report per wait is kept; later payloads are passed to release. */
WEFT_API int weft_report_error(void *payload, void (*release)(void *payload));
/* Claims the payload of the last WEFT_ERR_TASK_FAILED seen by this task (NULL if none) and, when
 * release is not NULL, the function the child passed with it (so a caller can tell its own kind of
 * payload from another language's, and free what it does not understand). */
WEFT_API void *weft_take_error(void (**release)(void *payload));

/* --- suspension: events, yielding, pollers ----------------------------------------------------
 * A task that waits (taskwait, an event, an undeferred child) gives its core back: its stack is set
 * aside and the worker runs other tasks; the task resumes on whichever worker picks it up (the
 * same one for WEFT_TASK_TIED tasks). A task that never waits pays nothing for this. */
typedef struct weft_event weft_event_t;
/* An event fulfilled by `count` calls of weft_event_fulfill (count >= 1). NULL on error. */
WEFT_API weft_event_t *weft_event_create(unsigned count);
/* From any thread, a poller or a task. WEFT_ERR_EVENT_FULFILLED past the count. */
WEFT_API int weft_event_fulfill(weft_event_t *event);
/* The same, async-signal-safe: lock-free steps only; a worker finishes the completion. */
WEFT_API int weft_event_fulfill_from_signal(weft_event_t *event);
/* A failed outside operation: reports payload for the task bound to the event (as that task's own
 * weft_report_error would: its parent's taskwait returns WEFT_ERR_TASK_FAILED), then fulfils the
 * event. For a layer whose poller finds the error after the task's body returned (the GPU layer's
 * iwait). With no task bound, payload is released and the event fulfilled. */
WEFT_API int weft_event_fail(weft_event_t *event, void *payload, void (*release)(void *payload));
/* 1 when fulfilled, 0 when not, or a negative weft_status. */
WEFT_API int weft_event_test(weft_event_t *event);
/* Suspends the calling task (or main program) until the event is fulfilled. */
WEFT_API int weft_event_wait(weft_event_t *event);
/* Binds the event to the calling task's completion: the task's body may return at once, but its
 * successors, taskwait and taskgroup see it complete only once the event is fulfilled. One task
 * per event (WEFT_ERR_EVENT_BOUND); a task may bind several events. */
WEFT_API int weft_event_bind(weft_event_t *event);
/* Releases the creator's reference: the event is freed once fulfilled (now, if it is). */
WEFT_API int weft_event_destroy(weft_event_t *event);
/* A scheduling point: other ready tasks may run before the caller continues. */
WEFT_API int weft_taskyield(void);

typedef struct weft_poller weft_poller_t;
/* fn(arg) returns non-zero when it made progress (completed a request, fulfilled an event). */
typedef int (*weft_poller_fn)(void *arg);
/* Registers fn: workers call it at scheduling points and while idle, never two at once. At most
 * 64 pollers; NULL when full or fn is NULL. Works before weft_init too, and the poller stays
 * registered across weft_finalize and a later weft_init, until weft_poller_unregister. */
WEFT_API weft_poller_t *weft_poller_register(weft_poller_fn fn, void *arg);
/* After it returns, fn is not running and will not be called again. Not from inside fn. */
WEFT_API int weft_poller_unregister(weft_poller_t *poller);
/* pending != 0: the poller waits for outside completions (requests in flight), so idle workers keep
 * calling it instead of sleeping between calls (a completion then resumes its task within
 * microseconds); 0 once nothing is in flight. From fn itself or any thread. */
WEFT_API int weft_poller_set_pending(weft_poller_t *poller, int pending);

/* --- persistent task graphs ------------------------------------------------------------------
 * Between weft_graph_begin and weft_graph_end, the tasks that the calling task (or main program)
 * creates in a loop are recorded once and replayed: no allocation and no dependence processing
 * for the replayed tasks, and no barrier between iterations (edges from one iteration to the next
 * are recorded too, so a task starts as soon as its own predecessors are done).
 *
 *   weft_graph_begin();
 *   for (int it = 0; it < steps; ++it) {
 *     weft_graph_iteration();          // at the top of every iteration, the first included
 *     ... create tasks as usual ...
 *   }
 *   weft_graph_end();                  // waits for every task of the graph
 *
 * Re-execute mode (default): the loop body runs every iteration; iteration 0 is recorded (its
 * tasks run as usual, then wait for each other once), later iterations are matched task by task
 * against the recording and only their argument blocks are copied (so firstprivate values may
 * change). Taskiter mode: the body runs for `unroll` iterations only (the recording); then
 * weft_graph_end replays it for the remaining iterations, or while `condition` holds.
 * `unroll` > 1 records several iterations as one round, for loops whose accesses repeat every
 * `unroll` iterations (pointer swapping). An iteration whose tasks, functions or accesses differ
 * from the recording is detected: the graph is recorded again (WEFT_GRAPH_ON_CHANGE=rerecord,
 * default) or the call returns WEFT_ERR_GRAPH_CHANGED and the graph stops replaying (=error).
 * Tasks of a graph may not be undeferred; mutexinoutset accesses replay as inout (one valid order).
 * Children created inside a replayed task are ordinary tasks. */
typedef enum weft_graph_mode {
  WEFT_GRAPH_REEXECUTE = 0,
  WEFT_GRAPH_TASKITER = 1,
  WEFT_GRAPH_DISTRIBUTED = 2  /* taskiter over MPI ranks: link libweft-dist (weft/dist.h, docs/dist.md) */
} weft_graph_mode;
typedef enum weft_graph_policy {
  WEFT_GRAPH_POLICY_DEFAULT = 0,        /* WEFT_GRAPH_POLICY, else immediate successor */
  WEFT_GRAPH_IMMEDIATE_SUCCESSOR = 1,   /* a finished task's first released successor runs next */
  WEFT_GRAPH_ITERATION_PRIORITY = 2     /* ready tasks run in readiness order: older iterations first */
} weft_graph_policy;
typedef enum weft_graph_on_change {
  WEFT_GRAPH_ON_CHANGE_DEFAULT = 0,     /* WEFT_GRAPH_ON_CHANGE, else rerecord */
  WEFT_GRAPH_RERECORD = 1,
  WEFT_GRAPH_ERROR = 2
} weft_graph_on_change;

typedef struct weft_graph_options {
  int mode;                      /* weft_graph_mode */
  int unroll;                    /* loop iterations per recorded round (0 or 1: one) */
  long iterations;               /* taskiter: loop iterations in all, recorded ones included;
                                    -1: until condition returns 0 */
  int (*condition)(void *arg);   /* taskiter: called after each round once all its tasks are done
                                    (the control task); 0 ends the loop. NULL: none */
  void *condition_arg;
  int policy;                    /* weft_graph_policy */
  int lookahead;                 /* rounds the producer may run ahead of the oldest unfinished
                                    one, 1..6; 0: WEFT_GRAPH_LOOKAHEAD, else chosen per graph
                                    (docs/api.md) */
  int on_change;                 /* weft_graph_on_change */
  int barrier;                   /* non-zero: each round waits for the previous (for comparisons) */
} weft_graph_options_t;

/* Opens a graph on the calling task in re-execute mode with the defaults. WEFT_ERR_GRAPH_STATE when
 * one is open already. */
WEFT_API int weft_graph_begin(void);
/* The same with options (NULL: defaults). WEFT_ERR_INVALID_ARGUMENT names nothing: the message on
 * stderr names the field. */
WEFT_API int weft_graph_begin_with(const weft_graph_options_t *options);
/* Starts the next loop iteration of the open graph. */
WEFT_API int weft_graph_iteration(void);
/* Taskiter: runs the remaining iterations. Then waits for every task of the graph and closes it. */
WEFT_API int weft_graph_end(void);

/* --- graph layers: libraries that build a graph mode on weft (libweft-dist is one) -------------
 * A layer registers once for its mode (WEFT_GRAPH_DISTRIBUTED is the only such mode). From then on
 * weft_graph_begin_with with that mode calls the layer's open(options); until weft_graph_end the
 * tasks the calling task submits are not run: each is handed to record() at its submit and freed,
 * and weft_graph_iteration counts the round's iterations (unroll at most). weft_graph_end closes
 * the graph on the caller and returns run(state): the layer runs the loop itself, typically as a
 * taskiter graph of tasks made again with weft_task_create_recorded. */
typedef struct weft_recorded_access {
  const void *address;
  int type;                        /* weft_dep_type */
} weft_recorded_access_t;
typedef struct weft_recorded_task {
  weft_task_fn fn;
  const void *args;                /* valid during record() only */
  size_t args_size;
  unsigned flags;                  /* WEFT_TASK_* */
  int priority;
  int iteration;                   /* within the round: 0 .. unroll-1 */
  int access_count;
  const weft_recorded_access_t *accesses;  /* in declaration order; during record() only */
  uint32_t door;                   /* the creating door's own state of the task: hand it back */
} weft_recorded_task_t;
typedef struct weft_graph_layer {
  /* NULL refuses the graph (the layer says why on stderr): weft_graph_begin_with returns
   * WEFT_ERR_INVALID_ARGUMENT. */
  void *(*open)(const weft_graph_options_t *options);
  /* task: the handle its creator used (an identity only). The status is weft_task_submit's. */
  int (*record)(void *state, const weft_task_t *task, const weft_recorded_task_t *recorded);
  /* Runs the loop and frees state; the status is weft_graph_end's. */
  int (*run)(void *state);
} weft_graph_layer_t;
/* WEFT_ERR_INVALID_ARGUMENT for a mode that takes no layer. The layer must outlive its graphs. */
WEFT_API int weft_graph_set_layer(int mode, const weft_graph_layer_t *layer);
/* A task made as recorded (function, a copy of the arguments, flags, priority, accesses, the
 * door's state), not yet submitted: more accesses may be added. NULL on error. */
WEFT_API weft_task_t *weft_task_create_recorded(const weft_recorded_task_t *recorded);

/* --- tracing -----------------------------------------------------------------------------------
 * WEFT_TRACE=<file> records what the runtime does (docs/trace-format.md; tools/weft-trace reads it).
 * These calls cost a branch when tracing is off, and are safe to leave in production code. */

/* Names the task's kind in a trace (default: its function's symbol). Before submit. label is
 * copied when tracing is on. */
WEFT_API int weft_task_set_label(weft_task_t *task, const char *label);
/* 1 while a trace is being recorded. */
WEFT_API int weft_trace_enabled(void);
/* Names this process's place in a distributed run (task-aware MPI calls it at MPI_Init): the trace
 * header records it, a "%r" in WEFT_TRACE becomes the rank, and without "%r" a run of several
 * ranks writes <path>.<rank>. Any time before the trace is written. */
WEFT_API int weft_trace_set_rank(int rank, int ranks);

typedef enum weft_trace_category {
  WEFT_TRACE_COMMUNICATION = 1, /* intervals counted by the overlap analysis (MPI requests) */
  WEFT_TRACE_GPU = 2,
  WEFT_TRACE_USER = 3
} weft_trace_category;
/* A number for a named kind of interval or mark (the same name and category give the same number).
 * 0 when tracing is off or on bad arguments. */
WEFT_API uint32_t weft_trace_kind(const char *name, weft_trace_category category);
/* An interval, from any thread: begin and end with the same kind and id form one interval (an
 * MPI request posted by one task and completed by a poller). value is free (bytes, a peer). */
WEFT_API void weft_trace_begin(uint32_t kind, uint64_t id, uint64_t value);
WEFT_API void weft_trace_end(uint32_t kind, uint64_t id, uint64_t value);
/* An instant event. */
WEFT_API void weft_trace_mark(uint32_t kind, uint64_t value);

/* --- queries ---------------------------------------------------------------------------------- */

WEFT_API int weft_num_workers(void);
/* Index of the calling worker (0..n-1), or -1 on a thread that is not a worker. */
WEFT_API int weft_worker_id(void);
/* The task whose body the caller is running (either door), or NULL outside a task: the main
 * program, an OpenMP implicit task, a thread that is not a worker. An identity only (a layer that
 * blocks inside tasks, like task-aware MPI, asks it); it stays valid while the body runs. */
WEFT_API weft_task_t *weft_task_self(void);
WEFT_API int weft_max_priority(void);
/* Status of the last failed call on this thread. */
WEFT_API int weft_last_error(void);
WEFT_API const char *weft_strerror(int status);

typedef struct weft_stats {
  uint64_t tasks_created;
  uint64_t tasks_completed;
  uint64_t edges_created;
  uint64_t edges_elided;      /* duplicate edges between the same pair, not created */
  uint64_t edges_pruned;      /* edges to a predecessor that had already completed */
  uint64_t redirect_nodes;    /* empty nodes joining inoutset sets to later accesses */
  uint64_t steals;
  uint64_t throttle_waits;    /* times a producer ran work instead of creating over a bound */
  uint64_t max_live_tasks;    /* approximate high-water mark of live tasks (sampled by producers:
                                 their own unfinished children, or all live tasks once those are many) */
  uint64_t task_bytes;        /* bytes of one task descriptor */
  uint64_t suspensions;       /* contexts set aside by a blocking task (parked or yielded) */
  uint64_t resumes;
  uint64_t fibers;            /* fiber stacks made so far */
  uint64_t graph_replayed;    /* tasks run from a persistent graph's recording */
  uint64_t graph_recordings;  /* persistent graph rounds recorded (first ones and re-recordings) */
} weft_stats_t;
/* Sums the per-worker counters. Exact when no task is running. */
WEFT_API int weft_get_stats(weft_stats_t *stats);
WEFT_API int weft_reset_stats(void);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_WEFT_H */
