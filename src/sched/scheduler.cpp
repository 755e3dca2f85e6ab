// Workers, ready queues, stealing, idling, throttling, and the runtime's start and stop.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/dependency_domain.hpp"
#include "core/engine.hpp"
#include "fiber/event.hpp"
#include "fiber/poller.hpp"
#include "fiber/watchdog.hpp"
#include "sched/cpu_topology.hpp"
#include "sched/priority_propagation.hpp"
#include "trace/session.hpp"

namespace weft::core {

runtime* instance = nullptr;
constinit thread_local worker* current_worker = nullptr;

namespace {

inline void cpu_relax() {
  __builtin_ia32_pause();
}

std::uint64_t next_random(worker& w) {
  // xorshift64*: cheap, per worker, good enough to spread victims.
  std::uint64_t x = w.random_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  w.random_state = x;
  return x * 0x2545F4914F6CDD1Dull;
}

// Lanes that ended gangs gave back: a gang made per region (a gang-scheduled team) takes one
// without the allocation and the page faults of a fresh 16K-slot ring. Never destroyed: a team
// may end after static destructors ran (an adopted thread's).
std::mutex& spare_lanes_lock() {
  static auto* lock = new std::mutex;
  return *lock;
}
std::vector<sched::priority_lane<task*>*>& spare_lanes() {
  static auto* spares = new std::vector<sched::priority_lane<task*>*>;
  return *spares;
}

sched::priority_lane<task*>* take_lane() {
  {
    std::lock_guard<std::mutex> lock(spare_lanes_lock());
    if (!spare_lanes().empty()) {
      auto* lane = spare_lanes().back();
      spare_lanes().pop_back();
      return lane;
    }
  }
  return new sched::priority_lane<task*>(std::uint64_t{1} << 14);
}

void give_lane(sched::priority_lane<task*>* lane) {
  std::lock_guard<std::mutex> lock(spare_lanes_lock());
  spare_lanes().push_back(lane);
}

bool push_priority(gang& g, task* t) {
  int level = sched::priority_of(t);  // may be raised concurrently (priority propagation)
  auto* lane = g.lanes[level].load(std::memory_order_acquire);
  if (!lane) {
    // Taken on first use: a program without priorities never pays for the rings.
    auto* fresh = take_lane();
    if (g.lanes[level].compare_exchange_strong(lane, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) {
      lane = fresh;
    } else {
      give_lane(fresh);
    }
  }
  if (!lane->push(t)) return false;
  g.priority_ready.fetch_add(1, std::memory_order_relaxed);
  return true;
}

task* pop_priority(gang& g) {
  for (int level = instance->cfg.max_priority; level >= 0; --level) {
    auto* lane = g.lanes[level].load(std::memory_order_acquire);
    if (!lane) continue;
    if (task* t = lane->pop()) {
      g.priority_ready.fetch_sub(1, std::memory_order_relaxed);
      return t;
    }
  }
  return nullptr;
}

// victim: an index into the worker's gang.
task* try_steal_from(worker& w, int victim) {
  // Its own queue by address: a fiber-run member's gang names no worker.
  if (victim >= w.crew->size() || w.crew->queues[victim] == w.queue) return nullptr;
  task* t = w.crew->queues[victim]->steal();
  if (t) {
    // Past the cores, a producer wakes no sleeper while a worker looks (idle_park::notify_work):
    // each thief that finds more left wakes the next, so that a burst reaches every worker (tasks
    // that wait for each other to run at once need them all).
    if (instance->oversubscribed.load(std::memory_order_relaxed) && !w.crew->queues[victim]->empty())
      w.crew->park.notify_work();
    worker_counters::bump(w.counters.steals);
    trace_point(w, trace::event_type::steal, static_cast<std::uint64_t>(w.crew->members[victim]),
                reinterpret_cast<std::uintptr_t>(t));
  }
  return t;
}

// Victim selection. random: a random victim; history: the last successful victim while it has
// work; hybrid (ICS'21 Algorithm 2): the history slot is followed after a failure, and after a
// success the next slot (normally empty) sends the worker to a random victim, so that workers do
// not all drain the same victim. A sweep over the others follows so that work is not missed.
task* steal(runtime& rt, worker& w) {
  const gang& g = *w.crew;
  int n = g.size();
  if (n == 1) return nullptr;
  constexpr int slots = 4;
  int victim;
  bool from_history = false;
  switch (rt.cfg.steal) {
    case steal_policy::random:
      victim = static_cast<int>(next_random(w) % n);
      break;
    case steal_policy::history:
      from_history = w.history[0] >= 0;
      victim = from_history ? w.history[0] : static_cast<int>(next_random(w) % n);
      break;
    case steal_policy::hybrid:
    default:
      from_history = w.history[w.history_index] >= 0;
      victim = from_history ? w.history[w.history_index] : static_cast<int>(next_random(w) % n);
      break;
  }
  task* t = try_steal_from(w, victim);
  if (rt.cfg.steal == steal_policy::history) {
    w.history[0] = t ? victim : -1;
  } else if (rt.cfg.steal == steal_policy::hybrid) {
    if (t) {
      w.history[w.history_index] = victim;
      if (w.history_index + 1 < slots) ++w.history_index;
    } else {
      w.history[w.history_index] = -1;
      if (w.history_index > 0) --w.history_index;
    }
  }
  if (t) return t;
  // A sweep over the others so that work is not missed: all of them in a gang of up to
  // sweep_window, else that many from a random one (a given queue is read once in n / sweep_window
  // looks on average). A look then costs the same at any team size: a sweep over every queue per
  // look made a region of 1,000 threads on 2 cores read a million queue lines per round of looks
  // (5.9 s for an empty region; libgomp 0.04). Before sleeping, a waiter still checks every queue
  // (work_visible).
  constexpr int sweep_window = 64;
  const int start = static_cast<int>(next_random(w) % n);
  const int count = std::min(n, sweep_window);
  for (int i = 0; i < count; ++i) {
    int v = (start + i) % n;
    if (v == victim) continue;
    if ((t = try_steal_from(w, v))) {
      if (rt.cfg.steal == steal_policy::history) w.history[0] = v;
      if (rt.cfg.steal == steal_policy::hybrid) w.history[w.history_index] = v;
      return t;
    }
  }
  return nullptr;
}

}  // namespace

bool work_visible(const gang& g) {
  if (g.priority_ready.load(std::memory_order_relaxed) > 0) return true;
  for (auto* q : g.queues)
    if (!q->empty()) return true;
  return false;
}

namespace {

void worker_main(worker* w) {
  current_worker = w;
  run_worker_thread(*w);  // the scheduling loop, on fibers, until the runtime stops
  // current_worker is left as it is: the thread ends here (and ThreadSanitizer, which does not tie
  // a fiber's reads of the thread's TLS to the thread's exit, would report the store).
}

// The cores workers are bound to, kept from init to finalize.
struct binding {
  std::vector<sched::cpu_mask> core_sets;  // one per core of the process mask, in order
  std::size_t first_core = 0;              // index in core_sets of worker 0's core
  int ranks_sharing = 1;                   // processes of one launcher whose workers share these cores
  sched::cpu_mask original;                // worker 0's mask before init, restored at finalize
};
binding* bind_state = nullptr;

// The core worker `index` is bound to, or null when binding is off.
const sched::cpu_mask* core_for(int index) {
  if (!instance->cfg.bind_cores) return nullptr;
  const auto& sets = bind_state->core_sets;
  return &sets[(bind_state->first_core + static_cast<std::size_t>(index)) % sets.size()];
}

// Ranks started together by an MPI launcher without binding (mpiexec --bind-to none) share one
// mask: each would put its worker 0 on the mask's first core. The launcher's local rank spreads
// them over the mask instead (rank r of n starts at core r*cores/n). With a mask of the rank's own,
// the offset only rotates the workers over its cores.
// This process's local rank and the launcher's number of ranks on this node; false outside a
// launcher (or alone on the node).
bool launcher_local_rank(std::size_t& local, std::size_t& ranks) {
  static const char* const pairs[][2] = {{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                                         {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},  // MPICH (Hydra)
                                         {"SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"}};
  for (const auto& pair : pairs) {
    const char* rank = std::getenv(pair[0]);
    const char* size = std::getenv(pair[1]);
    if (!rank || !size) continue;
    long r = std::strtol(rank, nullptr, 10), n = std::strtol(size, nullptr, 10);
    if (n <= 1 || r < 0 || r >= n) return false;
    local = static_cast<std::size_t>(r);
    ranks = static_cast<std::size_t>(n);
    return true;
  }
  return false;
}
std::size_t launcher_first_core(std::size_t cores) {
  std::size_t local = 0, ranks = 1;
  if (!launcher_local_rank(local, ranks)) return 0;
  return cores >= ranks ? local * cores / ranks : local % cores;
}

void discover_cores(binding& b, const sched::cpu_mask* process_mask) {
  // The starting thread's mask stands for the process's, unless the door knows the process's.
  if (process_mask && !process_mask->empty()) {
    b.original = *process_mask;
    b.core_sets = sched::cores_of(b.original);
  } else if (sched::cpu_mask::of_calling_thread(b.original)) {
    b.core_sets = sched::cores_of(b.original);
  }
  if (b.core_sets.empty()) {  // no mask to be had: one core, and nothing to restore
    b.original = sched::cpu_mask{};
    b.core_sets.emplace_back();
    b.core_sets.back().set(0);
  }
  b.first_core = launcher_first_core(b.core_sets.size());
  // Ranks left unbound (mpiexec --bind-to none) each see every CPU of the node: their workers
  // together, not one process's, decide whether the cores are outnumbered (2 ranks x 2 threads on
  // 2 cores spun where they should have yielded). A rank with a mask of its own counts alone.
  std::size_t local = 0, ranks = 1;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (launcher_local_rank(local, ranks) && online > 0 && b.original.count() >= static_cast<std::size_t>(online))
    b.ranks_sharing = static_cast<int>(ranks);
}

void release_binding(binding* b) {
  if (!b) return;
  if (!b->original.empty()) sched::bind_calling_thread(b->original);
  delete b;
}

bool atexit_registered = false;

// Writes the session's trace file and ends the session. stopped: every worker has stopped (weft_finalize);
// otherwise the process exits with workers still running, whose buffers stay mapped.
void write_trace(runtime& rt, bool stopped) {
  std::uint64_t end = trace::clock_ns() - trace::origin_ns;
  int n = rt.worker_count.load(std::memory_order_acquire);
  std::vector<const trace::buffer*> buffers;
  for (int i = 0; i < n; ++i) {
    worker& v = *rt.workers[i];
    if (stopped && v.trace.idle) trace::record(v.trace, trace::event_type::idle_end, 0);
    buffers.push_back(&v.trace);
  }
  trace::write_file(rt.cfg.trace_path, buffers, end);
  trace::end_session(stopped);
  if (stopped)
    for (int i = 0; i < n; ++i) trace::release(rt.workers[i]->trace);
}

void at_exit() {
  runtime* rt = instance;
  if (!rt || forked_child) return;  // a child of fork(): the workers to stop are its parent's
  worker* w = current_worker;
  if (w && w->id == 0 && w->current == &w->root) {
    std::int64_t live = live_tasks();
    if (live > 0)
      std::fprintf(stderr, "weft: the program exits with %lld task(s) still pending; running them first\n",
                   static_cast<long long>(live));
    stop_runtime();
  } else {
    // exit() from inside a task (or another thread): the process ends with whatever still runs,
    // silently, as on libgomp (an error path's exit() is no runtime error). The workers still run:
    // their trace buffers are read as they stand (the trace ends here).
    if (trace::on) write_trace(*rt, false);
  }
}

}  // namespace

void queue_ready(worker& w, task* t, bool may_run_next) {
  runtime& rt = *instance;
  trace_task(w, trace::event_type::task_ready, t);
  if (t->flags & flag_undeferred) {
    // Runs on the context that submitted it, which waits for this signal (see submit_task). The
    // parent's state is read first: once the signal is out, t may run, finish and be recycled
    // (parent states are never freed while the runtime runs; the ticket catches a stale one).
    parent_state* ps = t->parent->state.load(std::memory_order_acquire);
    // seq_cst: pairs with the waiter's publication (see wait_published).
    t->waiter.store(undeferred_ready, std::memory_order_seq_cst);
    wake_published(ps->waiting_context, ps->waiting_ticket);
    return;
  }
  if (w.completing_for) [[unlikely]] {
    // Another gang's task: into its shared lanes (any thread may push), else (full) ours. A pooled
    // worker (a deferred completion) has no queue: it waits for the gang to take some.
    gang& g = *w.completing_for;
    bool pushed = push_priority(g, t);
    while (!pushed && !w.crew) {
      g.park.notify_work();
      sched_yield();
      pushed = push_priority(g, t);
    }
    if (pushed) {
      g.park.notify_work();
      return;
    }
  }
  if (sched::priority_of(t) > 0 || rt.cfg.schedule == schedule_policy::priority) {
    if (push_priority(*w.crew, t)) {
      w.crew->park.notify_work();
      return;
    }
  }
  if (rt.cfg.schedule == schedule_policy::depth) {
    if (may_run_next && !w.next) {
      w.next = t;  // depth first: this worker runs it right after the current task
      return;
    }
    // A gang of one has no thief: its local buffer serves as its queue, without the fence the
    // deque's owner pop needs against thieves (the buffer spills if the gang grows).
    if (w.crew->members.size() == 1 && w.local_count < rt.local_limit) {
      w.push_local(t);
      return;
    }
  }
  w.queue->push(t);
  w.crew->park.notify_work();
}

task* find_queued_work(worker& w) {
  runtime& rt = *instance;
  // Past the depth-first slot and the local buffer: what this worker's deferred decrements hold
  // back may be all there is left to run.
  if (w.deferred_n) [[unlikely]]
    graph_flush_deferred(w);
  if (w.crew->priority_ready.load(std::memory_order_relaxed) > 0) {
    if (task* t = pop_priority(*w.crew)) {
      // As after a steal (try_steal_from): one that finds more left wakes the next past the cores.
      if (rt.oversubscribed.load(std::memory_order_relaxed) &&
          w.crew->priority_ready.load(std::memory_order_relaxed) > 0)
        w.crew->park.notify_work();
      return t;
    }
  }
  if (task* t = w.next) {
    w.next = nullptr;
    return t;
  }
  if (w.local_count) {
    // Thieves cannot see these: once they have emptied the queue, give them half.
    if (w.crew->size() > 1 && w.local_count > 1 && w.queue->empty()) spill_local(w, w.local_count / 2);
    return w.pop_local_to_run();
  }
  // Oldest first in a gang of one, as from the local buffer (what overflowed it is newer).
  task* t = rt.cfg.schedule == schedule_policy::fifo || w.crew->size() == 1 ? w.queue->steal() : w.queue->pop();
  if (t) return t;
  return steal(rt, w);
}

void spill_local(worker& w, int keep) {
  if (w.deferred_n) [[unlikely]]
    graph_flush_deferred(w);  // a gang of one's deferred decrements, before it changes gangs
  if (w.local_count <= keep) return;
  // Oldest first, so that thieves (who take the oldest) get the ones created first.
  while (w.local_count > keep) w.queue->push(w.pop_oldest_local());
  w.crew->park.notify_work();
}

void spill_held(worker& w) {
  if (w.next) {
    w.queue->push(w.next);
    w.next = nullptr;
  }
  spill_local(w);
}

task* find_child_work(worker& w) {
  task* parent = w.current;
  if (w.crew->priority_ready.load(std::memory_order_relaxed) > 0) {
    if (task* t = pop_priority(*w.crew)) {
      if (t->parent == parent) return t;
      if (!push_priority(*w.crew, t)) w.queue->push(t);
    }
  }
  if (w.next && w.next->parent == parent) {
    task* t = w.next;
    w.next = nullptr;
    return t;
  }
  if (w.local_count && w.newest_local()->parent == parent) return w.pop_newest_local();
  if (task* t = w.queue->pop()) {
    if (!resumable_of(t) && t->parent == parent) return t;
    w.queue->push(t);
  }
  return nullptr;
}

task* find_group_work(worker& w, taskgroup* g) {
  if (w.local_count && w.newest_local()->group == g) return w.pop_newest_local();
  if (w.next && w.next->group == g) {
    task* t = w.next;
    w.next = nullptr;
    return t;
  }
  if (task* t = w.queue->pop()) {
    if (!resumable_of(t) && t->group == g) return t;
    w.queue->push(t);
  }
  return nullptr;
}

void taskyield(worker& w) {
  if (fiber::pollers_active()) fiber::poll_all(w.id);  // a scheduling point
  if (!w.crew) return;
  // Nothing to let run here: no switch at all.
  if (!w.next && !w.local_count && !w.yielded && w.queue->empty() && !w.inbox.load(std::memory_order_relaxed) &&
      !w.resume_next && !work_visible(*w.crew))
    return;
  yield_until(
      w, [](void*) { return true; }, nullptr, fiber::wait_kind::yield);
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {
// A yield to an idle peer thread returns within microseconds; one that took longer than this
// ran another thread for a time slice. Waits then sleep rather than yield for a while: 20 ms after
// a stall out of the blue (a VM's or a daemon's moment, which a longer window would make cost a
// whole phase of the program: EPCC's reduction at 4 threads on 2 cores slept through its 200 ms),
// twice the last window when the stall comes soon after one ended, up to 320 ms. Under a lasting
// load, finding out again costs every worker a time slice given away each time a window ends (a
// taskloop loop beside two busy processes: 1.5x slower with 20 ms windows, 1.2x with 200 ms).
constexpr std::int64_t yield_stalled_ns = 500'000;
constexpr std::int64_t first_stall_window_ns = 20'000'000, longest_stall_window_ns = 320'000'000;
}  // namespace

bool yields_stall(const worker& w) {
  return w.yields_stall_until != 0 && steady_ns() < w.yields_stall_until;
}

void float_worker(worker& w) {
  if (w.floating || w.core_slot < 0 || !bind_state) return;
  w.floating = sched::bind_calling_thread(bind_state->original);
}

void settle_worker(worker& w) {
  if (!w.floating) return;
  w.floating = false;
  if (const sched::cpu_mask* core = core_for(w.id)) sched::bind_calling_thread(*core);
}

namespace {
// Whether another worker bound to w's core ran from `since` on: it has not given the core up since,
// and is not asleep. A long yield is then this process's own work (a master's serial code
// between regions, a member's longer share of a loop), not another process's.
bool sibling_kept_core(const worker& w, std::int64_t since) {
  if (w.core_slot < 0) return false;
  const runtime& rt = *instance;
  const int n = rt.worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const worker& s = *rt.workers[i];
    if (&s != &w && s.core_slot == w.core_slot && s.gave_core_ns.load(std::memory_order_relaxed) < since) return true;
  }
  return false;
}

void mark_yields_stalled(worker& w, std::int64_t now) {
  const bool soon_after = w.yields_stall_until != 0 && now - w.yields_stall_until < 2 * w.stall_window_ns;
  w.stall_window_ns = soon_after ? std::min(2 * w.stall_window_ns, longest_stall_window_ns) : first_stall_window_ns;
  w.yields_stall_until = now + w.stall_window_ns;
}
}  // namespace

void yield_core(worker& w, bool looking) {
  std::int64_t before = steady_ns();
  if (looking) w.crew->park.yield_looking();
  else sched_yield();
  const std::int64_t after = steady_ns();
  w.gave_core_ns.store(after, std::memory_order_relaxed);
  // Far past the cores a yield goes round many runnable workers of this process: past 16 per core
  // the threshold grows with them (128 threads on 2 cores read as stalled at 500 us, and their
  // barriers and regions slept at once: 1.3x-1.7x the time).
  const runtime& rt = *instance;
  const std::int64_t per_core = std::int64_t{rt.worker_count.load(std::memory_order_relaxed)} *
                                bind_state->ranks_sharing / std::max(rt.core_count, 1);
  const std::int64_t stalled = yield_stalled_ns * std::max<std::int64_t>(1, per_core / 8);
  // A sibling that kept the core through the second half of the yield explains it (its last yield
  // may have ended just after this one began): up to 4 workers per core, where a sibling that has
  // not yielded is running, not waiting behind another process as many of 64 per core are.
  if (after - before > stalled && !(per_core <= 4 && sibling_kept_core(w, before + (after - before) / 2)))
    mark_yields_stalled(w, after);
}

// A timed sleep is the backstop of a best-effort wake-up, and the sleepers' timeouts together
// should wake about timed_wakes_per_core workers per core per period, however many sleep: with a
// fixed timeout, 1,000 barrier waiters on 2 cores woke every millisecond each (a million wake-ups
// a second, each looking at every queue), and the threads still to arrive hardly got a core (an
// empty region took 5.9 s; libgomp 0.04). Up to that many sleepers per core, the period itself.
std::int64_t backstop_timeout(std::int64_t period_ns, int sleepers) {
  constexpr int timed_wakes_per_core = 4;
  const int per_wake = sleepers / (timed_wakes_per_core * std::max(instance->core_count, 1));
  return per_wake > 1 ? period_ns * per_wake : period_ns;
}

void note_asleep(worker& w, bool asleep) {
  if (w.core_slot < 0) return;
  instance->awake_on_core[w.core_slot].fetch_add(asleep ? -1 : 1, std::memory_order_relaxed);
  w.gave_core_ns.store(asleep ? INT64_MAX : steady_ns(), std::memory_order_relaxed);
}

void idle_wait(worker& w, bool (*ready)(void*), void* arg, int& spins, const wake_word* wake) {
  runtime& rt = *instance;
  if (!w.idle.load(std::memory_order_relaxed)) w.idle.store(true, std::memory_order_relaxed);
  flush_finished_children(w);  // nothing to run: report finished children before waiting
  if (trace::on && !w.trace.idle) [[unlikely]] {
    w.trace.idle = true;
    trace::record(w.trace, trace::event_type::idle_begin, 0);
  }
  const int spin_rounds = rt.spin_rounds.load(std::memory_order_relaxed);
  constexpr int yield_rounds = 50;
  if (fiber::pollers_active() && fiber::poll_all(w.id)) spins = 0;
  if (sched::propagation_records(sched::propagation())) [[unlikely]]
    sched::propagation_idle(w);  // FA's Algorithm 2 runs in idle time
  if (ready(arg) || w.inbox.load(std::memory_order_relaxed)) return;
  ++spins;
  const bool oversubscribed = rt.oversubscribed.load(std::memory_order_relaxed);
  // A team barrier past the cores with no task in flight: nothing to look for, and the members it
  // waits for are waiting for a core (see below).
  const bool barrier_alone = wake && oversubscribed && !wake->tasks_in_flight(wake->arg);
  if (spins < spin_rounds && !barrier_alone) {
    // Looks that keep failing come further apart: after 64 of them the pause between a member's
    // looks doubles every 64 looks' worth, from 16 pauses up to 16 x (crew size - 1), at most
    // 16 x 64. A look reads the victims' queue lines, which their owners write on every push, and
    // it is this polling, not the work, that slowed a lone producer 2.7x on 16 cores (issue 27).
    // The crew's idle members together still look about once per 16 pauses, as one did before, so
    // the first thief reaches new work about as soon; a crew of 2 is unchanged. A long pause is
    // served in steps of 16 with the wait's own condition and the inbox checked in between, so a
    // waiter's latency stays that of 16 pauses; `spins` counts the steps, so the phase before
    // yielding lasts as long as before.
    // Requests in flight (MPI, GPU) are polled at each look: their completions keep the old pace.
    const int most = fiber::pollers_expecting() ? 1 : std::clamp((w.crew ? w.crew->size() : 1) - 1, 1, 64);
    const int steps = std::min(1 << std::min(spins >> 6, 6), most);
    for (int step = 1;; ++step) {
      for (int i = 0; i < 16; ++i) cpu_relax();
      if (step >= steps || ready(arg) || w.inbox.load(std::memory_order_relaxed)) break;
    }
    spins += steps - 1;
    return;
  }
  // A poller expecting completions (MPI requests in flight) keeps idle workers polling.
  if (rt.cfg.wait == wait_policy::active || fiber::pollers_expecting() ||
      (spins < spin_rounds + yield_rounds && !oversubscribed)) {
    sched_yield();
    return;
  }
  // With more threads than cores, a team barrier whose team has no task in flight yields at once,
  // for barrier_yield_rounds rounds, then sleeps on the barrier's word (woken all at once by the
  // last arrival, as libgomp's barrier does); it sleeps at once while yields stall (see
  // yield_core). The members a barrier waits for are mostly runnable threads waiting for a core: a
  // yield hands them the core within a microsecond, where pause rounds keep it from them and a
  // sleep costs the last arrival a futex call and each sleeper a wake-up (4 threads on 2 cores:
  // EPCC barrier 10-16 us with 20 pause rounds and one yield, 2-3 us now; LLVM's libomp yields at
  // every spin once oversubscribed). A yield keeps the thread runnable, and beside busy processes
  // it can hand the core to one of them for a whole time slice (a barrier loop, 8 threads on 2
  // cores with two busy processes beside: 36 s against libgomp's 4 s, every wait in sched_yield):
  // the stall rule sends the waiters to sleep then, where a woken sleeper gets the core at once.
  // With tasks in flight it looks for them as an idle worker does: asleep, every task pushed would
  // wake it with a futex call (CI's proxy: dep_stencil at 8 threads, 15x the system calls). A task
  // made while it sleeps wakes it only for a core with nobody awake (idle_park::sleep_on,
  // notify_work); else the 1 ms timeout, which is also the backstop of that best-effort wake.
  if (barrier_alone) {
    constexpr int barrier_yield_rounds = 20;
    if (spins <= barrier_yield_rounds && !yields_stall(w)) {
      yield_core(w, true);
      return;
    }
    // seq_cst: pairs with the waker's seq_cst change.
    const int sleepers = static_cast<int>(wake->sleepers.fetch_add(1, std::memory_order_seq_cst)) + 1;
    note_asleep(w, true);
    w.crew->park.sleep_on(
        wake->word, wake->value,
        [&] {
          return ready(arg) || work_visible(*w.crew) || w.inbox.load(std::memory_order_relaxed) ||
                 rt.gang_members_waiting.load(std::memory_order_relaxed) != 0 || w.gang_start ||
                 deferred_pending.load(std::memory_order_relaxed);
        },
        backstop_timeout(1'000'000, sleepers));
    note_asleep(w, false);
    wake->sleepers.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  // With more threads than cores, a few yields cover a short wait (a barrier's last arrivals);
  // after that one worker yielding between looks is enough: the others sleep rather than take
  // turns on the cores the busy threads need. Producers wake no sleeper while one looks (the
  // cores are taken anyway): a wake-up per task kept every sleeper cycling through futex calls.
  if (spins < spin_rounds + yield_rounds && (spins < spin_rounds + 8 || !w.crew->park.someone_looking())) {
    yield_core(w, true);
    return;
  }
  // With pollers registered, idle workers keep calling them: sleep in short naps only.
  bool polling = fiber::pollers_active();
  struct check {
    runtime* rt;
    const gang* crew;
    bool (*ready)(void*);
    void* arg;
    worker* w;
    bool polling;
  } c{&rt, w.crew, ready, arg, &w, polling};
  // A waiter (taskwait, taskgroup) is woken by its last child; the timeout is a second line of
  // defence and costs one wake-up per 50 ms at most. Past the cores, idle workers keep it too: a
  // looker that took something else than the task a producer left to it (a context to resume)
  // must not leave that task to busy workers only.
  std::int64_t timeout = polling ? 50'000
                         : w.current == &w.root && w.nested() == 0 && w.id != 0 && !oversubscribed
                             ? 0
                             : backstop_timeout(50'000'000, w.crew->park.sleeping() + 1);
  note_asleep(w, true);
  w.crew->park.sleep(
      w.sleep_word,
      [&c] {
        return c.ready(c.arg) || work_visible(*c.crew) || c.rt->stopping.load(std::memory_order_relaxed) ||
               c.w->inbox.load(std::memory_order_seq_cst) || deferred_pending.load(std::memory_order_seq_cst) ||
               c.rt->gang_members_waiting.load(std::memory_order_seq_cst) > 0 || c.w->gang_start ||
               fiber::pollers_pending.load(std::memory_order_seq_cst) != 0 ||  // see weft_poller_set_pending
               // a poller registered since the timeout was chosen (see weft_poller_register)
               (!c.polling && fiber::poller_count.load(std::memory_order_seq_cst) != 0);
      },
      timeout);
  note_asleep(w, false);
  spins = spin_rounds + yield_rounds - 1;  // after a wake-up, look for work once before sleeping
}

std::int64_t live_tasks() {
  runtime& rt = *instance;
  std::int64_t created = 0, done = 0;
  int n = rt.worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    worker& w = *rt.workers[i];
    done += w.finished.load(std::memory_order_relaxed);
    created += w.submitted.load(std::memory_order_relaxed);
  }
  return created - done;
}

gang::~gang() {
  for (auto& lane : lanes)
    if (auto* l = lane.load(std::memory_order_relaxed)) give_lane(l);
}

void gang::assign(const int* ids, int n, sched::work_deque<task*>* const* qs) {
  members.assign(ids, ids + n);
  words.resize(n);
  cores_of.resize(n);
  queues.resize(n);
  for (int i = 0; i < n; ++i) {
    words[i] = &instance->workers[ids[i]]->sleep_word;
    cores_of[i] = instance->workers[ids[i]]->core_slot;
    queues[i] = qs ? qs[i] : &instance->workers[ids[i]]->deque;
  }
  park.set_words(words.data(), cores_of.data(), n, instance->awake_on_core.get(),
                 instance->awake_on_core ? instance->core_count : 0);
}

// Worker threads are pthreads so that their stack size follows WEFT_STACKSIZE / OMP_STACKSIZE.
void start_thread_of(worker& w) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (std::size_t size = instance->cfg.stack_size) {
    if (pthread_attr_setstacksize(&attr, size) != 0) {
      std::fprintf(stderr, "weft: stack size %zu bytes refused by pthread_attr_setstacksize; using the default\n",
                   size);
    }
  }
  // A bound worker starts on its core. Binding itself from the new thread would first need a turn
  // on its creator's core (a thread inherits its creator's mask), which a creator spinning in its
  // first barrier gives up only when the kernel preempts it: a millisecond of start-up.
  if (const sched::cpu_mask* core = core_for(w.id)) {
    if (!sched::bind_at_start(attr, *core))
      std::fprintf(stderr,
                   "weft: worker %d cannot be bound to CPUs %s (pthread_attr_setaffinity_np); it runs unbound\n", w.id,
                   core->describe().c_str());
  }
  auto body = [](void* arg) -> void* {
    worker_main(static_cast<worker*>(arg));
    return nullptr;
  };
  w.has_thread = true;  // before the thread starts: its loop reads it (take_gang_member)
  if (pthread_create(&w.thread, &attr, body, &w) != 0) {
    std::fprintf(stderr, "weft: cannot start worker thread %d (pthread_create failed)\n", w.id);
    std::abort();
  }
  pthread_attr_destroy(&attr);
}

worker* add_worker(bool start_thread) {
  runtime& rt = *instance;
  int i = rt.worker_count.load(std::memory_order_relaxed);
  if (i >= max_workers) {
    std::fprintf(stderr, "weft: more than %d threads requested; the runtime supports at most that many\n", max_workers);
    std::abort();
  }
  auto w =
      std::make_unique<worker>(i, rt.task_depot, rt.successor_depot, rt.group_depot, rt.event_depot, rt.record_depot);
  if (trace::on) trace::allocate(w->trace);
  w->random_state = 0x9E3779B97F4A7C15ull * (i + 1);
  w->throttle_countdown = rt.throttle_interval;
  task& root = w->root;
  std::memset(static_cast<void*>(&root), 0, sizeof root);
  root.flags = flag_root | flag_submitted;
  root.refs.store(1, std::memory_order_relaxed);
  root.waiter.store(-1, std::memory_order_relaxed);
  root.pending.store(body_running, std::memory_order_relaxed);
  w->current = &root;
  w->context = &w->thread_context;
  w->thread_context.owner.store(i, std::memory_order_relaxed);
  w->thread_context.saved_current = &w->root;
  if (rt.awake_on_core) {  // bound: worker i to core slot i (core_for), awake until it first sleeps
    w->core_slot =
        static_cast<int>((bind_state->first_core + static_cast<std::size_t>(i)) % bind_state->core_sets.size());
    rt.awake_on_core[w->core_slot].fetch_add(1, std::memory_order_relaxed);
  }
  worker* raw = w.get();
  rt.workers[i] = std::move(w);
  rt.worker_count.store(i + 1, std::memory_order_release);  // publishes the slot
  // More threads than cores: a spinning waiter takes the core from the thread it waits for. Past
  // 4 workers per core, fewer rounds still: the thread waited for is running with odds of about
  // cores / workers, and each round reads queues (a barrier of 128 threads on 2 cores cost 2.6x
  // libgomp's time with 20 rounds each). A team barrier with no task in flight spins none (see
  // idle_wait).
  if (const int cores = static_cast<int>(bind_state->core_sets.size()); (i + 1) * bind_state->ranks_sharing > cores) {
    const int threads = (i + 1) * bind_state->ranks_sharing;
    rt.spin_rounds.store(std::max(2, std::min(20, 80 * cores / threads)), std::memory_order_relaxed);
    rt.oversubscribed.store(true, std::memory_order_relaxed);
  }
  if (start_thread) start_thread_of(*raw);
  return raw;
}

worker* recruit(int master, int k) {
  runtime& rt = *instance;
  std::lock_guard<std::mutex> lock(rt.grow_lock);
  if (!rt.pool.empty()) {
    // Worker i runs on core slot i % n (core_for): the one k slots after the master's, if pooled;
    // else the pool's next (lowest id first when the pool is in its start-up order).
    std::size_t pick = rt.pool.size() - 1;
    if (bind_state && !bind_state->core_sets.empty()) {
      const std::size_t n = bind_state->core_sets.size();
      const std::size_t want = (static_cast<std::size_t>(master) + static_cast<std::size_t>(k)) % n;
      for (std::size_t i = rt.pool.size(); i-- > 0;)
        if (static_cast<std::size_t>(rt.pool[i]) % n == want) {
          pick = i;
          break;
        }
    }
    int id = rt.pool[pick];
    rt.pool.erase(rt.pool.begin() + static_cast<std::ptrdiff_t>(pick));
    return rt.workers[id].get();
  }
  return add_worker(true);
}

namespace {
void lock_gang_list(worker& w) {
  while (w.gang_lock.exchange(true, std::memory_order_acquire))
    while (w.gang_lock.load(std::memory_order_relaxed)) cpu_relax();
}
void unlock_gang_list(worker& w) {
  w.gang_lock.store(false, std::memory_order_release);
}
// Algorithm 1's precedence: a deeper nest level first, then the older gang.
bool runs_before(const gang_job* a, const gang_job* b) {
  return a->nest_level != b->nest_level ? a->nest_level > b->nest_level : a->gang_id < b->gang_id;
}
// Unlinks the member of w's list that runs first (the caller holds w's list).
gang_job* unlink_first(worker& w) {
  gang_job** best = &w.gang_members;
  for (gang_job** p = &w.gang_members; *p; p = &(*p)->next)
    if (runs_before(*p, *best)) best = p;
  gang_job* j = *best;
  if (j) {
    *best = j->next;
    j->next = nullptr;
    w.gang_queued.fetch_sub(1, std::memory_order_relaxed);
    instance->gang_members_waiting.fetch_sub(1, std::memory_order_relaxed);
  }
  return j;
}
}  // namespace

void offer_gang_member(worker& target, gang_job* job) {
  runtime& rt = *instance;
  target.gang_load.fetch_add(1, std::memory_order_relaxed);
  lock_gang_list(target);
  job->next = target.gang_members;
  target.gang_members = job;
  target.gang_queued.fetch_add(1, std::memory_order_seq_cst);  // seq_cst: a pooled worker's sleep check
  // seq_cst: pairs with the fence of a worker going to sleep (its wake-up check reads it).
  rt.gang_members_waiting.fetch_add(1, std::memory_order_seq_cst);
  unlock_gang_list(target);
  sched::idle_park::wake(target.sleep_word);
}

gang_job* take_gang_member(worker& w) {
  runtime& rt = *instance;
  gang_job* j = nullptr;
  if (w.gang_queued.load(std::memory_order_relaxed) > 0) {
    lock_gang_list(w);
    j = unlink_first(w);
    unlock_gang_list(w);
    if (j) return j;
  }
  // Another worker's, not started yet: any worker may start a member (it runs on a fiber of its
  // own, so the gangs it already serves never wait under it). Not a thread of the program's own
  // (the initial thread, an adopted one) once the program has threads of its own in the runtime:
  // a member that parks resumes only on the worker it ran on, and such a thread goes back to its
  // serial code once its own regions end, which wait only for their own members. A member of
  // another thread's region parked there never resumed (WEFT_GANG=all, foreign_threads). Read
  // under the list's lock: a member offered after an adoption is seen with it.
  const bool foreign_roots_matter = !w.has_thread;
  int n = rt.worker_count.load(std::memory_order_acquire);
  int start = static_cast<int>(next_random(w) % static_cast<std::uint64_t>(n));
  for (int i = 0; i < n && gang_members_waiting(); ++i) {
    worker& v = *rt.workers[(start + i) % n];
    if (&v == &w || v.gang_queued.load(std::memory_order_relaxed) == 0) continue;
    lock_gang_list(v);
    if (foreign_roots_matter && rt.threads_adopted.load(std::memory_order_relaxed)) {
      unlock_gang_list(v);
      return nullptr;
    }
    j = unlink_first(v);
    unlock_gang_list(v);
    if (j) return j;
  }
  return nullptr;
}

void ensure_workers(int count) {
  runtime& rt = *instance;
  std::lock_guard<std::mutex> lock(rt.grow_lock);
  while (rt.worker_count.load(std::memory_order_relaxed) < count) rt.pool.push_back(add_worker(true)->id);
}

void dispatch(worker& target, gang_job* job) {
  target.job.store(job, std::memory_order_seq_cst);  // seq_cst: pairs with the sleeper's fence
  sched::idle_park::wake(target.sleep_word);
}

namespace {
// An adopted thread's worker slot goes back to the runtime when the thread exits, for the next
// thread to adopt: programs that start a thread per request do not run out of worker slots.
struct adoption {
  worker* w = nullptr;
  runtime* rt = nullptr;
  ~adoption() {
    if (!w || instance != rt) return;  // the runtime it was adopted by has stopped
    flush_finished_children(*w);
    std::lock_guard<std::mutex> lock(rt->grow_lock);
    rt->adoptable.push_back(w->id);
    current_worker = nullptr;
  }
};
thread_local adoption adopted;
}  // namespace

worker* adopt_thread() {
  runtime& rt = *instance;
  worker* w;
  {
    std::lock_guard<std::mutex> lock(rt.grow_lock);
    if (!rt.adoptable.empty()) {
      w = rt.workers[rt.adoptable.back()].get();
      rt.adoptable.pop_back();
    } else {
      w = add_worker(false);
      auto* g = new gang;
      int id = w->id;
      g->assign(&id, 1);
      w->crew = g;  // a gang of its own (freed at finalize with the worker)
      w->home = role{g, w->queue, nullptr};
      w->own_gang.reset(g);
    }
  }
  rt.threads_adopted.store(true, std::memory_order_relaxed);
  adopted.w = w;
  adopted.rt = &rt;
  current_worker = w;
  fiber::init_thread_context(&w->thread_context);
  w->context = &w->thread_context;
  return w;
}

namespace {

// Children t created that have not been reported finished: its share of the live tasks. The
// producer's own count and its pending word (children report in batches, so this may run high).
std::int64_t children_outstanding(const task* t) {
  return t->children_created - (body_running - t->pending.load(std::memory_order_relaxed));
}

// Outstanding children from which a throttled producer counts as flat (see hold_throttled).
constexpr std::int64_t hold_floor = 64;

struct throttle_wait {
  const task* producer;
  std::int64_t own_level;   // resume once the producer's outstanding children are down to this
  std::int64_t live_level;  // or once every worker's live tasks are
  int countdown;            // the live count (a read of every worker's counters) every 64 checks
};

bool throttle_over(void* a) {
  auto& tw = *static_cast<throttle_wait*>(a);
  if (children_outstanding(tw.producer) <= tw.own_level) return true;
  if (tw.countdown-- > 0) return false;
  tw.countdown = 64;
  return live_tasks() <= tw.live_level;
}

// Steps the producer aside (its context yielded) while this worker runs ready work, until
// ready(arg) or until the worker has nothing else to run; at most max_throttled producers per
// worker at once.
void step_aside(worker& w, bool (*ready)(void*), void* arg) {
  worker_counters::bump(w.counters.throttle_waits);
  ++w.throttled;
  worker& now = yield_until(w, ready, arg, fiber::wait_kind::throttle);  // yielded contexts never migrate
  --now.throttled;
}

}  // namespace

// Called by a producer before it creates a task. A producer over a bound steps aside (its context
// is yielded) and its worker runs ready work meanwhile. Three rules keep that from deadlocking or
// piling up stacks (a recursive tree hung on the global bound alone, issue 23):
// - Only a producer that holds a large share of the live tasks (throttle_floor children
//   outstanding) is stopped by the live-task bound. A producer with a few children adds little to
//   the excess; stopping it only nests (the work run in its place makes more such producers).
// - A worker sets at most max_throttled producers aside; past that, producers go on over the bound.
// - A stepped-aside producer resumes when its own children are down to half the floor, when the
//   live count is down to 3/4 of the bound, or when its worker has nothing else to run (every
//   wait that idles resumes throttled contexts: the worker loop and run_until). So the bound is
//   soft: it never makes a task wait for one that cannot run.
// Never with a task half built on this worker (its declared accesses are this worker's).
void throttle_check(worker& w) {
  runtime& rt = *instance;
  if (!w.accesses.empty() || !w.crew || w.throttled >= max_throttled) {
    if (w.throttle_countdown <= 0) w.throttle_countdown = 1;  // looked at again on the next creation
    return;
  }
  if (w.local_count >= rt.local_limit) {
    // The queue holds max_ready tasks and the local buffer is full: run a batch of them.
    step_aside(
        w, [](void* v) { return static_cast<worker*>(v)->local_count <= instance->local_limit / 4; }, &w);
    return;
  }
  if (w.throttle_countdown > 0) return;
  const task* producer = w.current;
  if (w.crew->members.size() == 1) {
    // A gang of one: only its own worker runs its tasks, and they run only while the producer
    // steps aside, so the window is the producer's own children, kept small.
    w.throttle_countdown = rt.solo_interval;
    std::int64_t own = children_outstanding(producer);
    if (static_cast<std::uint64_t>(own) > w.counters.max_live.load(std::memory_order_relaxed))
      w.counters.max_live.store(static_cast<std::uint64_t>(own), std::memory_order_relaxed);
    if (own <= rt.solo_window) return;
    throttle_wait tw{producer, rt.solo_window / 2, 0, std::numeric_limits<int>::max()};
    step_aside(w, throttle_over, &tw);
    return;
  }
  w.throttle_countdown = rt.throttle_interval;
  // The producer's own share first: one load of its own descriptor. The live count reads every
  // worker's counters, lines those workers write on every task: fork-join producers (a few
  // children each) never pay for it.
  // The high-water mark of live tasks is sampled here: the producer's own share while it is small
  // (a lower bound), the live count once it is computed.
  std::int64_t own = children_outstanding(producer);
  std::int64_t live = own < rt.throttle_floor ? own : live_tasks();
  if (static_cast<std::uint64_t>(live) > w.counters.max_live.load(std::memory_order_relaxed))
    w.counters.max_live.store(static_cast<std::uint64_t>(live), std::memory_order_relaxed);
  if (own < rt.throttle_floor || live <= rt.max_tasks) return;
  throttle_wait tw{producer, rt.throttle_floor / 2, rt.max_tasks - rt.max_tasks / 4, 0};
  // Held back while the gang is busy only when flat: a tree's nodes (a few children each, over a
  // tiny bound) held so piled up stacks instead (hold_throttled).
  fiber::context* self = w.context;
  self->hold_when_busy = own >= hold_floor;
  step_aside(w, throttle_over, &tw);
  self->hold_when_busy = false;
}

void (*stop_hook)() = nullptr;
bool forked_child = false;
void (*fork_child_hook)() = nullptr;

int start_runtime(const door_options& options) {
  bool pooled = options.pooled;
  if (instance) return WEFT_OK;
  if (current_worker) return WEFT_ERR_BUSY;
  config cfg;
  std::string error;
  if (!config::from_environment(cfg, error)) {
    std::fprintf(stderr, "weft_init: %s\n", error.c_str());
    return WEFT_ERR_INVALID_ARGUMENT;
  }
  auto* b = new binding;
  discover_cores(*b, options.process_mask);
  int cores = static_cast<int>(b->core_sets.size());
  if (cfg.num_workers == 0) cfg.num_workers = options.workers > 0 ? options.workers : cores;
  if (options.max_priority >= 0 && !std::getenv("WEFT_MAX_PRIORITY"))
    cfg.max_priority = std::min(options.max_priority, 63);
  if (options.bind >= 0 && !std::getenv("WEFT_BIND")) cfg.bind_cores = options.bind != 0;
  if (options.stack_size && !std::getenv("WEFT_STACKSIZE")) cfg.stack_size = options.stack_size;
  if (options.wait >= 0 && !std::getenv("WEFT_WAIT_POLICY"))
    cfg.wait = options.wait ? wait_policy::active : wait_policy::passive;
  if (cfg.num_workers > max_workers) cfg.num_workers = max_workers;
  // 2048 live tasks per worker: a window that stays in a core's cache (384 KB of descriptors)
  // yet is far more lookahead than a worker can use; see decisions.md.
  if (cfg.max_tasks == 0) cfg.max_tasks = std::int64_t{2048} * cfg.num_workers;
  if (cfg.max_ready == 0) cfg.max_ready = 256;

  auto* rt = new runtime;
  rt->cfg = cfg;
  rt->pooled = pooled;
  rt->max_tasks = cfg.max_tasks;
  rt->max_ready = cfg.max_ready;
  rt->local_limit = static_cast<int>(std::min<std::int64_t>(worker::local_capacity, cfg.max_ready));
  // Checking the live count costs a read of two counters per worker, lines their workers write on
  // every task: do it every 8 creations per worker (64 at least), so that a lone producer's cost
  // per task does not grow with the worker count (an overshoot of 8 x workers against the default
  // bound's 2,048 x workers), but every time when the bound is tiny so that small bounds are exact.
  rt->throttle_interval = static_cast<int>(std::min<std::int64_t>(
      std::max<std::int64_t>(64, 8 * std::int64_t{cfg.num_workers}), std::max<std::int64_t>(1, cfg.max_tasks / 64)));
  // A producer is throttled when it holds a quarter of one worker's share of the bound (512
  // children with the default bound at any worker count; 1 when the bound is tiny).
  rt->throttle_floor = std::max<std::int64_t>(1, cfg.max_tasks / (4 * std::int64_t{cfg.num_workers}));
  // A gang of one: 64 children by default, or the bound WEFT_MAX_TASKS gives; looked at every
  // eighth of it (its own descriptor only: no other worker's line).
  rt->solo_window = cfg.max_tasks_given ? cfg.max_tasks : solo_window_default;
  rt->solo_interval = static_cast<int>(std::clamp<std::int64_t>(rt->solo_window / 8, 1, 64));
  sched::idle_park::init();
  if (!cfg.trace_path.empty()) {
    trace::begin_session(cfg.trace_buffer);
    if (!cfg.trace_counters.empty()) trace::begin_counters(cfg.trace_counters);
  } else if (!cfg.trace_counters.empty()) {
    std::fprintf(stderr, "weft: WEFT_TRACE_COUNTERS is set but WEFT_TRACE is not: no counters are recorded\n");
  }
  rt->core_count = cores;
  if (cfg.bind_cores) {
    rt->awake_on_core = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(cores));
  }
  instance = rt;
  bind_state = b;
  for (int i = 0; i < cfg.num_workers; ++i) add_worker(false);
  // Native door: one gang of every worker. OpenMP door: the initial thread alone; the others wait
  // in the pool for parallel regions.
  std::vector<int> ids(pooled ? 1 : cfg.num_workers);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  rt->root_gang.assign(ids.data(), static_cast<int>(ids.size()));
  for (int i = 0; i < cfg.num_workers; ++i) {
    worker& w = *rt->workers[i];
    if (!pooled || i == 0) {
      w.crew = &rt->root_gang;
      w.home = role{w.crew, w.queue, nullptr};
    } else {
      rt->pool.push_back(i);
    }
  }
  std::reverse(rt->pool.begin(), rt->pool.end());  // recruit in id order
  rt->fiber_stack = fiber::fiber_stack_size(cfg.stack_size);
  current_worker = rt->workers[0].get();
  fiber::init_thread_context(&current_worker->thread_context);
  if (cfg.bind_cores && !sched::bind_calling_thread(*core_for(0)))
    std::fprintf(stderr, "weft: worker 0 cannot be bound to CPUs %s (sched_setaffinity); it runs unbound\n",
                 core_for(0)->describe().c_str());
  for (int i = 1; i < cfg.num_workers; ++i) start_thread_of(*rt->workers[i]);
  if (!atexit_registered) {
    atexit_registered = true;
    std::atexit(at_exit);
    pthread_atfork(nullptr, nullptr, [] {
      forked_child = true;
      if (fork_child_hook) fork_child_hook();
    });
  }
  if (cfg.watchdog_seconds) start_watchdog();  // tested here: its code is not mapped otherwise
  if (cfg.display_env) {
    std::fprintf(stderr,
                 "weft: runtime in use: weft %d.%d (%s), %d worker(s)\n%s  cores in the affinity mask: %d (worker 0 on "
                 "its core %zu; shared by %d rank(s) of the launcher)\n",
                 WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR, options.door, cfg.num_workers, cfg.describe().c_str(), cores,
                 b->first_core, b->ranks_sharing);
  }
  return WEFT_OK;
}

}  // namespace weft::core

