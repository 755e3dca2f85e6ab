// Events: a task can wait on one (its context parks until it is fulfilled) or bind one to its
// completion (its successors are released only once the event is fulfilled, while its stack is
// already free). Fulfilled from any thread, a poller, or a signal handler.
#pragma once

#include <atomic>
#include <cstdint>

namespace weft::core {
struct gang;
struct task;
struct worker;
}  // namespace weft::core

namespace weft::fiber {

struct context;

// A parked waiter, on the waiting context's stack. The fulfiller's last access is `done`.
struct event_waiter {
  event_waiter* next;
  context* ctx;
  std::uint64_t ticket;
  std::atomic<bool> done{false};
};

struct alignas(64) event {
  event* link;                             // free list of the pool; deferred-completion list
  std::atomic<std::int32_t> count;         // fulfilments still expected (0: fulfilled)
  std::atomic<std::int32_t> refs;          // the creator's, and one until fulfilled
  std::atomic<std::uint32_t> generation;   // bumped at each reuse (stale handles are caught)
  std::atomic<bool> live;                  // allocated (watchdog scans the pool)
  std::atomic<event_waiter*> waiters;      // fulfilled_mark once fulfilled
  std::atomic<core::task*> bound;          // task whose completion waits for it
  std::atomic<core::task*> deferred_task;  // bound task a worker completes (deferred fulfilment)
  std::atomic<const void*> bound_fn;       // the bound task's body (reports)
  // The bound task's gang (its role when bound): its successors become ready there, whichever
  // worker fulfils the event. Written before `bound` is published, which orders it (relaxed).
  std::atomic<core::gang*> crew;
};
static_assert(sizeof(event) == 64);

// keep: the creator holds a reference (released by destroy_event); otherwise the event is freed
// once fulfilled. Null when out of memory.
event* create_event(core::worker& w, std::int32_t count, bool keep = true);
// 0 on success, else a weft_status. signal_safe: only lock-free steps here, the rest deferred.
int fulfil_event(event* e, bool signal_safe);
int wait_event(core::worker& w, event* e);
int bind_event(core::worker& w, event* e);
int destroy_event(core::worker& w, event* e);
// Progress marker for the watchdog: events fulfilled so far.
std::uint64_t events_fulfilled();
// At shutdown, once every task has finished: waits for fulfilments still running on foreign
// threads or in signal handlers, then forgets the completion list.
void quiesce_foreign();
// Reports unfulfilled events with bound tasks or waiters (watchdog, stall at finalize).
int describe_events(char* out, std::size_t size);

}  // namespace weft::fiber
