// Explicit tasks through the OpenMP door: GOMP_task and its clauses, taskwait, taskgroup, task
// reductions, taskloop, detach events and cancellation. Every task is an ordinary engine task.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "core/dependency_domain.hpp"
#include "fiber/event.hpp"
#include "omp/gomp_abi.h"
#include "omp/omp_internal.hpp"

namespace weft::omp {

namespace {

// --- detach events -------------------------------------------------------------------------------
// omp_event_handle_t is an engine event's address with its 16-bit generation in the top bits, so a
// stale or doubled omp_fulfill_event is caught instead of completing an unrelated task.
constexpr int generation_shift = 48;

std::uintptr_t handle_of(fiber::event* e) {
  auto generation = static_cast<std::uint16_t>(e->generation.load(std::memory_order_relaxed));
  return reinterpret_cast<std::uintptr_t>(e) | (static_cast<std::uintptr_t>(generation) << generation_shift);
}

// --- task creation ---------------------------------------------------------------------------------
// Tasks whose data needs more than 16-byte alignment, that may be cancelled, or that carry their
// creator's ICVs start through a trampoline that finds the body and the data after a small header.
struct trampoline_header {
  void (*fn)(void*);
  std::uint32_t offset;
  bool carries_icvs;
  // Skipped when its taskgroup or team is cancelled before it starts. Not a task whose data a
  // copy constructor built (cpyfn): its body must run to destroy them, as libgomp runs it.
  bool discardable;
  icvs icv;  // the creator's, when carries_icvs
};

bool group_cancelled(task* t) {
  for (core::taskgroup* g = t->group; g;) {
    if (g->cancelled.load(std::memory_order_relaxed)) return true;
    core::taskgroup* next = g->outer ? g->outer : (g->owner ? g->owner->group : nullptr);
    if (next == g) break;
    g = next;
  }
  return false;
}

void trampoline(void* args) {
  auto* h = static_cast<trampoline_header*>(args);
  if (config().cancellation && h->discardable) {
    worker* w = core::current_worker;
    if (group_cancelled(w->current) || (me && me->crew->cancelled.load(std::memory_order_relaxed))) return;
  }
  if (!h->carries_icvs) return h->fn(static_cast<char*>(args) + h->offset);
  // The task's own ICVs, layered like an undeferred task's first change (end_explicit_icvs).
  worker& w = *core::current_worker;
  task* t = w.current;
  member& m = current();
  begin_explicit_icvs(m, w.context, t);
  m.icv = h->icv;
  h->fn(static_cast<char*>(args) + h->offset);
  end_explicit_icvs(current_after_switch(), t);  // on the thread the task ends on (its layers moved with it)
}

void nothing(void*) {}

weft_dep_type depobj_type(std::uintptr_t kind) {
  switch (kind) {
    case GOMP_DEPEND_IN:
      return WEFT_DEP_IN;
    case GOMP_DEPEND_OUT:
      return WEFT_DEP_OUT;
    case GOMP_DEPEND_INOUT:
      return WEFT_DEP_INOUT;
    case GOMP_DEPEND_MUTEXINOUTSET:
      return WEFT_DEP_MUTEXINOUTSET;
    case GOMP_DEPEND_INOUTSET:
      return WEFT_DEP_INOUTSET;
    default:
      fatal(
          "depend(depobj: ...): the depend object holds an unknown dependence type (destroyed or never initialised?)");
  }
}

[[noreturn]] void null_depend() {
  fatal("depend clause on a null address (omp_all_memory is not supported)");
}

void access(worker& w, task* t, void* address, weft_dep_type type) {
  if (!address) null_depend();
  if (core::add_access(w, t, address, type) == WEFT_ERR_OUT_OF_MEMORY)
    fatal("GOMP_task: out of memory for a depend clause");
}

// A replayed task whose depend array (gcc's first format: out/inout addresses, then in ones) lists
// exactly its recorded accesses, in order: all matched in one pass. Otherwise false, nothing
// matched: add_depends declares them one by one, which finds and handles the difference.
bool matches_recording(task* t, void** depend) {
  auto& r = t->replay;
  const auto n = reinterpret_cast<std::uintptr_t>(depend[0]);
  if (n == 0 || r.accesses_left != n) return false;  // 0: the other format; else some matched already
  const auto nout = reinterpret_cast<std::uintptr_t>(depend[1]);
  const core::graph_access* a = r.next_access;
  for (std::uintptr_t i = 0; i < n; ++i)
    if (a[i].address != depend[2 + i] || a[i].type != (i < nout ? WEFT_DEP_INOUT : WEFT_DEP_IN)) return false;
  r.next_access += n;
  r.accesses_left = 0;
  return true;
}

// Both depend-array formats gcc emits (see docs/openmp.md).
// gcc's first depend format (out/inout addresses, then in ones) for a task outside any persistent
// graph: the engine reads gcc's array itself, not one call per access. False (nothing done) when
// the task takes the general path (add_depends, then submit).
bool submit_depends_at_once(worker& w, task* t, void** depend) {
  const auto n = reinterpret_cast<std::uintptr_t>(depend[0]);
  if (n == 0 || t->graph_role == core::graph_instance || t->parent->graph_role == core::graph_owner) return false;
  const auto nout = reinterpret_cast<std::uintptr_t>(depend[1]);
  core::submit_depend_array(w, t, depend + 2, static_cast<int>(nout), static_cast<int>(n), null_depend);
  return true;
}

void add_depends(worker& w, task* t, void** depend) {
  if (t->graph_role == core::graph_instance && matches_recording(t, depend)) return;
  auto word = [depend](int i) { return reinterpret_cast<std::uintptr_t>(depend[i]); };
  std::uintptr_t n, nout, nmutex = 0, nin, base;
  if (word(0) != 0) {
    n = word(0);
    nout = word(1);
    nin = n - nout;
    base = 2;
  } else {
    // An iterator whose range is empty gives a total of 0 and leaves the per-kind counts unset.
    n = word(1);
    if (n == 0) return;
    nout = word(2);
    nmutex = word(3);
    nin = word(4);
    base = 5;
    if (nout > n || nmutex > n - nout || nin > n - nout - nmutex)
      fatal("depend clause: the per-kind counts of gcc's depend array exceed its total");
  }
  std::uintptr_t i = 0;
  for (; i < nout; ++i) access(w, t, depend[base + i], WEFT_DEP_INOUT);
  for (; i < nout + nmutex; ++i) access(w, t, depend[base + i], WEFT_DEP_MUTEXINOUTSET);
  for (; i < nout + nmutex + nin; ++i) access(w, t, depend[base + i], WEFT_DEP_IN);
  for (; i < n; ++i) {
    auto* obj = static_cast<std::uintptr_t*>(depend[base + i]);
    access(w, t, reinterpret_cast<void*>(obj[0]), depobj_type(obj[1]));
  }
}

struct task_request {
  void (*fn)(void*);
  void* data;
  void (*cpyfn)(void*, void*);
  long arg_size;
  long arg_align;
  bool if_clause;
  unsigned flags;
  void** depend;
  int priority;
  void* detach;
  // taskloop: the sub-range written into the first two words of the copy
  bool has_bounds = false;
  std::uint64_t bounds[2] = {0, 0};
};

// The innermost taskgroup the current task is in: its own open one, else the one it was created in.
core::taskgroup* innermost_group(worker& w) {
  core::parent_state* ps = w.current->state.load(std::memory_order_acquire);
  if (ps && ps->current_group) return ps->current_group;
  return w.current->group;
}

// An undeferred task without dependences (if(0), or created in a final task) runs at once on the
// creating thread, as the spec says: it needs no heap descriptor and no dependence tracking. A
// descriptor in this frame gives it its own task context (children, taskwait, final, taskgroups).
// Deferred tasks in a parallel region never take this path, even in a team of one: a task run
// inside its creator could wait (taskyield, an event) for a task the creator has not made yet.
// The body runs on the creator's argument block in place (libgomp does the same): the common case
// passes three words in registers, where a request by value cost a copy of 12 words at every call
// and in the prologue (20 and 20 instructions per task of a one-thread recursive tree).
// In a team of several, the frame comes from the task pool: thieves may run the children it makes,
// and a child that counts itself out may still read its parent's state pointer after the parent's
// taskwait has returned (notify_parent_by). Pool descriptors are type-stable, which makes that
// late read harmless; a frame on this stack would be gone by then.
__attribute__((noinline)) void run_included(worker& w, void (*fn)(void*), void* args, bool final) {
  task local;
  const bool shared = w.crew && w.crew->size() > 1;
  task* frame = shared ? static_cast<task*>(w.task_cache.allocate()) : &local;
  if (!frame) fatal("GOMP_task: out of memory for an included task's descriptor");
  core::begin_frame(frame, w.current, innermost_group(w));
  frame->door_bits = final ? door_final | door_own_icvs : door_own_icvs;
  task* saved = w.current;
  w.current = frame;
  w.set_nested(w.nested() + 1);
  fn(args);
  if (me) end_explicit_icvs(*me, frame);
  worker& now = *core::worker_after_switch();  // an untied creator's context may have moved
  core::end_frame(now, frame);
  worker& after = *core::worker_after_switch();
  after.set_nested(after.nested() - 1);
  after.current = saved;
  if (shared) after.task_cache.release(frame);
}

// The same when the task's block must be built first (a copy constructor, taskloop bounds): the
// copy lives in this frame while the body runs.
__attribute__((noinline)) void run_included_copy(worker& w, const task_request r, bool final) {
  std::size_t align = r.arg_align > 16 ? static_cast<std::size_t>(r.arg_align) : 16;
  void* block = __builtin_alloca(static_cast<std::size_t>(r.arg_size) + align);
  void* args = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(block) + align - 1) & ~(align - 1));
  if (r.cpyfn)
    r.cpyfn(args, r.data);
  else
    std::memcpy(args, r.data, static_cast<std::size_t>(r.arg_size));
  if (r.has_bounds) std::memcpy(args, r.bounds, sizeof r.bounds);
  run_included(w, r.fn, args, final);
}