using namespace weft::core;

namespace weft::core {

int stop_runtime() {
  runtime* rt = instance;
  if (!rt) return WEFT_OK;  // like weft_init, idempotent
  worker* w = current_worker;
  if (!w) return WEFT_ERR_NOT_A_WORKER;
  if (w->id != 0 || w->current != &w->root || w->nested() != 0) return WEFT_ERR_BUSY;
  if (forked_child) return WEFT_ERR_BUSY;  // its workers are the parent's: nothing here can stop them
  if (stop_hook) stop_hook();
  // Children of the main program, then every descendant they left behind. Redirect nodes need no
  // wait of their own: a node completes inside the finish of its last predecessor, before that
  // task counts as finished, and the nodes records still hold are released with the records.
  if (!wait_for_all_tasks(*w)) return WEFT_ERR_STALLED;  // reported; the runtime stays as it is
  // Every child has finished: settles the main program's counts. An error one of them reported
  // that the program never collected (an exception nobody waited for) is not lost silently.
  int status = WEFT_OK;
  if (taskwait(*w) == WEFT_ERR_TASK_FAILED) {
    void (*release)(void*) = nullptr;
    void* payload = take_error(*w, &release);
    std::fprintf(stderr,
                 "weft: weft_finalize: a task of the main program reported an error (in C++: threw an exception) "
                 "that no taskwait, taskgroup or weft_take_error collected\n");
    if (release) release(payload);
    status = WEFT_ERR_TASK_FAILED;
  }
  if (parent_state* ps = w->root.state.load(std::memory_order_acquire)) {
    while (ps->current_group) taskgroup_end(*w);
    ps->domain.clear(*w);
  }
  if (weft::sched::propagation_was_chosen.load(std::memory_order_relaxed)) weft::sched::propagation_shutdown(*w);
  rt->stopping.store(true, std::memory_order_seq_cst);
  int n = rt->worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) weft::sched::idle_park::wake(rt->workers[i]->sleep_word);
  for (int i = 0; i < n; ++i)
    if (rt->workers[i]->has_thread) pthread_join(rt->workers[i]->thread, nullptr);
  weft::fiber::quiesce_foreign();
#if WEFT_COUNT_CHECKS
  std::uint64_t bodies = 0, done = 0;
  for (int i = 0; i < n; ++i) bodies += rt->workers[i]->check_bodies, done += rt->workers[i]->check_fully_done;
  if (bodies != done) {
    std::fprintf(stderr, "weft: internal error: %llu task bodies finished but %llu tasks fully done\n",
                 static_cast<unsigned long long>(bodies), static_cast<unsigned long long>(done));
    std::abort();
  }
#endif
  if (w->trace.hw) weft::trace::stop_counters(w->trace);
  if (weft::trace::on) write_trace(*rt, true);
  for (int i = 0; i < n; ++i) {
    worker& v = *rt->workers[i];
    if (parent_state* ps = v.root.state.load(std::memory_order_acquire)) delete ps;
    for (parent_state* ps : v.spare_states) delete ps;
  }
  for (parent_state* ps : rt->shared_states) delete ps;
  stop_watchdog();
  release_fibers(*rt);
  weft::fiber::release_retired_pollers();  // registered ones stay: a layer registers once per process
  current_worker = nullptr;
  instance = nullptr;
  for (auto& spare : rt->spare_graph_arrays) std::free(spare.first);
  delete rt;
  {
    std::lock_guard<std::mutex> lock(spare_lanes_lock());
    for (auto* lane : spare_lanes()) delete lane;
    spare_lanes().clear();
  }
  release_binding(bind_state);
  bind_state = nullptr;
  return status;
}

}  // namespace weft::core

