// Cooperative CUDA tasks: start-up, the per-thread pools of streams and tickets, and the public
// weft_cuda_* calls. A worker is a thread, so a thread's pool is its worker's: no lock and no
// shared line on the way to the poller. (Fibers move between threads: a value read from the
// thread's pool before a suspension is never used after it, see recycle_here.)
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "cuda_layer.hpp"

namespace weft::gpu {

// A thread's streams and free tickets, per device. Pools outlive their threads: a thread that
// exits leaves its pool to the next one (tickets in flight still name it as their home).
struct thread_pool {
  struct per_device {
    std::vector<cudaStream_t> streams;  // created on first use, WEFT_CUDA_STREAMS of them
    unsigned next_stream = 0;
    ticket* free = nullptr;  // this thread's
  };
  std::vector<per_device> devices;
  std::atomic<ticket*> returned{nullptr};  // pushed by the poller, taken whole by the owner
  thread_pool* next_orphan = nullptr;
};

namespace {

int device_count = 0;
// 32 by default: a GPU runs about that many small kernels at once (B5 at n = 4096 on an H200:
// 476 µs per triplet on 8 streams, 192 on 32), and one worker must reach that alone.
constexpr unsigned default_streams = 32;
unsigned streams_per_worker = default_streams;
weft_poller_t* poller = nullptr;
std::once_flag started;
bool usable = false;

std::mutex orphans_lock;  // thread start and exit only
thread_pool* orphans = nullptr;

std::atomic<std::uint64_t> trace_ids{0};
std::atomic<std::uint32_t> wait_kind{0}, iwait_kind{0};

void unregister_poller() {
  // Before the CUDA runtime's own exit handler (registered earlier, so run later): no pass may
  // query an event once it is gone.
  if (poller) weft_poller_unregister(poller);
  poller = nullptr;
}

unsigned read_streams() {
  const char* v = std::getenv("WEFT_CUDA_STREAMS");
  if (!v || !*v) return default_streams;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end || n < 1 || n > 1024) {
    std::fprintf(stderr, "weft-cuda: WEFT_CUDA_STREAMS=%s is not a stream count: expected 1 to 1024\n", v);
    std::exit(2);
  }
  return static_cast<unsigned>(n);
}

void display() {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::fprintf(stderr, "weft-cuda: driver %d.%d, runtime %d.%d, %d device(s)\n", driver / 1000, driver % 1000 / 10,
               runtime / 1000, runtime % 1000 / 10, device_count);
  for (int d = 0; d < device_count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    std::fprintf(stderr, "weft-cuda:   device %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", d, p.name, p.major, p.minor,
                 p.multiProcessorCount, static_cast<double>(p.totalGlobalMem) / (1024.0 * 1024 * 1024));
  }
  std::fprintf(stderr,
               "weft-cuda:   WEFT_CUDA_STREAMS=%u streams per worker and device (non-blocking, created on first "
               "use); events pooled per worker; one poller (cudaEventQuery, in submission order)\n",
               streams_per_worker);
}

void start() {
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count < 1) {
    cudaGetLastError();  // not sticky: clear it for the program's own calls
    device_count = 0;
    return;
  }
  streams_per_worker = read_streams();
  poller = weft_poller_register(&poll_events, nullptr);
  if (!poller) {
    std::fprintf(stderr, "weft-cuda: no poller slot left (64 in use): CUDA waits block their worker\n");
  } else {
    std::atexit(unregister_poller);
  }
  usable = true;
  const char* show = std::getenv("WEFT_DISPLAY_ENV");
  if (show && std::strcmp(show, "1") == 0) display();
}

// The calling thread's pool: a thread_local that hands its pool on when the thread exits.
struct pool_holder {
  thread_pool* pool = nullptr;
  ~pool_holder() {
    if (!pool) return;
    std::lock_guard<std::mutex> lock(orphans_lock);
    pool->next_orphan = orphans;
    orphans = pool;
  }
};
thread_local pool_holder holder;

// noinline: a fiber that suspended in between may run on another thread now, and the compiler
// must not reuse the address of the first thread's holder.
[[gnu::noinline]] thread_pool& my_pool() {
  if (thread_pool* p = holder.pool) [[likely]]
    return *p;
  {
    std::lock_guard<std::mutex> lock(orphans_lock);
    if (orphans) {
      holder.pool = orphans;
      orphans = orphans->next_orphan;
    }
  }
  if (!holder.pool) holder.pool = new thread_pool;
  holder.pool->devices.resize(static_cast<std::size_t>(device_count));
  return *holder.pool;
}

// Tickets the poller returned join the free list.
void take_returned(thread_pool& p) {
  ticket* list = p.returned.exchange(nullptr, std::memory_order_acquire);
  while (list) {
    ticket* next = list->next;
    auto& d = p.devices[static_cast<std::size_t>(list->device)];
    list->next = d.free;
    d.free = list;
    list = next;
  }
}

int stream_device(cudaStream_t stream, cudaError_t* error) {
  int device = 0;
  *error = cudaStreamGetDevice(stream, &device);
  return device;
}