constexpr int queued_per_thread = 64;

// Most tasks carry a few pointers and integers: two overlapping word moves instead of a call to
// memcpy (about 10 instructions per task).
inline void copy_arguments(char* dst, const char* src, std::size_t n) {
  if (n >= 8 && n <= 16) {
    std::uint64_t head, tail;
    std::memcpy(&head, src, 8);
    std::memcpy(&tail, src + n - 8, 8);
    std::memcpy(dst, &head, 8);
    std::memcpy(dst + n - 8, &tail, 8);
  } else {
    std::memcpy(dst, src, n);
  }
}

// Inlined into GOMP_task, so that the request lives in registers (building it on the stack and
// reading it back cost about 30 instructions per task); run_included_copy takes it by value for
// that reason, so that only its rare path copies it to memory.
[[gnu::always_inline]] inline void spawn(worker& w, const task_request& r) {
  const settings& s = config();
  task* creator = w.current;
  // Outside any parallel region a task runs at once, as libgomp runs it there (a program that
  // reads a task's result without taskwait there behaves the same on both). A dependent one waits
  // for its predecessors first, which in the sequential part have all run already unless a
  // detached task is unfulfilled. A detached one runs at once there too, and its creator waits for
  // the fulfilment, as on libgomp. In a team a detached task stays deferred: its creator may be
  // the one that fulfils it.
  // In a team, a task also runs at once while 64 of this thread's tasks wait in its queues:
  // libgomp's rule (64 per thread), which makes a recursion nearly sequential on each thread while
  // thieves still find 64 to take (an unbalanced tree of 3M tasks on 2 threads: 0.54x the time of
  // deferring them all). A task that would wait for a sibling created after it is as unsafe there
  // as on libgomp. Only tasks without dependences, in a team of any size: a dependent one run at
  // once would hold its producer until its predecessors ran, and in a team of one a predecessor
  // may wait for the producer itself (a detached task it fulfils later: a random-program search
  // found that hang). A team of one bounds its deferred tasks with its window instead (64 of the
  // producer's children, see throttle_check).
  // A deep recursion runs them in place while the stack has room: on a fiber, its room is known
  // (deferring there only moved the excess onto new fibers: 17 stacks for a one-thread tree), and
  // is all that counts (a small WEFT_STACKSIZE overflowed within max_nesting levels); on a
  // thread's own stack, max_nesting bounds it. Past that, tasks are deferred.
  const team& crew = *current().crew;
  // Asked only of a task that may run at once (most are deferred: no look at the stack then).
  auto room = [&w] { return w.context->stack_low ? core::stack_has_room(w) : w.nested() < core::max_nesting; };
  bool run_now =
      (crew.level == 0 || (!(r.flags & (GOMP_TASK_FLAG_DEPEND | GOMP_TASK_FLAG_DETACH)) &&
                           (w.local_count >= queued_per_thread || w.queue->owner_holds_at_least(queued_per_thread)))) &&
      room();
  bool undeferred = !r.if_clause || (creator->door_bits & door_final) || run_now;
  if (undeferred && !(r.flags & (GOMP_TASK_FLAG_DEPEND | GOMP_TASK_FLAG_DETACH)) && (run_now || room())) {
    bool final = (r.flags & GOMP_TASK_FLAG_FINAL) || (creator->door_bits & door_final);
    if (r.cpyfn || r.has_bounds)
      run_included_copy(w, r, final);
    else
      run_included(w, r.fn, r.data, final);
    return;
  }
  std::size_t size = static_cast<std::size_t>(r.arg_size);
  std::size_t align = r.arg_align > 0 ? static_cast<std::size_t>(r.arg_align) : 1;
  // Past a change of ICVs in the region, a deferred task carries its creator's values.
  bool carries_icvs = !undeferred && crew.icvs_diverged.load(std::memory_order_relaxed);
  bool wrapped = align > 16 || s.cancellation || carries_icvs;
  std::size_t offset = 0;
  if (wrapped) {
    offset = (sizeof(trampoline_header) + align - 1) & ~(align - 1);
    size = offset + size + (align > 16 ? align : 0);
  }
  core::throttle(w);
  task* t = core::allocate_task(w, wrapped ? trampoline : reinterpret_cast<weft_task_fn>(r.fn), size,
                                undeferred ? WEFT_TASK_UNDEFERRED : 0);
  if (!t)
    fatal(core::worker_after_switch()->refused == WEFT_ERR_GRAPH_CHANGED
              ? "GOMP_task: the loop's tasks differ from its persistent graph's recording (WEFT_GRAPH_ON_CHANGE=error)"
              : "GOMP_task: out of memory for the task's data");
  char* dst = static_cast<char*>(t->arguments());
  if (wrapped) {
    auto* h = reinterpret_cast<trampoline_header*>(dst);
    std::uintptr_t data_at =
        (reinterpret_cast<std::uintptr_t>(dst) + sizeof(trampoline_header) + align - 1) & ~(align - 1);
    h->fn = r.fn;
    h->offset = static_cast<std::uint32_t>(data_at - reinterpret_cast<std::uintptr_t>(dst));
    h->carries_icvs = carries_icvs;
    h->discardable = r.cpyfn == nullptr;
    if (carries_icvs) h->icv = current().icv;
    if (trace::on)  // the trace names the outlined function, not the wrapper
      trace::record(w.trace, trace::event_type::task_label, core::trace_id(t), 0,
                    trace::kind_of_function(reinterpret_cast<const void*>(r.fn)));
    dst = reinterpret_cast<char*>(data_at);
  }
  fiber::event* ev = nullptr;
  if (r.flags & GOMP_TASK_FLAG_DETACH) {
    // The task's completion waits for the event; the event is freed once fulfilled (an undeferred
    // task's creator keeps it until it has seen the fulfilment).
    ev = fiber::create_event(w, 1, undeferred);
    if (!ev) fatal("GOMP_task: out of memory for a detached task's event");
    std::uintptr_t handle = handle_of(ev);
    std::memcpy(r.detach, &handle, sizeof handle);
    std::memcpy(r.data, &handle, sizeof handle);  // gcc puts the task's copy of the event first
    core::hold_completion(t);
    ev->bound_fn.store(reinterpret_cast<const void*>(r.fn), std::memory_order_relaxed);
    ev->crew.store(w.crew, std::memory_order_relaxed);
    ev->bound.store(t, std::memory_order_relaxed);  // published by submit
  }
  // Tied unless untied: a tied task that blocks resumes on the thread it started on.
  if (!(r.flags & GOMP_TASK_FLAG_UNTIED)) t->run_flags |= core::run_tied;
  if (r.cpyfn)
    r.cpyfn(dst, r.data);
  else if (r.arg_size)
    copy_arguments(dst, static_cast<const char*>(r.data), static_cast<std::size_t>(r.arg_size));
  if (r.has_bounds) std::memcpy(dst, r.bounds, sizeof r.bounds);
  if ((r.flags & GOMP_TASK_FLAG_FINAL) || (creator->door_bits & door_final)) t->door_bits |= door_final;
  if (undeferred) t->door_bits |= door_own_icvs;
  if ((r.flags & GOMP_TASK_FLAG_PRIORITY) && r.priority > 0) {
    int p = r.priority < s.max_task_priority ? r.priority : s.max_task_priority;
    int lanes = core::instance->cfg.max_priority;
    t->priority = static_cast<std::uint16_t>(p < lanes ? p : lanes);
  }
  if (!(r.flags & GOMP_TASK_FLAG_DEPEND) || !submit_depends_at_once(w, t, r.depend)) {
    if (r.flags & GOMP_TASK_FLAG_DEPEND) add_depends(w, t, r.depend);
    core::submit_task(w, t);
  }
  if (undeferred && me) end_explicit_icvs(*me, t);  // t has run: only its address is compared
  if (ev && undeferred) {
    // An undeferred detached task's creator goes on only once the event is fulfilled.
    fiber::wait_event(*core::current_worker, ev);
    fiber::destroy_event(*core::worker_after_switch(), ev);
  }
}

