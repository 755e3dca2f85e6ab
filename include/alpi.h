/* alpi.h — the ALPI task interface (version 1.2) as libweft exports it.
 *
 * ALPI is a small C interface that task-aware libraries (TAMPI, TACUDA, ...) find at run time in
 * the tasking runtime they run on, with dlsym. The names, the values of the constants and the
 * signatures below are the interface's own, so that such a library builds against this header and
 * runs on weft; the comments describe weft's behaviour (docs/alpi.md has the details).
 *
 * Every function returns ALPI_SUCCESS (0) or one of the alpi_error_t codes, except
 * alpi_error_string. A task handle is opaque: never dereference it. */
#ifndef WEFT_ALPI_H
#define WEFT_ALPI_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define ALPI_API __attribute__((visibility("default")))
#else
#define ALPI_API
#endif

/* Interface version implemented. A caller built against major M, minor m can use a runtime of the
 * same major whose minor is m or newer. */
#define ALPI_VERSION_MAJOR 1
#define ALPI_VERSION_MINOR 2

/* Optional parts of the interface, for alpi_feature_check (bits). */
#define ALPI_FEATURE_BLOCKING (1 << 0)  /* alpi_task_block / alpi_task_unblock */
#define ALPI_FEATURE_EVENTS (1 << 1)    /* alpi_task_events_* */
#define ALPI_FEATURE_RESOURCES (1 << 2) /* alpi_cpu_* */
#define ALPI_FEATURE_SUSPEND (1 << 3)   /* alpi_task_suspend*: not provided by weft */

#ifdef __cplusplus
extern "C" {
#endif

struct alpi_task; /* a task handle */
struct alpi_attr; /* task attributes for alpi_task_spawn */

typedef enum {
  ALPI_SUCCESS = 0,
  ALPI_ERR_VERSION,         /* the caller's version is not compatible */
  ALPI_ERR_NOT_INITIALIZED, /* the runtime is not running */
  ALPI_ERR_PARAMETER,       /* a null pointer, a wrong handle or a value out of range */
  ALPI_ERR_OUT_OF_MEMORY,
  ALPI_ERR_OUTSIDE_TASK,    /* the call needs a running task and the caller is not one */
  ALPI_ERR_UNKNOWN,         /* an internal error */
  ALPI_ERR_FEATURE_UNKNOWN, /* an optional feature that is not provided */
  ALPI_ERR_MAX              /* one past the last code */
} alpi_error_t;

typedef enum {
  ALPI_INFO_RUNTIME_NAME,
  ALPI_INFO_RUNTIME_VENDOR,
  ALPI_INFO_VERSION
} alpi_info_t;

/* What ALPI_FEATURE_SUSPEND would add (declared for source compatibility). */
typedef enum {
  ALPI_SUSPEND_NONE = 0,
  ALPI_SUSPEND_SUBMIT,
  ALPI_SUSPEND_TIMEOUT_SUBMIT,
  ALPI_SUSPEND_EVENT_SUBMIT
} alpi_suspend_mode_t;

/* --- errors, versions, features ------------------------------------------------------------- */

/* A static description of an error code (an unknown code has one too). */
ALPI_API const char *alpi_error_string(alpi_error_t error);
/* Writes a NUL-terminated string (truncated to max_length bytes) and, when length is not NULL, the
 * length the full string has. */
ALPI_API int alpi_info_get(alpi_info_t query, char *buffer, size_t max_length, int *length);
/* ALPI_SUCCESS when every bit of feature_bitmask is provided, else ALPI_ERR_FEATURE_UNKNOWN. */
ALPI_API int alpi_feature_check(int feature_bitmask);
/* ALPI_ERR_VERSION unless major is ALPI_VERSION_MAJOR and minor <= ALPI_VERSION_MINOR. */
ALPI_API int alpi_version_check(int major, int minor);
ALPI_API int alpi_version_get(int *major, int *minor);

/* --- tasks ------------------------------------------------------------------------------------ */

/* The calling task's handle, or NULL outside a task (main program, OpenMP implicit task, a thread
 * that is not a weft worker). */
ALPI_API int alpi_task_self(struct alpi_task **task);
/* Suspends the calling task (its core runs other tasks) until alpi_task_unblock(task); returns at
 * once when that unblock came first. task must be the caller's own handle. */
ALPI_API int alpi_task_block(struct alpi_task *task);
/* From any thread. At most one unblock may come before its block. */
ALPI_API int alpi_task_unblock(struct alpi_task *task);
/* Suspends the caller for at least target_ns nanoseconds without holding its core; writes the
 * time it waited to *actual_ns when actual_ns is not NULL. 0: a scheduling point. */
ALPI_API int alpi_task_waitfor_ns(uint64_t target_ns, uint64_t *actual_ns);
/* Adds increment to the calling task's event counter: the task completes (releases its
 * successors, ends the wait of a taskwait) only once its body has returned and the counter is 0. */
ALPI_API int alpi_task_events_increase(struct alpi_task *task, uint64_t increment);
/* *has_events = 1 while the calling task's counter is not 0, else 0. */
ALPI_API int alpi_task_events_test(struct alpi_task *task, uint64_t *has_events);
/* From any thread: takes decrement from the counter (ALPI_ERR_PARAMETER when that would go below
 * zero). The decrease that reaches 0 completes the task if its body has returned. */
ALPI_API int alpi_task_events_decrease(struct alpi_task *task, uint64_t decrement);

/* --- spawned tasks ---------------------------------------------------------------------------- */

/* Attributes carry nothing yet: alpi_attr_size gives 0. */
ALPI_API int alpi_attr_create(struct alpi_attr **attr);
ALPI_API int alpi_attr_destroy(struct alpi_attr *attr);
ALPI_API int alpi_attr_init(struct alpi_attr *attr);
ALPI_API int alpi_attr_size(uint64_t *attr_size);
/* Runs body(body_args) as a task of its own, outside the caller's children (a taskwait of the
 * caller does not wait for it) and with its own dependence namespace; once it has completed
 * (events included), completion_callback(completion_args) runs (when not NULL). label may be NULL;
 * attr may be NULL. Returns once the spawned task has started (the caller's worker runs it when no
 * other worker takes it); a timed wait of the spawned task resumes on the worker it started on.
 * ALPI_ERR_OUTSIDE_TASK on a thread that is not a weft worker (native door). */
ALPI_API int alpi_task_spawn(void (*body)(void *), void *body_args, void (*completion_callback)(void *),
                             void *completion_args, const char *label, const struct alpi_attr *attr);

/* --- resources -------------------------------------------------------------------------------- */

/* The number of weft workers (starting the runtime when it is not running). */
ALPI_API int alpi_cpu_count(uint64_t *count);
/* The calling worker's index, in [0, count). On a weft worker thread only. ALPI_ERR_UNKNOWN (and
 * a message on stderr) for a worker added after alpi_cpu_count reported a smaller count: an OpenMP
 * team larger than the pool, an adopted thread. */
ALPI_API int alpi_cpu_logical_id(uint64_t *logical_id);
/* The operating system's number of the CPU the caller runs on. On a weft worker thread only. */
ALPI_API int alpi_cpu_system_id(uint64_t *system_id);

/* --- suspend (optional, not provided: ALPI_ERR_FEATURE_UNKNOWN inside a task) ---------------- */
ALPI_API int alpi_task_suspend_mode_set(struct alpi_task *task, alpi_suspend_mode_t suspend_mode, uint64_t args);
ALPI_API int alpi_task_suspend(struct alpi_task *task);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_ALPI_H */
