/* weft/cuda.h — cooperative CUDA tasks (library libweft-cuda, built when the CUDA toolkit is found).
 *
 * A task that queues GPU work and then synchronises would hold its core until the GPU is done.
 * With this layer it suspends instead: the worker runs other tasks, one poller queries the pending
 * CUDA events at scheduling points and in idle workers, and the task resumes on whichever worker
 * picks it up. Nothing runs in kernel helper threads.
 *
 *   cudaStream_t s = weft_cuda_stream();            // this task's stream, from the worker's pool
 *   cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s);
 *   kernel<<<blocks, threads, 0, s>>>(d, n);
 *   weft_cuda_wait(s);                               // the core runs other tasks meanwhile
 *
 * or, with no suspension at all, weft_cuda_iwait(s) and return: the task's successors start when
 * the stream's work is done. Works from OpenMP tasks too (weft standing in for libgomp). Outside a
 * task both calls synchronise the stream. libweft itself never depends on CUDA; docs/gpu.md. */
#ifndef WEFT_CUDA_H
#define WEFT_CUDA_H

#include <cuda_runtime_api.h>
#include <weft/weft.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when a CUDA device is usable from this process, else 0 (no device, no driver). */
WEFT_API int weft_cuda_available(void);

/* A stream for the calling task on the current device: streams are pooled per worker
 * (WEFT_CUDA_STREAMS of them, default 32) and handed out in turn, so tasks on one worker spread
 * over several streams. Take it once per task and keep it: a later call may return another one.
 * Never destroy it. NULL when no device is usable. */
WEFT_API cudaStream_t weft_cuda_stream(void);

/* Suspends the calling task until the work queued on `stream` so far has completed; its worker
 * runs other tasks meanwhile. Outside a task: cudaStreamSynchronize. Returns cudaSuccess, or the
 * error that the stream's work (or this call) ran into. */
WEFT_API cudaError_t weft_cuda_wait(cudaStream_t stream);

/* Binds the completion of the work queued on `stream` so far to the calling task: its body may
 * return at once; its successors, taskwait and taskgroup see it complete only once that work has.
 * An error found then is reported to the task's parent: its taskwait returns WEFT_ERR_TASK_FAILED
 * and weft_take_error gives a weft_cuda_error_t (see weft_cuda_error_of). Outside a task:
 * cudaStreamSynchronize. Returns cudaSuccess or the error of this call. */
WEFT_API cudaError_t weft_cuda_iwait(cudaStream_t stream);

/* A CUDA failure reported to a parent's taskwait. */
typedef struct weft_cuda_error {
  cudaError_t code;
  const char *call;   /* what found it: "weft_cuda_iwait" */
  char message[160];  /* "cudaErrorLaunchFailure: unspecified launch failure (stream 0x...)" */
} weft_cuda_error_t;

/* The weft_cuda_error_t behind a payload that weft_take_error returned with `release`, or NULL
 * when the payload is something else (another layer's, a C++ exception). */
WEFT_API const weft_cuda_error_t *weft_cuda_error_of(void *payload, void (*release)(void *payload));
/* Frees a weft_cuda_error_t payload (the release function weft_take_error returns with it). */
WEFT_API void weft_cuda_error_release(void *payload);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_CUDA_H */