bool cancelled_here(worker& w) {
  member* m = me;
  if (m && m->crew->cancelled.load(std::memory_order_relaxed)) return true;
  core::parent_state* ps = w.current->state.load(std::memory_order_acquire);
  if (ps && ps->current_group && ps->current_group->cancelled.load(std::memory_order_relaxed)) return true;
  return group_cancelled(w.current);
}

// Task reductions: a block of `threads` chunks of d[1] bytes, zero-filled, with a reference count
// in front (each member of a worksharing construct drops one).
struct reduction_block {
  std::atomic<int> refs;
  void* raw;
};

void release_reductions(std::uintptr_t* d) {
  auto* b = reinterpret_cast<reduction_block*>(d[5]);
  if (!b) return;
  if (b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    std::free(b->raw);
    delete b;
  }
}

template <class Int>
void taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align, unsigned flags,
              unsigned long num_tasks, int priority, Int start, Int end, Int step) {
  worker& w = self();
  member& m = current();
  std::uint64_t n;
  if constexpr (std::is_signed_v<Int>) {
    loop_spec s = signed_loop(start, end, step, sched_static, 0);
    n = s.total;
  } else {
    bool up = flags & GOMP_TASK_FLAG_UP;
    unsigned __int128 span = up ? (end > start ? end - start : 0) : (start > end ? start - end : 0);
    Int stride = up ? step : -step;
    n = span ? static_cast<std::uint64_t>((span + stride - 1) / stride) : 0;
  }
  bool group = !(flags & GOMP_TASK_FLAG_NOGROUP);
  if (group) core::taskgroup_begin(w);
  if (flags & GOMP_TASK_FLAG_REDUCTION) {
    auto* d = reinterpret_cast<std::uintptr_t**>(data)[2];
    register_reductions(group ? innermost_group(w) : nullptr, d, m.crew->size, 1);
  }
  if (n > 0) {
    std::uint64_t tasks, base, extra = 0;
    bool strict = flags & GOMP_TASK_FLAG_STRICT;
    if (flags & GOMP_TASK_FLAG_GRAINSIZE) {
      std::uint64_t g = num_tasks ? num_tasks : 1;
      if (strict) {
        tasks = (n + g - 1) / g;
        base = g;
      } else {
        tasks = n / g ? n / g : 1;
        base = n / tasks;
        extra = n % tasks;
      }
    } else {
      tasks = num_tasks ? num_tasks : static_cast<std::uint64_t>(m.crew->size);
      if (tasks > n) tasks = n;
      base = n / tasks;
      extra = n % tasks;
    }
    task_request r{
        fn,
        data,
        cpyfn,
        arg_size,
        arg_align,
        (flags & GOMP_TASK_FLAG_IF) != 0,
        (flags & (GOMP_TASK_FLAG_UNTIED | GOMP_TASK_FLAG_FINAL | GOMP_TASK_FLAG_MERGEABLE)) | GOMP_TASK_FLAG_PRIORITY,
        nullptr,
        priority,
        nullptr};
    r.has_bounds = true;
    std::uint64_t first = 0;
    for (std::uint64_t i = 0; i < tasks && first < n; ++i) {
      std::uint64_t len = base + (i < extra ? 1 : 0);
      std::uint64_t last = first + len < n ? first + len : n;
      Int lo = static_cast<Int>(start + static_cast<Int>(first) * step);
      Int hi = static_cast<Int>(start + static_cast<Int>(last) * step);
      std::memcpy(&r.bounds[0], &lo, sizeof lo);
      std::memcpy(&r.bounds[1], &hi, sizeof hi);
      spawn(w, r);
      first = last;
    }
  }
  if (group) core::taskgroup_end(w);
}

}  // namespace

