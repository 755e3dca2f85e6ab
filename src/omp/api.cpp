// The omp_* API: queries and setters of the ICVs, locks, timers, places, pause and the host device's
// memory routines (allocators: allocators.cpp; affinity display: affinity_display.cpp).
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "omp/gomp_abi.h"
#include "omp/offload.hpp"
#include "omp/omp_internal.hpp"

namespace weft::omp {

namespace {
void futex_wait(std::atomic<int>& word, int expected) {
  syscall(SYS_futex, reinterpret_cast<int*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake_one(std::atomic<int>& word) {
  syscall(SYS_futex, reinterpret_cast<int*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}
}  // namespace

// A three-state futex mutex (0 free, 1 held, 2 held with sleepers) in a user-provided word.
void lock_word(std::atomic<int>& word) {
  int c = 0;
  if (word.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
  report_finished_before_waiting();
  // Past the cores the holder is most likely a runnable thread waiting for a core: a few pauses,
  // then yields hand it the core, as at barriers (a sleep here made the waker pay a futex call per
  // release and every waiter a wake-up: gcc's reductions take GOMP_atomic_start's lock, and EPCC's
  // reduction at 4 threads on 2 cores cost 10-46 us against LLVM's 3.3).
  core::worker* w = core::current_worker;
  const bool past_cores = core::instance && core::instance->oversubscribed.load(std::memory_order_relaxed);
  for (int spins = 0; spins < (past_cores ? 8 : 200); ++spins) {
    __builtin_ia32_pause();
    c = 0;
    if (word.load(std::memory_order_relaxed) == 0 &&
        word.compare_exchange_weak(c, 1, std::memory_order_acquire, std::memory_order_relaxed))
      return;
  }
  if (waits_must_yield()) {
    // The holder may be a member parked on this worker, or a tied task parked here: its turn comes
    // while this one steps aside.
    auto free = [](void* v) { return static_cast<std::atomic<int>*>(v)->load(std::memory_order_relaxed) == 0; };
    for (;;) {
      c = 0;
      if (word.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
      // sleepers: the holder wakes one on unlock
      if (c == 2 && !waits_must_yield()) break;
      yield_member(free, &word);
      report_finished_before_waiting();  // what ran meanwhile may have left counts batched here
    }
  }
  if (past_cores) {
    for (int yields = 0; yields < 20 && !(w && core::yields_stall(*w)); ++yields) {
      if (w)
        core::yield_core(*w, false);
      else
        sched_yield();
      c = 0;
      if (word.load(std::memory_order_relaxed) == 0 &&
          word.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed))
        return;
    }
  }
  c = word.exchange(2, std::memory_order_acquire);
  while (c != 0) {
    futex_wait(word, 2);
    c = word.exchange(2, std::memory_order_acquire);
  }
}

void unlock_word(std::atomic<int>& word) {
  if (word.exchange(0, std::memory_order_release) == 2) futex_wake_one(word);
}

bool try_lock_word(std::atomic<int>& word) {
  int c = 0;
  return word.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed);
}

}  // namespace weft::omp

using namespace weft::omp;

namespace {

// omp_nest_lock_t is 16 bytes in gcc's omp.h: the lock word, the nesting count and the owning task.
struct nest_lock {
  std::atomic<int> word;
  int count;                 // touched by the owner only
  std::atomic<void*> owner;  // read by every task that tries the lock
};
static_assert(sizeof(nest_lock) == 16);

void* owner_task() {
  return self().current;
}

std::atomic<int>& lock_of(void* lock) {
  return *static_cast<std::atomic<int>*>(lock);
}

member* ancestor(int level) {
  member* m = me;
  if (!m) return nullptr;
  if (level < 0 || level > m->level) return nullptr;
  while (m && m->level > level) m = m->crew->parent;
  return m;
}

int copy_rect(char* dst, const char* src, std::size_t element, int dims, const std::size_t* volume,
              const std::size_t* dst_offsets, const std::size_t* src_offsets, const std::size_t* dst_dims,
              const std::size_t* src_dims) {
  if (dims == 1) {
    std::memcpy(dst + dst_offsets[0] * element, src + src_offsets[0] * element, volume[0] * element);
    return 0;
  }
  std::size_t dst_slice = element, src_slice = element;
  for (int i = 1; i < dims; ++i) {
    dst_slice *= dst_dims[i];
    src_slice *= src_dims[i];
  }
  for (std::size_t i = 0; i < volume[0]; ++i)
    copy_rect(dst + (dst_offsets[0] + i) * dst_slice, src + (src_offsets[0] + i) * src_slice, element, dims - 1,
              volume + 1, dst_offsets + 1, src_offsets + 1, dst_dims + 1, src_dims + 1);
  return 0;
}

}  // namespace

extern "C" {

// --- threads and teams ------------------------------------------------------------------------
GOMP_API void omp_set_num_threads(int n) {
  if (n < 1) n = 1;
  writable_icvs().nthreads = n;
}
GOMP_API int omp_get_num_threads(void) {
  return me ? me->crew->size : 1;
}
GOMP_API int omp_get_max_threads(void) {
  return me ? me->icv.nthreads : config().initial.nthreads;
}
GOMP_API int omp_get_thread_num(void) {
  return me ? me->thread_num : 0;
}
GOMP_API int omp_get_num_procs(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
}
GOMP_API int omp_in_parallel(void) {
  return me && me->active_level > 0;
}
// weft extensions (weft/omp_ext.h; ICS'21 Listing 1): the parallel regions the calling task
// starts from now on, and those nested in them, are gang-scheduled (their members run as fibers on
// the existing workers), or follow WEFT_GANG again.
GOMP_API void weft_omp_set_gang_sched(void) {
  writable_icvs().gang = 1;
}
GOMP_API void weft_omp_reset_gang_sched(void) {
  writable_icvs().gang = 0;
}

GOMP_API void omp_set_dynamic(int on) {
  writable_icvs().dynamic = on != 0;
}
GOMP_API int omp_get_dynamic(void) {
  return me ? me->icv.dynamic : config().initial.dynamic;
}
GOMP_API void omp_set_nested(int on) {
  writable_icvs().max_active_levels = on ? 255 : 1;
}
GOMP_API int omp_get_nested(void) {
  return (me ? me->icv.max_active_levels : config().initial.max_active_levels) > 1;
}
GOMP_API int omp_get_thread_limit(void) {
  return me ? me->icv.thread_limit : config().initial.thread_limit;
}
GOMP_API void omp_set_max_active_levels(int n) {
  if (n >= 0) writable_icvs().max_active_levels = n > 255 ? 255 : n;
}
GOMP_API int omp_get_max_active_levels(void) {
  return me ? me->icv.max_active_levels : config().initial.max_active_levels;
}
GOMP_API int omp_get_supported_active_levels(void) {
  return 255;
}
GOMP_API int omp_get_level(void) {
  return me ? me->level : 0;
}
GOMP_API int omp_get_active_level(void) {
  return me ? me->active_level : 0;
}
GOMP_API int omp_get_ancestor_thread_num(int level) {
  member* m = ancestor(level);
  if (!m) return level == 0 ? 0 : -1;
  return m->thread_num;
}
GOMP_API int omp_get_team_size(int level) {
  member* m = ancestor(level);
  if (!m) return level == 0 ? 1 : -1;
  return m->crew->size;
}
GOMP_API int omp_in_explicit_task(void) {  // GCC 13 (OpenMP 5.2)
  // An included task (if(0), final) runs in a root-flagged frame that carries its own ICVs.
  worker* w = weft::core::current_worker;
  return w && (!(w->current->flags & weft::core::flag_root) || (w->current->door_bits & door_own_icvs));
}
GOMP_API int omp_in_final(void) {
  worker* w = weft::core::current_worker;
  return w && (w->current->door_bits & 1);
}
GOMP_API int omp_get_cancellation(void) {
  return config().cancellation;
}
GOMP_API int omp_get_max_task_priority(void) {
  return config().max_task_priority;
}

GOMP_API void omp_set_schedule(int kind, int chunk) {
  icvs& icv = writable_icvs();
  int k = kind & 0x7fffffff;
  if (k < sched_static || k > sched_auto) return;
  icv.run_sched = kind;
  icv.run_chunk = chunk < 1 ? (k == sched_static ? 0 : 1) : chunk;
}
GOMP_API void omp_get_schedule(int* kind, int* chunk) {
  const icvs& icv = me ? me->icv : config().initial;
  *kind = icv.run_sched;
  *chunk = icv.run_chunk;
}

GOMP_API int omp_get_proc_bind(void) {
  return me ? me->icv.bind : config().initial.bind;
}
GOMP_API int omp_get_num_places(void) {
  return config().num_places;
}
GOMP_API int omp_get_place_num_procs(int place) {
  const settings& s = config();
  if (place < 0 || place >= s.num_places) return 0;
  return static_cast<int>(s.places[place].size());
}
GOMP_API void omp_get_place_proc_ids(int place, int* ids) {
  const settings& s = config();
  if (place < 0 || place >= s.num_places) return;
  for (std::size_t i = 0; i < s.places[place].size(); ++i) ids[i] = s.places[place][i];
}
// The place holding the CPU the thread runs on (workers are bound to cores, WEFT_BIND), or -1
// when no place is known or weft binds no worker (WEFT_BIND=none: the CPU is any of them).
GOMP_API int omp_get_place_num(void) {
  const settings& s = config();
  if (!s.num_places || (weft::core::instance && !weft::core::instance->cfg.bind_cores)) return -1;
  const int cpu = sched_getcpu();
  for (int p = 0; p < s.num_places; ++p)
    for (int id : s.places[p])
      if (id == cpu) return p;
  return -1;
}
GOMP_API int omp_get_partition_num_places(void) {
  return config().num_places;
}
GOMP_API void omp_get_partition_place_nums(int* nums) {
  for (int i = 0; i < config().num_places; ++i) nums[i] = i;
}

// --- devices: the host is the only one ------------------------------------------------------------
GOMP_API void omp_set_default_device(int d) {
  writable_icvs().default_device = d < 0 ? 0 : d;
}
GOMP_API int omp_get_default_device(void) {
  return me ? me->icv.default_device : config().initial.default_device;
}
GOMP_API int omp_get_num_devices(void) {
  return offload::num_devices();
}
GOMP_API int omp_get_device_num(void) {
  return 0;
}
GOMP_API int omp_is_initial_device(void) {
  return 1;
}
GOMP_API int omp_get_initial_device(void) {
  return offload::num_devices();
}
GOMP_API int omp_get_num_teams(void) {
  return me ? me->num_teams : 1;
}
GOMP_API int omp_get_team_num(void) {
  return me ? me->team_num : 0;
}
GOMP_API void omp_set_num_teams(int n) {
  if (n > 0) config().num_teams = n;
}
GOMP_API int omp_get_max_teams(void) {
  return config().num_teams;
}
GOMP_API void omp_set_teams_thread_limit(int n) {
  if (n > 0) config().teams_thread_limit = n;
}
GOMP_API int omp_get_teams_thread_limit(void) {
  return config().teams_thread_limit;
}

// An offload device is 0 .. omp_get_num_devices() - 1; the host is omp_get_initial_device().
static int offload_device(int device) {  // -1: the host, -2: no such device
  int n = offload::num_devices();
  if (device == n) return -1;
  return device >= 0 && device < n ? device : -2;
}
GOMP_API void* omp_target_alloc(std::size_t size, int device) {
  int d = offload_device(device);
  return d == -1 ? std::malloc(size) : d >= 0 ? offload::target_alloc(size, d) : nullptr;
}
GOMP_API void omp_target_free(void* p, int device) {
  int d = offload_device(device);
  if (d == -1)
    std::free(p);
  else if (d >= 0)
    offload::target_free(p, d);
}
GOMP_API int omp_target_is_present(const void* p, int device) {
  int d = offload_device(device);
  return d == -1 ? 1 : d >= 0 ? offload::is_present(p, d) : 0;
}
GOMP_API int omp_target_memcpy(void* dst, const void* src, std::size_t length, std::size_t dst_offset,
                               std::size_t src_offset, int dst_device, int src_device) {
  int dd = offload_device(dst_device), sd = offload_device(src_device);
  if (dd == -2 || sd == -2) return EINVAL;
  return offload::target_memcpy(dst, src, length, dst_offset, src_offset, dd, sd);
}
GOMP_API int omp_target_memcpy_rect(void* dst, const void* src, std::size_t element, int dims,
                                    const std::size_t* volume, const std::size_t* dst_offsets,
                                    const std::size_t* src_offsets, const std::size_t* dst_dims,
                                    const std::size_t* src_dims, int dst_device, int src_device) {
  if (!dst && !src) return 3;  // the number of dimensions supported is asked for: any
  if (offload_device(dst_device) != -1 || offload_device(src_device) != -1 || dims < 1) return EINVAL;
  return copy_rect(static_cast<char*>(dst), static_cast<const char*>(src), element, dims, volume, dst_offsets,
                   src_offsets, dst_dims, src_dims);
}
// GCC 13 (OpenMP 5.1/5.2): the mapped address, accessibility, and the copies as tasks.
GOMP_API void* omp_get_mapped_ptr(const void* p, int device) {
  int d = offload_device(device);
  return d == -1 ? const_cast<void*>(p) : d >= 0 ? offload::mapped_ptr(p, d) : nullptr;
}
// weft's offload devices have memory of their own: only the host reaches host memory.
GOMP_API int omp_target_is_accessible(const void*, std::size_t, int device) {
  return offload_device(device) == -1;
}

void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
               bool if_clause, unsigned flags, void** depend, int priority, void* detach);  // tasking.cpp

namespace {
// An asynchronous copy: a task that makes it once the depend objects' dependences are met. The
// arguments travel by value (the caller's arrays may be gone by then); rectangles up to three
// dimensions, as omp_target_memcpy_rect.
struct async_copy {
  void* dst;
  const void* src;
  std::size_t length_or_element, dst_offset, src_offset;
  int dst_device, src_device, dims;
  std::size_t volume[3], dst_offsets[3], src_offsets[3], dst_dims[3], src_dims[3];
};

void run_async_copy(void* arg) {
  auto* c = static_cast<async_copy*>(arg);
  if (c->dims == 0)
    omp_target_memcpy(c->dst, c->src, c->length_or_element, c->dst_offset, c->src_offset, c->dst_device, c->src_device);
  else
    omp_target_memcpy_rect(c->dst, c->src, c->length_or_element, c->dims, c->volume, c->dst_offsets, c->src_offsets,
                           c->dst_dims, c->src_dims, c->dst_device, c->src_device);
}

// depobjs: gcc's omp_depend_t, an address and a kind (what omp_depend_t names is read by the task's
// dependence code); the depend array is gcc's second format with depend objects only.
void submit_async_copy(async_copy& c, int depobj_count, void* depobjs) {
  if (depobj_count < 0) fatal("omp_target_memcpy_async: depobj_count is negative");
  std::vector<void*> depend(5 + static_cast<std::size_t>(depobj_count));
  depend[1] = reinterpret_cast<void*>(static_cast<std::uintptr_t>(depobj_count));
  for (int i = 0; i < depobj_count; ++i) depend[5 + i] = static_cast<char*>(depobjs) + i * 2 * sizeof(void*);
  GOMP_task(run_async_copy, &c, nullptr, sizeof c, alignof(async_copy), true, depobj_count ? GOMP_TASK_FLAG_DEPEND : 0,
            depend.data(), 0, nullptr);
}
}  // namespace

GOMP_API int omp_target_memcpy_async(void* dst, const void* src, std::size_t length, std::size_t dst_offset,
                                     std::size_t src_offset, int dst_device, int src_device, int depobj_count,
                                     void* depobjs) {
  if (offload_device(dst_device) == -2 || offload_device(src_device) == -2) return EINVAL;
  async_copy c{dst, src, length, dst_offset, src_offset, dst_device, src_device, 0, {}, {}, {}, {}, {}};
  submit_async_copy(c, depobj_count, depobjs);
  return 0;
}
GOMP_API int omp_target_memcpy_rect_async(void* dst, const void* src, std::size_t element, int dims,
                                          const std::size_t* volume, const std::size_t* dst_offsets,
                                          const std::size_t* src_offsets, const std::size_t* dst_dims,
                                          const std::size_t* src_dims, int dst_device, int src_device, int depobj_count,
                                          void* depobjs) {
  if (!dst && !src) return 3;  // the number of dimensions supported is asked for
  if (offload_device(dst_device) != -1 || offload_device(src_device) != -1 || dims < 1 || dims > 3) return EINVAL;
  async_copy c{dst, src, element, 0, 0, dst_device, src_device, dims, {}, {}, {}, {}, {}};
  for (int i = 0; i < dims; ++i) {
    c.volume[i] = volume[i];
    c.dst_offsets[i] = dst_offsets[i];
    c.src_offsets[i] = src_offsets[i];
    c.dst_dims[i] = dst_dims[i];
    c.src_dims[i] = src_dims[i];
  }
  submit_async_copy(c, depobj_count, depobjs);
  return 0;
}
GOMP_API int omp_target_associate_ptr(const void* host, const void* dev, std::size_t size, std::size_t offset,
                                      int device) {
  int d = offload_device(device);
  return d >= 0 ? offload::associate_ptr(host, dev, size, offset, d) : EINVAL;
}
GOMP_API int omp_target_disassociate_ptr(const void* host, int device) {
  int d = offload_device(device);
  return d >= 0 ? offload::disassociate_ptr(host, d) : EINVAL;
}

// --- timers ------------------------------------------------------------------------------------------
GOMP_API double omp_get_wtime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
GOMP_API double omp_get_wtick(void) {
  struct timespec ts;
  clock_getres(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// --- locks (omp_lock_t is 4 bytes, omp_nest_lock_t 16, in gcc's layout) --------------------------
GOMP_API void omp_init_lock(void* lock) {
  lock_of(lock).store(0, std::memory_order_relaxed);
}
GOMP_API void omp_destroy_lock(void*) {}
GOMP_API void omp_set_lock(void* lock) {
  lock_word(lock_of(lock));
}
GOMP_API void omp_unset_lock(void* lock) {
  unlock_word(lock_of(lock));
}
GOMP_API int omp_test_lock(void* lock) {
  return try_lock_word(lock_of(lock));
}

GOMP_API void omp_init_nest_lock(void* lock) {
  auto* l = static_cast<nest_lock*>(lock);
  l->word.store(0, std::memory_order_relaxed);
  l->count = 0;
  l->owner.store(nullptr, std::memory_order_relaxed);
}
GOMP_API void omp_destroy_nest_lock(void*) {}
GOMP_API void omp_set_nest_lock(void* lock) {
  auto* l = static_cast<nest_lock*>(lock);
  void* me_task = owner_task();
  // Relaxed: only this task stores its own address there, so reading it back needs no order.
  if (l->owner.load(std::memory_order_relaxed) == me_task) {
    ++l->count;
    return;
  }
  lock_word(l->word);
  l->owner.store(me_task, std::memory_order_relaxed);
  l->count = 1;
}
GOMP_API void omp_unset_nest_lock(void* lock) {
  auto* l = static_cast<nest_lock*>(lock);
  if (--l->count == 0) {
    l->owner.store(nullptr, std::memory_order_relaxed);
    unlock_word(l->word);
  }
}
GOMP_API int omp_test_nest_lock(void* lock) {
  auto* l = static_cast<nest_lock*>(lock);
  void* me_task = owner_task();
  if (l->owner.load(std::memory_order_relaxed) == me_task) return ++l->count;
  if (!try_lock_word(l->word)) return 0;
  l->owner.store(me_task, std::memory_order_relaxed);
  l->count = 1;
  return 1;
}

// --- pause, environment display --------------------------------------------------------------------
// The host (device 0) is the only device: pausing it stops the runtime until the next OpenMP call.
GOMP_API int omp_pause_resource(int kind, int device) {
  if (kind != 1 && kind != 2) {  // omp_pause_soft, omp_pause_hard: weft releases the same for both
    std::fprintf(stderr, "weft: omp_pause_resource: kind %d is neither omp_pause_soft nor omp_pause_hard\n", kind);
    return -1;
  }
  if (device != 0) {
    std::fprintf(stderr, "weft: omp_pause_resource: device %d does not exist (the host, device 0, is the only one)\n",
                 device);
    return -1;
  }
  return pause_host("omp_pause_resource");
}
GOMP_API int omp_pause_resource_all(int kind) {
  if (kind != 1 && kind != 2) {
    std::fprintf(stderr, "weft: omp_pause_resource_all: kind %d is neither omp_pause_soft nor omp_pause_hard\n", kind);
    return -1;
  }
  return pause_host("omp_pause_resource_all");
}
GOMP_API void omp_display_env(int verbose) {
  display_environment(verbose != 0);
}

}  // extern "C"
