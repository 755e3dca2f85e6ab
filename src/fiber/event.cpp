#include "fiber/event.hpp"

#include <dlfcn.h>
#include <weft/weft.h>

#include <cstdio>
#include <string>
#include <thread>

#include "core/engine.hpp"
#include "trace/names.hpp"

namespace weft::core {
// Completions of bound tasks whose events were fulfilled where a task cannot be completed (a
// foreign thread, a signal handler): a lock-free list that workers drain at scheduling points.
std::atomic<bool> deferred_pending{false};
}  // namespace weft::core

namespace weft::fiber {

namespace {

event_waiter* const fulfilled_mark = reinterpret_cast<event_waiter*>(1);
std::atomic<event*> deferred{nullptr};
std::atomic<std::uint64_t> fulfilled_count{0};
// Completions running where no worker is (foreign threads, signal handlers). Such a completion
// may let the program reach weft_finalize while it still wakes a worker or drops its reference:
// the runtime waits for this to reach zero before it frees anything (quiesce_foreign).
std::atomic<int> foreign_in_flight{0};

// Hands e to the workers' completion list (with the bound task to complete, or none) and wakes
// `worker`. Lock-free: signal handlers and foreign threads come here.
void defer(event* e, core::task* t, int worker) {
  e->deferred_task.store(t, std::memory_order_relaxed);
  event* head = deferred.load(std::memory_order_relaxed);
  do e->link = head;
  while (!deferred.compare_exchange_weak(head, e, std::memory_order_release, std::memory_order_relaxed));
  core::deferred_pending.store(true, std::memory_order_seq_cst);
  sched::idle_park::wake(core::instance->workers[worker]->sleep_word);
}

void free_event(core::worker& w, event* e) {
  e->live.store(false, std::memory_order_relaxed);
  w.event_cache.release(e);
}

void drop_ref(core::worker* w, event* e) {
  // acq_rel: whoever frees e has seen every other holder's last use.
  if (e->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (w) {
    free_event(*w, e);
    return;
  }
  // No worker here: a worker frees it (the completion list carries it).
  e->refs.store(1, std::memory_order_relaxed);  // the list's reference
  defer(e, nullptr, 0);
}

// The last fulfilment: wake the waiters, complete the bound task, drop the unfulfilled reference.
void complete(event* e, bool signal_safe) {
  core::worker* self = signal_safe ? nullptr : core::current_worker;
  // Relaxed: every release below that can let the program finish is ordered after it.
  if (!self) foreign_in_flight.fetch_add(1, std::memory_order_relaxed);
  // Progress for the watchdog: per worker (no shared line), else on the shared count.
  if (self)
    core::worker_counters::bump(self->counters.events_fulfilled);
  else
    fulfilled_count.fetch_add(1, std::memory_order_relaxed);
  // seq_cst (with bind_event's CAS and load): a bind racing with this sees the list closed, or
  // its task is found by the exchange of `bound` below.
  event_waiter* w = e->waiters.exchange(fulfilled_mark, std::memory_order_seq_cst);
  while (w) {
    // Everything needed is read before `done`: the waiter may leave (and its record with it) at once.
    event_waiter* next = w->next;
    context* ctx = w->ctx;
    std::uint64_t ticket = w->ticket;
    w->done.store(true, std::memory_order_seq_cst);
    if (notify(ctx, ticket)) core::make_resumable(ctx, signal_safe);
    w = next;
  }
  core::task* t = e->bound.exchange(nullptr, std::memory_order_seq_cst);
  if (t && self) {
    core::release_completion(*self, t, e->crew.load(std::memory_order_relaxed));
    // The caller may run long before its next scheduling point: report the completion now.
    core::flush_finished_children(*self);
  } else if (t) {
    e->refs.fetch_add(1, std::memory_order_relaxed);  // the list's reference
    defer(e, t, t->home);
  }
  drop_ref(self, e);
  if (!self) foreign_in_flight.fetch_sub(1, std::memory_order_release);
}

}  // namespace

event* create_event(core::worker& w, std::int32_t count, bool keep) {
  auto* e = static_cast<event*>(w.event_cache.allocate());
  if (!e) return nullptr;
  e->count.store(count, std::memory_order_relaxed);
  e->refs.store(keep ? 2 : 1, std::memory_order_relaxed);
  e->generation.store(e->generation.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  e->waiters.store(nullptr, std::memory_order_relaxed);
  e->bound.store(nullptr, std::memory_order_relaxed);
  e->deferred_task.store(nullptr, std::memory_order_relaxed);
  e->crew.store(nullptr, std::memory_order_relaxed);
  e->live.store(true, std::memory_order_release);
  return e;
}

int fulfil_event(event* e, bool signal_safe) {
  std::int32_t left = e->count.fetch_sub(1, std::memory_order_acq_rel) - 1;
  if (left < 0) {
    e->count.fetch_add(1, std::memory_order_relaxed);
    return WEFT_ERR_EVENT_FULFILLED;
  }
  if (left == 0) complete(e, signal_safe);
  return WEFT_OK;
}

int wait_event(core::worker& w, event* e) {
  event_waiter me;
  me.ctx = w.context;
  me.ticket = core::begin_wait(w);
  me.next = e->waiters.load(std::memory_order_acquire);
  do {
    if (me.next == fulfilled_mark) return WEFT_OK;
    // Release: publishes the record (context, ticket) to the fulfiller.
  } while (!e->waiters.compare_exchange_weak(me.next, &me, std::memory_order_acq_rel, std::memory_order_acquire));
  // One ticket for the whole wait: only this event's fulfiller presents it.
  core::worker* now = &w;
  while (!me.done.load(std::memory_order_acquire)) now = &core::park(*now, me.ticket, wait_kind::event, e);
  return WEFT_OK;
}

int bind_event(core::worker& w, event* e) {
  core::task* t = w.current;
  if (t->flags & core::flag_root) return WEFT_ERR_NOT_A_WORKER;  // no task to hold
  if (e->bound.load(std::memory_order_acquire)) return WEFT_ERR_EVENT_BOUND;  // before its gang is touched
  core::hold_completion(t);
  e->crew.store(w.crew, std::memory_order_relaxed);
  core::task* expected = nullptr;
  e->bound_fn.store(reinterpret_cast<const void*>(t->fn), std::memory_order_relaxed);
  if (!e->bound.compare_exchange_strong(expected, t, std::memory_order_seq_cst, std::memory_order_acquire)) {
    core::release_completion(w, t);  // undo the hold (the body still runs: not the last)
    return WEFT_ERR_EVENT_BOUND;
  }
  // Fulfilled before the bind was seen: complete's exchange of `bound` may have missed it. It
  // closes the waiter list first; whichever exchange of `bound` gets the task releases it.
  if (e->waiters.load(std::memory_order_seq_cst) == fulfilled_mark) {
    if (core::task* mine = e->bound.exchange(nullptr, std::memory_order_acq_rel)) core::release_completion(w, mine);
  }
  return WEFT_OK;
}

int destroy_event(core::worker& w, event* e) {
  drop_ref(&w, e);
  return WEFT_OK;
}

void quiesce_foreign() {
  while (foreign_in_flight.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  // Every task has finished, so what is left on the list only returns events to caches that go
  // with the runtime; a later runtime must not find these addresses.
  deferred.store(nullptr, std::memory_order_relaxed);
  core::deferred_pending.store(false, std::memory_order_relaxed);
}

std::uint64_t events_fulfilled() {
  std::uint64_t sum = fulfilled_count.load(std::memory_order_relaxed);
  core::runtime& rt = *core::instance;
  int n = rt.worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) sum += rt.workers[i]->counters.events_fulfilled.load(std::memory_order_relaxed);
  return sum;
}

int describe_events(char* out, std::size_t size) {
  core::runtime* rt = core::instance;
  if (!rt) return 0;
  std::size_t used = 0;
  int found = 0;
  out[0] = 0;
  trace::symbolizer names;  // program functions are mostly local symbols, which dladdr cannot see
  rt->event_depot.for_each_block([&](void* block) {
    auto* e = static_cast<event*>(block);
    if (!e->live.load(std::memory_order_acquire) || e->count.load(std::memory_order_relaxed) <= 0) return;
    ++found;
    if (used >= size) return;
    core::task* t = e->bound.load(std::memory_order_relaxed);
    int n;
    if (t) {
      std::string name = names.name_of(e->bound_fn.load(std::memory_order_relaxed));
      n = std::snprintf(
          out + used, size - used, "  event %p: %d fulfilment(s) missing; task %p (%s) cannot complete until then\n",
          static_cast<void*>(e), e->count.load(std::memory_order_relaxed), static_cast<void*>(t), name.c_str());
    } else {
      n = std::snprintf(out + used, size - used, "  event %p: %d fulfilment(s) missing%s\n", static_cast<void*>(e),
                        e->count.load(std::memory_order_relaxed),
                        e->waiters.load(std::memory_order_relaxed) ? "; tasks wait on it" : "");
    }
    if (n > 0) used += static_cast<std::size_t>(n);
  });
  return found;
}

}  // namespace weft::fiber

namespace weft::core {

void run_deferred(worker& w) {
  if (!deferred_pending.exchange(false, std::memory_order_acq_rel)) return;
  fiber::event* e = fiber::deferred.exchange(nullptr, std::memory_order_acquire);
  while (e) {
    fiber::event* next = e->link;
    if (task* t = e->deferred_task.exchange(nullptr, std::memory_order_relaxed))
      release_completion(w, t, e->crew.load(std::memory_order_relaxed));
    fiber::drop_ref(&w, e);
    e = next;
  }
  flush_finished_children(w);
}

}  // namespace weft::core
