// Suspension: parking and yielding contexts, resuming them, and the workers' scheduling loop that
// runs on loop fibers.
//
// A task never pays for this unless it blocks: tasks run on whatever stack their worker is on. A
// blocking task's context is set aside and the worker switches to a loop fiber (a spare one, whose
// loop simply goes on, or a new one). Resuming a context from a loop at its top gives the loop
// fiber back to the worker's spares. Contexts that hold a tied task, and threads' own stacks,
// resume only on their worker (its inbox); the others go to the ready queue of the worker that
// woke them and may be stolen like tasks.
#include <cstdio>
#include <cstdlib>

#include "core/dependency_domain.hpp"
#include "core/engine.hpp"
#include "fiber/poller.hpp"

namespace weft::core {

namespace {

constexpr int spare_fibers_per_worker = 4;

fiber::context* spare_loop_fiber(worker& w) {
  if (fiber::context* c = w.spare_fibers) {
    w.spare_fibers = c->next;
    --w.spare_count;
    return c;
  }
  runtime& rt = *instance;
  {
    std::lock_guard<std::mutex> g(rt.fiber_lock);
    if (!rt.spare_fibers.empty()) {
      fiber::context* c = rt.spare_fibers.back();
      rt.spare_fibers.pop_back();
      return c;
    }
  }
  return fiber::make_fiber(rt.fiber_stack, worker_loop);
}

// `after` of a switch away from a loop fiber at its top: it becomes a spare of the worker now
// running (its loop goes on from there when it is next switched to).
void keep_loop_fiber(fiber::context* from, void*) {
  worker& w = *worker_after_switch();
  from->tied_frames = 0;
  if (w.spare_count < spare_fibers_per_worker) {
    from->next = w.spare_fibers;
    w.spare_fibers = from;
    ++w.spare_count;
    return;
  }
  // Beyond the worker's few, stacks go to the runtime's spares with their pages given back.
  fiber::trim_stack(from);
  runtime& rt = *instance;
  std::lock_guard<std::mutex> g(rt.fiber_lock);
  rt.spare_fibers.push_back(from);
}

void park_after(fiber::context* from, void* ticket) {
  if (!fiber::try_park(from, reinterpret_cast<std::uintptr_t>(ticket))) make_resumable(from);
}

void yield_after(fiber::context* from, void*) {
  worker& w = *worker_after_switch();
  // Appended: yielded contexts are resumed oldest first.
  from->next = nullptr;
  fiber::context** tail = &w.yielded;
  while (*tail) tail = &(*tail)->next;
  *tail = from;
}

void list_parked_role(worker& w, const role& r) {
  for (auto& p : w.parked_roles)
    if (p.r.queue == r.queue && p.r.crew == r.crew) {
      ++p.contexts;
      return;
    }
  w.parked_roles.push_back({r, 1});
}

void unlist_parked_role(worker& w, const gang* crew, const sched::work_deque<task*>* queue) {
  auto& roles = w.parked_roles;
  for (std::size_t i = 0; i < roles.size(); ++i)
    if (roles[i].r.queue == queue && roles[i].r.crew == crew) {
      if (--roles[i].contexts == 0) {
        roles[i] = roles.back();
        roles.pop_back();
      }
      return;
    }
}

// Saves the worker's view of the running context into it.
void set_aside(worker& w, fiber::context* self, fiber::wait_kind why, const void* on) {
  // A replayed task run inline blocks: what it waits for may be a task recorded after it.
  if (w.inline_graph) [[unlikely]]
    graph_leave_inline(w, true);
  flush_finished_children(w);  // nobody may wait for counts this worker holds while it is away
  self->saved_current = w.current;
  self->saved_nesting = w.nested();
  self->crew = w.crew;
  self->portable = w.portable;
  self->role_queue = w.queue;
  self->role_door = door_role_get ? door_role_get() : nullptr;
  if (door_context_leave) door_context_leave(self);
  self->owner.store(w.id, std::memory_order_relaxed);
  self->waiting_for.store(why, std::memory_order_relaxed);
  self->waiting_on.store(on, std::memory_order_relaxed);
  self->waiting_task.store(w.current, std::memory_order_relaxed);
  self->waiting_fn.store(w.current->flags & flag_root ? nullptr : reinterpret_cast<const void*>(w.current->fn),
                         std::memory_order_relaxed);
  worker_counters::bump(w.counters.suspensions);
  if (trace::on && trace_id(w.current)) [[unlikely]] {
    trace::record(w.trace, trace::event_type::task_suspend, trace_id(w.current), 0, static_cast<std::uint32_t>(why));
    trace::counters_at_suspend(w.trace, trace_id(w.current));
  }
}

void serve_parked_role(worker& w, const role& r) {
  adopt_role(w, r);
  w.portable = true;
}

// The worker's own loop serves its home role again (a fiber-run member stepped aside or ended).
void go_home(worker& w) {
  adopt_role(w, w.home);
  w.portable = false;
}

// Makes `to` the worker's running context (its view restored) before switching to it.
void enter(worker& w, fiber::context* to) {
  // A context resumes in the role it had: a fiber-run member's anywhere, any other on the worker
  // it stepped aside on (which may serve another team by now: a nested region it entered since).
  // An untied context that moved was taken from a queue of its gang, the role this worker serves:
  // it keeps that role, or the worker's home role when home is in the same gang. Not home in
  // another gang: a worker whose thread is inside a nested region, serving the enclosing team for
  // a member parked here, would run the task as the nested team's (its level, its queues), and
  // the task would resume into that team after the team had ended.
  if (to->portable || to->owner.load(std::memory_order_relaxed) == w.id) {
    adopt_role(w, role{to->crew, static_cast<sched::work_deque<task*>*>(to->role_queue), to->role_door});
    w.portable = to->portable;
  } else if (w.portable && w.home.crew == to->crew) {
    go_home(w);
  }
  w.context = to;
  w.current = to->saved_current;
  w.set_nested(to->saved_nesting);
  if (to->door_stash) door_context_enter(to);  // after the role: the door's state is back in place
  to->owner.store(w.id, std::memory_order_relaxed);
  to->waiting_for.store(fiber::wait_kind::none, std::memory_order_relaxed);
  worker_counters::bump(w.counters.resumes);
  if (trace::on) [[unlikely]] {  // one check while tracing is off
    trace_busy_event(w);
    if (trace_id(w.current)) trace::record(w.trace, trace::event_type::task_resume, trace_id(w.current));
  }
}

// A loop fiber taking over from a fiber-run member that stepped aside keeps serving that member's
// role while its team has ready tasks (nobody else serves its queue meanwhile), then goes home.
void enter_loop(worker& w, fiber::context* loop) {
  w.context = loop;
  w.current = &w.root;
  w.set_nested(0);
}

// From a loop at its top: resume `to`; this loop fiber becomes a spare.
void resume_from_loop(worker& w, fiber::context* to) {
  fiber::context* self = w.context;
  enter(w, to);
  fiber::switch_to(self, to, keep_loop_fiber, nullptr);
}

}  // namespace

// The yielded context to resume now: the first whose condition holds, or (when this worker has
// nothing else to run) the oldest.
fiber::context* take_yielded(worker& w, bool idle) {
  for (fiber::context** p = &w.yielded; *p; p = &(*p)->next) {
    fiber::context* c = *p;
    if (idle || c->ready(c->ready_arg)) {
      *p = c->next;
      return c;
    }
  }
  return nullptr;
}

fiber::context* take_throttled(worker& w) {
  for (fiber::context** p = &w.yielded; *p; p = &(*p)->next) {
    fiber::context* c = *p;
    if (c->waiting_for.load(std::memory_order_relaxed) == fiber::wait_kind::throttle) {
      *p = c->next;
      return c;
    }
  }
  return nullptr;
}

namespace {

bool has_resumable(void* arg) {
  auto& w = *static_cast<worker*>(arg);
  return w.resume_next || w.inbox.load(std::memory_order_relaxed) || w.yielded || w.gang_start ||
         gang_members_waiting() || deferred_pending.load(std::memory_order_relaxed) ||
         (w.crew == nullptr && w.job.load(std::memory_order_relaxed)) ||
         instance->stopping.load(std::memory_order_relaxed);
}

}  // namespace

std::uint64_t begin_wait(worker& w) {
  fiber::context* ctx = w.context;
  std::uint64_t ticket = ++w.ticket_seq;
  // Unique per context and increasing: a stale waker's ticket never matches a later wait.
  std::uint64_t current = ctx->wake.load(std::memory_order_relaxed) >> 2;
  if (ticket <= current) ticket = w.ticket_seq = current + 1;
  ctx->wake.store(ticket << 2 | fiber::wake_running, std::memory_order_seq_cst);
  return ticket;
}

worker& park(worker& w, std::uint64_t ticket, fiber::wait_kind why, const void* on) {
  fiber::context* self = w.context;
  set_aside(w, self, why, on);
  // Listed while it waits: only this worker can resume it (see has_bound_work), and its role's
  // queue may have nobody else to serve it (see parked_roles).
  const bool bound = self->thread_stack || self->tied_frames != 0 || self->portable;
  if (bound) list_parked_role(w, role{w.crew, w.queue, self->role_door});
  fiber::context* loop = spare_loop_fiber(w);
  enter_loop(w, loop);
  fiber::switch_to(self, loop, park_after, reinterpret_cast<void*>(static_cast<std::uintptr_t>(ticket)));
  worker& now = *worker_after_switch();  // resumed, perhaps on another worker (never when bound)
  if (bound) unlist_parked_role(now, self->crew, static_cast<sched::work_deque<task*>*>(self->role_queue));
  return now;
}

worker& yield_until(worker& w, bool (*ready)(void*), void* arg, fiber::wait_kind why, fiber::context* to) {
  fiber::context* self = w.context;
  set_aside(w, self, why, nullptr);
  self->ready = ready;
  self->ready_arg = arg;
  if (to) {
    enter(w, to);
  } else {
    to = spare_loop_fiber(w);
    enter_loop(w, to);
  }
  fiber::switch_to(self, to, yield_after, nullptr);
  return *worker_after_switch();
}

void make_resumable(fiber::context* ctx, bool signal_safe) {
  runtime& rt = *instance;
  worker* w = signal_safe ? nullptr : current_worker;
  // An untied context resumes anywhere in its gang: through this worker's own ready queue, where
  // it may run next here or be stolen. A fiber-run member's resumes on its owner (the gang's
  // queues may have nobody serving them).
  if (w && w->crew == ctx->crew && !ctx->thread_stack && ctx->tied_frames == 0 && !ctx->portable) {
    w->queue->push(resume_item(ctx));
    w->crew->park.notify_work();
    return;
  }
  worker& owner = *rt.workers[ctx->owner.load(std::memory_order_relaxed)];
  fiber::context* head = owner.inbox.load(std::memory_order_relaxed);
  do {
    ctx->next_resumable.store(head, std::memory_order_relaxed);
    // seq_cst: pairs with the owner's announcement before it sleeps (idle_park).
  } while (!owner.inbox.compare_exchange_weak(head, ctx, std::memory_order_seq_cst, std::memory_order_relaxed));
  sched::idle_park::wake(owner.sleep_word);
}

void wake_published(const std::atomic<fiber::context*>& slot_context, const std::atomic<std::uint64_t>& slot_ticket) {
  // seq_cst: either this reads the waiter's current ticket, or the waiter's re-check after
  // publishing it sees the condition this waker satisfied (see wait_published).
  fiber::context* ctx = slot_context.load(std::memory_order_seq_cst);
  std::uint64_t ticket = slot_ticket.load(std::memory_order_seq_cst);
  if (ctx && fiber::notify(ctx, ticket)) make_resumable(ctx);
}

fiber::context* take_resumable(worker& w) {
  if (!w.resume_next) {
    if (!w.inbox.load(std::memory_order_relaxed)) return nullptr;
    w.resume_next = w.inbox.exchange(nullptr, std::memory_order_acquire);
  }
  fiber::context* c = w.resume_next;
  w.resume_next = c->next_resumable.load(std::memory_order_relaxed);
  return c;
}

const role* parked_role_with_work(worker& w) {
  for (const auto& p : w.parked_roles)
    if (p.r.crew && p.r.queue != w.queue && work_visible(*p.r.crew)) return &p.r;
  return nullptr;
}

void* (*door_role_get)() = nullptr;
void (*door_role_set)(void*) = nullptr;
void (*door_context_leave)(fiber::context*) = nullptr;
void (*door_context_enter)(fiber::context*) = nullptr;
void (*door_task_end)(worker&, task*) = nullptr;
std::atomic<void (*)(worker&, task*)> door_task_begin{nullptr};

void adopt_role(worker& w, const role& r) {
  if (w.crew && (w.crew != r.crew || w.queue != r.queue)) spill_held(w);
  w.crew = r.crew;
  w.queue = r.queue;
  if (door_role_set) door_role_set(r.door);
}

void yield_context(worker& w, bool (*ready)(void*), void* arg) {
  yield_until(w, ready, arg, fiber::wait_kind::yield, nullptr);
}

namespace {
// A throttled producer whose bound still holds, a flat one (64 children of its own or more: a
// recursive tree's nodes, held so, piled up stacks), with nothing else to run here, waits rather
// than go on over its bound while another member of the gang runs a task or is not idle (it may hold
// ready tasks in its private slots): that member's progress is progress the producer need not
// make. A member descheduled in the middle of a task (a busy host) otherwise let the producer run
// ahead: 35,000 live tasks against a bound of 4,096 on 2 workers beside one busy process. Held
// for 2 ms at most, so that a task that waits for the producer in user code (a spin, a blocking
// call) delays it, never stops it; a task that blocks by suspending leaves its worker idle, and
// the producer goes on at once, as before.
constexpr std::int64_t throttle_hold_ns = 2'000'000;

bool hold_throttled(worker& w) {
  for (fiber::context* c = w.yielded; c; c = c->next)
    if (c->waiting_for.load(std::memory_order_relaxed) != fiber::wait_kind::throttle || !c->hold_when_busy ||
        c->ready(c->ready_arg))
      return false;
  const gang* g = w.crew;
  if (!g || g->size() < 2) return false;
  runtime& rt = *instance;
  bool busy = false;
  for (int id : g->members)
    if (id != w.id && (rt.workers[id]->nested() > 0 || !rt.workers[id]->idle.load(std::memory_order_relaxed))) {
      busy = true;
      break;
    }
  if (!busy) return false;
  std::int64_t now = steady_ns();
  if (w.hold_since == 0) w.hold_since = now;
  return now - w.hold_since < throttle_hold_ns;
}

// Nothing else to run here: the oldest yielded context goes on even if what it waits for has not
// happened (it looks again and steps aside). With more workers than cores the thread first gives
// its core up, which what it waits for may need (a lock holder, another member's turn).
bool resume_oldest_yielded(worker& w) {
  fiber::context* c = take_yielded(w, true);
  if (!c) return false;
  if (instance->oversubscribed.load(std::memory_order_relaxed) && !c->ready(c->ready_arg)) sched_yield();
  resume_from_loop(w, c);
  return true;
}
}  // namespace

void worker_loop() {
  int spins = 0;
  for (;;) {
    worker& w = *worker_after_switch();  // this loop fiber may have moved to another worker
    runtime& rt = *instance;
    w.current = &w.root;
    w.set_nested(0);
    // A gang member handed to this loop by a wait that stepped aside for it comes first.
    if (w.gang_start || gang_members_waiting()) {
      gang_job* j = w.gang_start;
      w.gang_start = nullptr;
      if (j || (j = take_gang_member(w))) {
        spins = 0;
        if (w.portable) go_home(w);  // a member starts from, and ends in, the worker's home role
        j->run(j, w);                // on this loop fiber, at its top
        continue;
      }
    }
    if (fiber::context* c = take_resumable(w)) {
      spins = 0;
      resume_from_loop(w, c);
      continue;
    }
    if (fiber::pollers_active()) fiber::poll_all(w.id);
    if (deferred_pending.load(std::memory_order_relaxed)) run_deferred(w);
    if (!w.crew) {
      // Gang members that stepped aside or parked here go on first (a pooled worker may run
      // members): the role of a parked one whose team has ready tasks, then a yielded one (which
      // may have stepped aside only for lack of stack, and would do so again at once).
      if (const role* r = parked_role_with_work(w)) {
        serve_parked_role(w, *r);
        continue;
      }
      if (w.yielded && resume_oldest_yielded(w)) continue;
      // Pooled (OpenMP door): wait for a team to serve, serve it, go back to the pool. The job
      // runs the member's implicit task: tied to this worker. Gang members reserved here, and
      // contexts to resume, end the wait too.
      wait_until(w, [&w, &rt] {
        return w.job.load(std::memory_order_acquire) || rt.stopping.load(std::memory_order_acquire) ||
               w.gang_queued.load(std::memory_order_seq_cst) > 0 || w.inbox.load(std::memory_order_seq_cst);
      });
      if (gang_job* j = w.job.exchange(nullptr, std::memory_order_acquire)) {
        fiber::context* self = w.context;
        ++self->tied_frames;
        j->run(j, w);
        --self->tied_frames;
        w.crew = nullptr;
        w.home = role{nullptr, &w.deque, door_role_get ? door_role_get() : nullptr};
        std::lock_guard<std::mutex> lock(rt.grow_lock);
        rt.pool.push_back(w.id);
        continue;
      }
    }
    if (rt.stopping.load(std::memory_order_acquire) && !w.yielded) {
      // Finalize saw every task finished, but the counts this worker batched for their parents may
      // not be reported yet: a parent whose last children finished here is fully done only now
      // (else its descriptor and parent state would never be recycled).
      flush_finished_children(w);
      if (w.trace.hw) trace::stop_counters(w.trace);  // PAPI event sets belong to their thread
      fiber::context* self = w.context;
      enter(w, &w.thread_context);
      fiber::switch_to(self, &w.thread_context, keep_loop_fiber, nullptr);
      continue;  // not reached: the thread's stack returns from run_worker_thread
    }
    if (!w.crew) continue;
    if (task* t = find_work(w)) {
      spins = 0;
      w.hold_since = 0;
      if (w.idle.load(std::memory_order_relaxed)) w.idle.store(false, std::memory_order_relaxed);
      // Ready tasks back to back while nothing else asks for this worker: resumable contexts,
      // pollers, deferred completions; yielded contexts are looked at every few tasks.
      worker* now = &w;
      for (int ran = 1;; ++ran) {
        if (fiber::context* c = resumable_of(t)) {
          resume_from_loop(*now, c);
          break;
        }
        execute_task(*now, t);
        if (worker_after_switch() != now) break;  // this fiber moved with a task that blocked
        if ((now->yielded && ran % 16 == 0) || now->resume_next || now->inbox.load(std::memory_order_relaxed) ||
            fiber::pollers_active() || deferred_pending.load(std::memory_order_relaxed) || gang_members_waiting())
          break;
        if (!(t = find_work(*now))) break;
      }
      now = worker_after_switch();
      if (now->yielded) {
        if (fiber::context* c = take_yielded(*now, false)) resume_from_loop(*now, c);
      }
      continue;
    }
    if (w.portable) {  // a stepped-aside member's team has nothing ready: home
      go_home(w);
      continue;
    }
    // A parked member's team has ready tasks again (this loop left its role for other work, or
    // they were spilled there): serve that role.
    if (const role* r = parked_role_with_work(w)) {
      spins = 0;
      serve_parked_role(w, *r);
      continue;
    }
    if (w.yielded && hold_throttled(w)) {
      for (int i = 0; i < 64; ++i) __builtin_ia32_pause();
      if (rt.oversubscribed.load(std::memory_order_relaxed)) sched_yield();
      continue;
    }
    w.hold_since = 0;
    if (w.yielded && resume_oldest_yielded(w)) {
      spins = 0;
      continue;
    }
    idle_wait(w, has_resumable, &w, spins);
  }
}

void run_worker_thread(worker& w) {
  fiber::init_thread_context(&w.thread_context);
  w.thread_context.owner.store(w.id, std::memory_order_relaxed);
  w.context = &w.thread_context;
  fiber::context* loop = spare_loop_fiber(w);
  enter_loop(w, loop);
  // Back here once the loop sees the runtime stop.
  fiber::switch_to(&w.thread_context, loop, nullptr, nullptr);
}

void release_fibers(runtime& rt) {
  rt.spare_fibers.clear();
  int n = rt.worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    rt.workers[i]->spare_fibers = nullptr;
    rt.workers[i]->spare_count = 0;
  }
  fiber::release_all_fibers();
}

#if defined(__SANITIZE_THREAD__)
__attribute__((noipa)) worker* worker_after_switch() {
  return current_worker;
}
#endif

}  // namespace weft::core
