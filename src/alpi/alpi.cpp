// ALPI 1.2 (include/alpi.h) on top of weft's C API: the interface task-aware libraries such as
// TAMPI look up at run time. See docs/alpi.md for the design.
//
// A task's ALPI state (block slot, event counter) lives in a record found through the address of
// its weft descriptor. Records are never freed: a descriptor is recycled only once its task has
// completed, and a completed task's record is idle (no block pending, counter 0), which is exactly
// the state a new task starts from. So a record found for a recycled address is correct as it is,
// and a per-thread cache of the last lookup never goes stale.
#include <alpi.h>
#include <dlfcn.h>
#include <sched.h>
#include <time.h>
#include <weft/weft.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <queue>
#include <thread>
#include <unordered_map>
#include <vector>

#include "omp/omp_internal.hpp"

struct alpi_task {
  static constexpr std::uint64_t live_magic = 0x77656674616c7069ull;  // "weftalpi"
  std::uint64_t magic = live_magic;
  // Blocking: null (idle), unblocked_early (an unblock came first) or the event the task waits on.
  std::atomic<weft_event_t*> slot{nullptr};
  // Events: the counter, and the weft event bound to the task while the counter is not 0.
  std::atomic<std::uint64_t> events{0};
  std::atomic<weft_event_t*> bound{nullptr};
};

struct alpi_attr {
  int unused;
};

