// A simulated CUDA device for testing libweft-cuda's logic on machines without a GPU. Linked into
// a test ahead of libweft-cuda, its definitions of the CUDA runtime calls come first in symbol
// lookup, so the layer (which links the real libcudart) calls these. Each stream is a host thread
// that runs its queued operations in order; host functions (cudaLaunchHostFunc) stand in for
// kernels; weft_sim_cuda_fail queues an operation that fails the stream with a sticky error, as a
// faulting kernel does. This checks suspension, binding, ordering and error reporting; it says
// nothing about a real GPU's timing (tests/gpu/device_test.cu does, on a GPU).
#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

struct CUstream_st {
  std::mutex lock;
  std::condition_variable wake;
  std::deque<std::function<cudaError_t()>> queue;
  std::uint64_t enqueued = 0;               // under lock
  std::atomic<std::uint64_t> done{0};       // operations finished (or skipped after a failure)
  std::atomic<std::uint64_t> failed_at{0};  // sequence number of the failing operation, 0 none
  std::atomic<cudaError_t> error{cudaSuccess};
  std::thread runner;

  CUstream_st() {
    runner = std::thread([this] { run(); });
    runner.detach();  // streams live until the process ends
  }
  void run() {
    for (;;) {
      std::function<cudaError_t()> op;
      {
        std::unique_lock<std::mutex> l(lock);
        wake.wait(l, [this] { return !queue.empty(); });
        op = std::move(queue.front());
        queue.pop_front();
      }
      std::uint64_t seq = done.load(std::memory_order_relaxed) + 1;
      if (failed_at.load(std::memory_order_relaxed) == 0) {
        cudaError_t rc = op();
        if (rc != cudaSuccess) {
          error.store(rc, std::memory_order_relaxed);
          failed_at.store(seq, std::memory_order_relaxed);
        }
      }
      done.store(seq, std::memory_order_release);
    }
  }
  std::uint64_t push(std::function<cudaError_t()> op) {
    std::lock_guard<std::mutex> l(lock);
    queue.push_back(std::move(op));
    wake.notify_one();
    return ++enqueued;
  }
  // What work up to seq ended with (cudaErrorNotReady while it runs).
  cudaError_t state_at(std::uint64_t seq) const {
    if (done.load(std::memory_order_acquire) < seq) return cudaErrorNotReady;
    std::uint64_t f = failed_at.load(std::memory_order_relaxed);
    return f && f <= seq ? error.load(std::memory_order_relaxed) : cudaSuccess;
  }
};

struct CUevent_st {
  CUstream_st* stream = nullptr;  // null: never recorded (complete)
  std::uint64_t seq = 0;
};

namespace {
std::mutex registry_lock;
std::vector<CUstream_st*> streams;  // never freed: runners may still touch them at exit
thread_local cudaError_t last_error = cudaSuccess;
std::atomic<long> event_queries{0};

CUstream_st* legacy_stream() {
  static CUstream_st* s = new CUstream_st;
  return s;
}
CUstream_st* resolve(cudaStream_t s) {
  return s ? s : legacy_stream();
}
cudaError_t note(cudaError_t rc) {
  if (rc != cudaSuccess && rc != cudaErrorNotReady) last_error = rc;
  return rc;
}
}  // namespace

extern "C" {

// --- what tests call to drive the simulation ----------------------------------------------------
__attribute__((visibility("default"))) void weft_sim_cuda_fail(cudaStream_t s, cudaError_t code) {
  resolve(s)->push([code] { return code; });
}
__attribute__((visibility("default"))) long weft_sim_cuda_event_queries(void) {
  return event_queries.load();
}

// --- the CUDA runtime calls libweft-cuda and the tests make ----------------------------------------
cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  return note(device == 0 ? cudaSuccess : cudaErrorInvalidDevice);
}
cudaError_t cudaGetLastError(void) {
  cudaError_t rc = last_error;
  last_error = cudaSuccess;
  return rc;
}
cudaError_t cudaDriverGetVersion(int* v) {
  *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* v) {
  *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (device != 0) return note(cudaErrorInvalidDevice);
  std::memset(p, 0, sizeof *p);
  std::strcpy(p->name, "simulated device (tests/gpu/sim_cudart.cpp)");
  p->major = 9;
  p->multiProcessorCount = 1;
  p->totalGlobalMem = std::size_t{1} << 30;
  return cudaSuccess;
}
const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorNotReady:
      return "cudaErrorNotReady";
    case cudaErrorLaunchFailure:
      return "cudaErrorLaunchFailure";
    case cudaErrorIllegalAddress:
      return "cudaErrorIllegalAddress";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    default:
      return "cudaError (simulated)";
  }
}
const char* cudaGetErrorString(cudaError_t e) {
  return e == cudaErrorLaunchFailure ? "unspecified launch failure" : "simulated error";
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  auto* st = new CUstream_st;
  std::lock_guard<std::mutex> l(registry_lock);
  streams.push_back(st);
  *s = st;
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* s) {
  return cudaStreamCreateWithFlags(s, 0);
}
cudaError_t cudaStreamDestroy(cudaStream_t) {
  return cudaSuccess;
}  // kept: see `streams`
cudaError_t cudaStreamGetDevice(cudaStream_t, int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t s) {
  CUstream_st* st = resolve(s);
  std::uint64_t seq;
  {
    std::lock_guard<std::mutex> l(st->lock);
    seq = st->enqueued;
  }
  return note(st->state_at(seq));
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  cudaError_t rc;
  while ((rc = cudaStreamQuery(s)) == cudaErrorNotReady) std::this_thread::yield();
  return rc;
}
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* data) {
  resolve(s)->push([fn, data] {
    fn(data);
    return cudaSuccess;
  });
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind, cudaStream_t s) {
  resolve(s)->push([dst, src, bytes] {
    std::memcpy(dst, src, bytes);
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  *e = new CUevent_st;
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* e) {
  return cudaEventCreateWithFlags(e, 0);
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  CUstream_st* st = resolve(s);
  std::lock_guard<std::mutex> l(st->lock);
  e->stream = st;
  e->seq = st->enqueued;  // complete once the work queued so far is
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
  event_queries.fetch_add(1, std::memory_order_relaxed);
  return e->stream ? note(e->stream->state_at(e->seq)) : cudaSuccess;
}

}  // extern "C"