// The stream's queued work is not done yet: hand it to the poller with the calling task suspended
// (bound = false) or its completion bound (true). Returns what was known before any suspension.
cudaError_t hand_over(cudaStream_t stream, bool bound) {
  cudaError_t rc = cudaSuccess;
  int device = stream_device(stream, &rc);
  if (rc != cudaSuccess) return rc;
  ticket* t = take_ticket(device, &rc);
  if (!t) return rc;
  rc = cudaEventRecord(t->event, stream);
  if (rc != cudaSuccess) {
    recycle_here(t);
    return rc;
  }
  t->stream = stream;
  t->bound = bound;
  t->error = cudaSuccess;
  t->done = weft_event_create(1);
  if (!t->done) {  // out of memory: block the worker rather than fail the call
    recycle_here(t);
    return cudaStreamSynchronize(stream);
  }
  if (bound && weft_event_bind(t->done) != WEFT_OK) {
    weft_event_destroy(t->done);
    recycle_here(t);
    return cudaStreamSynchronize(stream);
  }
  t->trace_kind = trace_kind_of(bound);
  if (t->trace_kind) {
    t->trace_id = next_trace_id();
    weft_trace_begin(t->trace_kind, t->trace_id, 0);
  }
  if (bound) {
    submit(t);  // the poller completes the task and recycles t
    return cudaSuccess;
  }
  weft_event_t* done = t->done;
  submit(t);
  weft_event_wait(done);  // the poller's fulfil is its last access to t
  rc = t->error;
  weft_event_destroy(done);
  recycle_here(t);  // on the thread this task resumed on
  return rc;
}

// Outside a task, or nothing to hand over: a plain synchronisation, or the stream's state.
// cudaErrorNotReady means: still busy, hand it over.
cudaError_t quick_check(cudaStream_t stream) {
  if (!weft_task_self() || !ready()) return cudaStreamSynchronize(stream);
  return cudaStreamQuery(stream);  // an idle stream needs no event
}

}  // namespace

bool ready() {
  std::call_once(started, start);
  return usable;
}

ticket* take_ticket(int device, cudaError_t* error) {
  thread_pool& p = my_pool();
  if (device < 0 || device >= device_count) {
    *error = cudaErrorInvalidDevice;
    return nullptr;
  }
  auto& d = p.devices[static_cast<std::size_t>(device)];
  if (!d.free) take_returned(p);
  if (ticket* t = d.free) {
    d.free = t->next;
    return t;
  }
  auto* t = new ticket;
  t->device = device;
  t->home = &p;
  int was = 0;
  cudaGetDevice(&was);
  if (was != device) cudaSetDevice(device);
  *error = cudaEventCreateWithFlags(&t->event, cudaEventDisableTiming);
  if (was != device) cudaSetDevice(was);
  if (*error != cudaSuccess) {
    delete t;
    return nullptr;
  }
  return t;
}

void recycle_here(ticket* t) {
  thread_pool& p = my_pool();
  if (t->home != &p) {  // resumed on another thread: back to the pool its event was counted in
    recycle_home(t);
    return;
  }
  auto& d = p.devices[static_cast<std::size_t>(t->device)];
  t->next = d.free;
  d.free = t;
}

void recycle_home(ticket* t) {
  thread_pool& p = *t->home;
  ticket* head = p.returned.load(std::memory_order_relaxed);
  do t->next = head;
  while (!p.returned.compare_exchange_weak(head, t, std::memory_order_release, std::memory_order_relaxed));
}

void set_poller_pending(bool pending) {
  if (poller) weft_poller_set_pending(poller, pending ? 1 : 0);
}

weft_cuda_error_t* make_error(cudaError_t code, const char* call, cudaStream_t stream) {
  auto* e = static_cast<weft_cuda_error_t*>(std::calloc(1, sizeof(weft_cuda_error_t)));
  if (!e) return nullptr;
  e->code = code;
  e->call = call;
  std::snprintf(e->message, sizeof e->message, "%s: %s (stream %p)", cudaGetErrorName(code), cudaGetErrorString(code),
                static_cast<void*>(stream));
  return e;
}

std::uint32_t trace_kind_of(bool bound) {
  if (!weft_trace_enabled()) return 0;
  std::atomic<std::uint32_t>& k = bound ? iwait_kind : wait_kind;
  std::uint32_t v = k.load(std::memory_order_relaxed);
  if (!v) {
    // Any thread that finds it first stores the same kind (weft_trace_kind is idempotent by name).
    v = weft_trace_kind(bound ? "cuda_iwait" : "cuda_wait", WEFT_TRACE_GPU);
    k.store(v, std::memory_order_relaxed);
  }
  return v;
}

std::uint64_t next_trace_id() {
  return trace_ids.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace weft::gpu

using namespace weft::gpu;

extern "C" {

WEFT_API int weft_cuda_available(void) {
  return ready() ? 1 : 0;
}

WEFT_API cudaStream_t weft_cuda_stream(void) {
  if (!ready()) return nullptr;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device >= device_count) return nullptr;
  auto& d = my_pool().devices[static_cast<std::size_t>(device)];
  if (d.streams.empty()) {
    d.streams.resize(streams_per_worker);
    for (cudaStream_t& s : d.streams)
      if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return nullptr;
  }
  cudaStream_t s = d.streams[d.next_stream];
  d.next_stream = (d.next_stream + 1) % streams_per_worker;
  return s;
}

WEFT_API cudaError_t weft_cuda_wait(cudaStream_t stream) {
  cudaError_t rc = quick_check(stream);
  return rc == cudaErrorNotReady ? hand_over(stream, false) : rc;
}

WEFT_API cudaError_t weft_cuda_iwait(cudaStream_t stream) {
  cudaError_t rc = quick_check(stream);
  return rc == cudaErrorNotReady ? hand_over(stream, true) : rc;
}

WEFT_API void weft_cuda_error_release(void* payload) {
  std::free(payload);
}

WEFT_API const weft_cuda_error_t* weft_cuda_error_of(void* payload, void (*release)(void*)) {
  return release == &weft_cuda_error_release ? static_cast<const weft_cuda_error_t*>(payload) : nullptr;
}

}  // extern "C"