namespace {

weft_event_t* const unblocked_early = reinterpret_cast<weft_event_t*>(std::uintptr_t{1});

// --- records --------------------------------------------------------------------------------

struct record_shard {
  std::mutex lock;
  std::unordered_map<const void*, alpi_task*> map;
};
constexpr int shard_count = 64;

record_shard* shards() {
  // Never destroyed: workers and foreign threads may use records while the process exits.
  static record_shard* s = new record_shard[shard_count];
  return s;
}

thread_local const void* cached_task = nullptr;
thread_local alpi_task* cached_record = nullptr;

alpi_task* record_of(const void* task) {
  if (task == cached_task) return cached_record;
  auto h = reinterpret_cast<std::uintptr_t>(task);
  record_shard& s = shards()[(h >> 6 ^ h >> 12) % shard_count];
  alpi_task* r;
  {
    std::lock_guard<std::mutex> g(s.lock);
    alpi_task*& slot = s.map[task];
    if (!slot) slot = new (std::nothrow) alpi_task;
    r = slot;
  }
  if (r) {
    cached_task = task;
    cached_record = r;
  }
  return r;
}

// The calling task's record; the status says why there is none.
alpi_task* current_record(int& status) {
  weft_task_t* self = weft_task_self();
  if (!self) {
    status = ALPI_ERR_OUTSIDE_TASK;
    return nullptr;
  }
  alpi_task* r = record_of(self);
  status = r ? ALPI_SUCCESS : ALPI_ERR_OUT_OF_MEMORY;
  return r;
}

// The calls a task may only make on itself: its record when `task` is the caller's, else null
// with the status to return (outside a task, or another task named).
alpi_task* own_record(const alpi_task* task, int& status) {
  alpi_task* me = current_record(status);
  if (me && task != me) {
    status = ALPI_ERR_PARAMETER;
    return nullptr;
  }
  return me;
}

bool valid(const alpi_task* t) { return t && t->magic == alpi_task::live_magic; }

int from_weft(int status) {
  switch (status) {
    case WEFT_OK: return ALPI_SUCCESS;
    case WEFT_ERR_INVALID_ARGUMENT: return ALPI_ERR_PARAMETER;
    case WEFT_ERR_NOT_INITIALIZED: return ALPI_ERR_NOT_INITIALIZED;
    case WEFT_ERR_NOT_A_WORKER: return ALPI_ERR_OUTSIDE_TASK;
    case WEFT_ERR_OUT_OF_MEMORY: return ALPI_ERR_OUT_OF_MEMORY;
    default: return ALPI_ERR_UNKNOWN;
  }
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// --- starting the runtime --------------------------------------------------------------------
// A library calling ALPI before the program's first task call (TAMPI in MPI_Init) starts the
// runtime through the door the program uses: an OpenMP program running on weft's OpenMP door
// (libgomp.so.1 is loaded and GOMP_parallel resolves into this library) gets the OpenMP door's
// pooled start, anything else weft_init's.
void anchor() {}

bool openmp_door_in_use() {
  void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!gomp) return false;
  dlclose(gomp);
  void* entry = dlsym(RTLD_DEFAULT, "GOMP_parallel");
  Dl_info mine{}, theirs{};
  if (!entry || !dladdr(reinterpret_cast<void*>(&anchor), &mine) || !dladdr(entry, &theirs)) return false;
  return mine.dli_fbase == theirs.dli_fbase;
}

int ensure_runtime() {
  if (weft_initialized()) return ALPI_SUCCESS;
  if (openmp_door_in_use()) weft::omp::self();
  if (weft_initialized()) return ALPI_SUCCESS;
  int status = weft_init();
  if (status == WEFT_OK) return ALPI_SUCCESS;
  return weft_initialized() ? ALPI_SUCCESS : from_weft(status);
}

// --- timed waits -------------------------------------------------------------------------------
// One thread fulfils the events of alpi_task_waitfor_ns when their deadlines pass (weft events may
// be fulfilled from any thread); the waiting tasks are parked meanwhile.
struct timer_entry {
  std::uint64_t deadline;
  weft_event_t* event;
  bool operator>(const timer_entry& o) const { return deadline > o.deadline; }
};

struct timer_state {
  std::mutex lock;
  std::condition_variable wake;
  std::priority_queue<timer_entry, std::vector<timer_entry>, std::greater<timer_entry>> queue;
  bool started = false;
};

timer_state& timers() {
  static timer_state* t = new timer_state;  // never destroyed (its thread outlives main)
  return *t;
}

void timer_loop() {
  timer_state& t = timers();
  std::unique_lock<std::mutex> g(t.lock);
  for (;;) {
    if (t.queue.empty()) {
      t.wake.wait(g);
      continue;
    }
    std::uint64_t now = now_ns();
    timer_entry first = t.queue.top();
    if (first.deadline > now) {
      t.wake.wait_for(g, std::chrono::nanoseconds(first.deadline - now));
      continue;
    }
    t.queue.pop();
    g.unlock();
    weft_event_fulfill(first.event);
    g.lock();
  }
}

bool add_timer(std::uint64_t deadline, weft_event_t* e) {
  timer_state& t = timers();
  std::lock_guard<std::mutex> g(t.lock);
  if (!t.started) {
    try {
      std::thread(timer_loop).detach();
    } catch (...) {
      return false;
    }
    t.started = true;
  }
  bool earliest = t.queue.empty() || deadline < t.queue.top().deadline;
  t.queue.push({deadline, e});
  if (earliest) t.wake.notify_one();
  return true;
}

// --- spawned tasks -------------------------------------------------------------------------------
struct spawn_desc {
  void (*body)(void*);
  void* body_args;
  void (*done)(void*);
  void* done_args;
  char* label;
  std::atomic<bool>* started;  // the spawner's flag, set once when the body starts
};

void spawn_body(void* args) {
  spawn_desc* d = *static_cast<spawn_desc**>(args);
  // The spawner returns once it sees the flag: its stack is not touched after the store.
  std::atomic<bool>* started = d->started;
  d->started = nullptr;
  started->store(true, std::memory_order_release);
  d->body(d->body_args);
}

void spawn_completed(void* args) {
  spawn_desc* d = *static_cast<spawn_desc**>(args);
  if (d->done) d->done(d->done_args);
  std::free(d->label);
  delete d;
}

// The launcher is a child of the spawning task and returns at once; the spawned task and its
// completion task are the launcher's children, so the spawner's taskwait does not wait for them.
// The completion task depends on the spawned one: it runs once that one has completed, events
// included.
void spawn_launcher(void* args) {
  spawn_desc* d = *static_cast<spawn_desc**>(args);
  weft_task_t* body = weft_task_create(spawn_body, &d, sizeof d, WEFT_TASK_DEFAULT);
  weft_task_t* done = weft_task_create(spawn_completed, &d, sizeof d, WEFT_TASK_DEFAULT);
  if (!body || !done) {
    std::fprintf(stderr, "weft: alpi_task_spawn: could not create the spawned task (%s)\n",
                 weft_strerror(weft_last_error()));
    std::abort();
  }
  if (d->label) weft_task_set_label(body, d->label);
  weft_task_depend(body, WEFT_DEP_OUT, d, sizeof *d);
  weft_task_depend(done, WEFT_DEP_IN, d, sizeof *d);
  weft_task_submit(body);
  weft_task_submit(done);
}

// The largest count alpi_cpu_count reported for the running runtime: libraries size per-CPU
// tables with it (TAMPI's queues and allocator caches), so a logical id at or past it would index
// past their end.
std::atomic<weft::core::runtime*> reported_for{nullptr};
std::atomic<std::uint64_t> reported_cpus{0};

void note_reported(std::uint64_t count) {
  weft::core::runtime* rt = weft::core::instance;
  if (reported_for.load(std::memory_order_acquire) != rt) {
    reported_cpus.store(0, std::memory_order_relaxed);  // a new runtime since the last report
    reported_for.store(rt, std::memory_order_release);
  }
  std::uint64_t seen = reported_cpus.load(std::memory_order_relaxed);
  while (seen < count && !reported_cpus.compare_exchange_weak(seen, count, std::memory_order_relaxed)) {
  }
}

// 0 when no count was reported for the running runtime.
std::uint64_t reported_limit() {
  if (reported_for.load(std::memory_order_acquire) != weft::core::instance) return 0;
  return reported_cpus.load(std::memory_order_relaxed);
}

alpi_attr default_attr{0};

constexpr int supported_features = ALPI_FEATURE_BLOCKING | ALPI_FEATURE_EVENTS | ALPI_FEATURE_RESOURCES;

int copy_string(const char* text, char* buffer, size_t max_length, int* length) {
  int n = std::snprintf(buffer, max_length, "%s", text);
  if (n < 0) return ALPI_ERR_UNKNOWN;
  if (length) *length = n;
  return ALPI_SUCCESS;
}

}  // namespace

