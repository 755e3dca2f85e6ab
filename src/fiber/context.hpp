// Execution contexts: the stacks tasks run on, and switching between them.
//
// A context is either a thread's own stack or a fiber: a pooled stack with a guard page below it.
// Tasks run on whatever context their worker is on; a context is only set aside when a task on it
// blocks (it is then "parked" until woken, or "yielded" until its worker finds it ready again), and
// the worker goes on with another context. The switch itself is Boost.Context's fcontext.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft::core {
struct task;
struct gang;
struct worker;
}  // namespace weft::core

namespace weft::fiber {

using fcontext = void*;

// Why a parked context waits (watchdog reports).
enum class wait_kind : std::uint8_t { none, children, taskgroup, event, predecessors, yield, throttle, barrier, graph };
// Traces record these numbers (task_suspend's c, docs/trace-format.md): keep them.
static_assert(static_cast<int>(wait_kind::yield) == 5 && static_cast<int>(wait_kind::throttle) == 6 &&
              static_cast<int>(wait_kind::barrier) == 7 && static_cast<int>(wait_kind::graph) == 8);
const char* describe(wait_kind k);

// The wake word of a context: a ticket per wait in the upper bits, the state in the lowest two.
// A waker names the ticket it was given, so a late wake-up for an earlier wait is recognised and
// dropped instead of resuming a context that waits for something else (or sits in a pool).
inline constexpr std::uint64_t wake_running = 0, wake_parked = 1, wake_notified = 2;

struct alignas(64) context {
  fcontext resume_at = nullptr;  // where it continues when switched to
  char* stack_low = nullptr;     // lowest usable address (above the guard page)
  std::size_t stack_size = 0;    // usable bytes
  // A frame above this address leaves the reserve a wait keeps free before it runs more tasks on
  // this stack (a quarter of it, 64 KiB at least); set with stack_low (set_stack).
  const char* stack_floor = nullptr;
  void set_stack(char* low, std::size_t size) {
    stack_low = low;
    stack_size = size;
    std::size_t reserve = size / 4 > (std::size_t{64} << 10) ? size / 4 : std::size_t{64} << 10;
    stack_floor = low + (reserve < size ? reserve : size);
  }
  bool thread_stack = false;     // a thread's own stack: only that thread's worker may resume it
  std::atomic<int> owner{-1};    // worker it runs on or last ran on (relaxed: reports read it)
  int tied_frames = 0;           // tied tasks running on it: it may only resume on `owner`
  core::gang* crew = nullptr;    // gang it ran in when it parked (an untied resume stays in it)
  // The worker's role (core::role) when it was set aside: gang above, and the queue and door
  // state here; restored where it resumes (see sched's enter). Portable: a fiber-run gang
  // member's, which resumes through its owner's inbox, never a gang's queue.
  bool portable = false;
  void* role_queue = nullptr;
  void* role_door = nullptr;
  void* door_stash = nullptr;          // the door's per-context state while set aside (core's door_context_*)
  std::atomic<std::uint64_t> wake{0};  // see wake_* above
  // The worker's view of the running task, kept while parked and restored on resume.
  core::task* saved_current = nullptr;
  int saved_nesting = 0;
  // A throttled producer with many children of its own (a flat producer, not a node of a tree):
  // its worker holds it back while another member of its gang is busy (hold_throttled).
  bool hold_when_busy = false;
  // Why it waits, for the watchdog (relaxed: read racily by the reporting thread).
  std::atomic<wait_kind> waiting_for{wait_kind::none};
  std::atomic<const void*> waiting_on{nullptr};
  std::atomic<core::task*> waiting_task{nullptr};
  std::atomic<const void*> waiting_fn{nullptr};  // its body, or null for an implicit task
  // A yielded context is resumed by its worker's loop when ready(arg) holds.
  bool (*ready)(void*) = nullptr;
  void* ready_arg = nullptr;
  context* next = nullptr;                        // fiber cache, yielded list (owner only)
  std::atomic<context*> next_resumable{nullptr};  // resume inbox (lock-free)
  // Sanitizer bookkeeping (unused in normal builds).
  void* tsan_fiber = nullptr;
  void* asan_fake_stack = nullptr;
  const void* asan_bottom = nullptr;
  std::size_t asan_size = 0;
  context* registered_next = nullptr;  // every fiber ever made (watchdog, finalize)
  void (*entry)() = nullptr;           // a fiber's body (never returns)

};

// Starts a wait: a new ticket for ctx, in the running state. The caller publishes (ctx, ticket)
// where its waker finds it, then parks (see sched) unless the condition already holds.
inline std::uint64_t begin_wait(context* ctx) {
  std::uint64_t ticket = (ctx->wake.load(std::memory_order_relaxed) >> 2) + 1;
  // Relaxed: the caller publishes the ticket with a release (or stronger) operation afterwards.
  ctx->wake.store(ticket << 2 | wake_running, std::memory_order_relaxed);
  return ticket;
}

// A waker's side: true when the caller must make ctx resumable (it was parked on this ticket).
// A context still running its wait sees the notification when it tries to park.
inline bool notify(context* ctx, std::uint64_t ticket) {
  std::uint64_t v = ctx->wake.load(std::memory_order_acquire);
  for (;;) {
    if ((v >> 2) != ticket || (v & 3) == wake_notified) return false;  // stale, or already told
    // acq_rel: the waker's effects (the condition it satisfied) reach the resumed waiter.
    if (ctx->wake.compare_exchange_weak(v, ticket << 2 | wake_notified, std::memory_order_acq_rel,
                                        std::memory_order_acquire))
      return (v & 3) == wake_parked;
  }
}

// The parking side, run right after the context was left: false when a notification came first
// (the context must be resumed at once).
inline bool try_park(context* ctx, std::uint64_t ticket) {
  std::uint64_t expected = ticket << 2 | wake_running;
  return ctx->wake.compare_exchange_strong(expected, ticket << 2 | wake_parked, std::memory_order_acq_rel,
                                           std::memory_order_acquire);
}

// --- stacks -------------------------------------------------------------------------------------
// Stack size for fibers: `requested` bytes when non-zero, else the process's stack limit (the size
// a thread's stack has), rounded to pages, between 64 KiB and 1 GiB.
std::size_t fiber_stack_size(std::size_t requested);
// A new fiber whose first switch-in runs entry() on its own stack. Records are never freed until
// release_all_fibers: a late reader of a context pointer reads a context.
context* make_fiber(std::size_t stack_size, void (*entry)());
// Unmaps every fiber made by make_fiber (the runtime is stopping; none may be running).
void release_all_fibers();
// Gives the physical pages of a cached fiber's stack back to the system (the mapping stays).
void trim_stack(context* ctx);
// Fibers made so far (statistics, tests).
std::int64_t fibers_made();
// Calls fn(ctx) for every fiber made (watchdog); racy reads are relaxed atomics.
void for_each_fiber(void (*fn)(context*, void*), void* arg);

// The calling thread's own stack as a context (bounds from pthread_getattr_np).
void init_thread_context(context* ctx);

// --- switching ------------------------------------------------------------------------------------
// Leaves `from` (running on this thread) for `to`. On arrival, after(from, arg) runs on `to`'s
// stack before `to` goes on: it publishes `from` (parks it, caches it, queues it) now that its
// state is saved and nobody can resume it twice. Returns when something switches back to `from`.
void switch_to(context* from, context* to, void (*after)(context* from, void* arg), void* arg);

}  // namespace weft::fiber
