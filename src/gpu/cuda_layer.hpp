// Cooperative CUDA tasks: the state shared by the public calls and pools (layer.cpp) and the event
// poller (poller.cpp). A client of libweft's public C API only, like task-aware MPI: events to
// suspend a task or hold its completion, one poller, trace intervals.
#pragma once

#include <cuda_runtime_api.h>
#include <weft/cuda.h>

#include <atomic>
#include <cstdint>

namespace weft::gpu {

struct thread_pool;

// One wait handed to the poller: a CUDA event recorded on the stream after the work waited for.
// Tickets (and their CUDA events, created once) are pooled per thread and per device.
struct ticket {
  ticket* next = nullptr;  // the poller's incoming list; a pool's free or returned list
  cudaEvent_t event = nullptr;
  int device = 0;
  thread_pool* home = nullptr;  // the pool it goes back to
  cudaStream_t stream = nullptr;
  bool bound = false;  // iwait: the poller completes the task and recycles the ticket
  cudaError_t error = cudaSuccess;
  weft_event_t* done = nullptr;  // fulfilled (or failed) by the poller
  std::uint32_t trace_kind = 0;  // 0: not traced
  std::uint64_t trace_id = 0;
};

// Starts the layer on first use (device count, WEFT_CUDA_STREAMS, the poller, WEFT_DISPLAY_ENV).
// False when no device is usable.
bool ready();
// A ticket for `device` from the calling thread's pool (its event created on first use), or null
// with *error set when the event cannot be created.
ticket* take_ticket(int device, cudaError_t* error);
// Back to the calling thread's pool (a waiter after it resumed).
void recycle_here(ticket* t);
// Back to t's home pool from any thread (the poller, for bound tickets).
void recycle_home(ticket* t);

// Hands t to the poller (after its event was recorded).
void submit(ticket* t);
// One pass over the pending events. Registered by ready().
int poll_events(void* arg);
// weft_poller_set_pending on the layer's poller (layer.cpp owns the handle).
void set_poller_pending(bool pending);

// A heap weft_cuda_error_t for a parent's taskwait.
weft_cuda_error_t* make_error(cudaError_t code, const char* call, cudaStream_t stream);

// Trace kinds (0 while tracing is off).
std::uint32_t trace_kind_of(bool bound);
std::uint64_t next_trace_id();

}  // namespace weft::gpu