void register_reductions(core::taskgroup* g, std::uintptr_t* d, int threads, int holders) {
  std::size_t chunk = d[1];
  std::size_t align = d[2] > 64 ? d[2] : 64;
  std::size_t bytes = chunk * static_cast<std::size_t>(threads);
  void* raw = std::malloc(bytes + align);
  if (!raw) fatal("task reduction: out of memory for the private copies");
  std::uintptr_t base = (reinterpret_cast<std::uintptr_t>(raw) + align - 1) & ~(align - 1);
  std::memset(reinterpret_cast<void*>(base), 0, bytes);
  auto* b = new reduction_block{{holders}, raw};
  d[2] = base;
  d[5] = reinterpret_cast<std::uintptr_t>(b);
  d[6] = base + bytes;
  if (g) {
    d[4] = reinterpret_cast<std::uintptr_t>(g->reductions);
    g->reductions = d;
  } else {
    d[4] = 0;
  }
}

}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

GOMP_API void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                        bool if_clause, unsigned flags, void** depend, int priority, void* detach) {
  worker& w = self();
  if (config().cancellation && cancelled_here(w)) return;
  spawn(w, task_request{fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach});
}

GOMP_API void GOMP_taskwait(void) {
  worker& w = self();
  // No child made since the last wait and no parent state (so no error to collect): nothing to do,
  // and no call. A leaf of a recursion, or a task whose children all ran included: 26 of the 32
  // instructions per call of a one-thread recursive tree.
  const task* c = w.current;
  if (c->children_created == 0 && !c->state.load(std::memory_order_acquire)) return;
  weft::core::taskwait(w);
}