extern "C" {

int weft_initialized(void) {
  return instance != nullptr;
}

int weft_num_workers(void) {
  return instance ? instance->worker_count.load(std::memory_order_acquire) : 0;
}

int weft_worker_id(void) {
  return current_worker ? current_worker->id : -1;
}

weft_task_t* weft_task_self(void) {
  worker* w = current_worker;
  if (!w || (w->current->flags & flag_root)) return nullptr;
  return reinterpret_cast<weft_task_t*>(w->current);
}

int weft_max_priority(void) {
  return instance ? instance->cfg.max_priority : 0;
}

int weft_get_stats(weft_stats_t* s) {
  if (!s) return WEFT_ERR_INVALID_ARGUMENT;
  runtime* rt = instance;
  if (!rt) return WEFT_ERR_NOT_INITIALIZED;
  *s = weft_stats_t{};
  int n = rt->worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    worker& v = *rt->workers[i];
    auto& c = v.counters;
    auto get = [](const std::atomic<std::uint64_t>& x) { return x.load(std::memory_order_relaxed); };
    s->tasks_created += static_cast<std::uint64_t>(v.submitted.load(std::memory_order_relaxed) -
                                                   c.submitted_at_reset.load(std::memory_order_relaxed));
    s->tasks_completed += static_cast<std::uint64_t>(v.finished.load(std::memory_order_relaxed) -
                                                     c.finished_at_reset.load(std::memory_order_relaxed));
    s->edges_created += get(c.edges_created);
    s->edges_elided += get(c.edges_elided);
    s->edges_pruned += get(c.edges_pruned);
    s->redirect_nodes += get(c.redirect_nodes);
    s->steals += get(c.steals);
    s->throttle_waits += get(c.throttle_waits);
    s->max_live_tasks = std::max(s->max_live_tasks, get(c.max_live));
    s->suspensions += get(c.suspensions);
    s->resumes += get(c.resumes);
    s->graph_replayed += get(c.graph_replayed);
    s->graph_recordings += get(c.graph_recordings);
  }
  s->task_bytes = task_size;
  s->fibers = static_cast<std::uint64_t>(weft::fiber::fibers_made());
  return WEFT_OK;
}

int weft_reset_stats(void) {
  runtime* rt = instance;
  if (!rt) return WEFT_ERR_NOT_INITIALIZED;
  worker* self = current_worker;
  if (!self) return WEFT_ERR_NOT_A_WORKER;
  // Each counter has a single writer; resetting another worker's counters races with it, so the
  // reset is only exact when the runtime is quiet (documented).
  int n = rt->worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    worker& v = *rt->workers[i];
    auto& c = v.counters;
    c.submitted_at_reset.store(v.submitted.load(std::memory_order_relaxed), std::memory_order_relaxed);
    c.finished_at_reset.store(v.finished.load(std::memory_order_relaxed), std::memory_order_relaxed);
    for (auto* counter : {&c.edges_created, &c.edges_elided, &c.edges_pruned, &c.redirect_nodes, &c.steals,
                          &c.throttle_waits, &c.max_live, &c.suspensions, &c.resumes, &c.graph_replayed,
                          &c.graph_recordings})
      counter->store(0, std::memory_order_relaxed);
  }
  return WEFT_OK;
}

}  // extern "C"