extern "C" {

ALPI_API const char* alpi_error_string(alpi_error_t error) {
  switch (error) {
    case ALPI_SUCCESS: return "success";
    case ALPI_ERR_VERSION: return "incompatible ALPI version";
    case ALPI_ERR_NOT_INITIALIZED: return "the weft runtime is not running";
    case ALPI_ERR_PARAMETER: return "invalid parameter (null pointer, wrong task handle or value out of range)";
    case ALPI_ERR_OUT_OF_MEMORY: return "out of memory";
    case ALPI_ERR_OUTSIDE_TASK: return "must be called from inside a weft task";
    case ALPI_ERR_UNKNOWN: return "internal error";
    case ALPI_ERR_FEATURE_UNKNOWN: return "optional ALPI feature not provided by weft";
    default: return "unknown ALPI error code";
  }
}

ALPI_API int alpi_info_get(alpi_info_t query, char* buffer, size_t max_length, int* length) {
  if (!buffer || max_length == 0) return ALPI_ERR_PARAMETER;
  char version[64];
  switch (query) {
    case ALPI_INFO_RUNTIME_NAME: return copy_string("weft", buffer, max_length, length);
    case ALPI_INFO_RUNTIME_VENDOR: return copy_string("weft project", buffer, max_length, length);
    case ALPI_INFO_VERSION:
      std::snprintf(version, sizeof version, "ALPI %d.%d (weft %d.%d)", ALPI_VERSION_MAJOR, ALPI_VERSION_MINOR,
                    WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR);
      return copy_string(version, buffer, max_length, length);
    default: return ALPI_ERR_PARAMETER;
  }
}

ALPI_API int alpi_feature_check(int feature_bitmask) {
  return (feature_bitmask & ~supported_features) == 0 ? ALPI_SUCCESS : ALPI_ERR_FEATURE_UNKNOWN;
}

ALPI_API int alpi_version_check(int major, int minor) {
  if (major != ALPI_VERSION_MAJOR || minor < 0 || minor > ALPI_VERSION_MINOR) return ALPI_ERR_VERSION;
  return ALPI_SUCCESS;
}

ALPI_API int alpi_version_get(int* major, int* minor) {
  if (!major || !minor) return ALPI_ERR_PARAMETER;
  *major = ALPI_VERSION_MAJOR;
  *minor = ALPI_VERSION_MINOR;
  return ALPI_SUCCESS;
}

ALPI_API int alpi_task_self(struct alpi_task** task) {
  if (!task) return ALPI_ERR_PARAMETER;
  weft_task_t* self = weft_task_self();
  if (!self) {
    *task = nullptr;
    return ALPI_SUCCESS;
  }
  alpi_task* r = record_of(self);
  if (!r) return ALPI_ERR_OUT_OF_MEMORY;
  *task = r;
  return ALPI_SUCCESS;
}

ALPI_API int alpi_task_block(struct alpi_task* task) {
  int status;
  alpi_task* me = own_record(task, status);
  if (!me) return status;
  // The unblock came first: consume it.
  weft_event_t* seen = me->slot.load(std::memory_order_acquire);
  if (seen == unblocked_early) {
    me->slot.store(nullptr, std::memory_order_relaxed);
    return ALPI_SUCCESS;
  }
  if (seen) return ALPI_ERR_PARAMETER;  // cannot happen: only this task blocks on its slot
  weft_event_t* e = weft_event_create(1);
  if (!e) return from_weft(weft_last_error());
  weft_event_t* expected = nullptr;
  if (me->slot.compare_exchange_strong(expected, e, std::memory_order_acq_rel, std::memory_order_acquire)) {
    // unblock takes e out of the slot and fulfils it; the wait parks this task meanwhile.
    int rc = weft_event_wait(e);
    weft_event_destroy(e);
    return from_weft(rc);
  }
  // An unblock arrived between the check and the publication: the event was never seen by anyone.
  weft_event_fulfill(e);
  weft_event_destroy(e);
  me->slot.store(nullptr, std::memory_order_relaxed);
  return ALPI_SUCCESS;
}

ALPI_API int alpi_task_unblock(struct alpi_task* task) {
  if (!valid(task)) return ALPI_ERR_PARAMETER;
  weft_event_t* s = task->slot.load(std::memory_order_acquire);
  for (;;) {
    if (s == unblocked_early) return ALPI_ERR_PARAMETER;  // a second unblock before the block
    weft_event_t* next = s ? nullptr : unblocked_early;
    if (task->slot.compare_exchange_weak(s, next, std::memory_order_acq_rel, std::memory_order_acquire)) break;
  }
  if (!s) return ALPI_SUCCESS;  // noted: the block returns at once
  return from_weft(weft_event_fulfill(s));
}

ALPI_API int alpi_task_waitfor_ns(uint64_t target_ns, uint64_t* actual_ns) {
  std::uint64_t start = now_ns();
  int status = ALPI_SUCCESS;
  if (weft_worker_id() < 0) {
    // Not a weft worker (a thread of the program or of a library): its OS thread sleeps.
    if (target_ns) {
      std::uint64_t end = start + target_ns;
      for (std::uint64_t now = start; now < end; now = now_ns()) {
        timespec ts{static_cast<time_t>((end - now) / 1000000000u), static_cast<long>((end - now) % 1000000000u)};
        nanosleep(&ts, nullptr);
      }
    }
  } else if (target_ns == 0) {
    status = from_weft(weft_taskyield());
  } else {
    // A task, or the main program on its worker: park until the timer thread fulfils the event.
    weft_event_t* e = weft_event_create(1);
    if (!e) return from_weft(weft_last_error());
    if (!add_timer(start + target_ns, e)) {
      weft_event_fulfill(e);
      weft_event_destroy(e);
      return ALPI_ERR_UNKNOWN;
    }
    status = from_weft(weft_event_wait(e));
    weft_event_destroy(e);
  }
  if (actual_ns) *actual_ns = now_ns() - start;
  return status;
}

ALPI_API int alpi_task_events_increase(struct alpi_task* task, uint64_t increment) {
  int status;
  alpi_task* me = own_record(task, status);
  if (!me) return status;
  if (increment == 0) return ALPI_SUCCESS;
  std::uint64_t c = me->events.load(std::memory_order_acquire);
  for (;;) {
    if (c == 0) {
      // From 0: no decrease can be in flight, hold the task's completion with a fresh bound event
      // before publishing the count (a decrease reads `bound` once it owns a share of the count).
      weft_event_t* e = weft_event_create(1);
      if (!e) return from_weft(weft_last_error());
      int rc = weft_event_bind(e);
      if (rc != WEFT_OK) {
        weft_event_fulfill(e);
        weft_event_destroy(e);
        return from_weft(rc);
      }
      weft_event_destroy(e);  // freed once fulfilled, by the decrease that reaches 0
      me->bound.store(e, std::memory_order_release);
      me->events.fetch_add(increment, std::memory_order_acq_rel);
      return ALPI_SUCCESS;
    }
    if (increment > UINT64_MAX - c) return ALPI_ERR_PARAMETER;
    // Above 0: join the bound event, unless a decrease takes the count to 0 meanwhile.
    if (me->events.compare_exchange_weak(c, c + increment, std::memory_order_acq_rel, std::memory_order_acquire))
      return ALPI_SUCCESS;
  }
}

ALPI_API int alpi_task_events_test(struct alpi_task* task, uint64_t* has_events) {
  int status;
  alpi_task* me = current_record(status);
  if (!me) return status;
  if (task != me || !has_events) return ALPI_ERR_PARAMETER;
  *has_events = me->events.load(std::memory_order_acquire) != 0 ? 1 : 0;
  return ALPI_SUCCESS;
}

ALPI_API int alpi_task_events_decrease(struct alpi_task* task, uint64_t decrement) {
  if (!valid(task)) return ALPI_ERR_PARAMETER;
  if (decrement == 0) return ALPI_SUCCESS;
  // Read before taking the share: while this caller's share is in the count, `bound` is the event
  // that holds the task (it only changes once the count has been 0).
  weft_event_t* e = task->bound.load(std::memory_order_acquire);
  std::uint64_t c = task->events.load(std::memory_order_acquire);
  do {
    if (c < decrement) return ALPI_ERR_PARAMETER;  // more than were increased
  } while (!task->events.compare_exchange_weak(c, c - decrement, std::memory_order_acq_rel, std::memory_order_acquire));
  if (c != decrement) return ALPI_SUCCESS;
  // The last event: release the task's completion (a worker finishes it when this is a foreign
  // thread).
  return from_weft(weft_event_fulfill(e));
}

ALPI_API int alpi_attr_create(struct alpi_attr** attr) {
  if (!attr) return ALPI_ERR_PARAMETER;
  *attr = new (std::nothrow) alpi_attr{0};
  return *attr ? ALPI_SUCCESS : ALPI_ERR_OUT_OF_MEMORY;
}

ALPI_API int alpi_attr_destroy(struct alpi_attr* attr) {
  if (!attr) return ALPI_ERR_PARAMETER;
  if (attr != &default_attr) delete attr;
  return ALPI_SUCCESS;
}

ALPI_API int alpi_attr_init(struct alpi_attr* attr) {
  // Attributes occupy alpi_attr_size() == 0 bytes: nothing to write.
  return attr ? ALPI_SUCCESS : ALPI_ERR_PARAMETER;
}

ALPI_API int alpi_attr_size(uint64_t* attr_size) {
  if (!attr_size) return ALPI_ERR_PARAMETER;
  *attr_size = 0;
  return ALPI_SUCCESS;
}

ALPI_API int alpi_task_spawn(void (*body)(void*), void* body_args, void (*completion_callback)(void*),
                             void* completion_args, const char* label, const struct alpi_attr* attr) {
  (void)attr;
  if (!body) return ALPI_ERR_PARAMETER;
  int status = ensure_runtime();
  if (status != ALPI_SUCCESS) return status;
  // Under the OpenMP door a thread that is not a worker yet becomes one, as at its first OpenMP
  // call (the runtime may have been started by another thread).
  if (!weft::core::current_worker && openmp_door_in_use()) weft::omp::self();
  weft::core::worker* w = weft::core::current_worker;
  if (!w) return ALPI_ERR_OUTSIDE_TASK;
  if (!w->crew) return ALPI_ERR_UNKNOWN;  // cannot happen: code runs on a worker only in a gang
  std::atomic<bool> started{false};
  auto* d = new (std::nothrow) spawn_desc{body, body_args, completion_callback, completion_args, nullptr, &started};
  if (!d) return ALPI_ERR_OUT_OF_MEMORY;
  if (label && weft_trace_enabled()) d->label = strdup(label);
  weft_task_t* launcher = weft_task_create(spawn_launcher, &d, sizeof d, WEFT_TASK_DEFAULT);
  if (!launcher) {
    status = from_weft(weft_last_error());
    std::free(d->label);
    delete d;
    return status;
  }
  status = from_weft(weft_task_submit(launcher));
  if (status != ALPI_SUCCESS) {
    std::free(d->label);  // the launcher never runs
    delete d;
    return status;
  }
  // Return only once the spawned task has started: run it here if no other worker takes it. Its
  // first wait then parks it on a worker of the caller's gang, and a timer thread that ends a wait
  // hands the context back to that worker, whatever gang it serves by then. Under the OpenMP door
  // the caller is the initial thread in MPI_Init: its sequential-part tasks would otherwise wait
  // until it leaves every parallel region, and a thread of the spawned task's own would be a
  // worker past alpi_cpu_count (TAMPI indexes per-CPU queues with the logical id).
  // `started` lives on this stack: no return before the body has set it.
  while (!started.load(std::memory_order_acquire)) weft_taskyield();
  return ALPI_SUCCESS;
}

ALPI_API int alpi_cpu_count(uint64_t* count) {
  if (!count) return ALPI_ERR_PARAMETER;
  int status = ensure_runtime();
  if (status != ALPI_SUCCESS) return status;
  int n = weft_num_workers();
  if (n <= 0) return ALPI_ERR_NOT_INITIALIZED;
  *count = static_cast<std::uint64_t>(n);
  note_reported(*count);
  return ALPI_SUCCESS;
}

ALPI_API int alpi_cpu_logical_id(uint64_t* logical_id) {
  if (!logical_id) return ALPI_ERR_PARAMETER;
  int id = weft_worker_id();
  if (id < 0) return ALPI_ERR_OUTSIDE_TASK;
  // A worker added after the count was reported (an OpenMP team larger than the pool, an adopted
  // thread) has no slot in the caller's per-CPU tables: an error, rather than an index past them.
  std::uint64_t limit = reported_limit();
  if (limit && static_cast<std::uint64_t>(id) >= limit) {
    static std::atomic<bool> told{false};
    if (!told.exchange(true, std::memory_order_relaxed))
      std::fprintf(stderr,
                   "weft: alpi_cpu_logical_id: worker %d was added after alpi_cpu_count reported %llu CPUs; "
                   "its id is past the caller's per-CPU tables\n",
                   id, static_cast<unsigned long long>(limit));
    return ALPI_ERR_UNKNOWN;
  }
  *logical_id = static_cast<std::uint64_t>(id);
  return ALPI_SUCCESS;
}

ALPI_API int alpi_cpu_system_id(uint64_t* system_id) {
  if (!system_id) return ALPI_ERR_PARAMETER;
  if (weft_worker_id() < 0) return ALPI_ERR_OUTSIDE_TASK;
  int cpu = sched_getcpu();
  if (cpu < 0) return ALPI_ERR_UNKNOWN;
  *system_id = static_cast<std::uint64_t>(cpu);
  return ALPI_SUCCESS;
}

ALPI_API int alpi_task_suspend_mode_set(struct alpi_task* task, alpi_suspend_mode_t suspend_mode, uint64_t args) {
  (void)suspend_mode;
  (void)args;
  int status;
  alpi_task* me = own_record(task, status);
  if (!me) return status;
  return ALPI_ERR_FEATURE_UNKNOWN;
}

ALPI_API int alpi_task_suspend(struct alpi_task* task) {
  int status;
  alpi_task* me = own_record(task, status);
  if (!me) return status;
  return ALPI_ERR_FEATURE_UNKNOWN;
}

}  // extern "C"