GOMP_API void GOMP_taskwait_depend(void** depend) {
  worker& w = self();
  task* t = weft::core::allocate_task(w, nothing, 0, WEFT_TASK_UNDEFERRED);
  if (!t) fatal("taskwait depend: out of memory");
  add_depends(w, t, depend);
  weft::core::submit_task(w, t);
}

// taskwait depend(...) nowait (GCC 13): an empty task with those dependences, deferred like any
// other, so that later tasks that depend on it wait for what it waits for.
GOMP_API void GOMP_taskwait_depend_nowait(void** depend) {
  worker& w = self();
  task* t = weft::core::allocate_task(w, nothing, 0, 0);
  if (!t) fatal("taskwait depend nowait: out of memory");
  add_depends(w, t, depend);
  weft::core::submit_task(w, t);
}

// A scheduling point: the task steps aside while other ready work runs (no stack grows).
GOMP_API void GOMP_taskyield(void) {
  weft::core::taskyield(self());
}

GOMP_API void GOMP_taskgroup_start(void) {
  weft::core::taskgroup_begin(self());
}

GOMP_API void GOMP_taskgroup_end(void) {
  worker& w = self();
  if (weft::core::taskgroup_end(w) == WEFT_ERR_NO_TASKGROUP) fatal("GOMP_taskgroup_end without a matching taskgroup");
}

