/* weft/mpi.h — task-aware MPI (library libweft-mpi, built when MPI is found).
 *
 * Linked (or preloaded beside libweft) it turns the blocking MPI calls an HPC code makes inside
 * tasks into their non-blocking forms and suspends the calling task until the request completes:
 * the core runs other tasks meanwhile, and one poller (MPI_Testsome over every pending request)
 * completes them at scheduling points and in idle workers. Nothing to change in the source:
 *
 *   MPI_Recv(buf, n, MPI_DOUBLE, peer, tag, comm, &st);   // inside a task: the core is not lost
 *
 * Calls made outside a task, or when MPI gave less than MPI_THREAD_MULTIPLE, pass straight through.
 * MPI_Init and MPI_Init_thread ask MPI for MPI_THREAD_MULTIPLE (tasks post requests from any
 * worker while another worker polls). docs/mpi.md has the list of calls and the policies.
 *
 * This header adds what a blocking call cannot say: a task that hands its requests to weft and
 * returns at once, its successors released only when the requests complete. */
#ifndef WEFT_MPI_H
#define WEFT_MPI_H

#include <mpi.h>
#include <stdint.h>
#include <weft/weft.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when MPI calls inside tasks suspend the task (weft and MPI are initialised and MPI gave
 * MPI_THREAD_MULTIPLE), 0 when they pass straight through. */
WEFT_API int weft_mpi_task_aware(void);

/* Binds the request's completion to the calling task (TAMPI_Iwait): the task's body may return at
 * once; its successors, taskwait and taskgroup see it complete only once the request has. weft
 * takes the request over: *request is set to MPI_REQUEST_NULL now, and *status (or
 * MPI_STATUS_IGNORE) is written on completion, before any successor runs. Outside a task it is
 * MPI_Wait. Returns MPI_SUCCESS or the MPI error code of the call that failed. A request that
 * completes later with an error (under MPI_ERRORS_RETURN) is reported to the task's parent: its
 * taskwait returns WEFT_ERR_TASK_FAILED and weft_take_error gives a weft_mpi_error_t. */
WEFT_API int weft_mpi_iwait(MPI_Request *request, MPI_Status *status);
/* weft_mpi_iwait traced as an interval named `name` (category communication, counted by the overlap
 * analysis) that records bytes and the peer rank, as the blocking calls' intervals do; a layer that
 * posts its own requests (libweft-dist's transfers) names them this way. name: a static string. */
WEFT_API int weft_mpi_iwait_as(MPI_Request *request, MPI_Status *status, const char *name, uint64_t bytes, int peer);
/* The same for count requests (MPI_STATUSES_IGNORE allowed); every entry becomes MPI_REQUEST_NULL. */
WEFT_API int weft_mpi_iwaitall(int count, MPI_Request requests[], MPI_Status statuses[]);

/* The OpenMP detach idiom: fulfils omp_event (the omp_event_handle_t of the calling task's
 * detach clause) once the request completes, from whichever worker polls it. The request is taken
 * over as by weft_mpi_iwait. */
WEFT_API int weft_mpi_detach(MPI_Request *request, MPI_Status *status, uintptr_t omp_event);

/* A failed request of weft_mpi_iwait / weft_mpi_iwaitall reported to a parent's taskwait. */
typedef struct weft_mpi_error {
  int code;           /* the request's own MPI error code (MPI_Error_class gives its class) */
  const char *call;   /* "weft_mpi_iwait", "weft_mpi_iwaitall", or the name given to iwait_as */
  char message[320];  /* the call and MPI_Error_string's text */
} weft_mpi_error_t;
/* The weft_mpi_error_t behind a payload that weft_take_error returned with `release`, or NULL when
 * the payload is something else. */
WEFT_API const weft_mpi_error_t *weft_mpi_error_of(void *payload, void (*release)(void *payload));
/* Frees a weft_mpi_error_t payload (the release function weft_take_error returns with it). */
WEFT_API void weft_mpi_error_release(void *payload);

/* The communication-aware priority policy in force (WEFT_MPI_PRIORITY): "fifo", "ma1", "ma2", "sa"
 * or "fa". */
WEFT_API const char *weft_mpi_policy(void);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_MPI_H */
