// The waits a worker does while it holds a task: running what the wait needs on its stack,
// parking the context otherwise, and (for team barriers and finalize) running any ready work.
#pragma once

#include <sched.h>

#include "fiber/poller.hpp"

namespace weft::core {

inline constexpr int max_nesting = 256;

template <class Slots, class Cond, class RunHere>
worker& wait_published(worker& w0, Slots&& slots, Cond&& cond, RunHere&& run_here, fiber::wait_kind why,
                       const void* on) {
  worker* w = &w0;
  for (;;) {
    // The waited-for counts may sit in this worker's batch (when the next task here is a child
    // of the waiting one, the wait is not over: its count is reported with the last of them).
    // Only a taskgroup's wait needs this worker's group account settled.
    if (why == fiber::wait_kind::taskgroup) {
      if (!next_is_child(*w)) flush_finished_children(*w);
    } else if (w->batch_finished && !next_is_child(*w)) {
      flush_parent_batch(*w);
    }
    if (cond()) {
      trace_busy(*w);
      return *w;
    }
    if (run_here(*w)) {
      w = worker_after_switch();
      continue;
    }
    std::uint64_t ticket = begin_wait(*w);
    // seq_cst (with the re-check below and the waker's reads): the waker either finds this
    // ticket or the re-check sees the condition it made true. The slots may be made here (a
    // taskwait's parent state): made with seq_cst too, so that a waker that found none finished
    // before the re-check below.
    park_slot slot = slots(*w);
    slot.context.store(w->context, std::memory_order_seq_cst);
    slot.ticket.store(ticket, std::memory_order_seq_cst);
    if (cond()) return *w;
    w = &park(*w, ticket, why, on);
  }
}

template <class Done>
worker& run_until(worker& w0, Done&& done, const park_slot* slot, const wake_word* wake) {
  worker* w = &w0;
  int spins = 0;
  auto ready = [](void* d) { return (*static_cast<std::remove_reference_t<Done>*>(d))(); };
  for (;;) {
    // done() may depend on counts this worker holds back: those of the waiting task's children or
    // of a taskgroup it opened. They are reported before done() is read, unless the next task to
    // run here is itself a child of the waiting task: then the wait is not over anyway, and the
    // report (an atomic on a line the other children share) waits for the last of them. Counts for
    // other tasks stay batched while there is work (a team barrier's waiters run each other's
    // tasks); idle_wait reports them before sleeping.
    if (((w->batch_finished && w->batch_parent == w->current) ||
         (w->group_owed && w->batch_group->owner == w->current)) &&
        !next_is_child(*w))
      flush_finished_children(*w);
    if (done()) break;
    // A context to resume (tied to this worker, or untied in its queue) runs while this one
    // steps aside on the yielded list; so does a loop fiber when the stack runs short.
    if (fiber::context* c = take_resumable(*w)) {
      w = &yield_until(*w, ready, &done, fiber::wait_kind::barrier, c);
      continue;
    }
    // A gang member waiting for a worker starts on a loop fiber while this context steps aside.
    if (w->gang_start || gang_members_waiting()) {
      if (!w->gang_start) w->gang_start = take_gang_member(*w);
      if (w->gang_start) {
        w = &yield_until(*w, ready, &done, fiber::wait_kind::barrier);
        continue;
      }
    }
    if (fiber::pollers_active()) fiber::poll_all(w->id);
    if (deferred_pending.load(std::memory_order_relaxed)) run_deferred(*w);
    if (!stack_has_room(*w)) {
      w = &yield_until(*w, ready, &done, fiber::wait_kind::barrier);
      continue;
    }
    if (task* t = find_work(*w)) {
      spins = 0;
      if (w->idle.load(std::memory_order_relaxed)) w->idle.store(false, std::memory_order_relaxed);
      if (fiber::context* c = resumable_of(t)) {
        w = &yield_until(*w, ready, &done, fiber::wait_kind::barrier, c);
      } else {
        execute_task(*w, t);
        w = worker_after_switch();
      }
      continue;
    }
    // A fiber-run member parks, after a short spin when nothing else waits for this worker: the
    // member it waits for may need this worker, whose loop goes on with what stepped aside here.
    if (slot) {
      if (!w->yielded && !w->inbox.load(std::memory_order_relaxed) &&
          ++spins < (instance->oversubscribed.load(std::memory_order_relaxed) ? 0 : 256)) {
        for (int i = 0; i < 16; ++i) __builtin_ia32_pause();
        continue;
      }
      spins = 0;
      std::uint64_t ticket = begin_wait(*w);
      // seq_cst: pairs with the waker, as in wait_published.
      slot->context.store(w->context, std::memory_order_seq_cst);
      slot->ticket.store(ticket, std::memory_order_seq_cst);
      if (done()) continue;
      w = &park(*w, ticket, fiber::wait_kind::barrier, slot->on);
      continue;
    }
    // A context parked here has ready tasks in its role that only this worker's loop may run.
    if (!w->parked_roles.empty() && parked_role_with_work(*w)) {
      w = &yield_until(*w, ready, &done, fiber::wait_kind::barrier);
      continue;
    }
    // Contexts that stepped aside on this worker (yielding tasks, throttled producers) are part of
    // the work this wait may need.
    // Nothing else to run: a throttled producer goes on over the bound rather than wait for the
    // live count to fall, which may need what it has yet to create (a recursive tree under a
    // team barrier hung so). Other yielded contexts wait for their condition.
    if (w->yielded) {
      fiber::context* c = take_yielded(*w, false);
      if (!c) c = take_throttled(*w);
      if (c) {
        spins = 0;
        w = &yield_until(*w, ready, &done, fiber::wait_kind::barrier, c);
        continue;
      }
    }
    idle_wait(*w, ready, &done, spins, wake);
  }
  trace_busy(*w);  // the waiting task goes on
  // Back to the waiting code: a task body (nesting says it is busy) or the program's own code in
  // an implicit task, which runs no task until its next wait, so it counts as idle for the
  // producers that hold back for busy members (hold_throttled).
  if (!w->idle.load(std::memory_order_relaxed)) w->idle.store(true, std::memory_order_relaxed);
  return *w;
}

template <class Ready>
void wait_until(worker& w, Ready&& ready) {
  flush_finished_children(w);  // nobody may wait on counts this worker keeps while it waits
  for (int spins = 0;; ++spins) {
    if (ready()) return;
    int spin_rounds = instance->spin_rounds.load(std::memory_order_relaxed);
    if (spins < spin_rounds) {
      // One pause per check at first: the waits here (a pooled or bound team member waiting for
      // its next region) are usually over within a microsecond, and polling steals nothing.
      int pauses = spins < 512 ? 1 : 16;
      for (int i = 0; i < pauses; ++i) __builtin_ia32_pause();
    } else if (instance->cfg.wait == wait_policy::active ||
               (spins < spin_rounds + 50 && !(instance->oversubscribed.load(std::memory_order_relaxed) && yields_stall(w)))) {
      yield_core(w, false);
    } else {
      note_asleep(w, true);
      instance->pool_park.sleep_woken_directly(w.sleep_word, ready, 0);
      note_asleep(w, false);
    }
  }
}

}  // namespace weft::core