GOMP_API void GOMP_taskgroup_reduction_register(std::uintptr_t* d) {
  worker& w = self();
  weft::core::taskgroup* g = innermost_group(w);
  if (!g) fatal("taskgroup task_reduction outside a taskgroup");
  register_reductions(g, d, current().crew->size, 1);
}

GOMP_API void GOMP_taskgroup_reduction_unregister(std::uintptr_t* d) {
  release_reductions(d);
}

GOMP_API void GOMP_workshare_task_reduction_unregister(bool cancelled) {
  worker& w = self();
  weft::core::taskgroup* g = innermost_group(w);
  auto* d = g ? static_cast<std::uintptr_t*>(g->reductions) : nullptr;
  weft::core::taskgroup_end(w);
  if (!cancelled) barrier(w, current());
  if (d) release_reductions(d);
}

GOMP_API void GOMP_task_reduction_remap(std::size_t cnt, std::size_t cntorig, void** ptrs) {
  worker& w = self();
  std::uintptr_t tid = static_cast<std::uintptr_t>(current().thread_num);
  for (std::size_t i = 0; i < cnt; ++i) {
    auto p = reinterpret_cast<std::uintptr_t>(ptrs[i]);
    bool found = false;
    weft::core::taskgroup* g = innermost_group(w);
    while (g && !found) {
      for (auto* d = static_cast<std::uintptr_t*>(g->reductions); d && !found;
           d = reinterpret_cast<std::uintptr_t*>(d[4])) {
        for (std::uintptr_t j = 0; j < d[0]; ++j) {
          std::uintptr_t orig = d[7 + 3 * j], offset = d[7 + 3 * j + 1];
          bool inside = p >= d[2] && p < d[6] && (p - d[2]) % d[1] == offset;
          if (p == orig || inside) {
            ptrs[i] = reinterpret_cast<void*>(d[2] + tid * d[1] + offset);
            if (i < cntorig) ptrs[cnt + i] = reinterpret_cast<void*>(orig);
            found = true;
            break;
          }
        }
      }
      weft::core::taskgroup* next = g->outer ? g->outer : (g->owner ? g->owner->group : nullptr);
      g = next == g ? nullptr : next;
    }
    if (!found) fatal("in_reduction: the variable is not a reduction item of any enclosing taskgroup or region");
  }
}

GOMP_API void GOMP_taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                            unsigned flags, unsigned long num_tasks, int priority, long start, long end, long step) {
  taskloop<long>(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
}

GOMP_API void GOMP_taskloop_ull(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                                long arg_align, unsigned flags, unsigned long num_tasks, int priority,
                                unsigned long long start, unsigned long long end, unsigned long long step) {
  taskloop<unsigned long long>(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
}

GOMP_API void omp_fulfill_event(std::uintptr_t handle) {
  // Any thread may fulfil: a foreign one is not adopted (the completion is finished by a worker).
  auto* e = reinterpret_cast<weft::fiber::event*>(handle & ((std::uintptr_t{1} << generation_shift) - 1));
  auto generation = static_cast<std::uint16_t>(handle >> generation_shift);
  if (!e || !weft::core::instance || !e->live.load(std::memory_order_acquire) ||
      static_cast<std::uint16_t>(e->generation.load(std::memory_order_relaxed)) != generation ||
      weft::fiber::fulfil_event(e, false) != WEFT_OK)
    fatal("omp_fulfill_event: the event handle is not valid or was already fulfilled");
}

// --- cancellation ---------------------------------------------------------------------------------
GOMP_API bool GOMP_cancellation_point(int which) {
  if (!config().cancellation) return false;
  member& m = current();
  switch (which) {
    case GOMP_CANCEL_PARALLEL:
      return m.crew->cancelled.load(std::memory_order_relaxed);
    case GOMP_CANCEL_LOOP:
    case GOMP_CANCEL_SECTIONS:
      return m.crew->cancelled.load(std::memory_order_relaxed) ||
             (m.ws && m.ws->cancelled.load(std::memory_order_relaxed));
    case GOMP_CANCEL_TASKGROUP: {
      worker& w = self();
      return cancelled_here(w);
    }
    default:
      return false;
  }
}

GOMP_API bool GOMP_cancel(int which, bool do_cancel) {
  if (!config().cancellation) return false;
  if (!do_cancel) return GOMP_cancellation_point(which);
  member& m = current();
  switch (which) {
    case GOMP_CANCEL_PARALLEL:
      m.crew->cancelled.store(true, std::memory_order_seq_cst);  // seq_cst: wakes sleepers safely
      wake_members(m.crew, m.thread_num);                        // members waiting in a cancellable barrier leave it
      return true;
    case GOMP_CANCEL_LOOP:
    case GOMP_CANCEL_SECTIONS:
      if (m.ws) m.ws->cancelled.store(true, std::memory_order_relaxed);
      return true;
    case GOMP_CANCEL_TASKGROUP: {
      worker& w = self();
      if (weft::core::taskgroup* g = innermost_group(w)) {
        if (g->hidden && g->outer) g = g->outer;  // a worksharing task reduction's own group
        g->cancelled.store(true, std::memory_order_relaxed);
      }
      return true;
    }
    default:
      fatal("GOMP_cancel: unknown construct kind");
  }
}

}  // extern "C"
