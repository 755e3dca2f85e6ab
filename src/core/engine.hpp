// Internal entry points shared by the core (task life cycle, dependences) and the scheduler.
#pragma once

#include <weft/weft.h>

#include "core/graph.hpp"
#include "core/runtime.hpp"
#include "core/task.hpp"
#include "sched/priority_propagation.hpp"

namespace weft::sched {
class cpu_mask;
}  // namespace weft::sched

namespace weft::core {

// --- trace points (trace/recorder.hpp) ---------------------------------------------------------
// While tracing is off each is a compare of trace::on and a branch not taken. On the task paths the
// recording, and the computing of what it records, happen out of line (cold), so that the off case
// adds no register pressure to the hot code.
inline std::uint64_t trace_id(const task* t) {
  return (t->flags & flag_root) && !(t->run_flags & run_traced) ? 0 : reinterpret_cast<std::uintptr_t>(t);
}
inline void trace_point(worker& w, trace::event_type type, std::uint64_t a, std::uint64_t b = 0, std::uint32_t c = 0,
                        std::uint16_t d = 0) {
  if (trace::on) [[unlikely]]
    trace::record(w.trace, type, a, b, c, d);
}
[[gnu::cold]] void trace_task_event(worker& w, trace::event_type type, const task* t, std::uint32_t c);
[[gnu::cold]] void trace_edge_event(worker& w, const task* pred, const task* succ);
[[gnu::cold]] void trace_created(worker& w, const task* t, std::uint16_t flags);  // task_create, with its kind
[[gnu::cold]] void trace_busy_event(worker& w);
inline void trace_task(worker& w, trace::event_type type, const task* t, std::uint32_t c = 0) {
  if (trace::on) [[unlikely]]
    trace_task_event(w, type, t, c);
}
// The worker is busy again after an idle_begin (recorded before it starts or resumes a task).
inline void trace_busy(worker& w) {
  if (trace::on) [[unlikely]]
    trace_busy_event(w);
}

// A handle from weft_task_create is the descriptor's address with a 16-bit stamp in the top bits
// (user addresses fit in 48). Until submit the descriptor keeps the stamp in domain_refs, which
// only counts from submit on; a handle whose task finished and whose descriptor now serves
// another task fails the comparison. Handles from weft_task_self carry no stamp (a running task).
inline constexpr int handle_stamp_shift = 48;
// The handle the creator of t holds, while t is not yet submitted.
inline weft_task_t* public_handle(task* t) {
  return reinterpret_cast<weft_task_t*>(reinterpret_cast<std::uintptr_t>(t) |
                                        static_cast<std::uintptr_t>(t->domain_refs) << handle_stamp_shift);
}

// --- running out of memory (core/out_of_memory.cpp) ------------------------------------------
// An allocation fails in one of two ways. Where a call can refuse (a task, an event, a taskgroup
// or an access asked for through the C API), it returns WEFT_ERR_OUT_OF_MEMORY and the runtime
// stays as it was; the OpenMP door then aborts naming the construct, as libgomp does. Where no
// caller can be told (a dependence node, successor slots, a queue growing), out_of_memory ends the
// process with a message that says what was being allocated.
[[noreturn]] void out_of_memory(const char* what, std::size_t bytes);
// Inside libweft.so, which carries a C++ runtime of its own, a failed operator new ends the process
// the same way (from the library's load on), unless a recoverable_allocation is alive on the
// thread: then it throws std::bad_alloc for the caller to turn into WEFT_ERR_OUT_OF_MEMORY.
struct recoverable_allocation {
  recoverable_allocation();
  ~recoverable_allocation();
  recoverable_allocation(const recoverable_allocation&) = delete;
  recoverable_allocation& operator=(const recoverable_allocation&) = delete;
};

// --- task life cycle (core/task_lifecycle.cpp) ------------------------------------------------
// A descriptor from the worker's pool. Null when out of memory, or when a persistent graph refuses
// the task (w.refused says WEFT_ERR_GRAPH_CHANGED then).
task* allocate_plain(worker& w, weft_task_fn fn, std::size_t args_size, unsigned flags);
inline task* allocate_task(worker& w, weft_task_fn fn, std::size_t args_size, unsigned flags) {
  if (__builtin_expect(w.current->graph_role == graph_owner, 0)) {
    int status = WEFT_OK;
    if (task* t = graph_allocate(w, fn, args_size, flags, status)) return t;
    worker& on = *worker_after_switch();  // a change of the graph may have waited (and moved)
    on.refused = status;
    if (status != WEFT_OK) return nullptr;
    task* t = allocate_plain(on, fn, args_size, flags);
    if (t) graph_created(on, t, args_size);
    return t;
  }
  return allocate_plain(w, fn, args_size, flags);
}
task* allocate_node(worker& w, std::uint8_t flags);  // redirect / mutex-group node
void discard_task(worker& w, task* t);
// A replayed task's declared access, when it is the next recorded one: matched, nothing to list.
inline bool match_recorded(task* t, const void* address, weft_dep_type type) {
  auto& r = t->replay;
  // accesses_left is neither 0 (all matched) nor access_gathered.
  if (r.accesses_left - 1 < access_gathered - 1 && r.next_access->address == address && r.next_access->type == type) {
    ++r.next_access;
    --r.accesses_left;
    return true;
  }
  return false;
}
// add_access's rare cases, out of line: an instance's access that differs from its recording, a
// full list (WEFT_ERR_OUT_OF_MEMORY when it cannot grow; the task is then unchanged).
int add_access_rare(worker& w, task* t, const void* address, weft_dep_type type);
// Declares an access of t (not yet submitted). A replayed task's accesses are checked against the
// recording as they come; other accesses are gathered for submit. Returns WEFT_OK, or
// WEFT_ERR_OUT_OF_MEMORY (see add_access_rare).
inline int add_access(worker& w, task* t, const void* address, weft_dep_type type) {
  if (__builtin_expect(t->graph_role == graph_instance, 0)) {
    if (match_recorded(t, address, type)) [[likely]]
      return WEFT_OK;
    return add_access_rare(w, t, address, type);
  }
  auto& list = w.accesses;
  if (list.size() == list.capacity()) [[unlikely]]
    return add_access_rare(w, t, address, type);
  // Room there is: push_back's own growth path (a call that would make every caller save
  // registers on entry) is dropped.
  if (list.size() == list.capacity()) __builtin_unreachable();
  list.push_back({t, address, type});
  return WEFT_OK;
}
int submit_plain(worker& w, task* t);
// Submits t (no persistent graph involved: neither t a replayed instance nor its parent a graph's
// owner) with all its accesses given at once, past the list add_access fills: for a door that
// has them together, as an OpenMP depend clause has. `count` addresses: the first `writes` inout,
// the others in. A null one calls refuse_null (which must not return) as it is reached. Accesses
// pending for another task stay pending.
int submit_depend_array(worker& w, task* t, const void* const* addresses, int writes, int count, void (*refuse_null)());
// A task's creator owning a persistent graph sends it through the graph.
inline int submit_task(worker& w, task* t) {
  if (__builtin_expect(t->parent->graph_role == graph_owner, 0)) return graph_submit(w, t);
  return submit_plain(w, t);
}
void execute_task(worker& w, task* t);
// A node that became ready with no body: completes it on the spot (no queueing).
void complete_node(worker& w, task* t);
void drop_ref(worker& w, task* t);
// Called when t's last predecessor is gone: mutexes, then the ready queues.
void predecessors_done(worker& w, task* t, bool may_run_next);
// A task ready as its producer creates (or opens) it: the producer's local buffer or the queues.
void ready_at_birth(worker& w, task* t);
int taskwait(worker& w);
// A scheduling point: lets other ready work run first when there is some.
void taskyield(worker& w);
// Reports the children this worker finished and has not yet told their parent about, and settles
// its taskgroup account (group_created).
void flush_finished_children(worker& w);
// Only the first part: the children finished here, to their parent. The taskgroup account stays
// open across parents, since a fork-join tree's tasks all count in one group: settling it at every
// change of parent wrote the group's line, shared by every worker, about once per task (issue 27).
// It is settled when this worker waits for a group, parks, idles, or runs a task of another group.
void flush_parent_batch(worker& w);
inline constexpr std::int64_t group_credit = 64;
void group_credit_more(worker& w, taskgroup* g);
// A task counted in g was created here: from the credit this worker holds for g, else a new one.
inline void group_created(worker& w, taskgroup* g) {
  if (g == w.batch_group && w.group_owed > 0) [[likely]] {
    --w.group_owed;
    return;
  }
  group_credit_more(w, g);
}
int taskgroup_begin(worker& w);
int taskgroup_end(worker& w);
// t's parent state, made on first use (from the worker's spares).
parent_state& make_state(worker& w, task* t);
inline parent_state& state_of(worker& w, task* t) {
  parent_state* ps = t->state.load(std::memory_order_acquire);
  return ps ? *ps : make_state(w, t);
}

int report_error(worker& w, void* payload, void (*release)(void*));
// The same for task t, running or held (its completion bound to an event), from any thread.
int report_error_of(task* t, void* payload, void (*release)(void*));
void* take_error(worker& w, void (**release)(void*));
void attach_mutex_group(worker& w, task* t, task* group);

// --- edges (core/dependency_domain.cpp) -------------------------------------------------------
inline constexpr std::int32_t creation_guard = 1 << 30;
// Counts down one of s's predecessors; true when it was the last. Edges into s are only added
// under its creation guard, so a count of 1 (guard gone, every other predecessor done) can change
// no more: the last one skips the atomic write. Acquire, and acq_rel otherwise: every
// predecessor's effects reach whoever runs s (made ready by the last one, through a queue).
inline bool last_predecessor(task* s) {
  return s->preds.load(std::memory_order_acquire) == 1 || s->preds.fetch_sub(1, std::memory_order_acq_rel) == 1;
}
// Ends the creation guard once all of t's incoming edges exist (`added` predecessors remain);
// true when none is left (the caller makes t ready).
inline bool finish_linking(task* t, int added) {
  if (added == 0) {
    // No predecessor ever saw t: nobody else touches preds.
    t->preds.store(0, std::memory_order_relaxed);
    return true;
  }
  // Every predecessor already done (the count can change no more): no atomic write. Acquire, and
  // acq_rel otherwise: the predecessors' effects are visible if this ends the count.
  const std::int32_t done = creation_guard - added;
  return t->preds.load(std::memory_order_acquire) == done ||
         t->preds.fetch_sub(done, std::memory_order_acq_rel) == done;
}

// --- scheduler (sched/scheduler.cpp) ----------------------------------------------------------
// Queues t, or hands it to the context that waits for it: every case make_ready leaves.
void queue_ready(worker& w, task* t, bool may_run_next);
// t may run now. Depth first, the task a finishing one makes ready is normally the one its worker
// runs next: that case is settled inline (a few compares), the others out of line.
inline void make_ready(worker& w, task* t, bool may_run_next) {
  if (may_run_next && !w.next && !w.completing_for && !trace::on && !(t->flags & flag_undeferred) &&
      sched::priority_of(t) == 0 && instance->cfg.schedule == schedule_policy::depth) {
    w.next = t;
    return;
  }
  queue_ready(w, t, may_run_next);
}
// Runs ready work on this stack until done() holds: for waits that every ready task serves (team
// barriers, finalize). Returns the worker it ends on.
// slot: a fiber-run gang member's wait, which parks when idle instead of holding the worker; its
// waker makes done() true, then calls wake_published on the slot's context and ticket.
struct park_slot {
  std::atomic<fiber::context*>& context;
  std::atomic<std::uint64_t>& ticket;
  const void* on;
};
// wake: a word the waker changes and then wakes every sleeper on (a team barrier's generation).
// With more threads than cores the wait sleeps on it rather than yield (see idle_wait).
struct wake_word {
  std::atomic<std::uint32_t>& word;
  std::uint32_t value;                  // the wait sleeps while the word holds this
  std::atomic<std::uint32_t>& sleepers;  // the waker calls idle_park::wake_all when non-zero
  // Whether tasks the wait may run are still in flight (then it looks for them instead: their
  // producers wake sleepers of the gang's own words, not of this one).
  bool (*tasks_in_flight)(const void*);
  const void* arg;
};
template <class Done>
worker& run_until(worker& w, Done&& done, const park_slot* slot = nullptr, const wake_word* wake = nullptr);
// Waits until cond() holds, for a waker that makes it true and then calls wake_published on the
// slots that slots(worker&) returns (a park_slot; asked only when the context is about to park).
// run_here(worker&) may run something the wait needs on this stack (true when it ran something).
// Otherwise the context parks. cond() must read with seq_cst. Returns the worker the wait ends on
// (another one when the context was untied and moved).
template <class Slots, class Cond, class RunHere>
worker& wait_published(worker& w, Slots&& slots, Cond&& cond, RunHere&& run_here, fiber::wait_kind why,
                       const void* on);
task* find_queued_work(worker& w);  // priority lanes, next, local buffer, queue, then stealing
// The next task for w: the common cases (the depth-first successor, the local buffer) inline.
inline task* find_work(worker& w) {
  if (w.crew->priority_ready.load(std::memory_order_relaxed) <= 0) {
    if (task* t = w.next) {
      w.next = nullptr;
      return t;
    }
    if (w.local_count == 1 || (w.local_count && w.crew->size() == 1)) return w.pop_local_to_run();
  }
  return find_queued_work(w);
}
// Whether find_work would surely return a child of the running task (from the depth-first slot
// or the local buffer); false when it cannot tell cheaply.
inline bool next_is_child(const worker& w) {
  if (w.crew->priority_ready.load(std::memory_order_relaxed) > 0) return false;
  task* t = w.next ? w.next : w.local_count ? w.local_to_run() : nullptr;
  return t && !(reinterpret_cast<std::uintptr_t>(t) & 1) && t->parent == w.current;  // low bit: a context
}
// Moves the worker's local ready tasks to its queue (before it changes gangs, or for thieves).
void spill_local(worker& w, int keep = 0);
// Moves every ready task the worker holds out of its queue (depth-first slot, local buffer) into
// it: before it leaves the role, or hands the queue to whoever ends the role's team.
void spill_held(worker& w);
task* find_child_work(worker& w);                // a ready child of w.current, or null
task* find_group_work(worker& w, taskgroup* g);  // a ready task counted in g, or null
void idle_wait(worker& w, bool (*ready)(void*), void* arg, int& spins, const wake_word* wake = nullptr);
// Gives the core up (looking: counted as a looker of its crew, see idle_park::yield_looking).
// A yield that kept the thread off its core for long handed the core to a thread that ran a time
// slice (another process's, or a long task body): for a while (yields_stall) barriers past the
// cores sleep at once and pooled members sleep rather than yield, since each yield could give a
// time slice away where a woken sleeper gets the core at once.
void yield_core(worker& w, bool looking);
// Around a sleep in a wait: w's bound core has one worker fewer awake (runtime::awake_on_core).
void note_asleep(worker& w, bool asleep);
bool yields_stall(const worker& w);
std::int64_t steady_ns();  // the steady clock, in ns
// A bound worker about to sleep until one particular thread has run, while yields stall: on its
// own core it would wake behind the busy process holding it, so it may run on every CPU of the
// process until settle_worker binds it again (its calling thread only; nothing when unbound).
void float_worker(worker& w);
void settle_worker(worker& w);
bool work_visible(const gang& g);  // ready tasks in g's queues or priority lanes
// Called by a producer before it creates a task: the bounds are looked at out of line, every
// throttle_interval creations or when the local buffer is full.
void throttle_check(worker& w);
inline void throttle(worker& w) {
  if (--w.throttle_countdown > 0 && w.local_count < instance->local_limit) [[likely]]
    return;
  throttle_check(w);
}

// --- runtime, workers and gangs (sched/scheduler.cpp) -------------------------------------------
// Starts the runtime for one of the doors (weft_init: the native door's defaults).
struct door_options {
  bool pooled = false;         // only the initial thread serves a gang; the others wait in the pool
  int workers = 0;             // pool size when WEFT_NUM_THREADS is unset (0: one per core)
  int max_priority = -1;       // when WEFT_MAX_PRIORITY is unset (-1: weft's default)
  int bind = -1;               // when WEFT_BIND is unset: 0 none, 1 cores (-1: weft's default)
  int wait = -1;               // when WEFT_WAIT_POLICY is unset: 0 passive, 1 active
  std::size_t stack_size = 0;  // worker stacks when WEFT_STACKSIZE is unset (0: the default)
  // The CPUs to place workers over, when the door has bound the calling thread already (null or
  // empty: the calling thread's mask).
  const sched::cpu_mask* process_mask = nullptr;
  const char* door = "native door";
};
int start_runtime(const door_options& options);
// weft_finalize: waits for every task, reports an error none collected, stops the workers.
int stop_runtime();
// Called by stop_runtime before it waits for the tasks (a door's own teardown), when set.
extern void (*stop_hook)();
// In a child process made by fork() after the runtime started: the runtime's memory came along,
// its worker threads did not. Nothing waits for them there (exit, finalize), and a door runs its
// parallel regions with one thread (set by a pthread_atfork handler: free to read).
extern bool forked_child;
// Called in such a child first (a door forgets what its teams' threads held), when set.
extern void (*fork_child_hook)();
worker* add_worker(bool start_thread);  // caller holds grow_lock (or is starting the runtime)
// A pooled worker without a job (added when none is free) for member k of a team whose member 0 is
// worker `master`: preferably the one bound k cores after the master's, so that a team's threads
// sit on consecutive places as OpenMP's close placement wants, whichever order workers came back
// to the pool in.
worker* recruit(int master, int k);
void dispatch(worker& target, gang_job* job);
void ensure_workers(int count);  // adds pooled workers until the runtime has count of them
worker* adopt_thread();          // the calling foreign thread becomes a worker with its own gang

// --- gang-scheduled members (sched/scheduler.cpp; the OpenMP door's nested regions) ------------
// A member of a gang-scheduled team runs as a fiber on the existing workers: offered to a reserved
// worker, started by it (or by an idle worker that takes it) at a scheduling point, on a loop
// fiber of its own, so that no member ever runs above another's frames. While it runs, the worker
// serves the member's role (w.portable); a member that waits parks or yields with that role, and
// the worker's own loop goes back to w.home.
void offer_gang_member(worker& target, gang_job* job);
// The member this worker starts next, when any waits (its own first, deepest nest level then
// oldest gang first; then another worker's), or null.
gang_job* take_gang_member(worker& w);
inline bool gang_members_waiting() {
  return instance->gang_members_waiting.load(std::memory_order_relaxed) > 0;
}
// The door's state for the calling thread (the OpenMP member): read when a portable context is set
// aside and written when one resumes or a worker goes back to its home role. Set by the door.
extern void* (*door_role_get)();
extern void (*door_role_set)(void*);
// State the door keeps per execution context (the OpenMP door: ICV layers of undeferred tasks
// running on it): moved out of the thread when a context is set aside, and back where it resumes
// (context::door_stash). Set by the door; null when it keeps none.
extern void (*door_context_leave)(fiber::context*);
extern void (*door_context_enter)(fiber::context*);
// Called on the worker where a body that set run_door_end on its own task returned (the OpenMP
// door: a deferred task that changed its ICVs gives the thread its values back). Set by the door.
extern void (*door_task_end)(worker&, task*);
// Called before a task body starts, once the door has set it (the OpenMP door: after a member
// changed its ICVs, a task created before that starts from its team's values, not the member's).
// Null until then: one relaxed load per task.
extern std::atomic<void (*)(worker&, task*)> door_task_begin;
// Serves role r (a fiber-run member's): the worker's ready tasks held back for the role it leaves
// go to that role's queue first.
void adopt_role(worker& w, const role& r);
// A member parked with this worker as owner whose team has ready tasks (its role needs this
// worker's loop), or null.
const role* parked_role_with_work(worker& w);
// Gives the running context up until ready(arg) holds (the worker's loop runs other work, gang
// members first, and resumes it): for waits on another member's progress (locks, ordered
// turns) that may share this worker.
void yield_context(worker& w, bool (*ready)(void*), void* arg);
// Waits, without running tasks, until ready() holds: spins, yields, then sleeps on w's word (a
// waker sets the condition with seq_cst and calls idle_park::wake on the word).
template <class Ready>
void wait_until(worker& w, Ready&& ready);

// --- implicit tasks (OpenMP team members) -----------------------------------------------------
// An implicit task is a root-like descriptor owned by its team: never queued, never freed. Its
// children count in `group` (taskgroup) so that a team barrier can wait for every descendant.
// The descriptor must be zeroed before its first use; its parent state is kept from use to use
// (the owner deletes it with the descriptor).
void init_implicit(task* t, taskgroup* group);
// Waits for t's children and descendants (those in taskgroups t has open too) and forgets its
// dependence records; t is reusable.
void finish_implicit(worker& w, task* t);
// A task run at once on its creator's stack (an included task) uses a descriptor in the caller's
// frame: begin_frame sets it up, end_frame waits for its children and returns its state. Inline:
// a recursion's included tasks mostly make no child of their own and need no state, and two calls
// cost 13 of its 170 runtime instructions per task.
inline void begin_frame(task* t, task* parent, taskgroup* group) {
  // Only what a parent's descriptor is read for: it never gets accesses, successors or a queue.
  t->fn = nullptr;
  t->parent = parent;
  t->mutex_group = nullptr;
  t->flags = flag_root | flag_submitted;
  t->door_bits = 0;
  t->run_flags = 0;
  t->graph_role = graph_none;
  t->refs.store(1, std::memory_order_relaxed);
  t->waiter.store(-1, std::memory_order_relaxed);
  t->pending.store(body_running, std::memory_order_relaxed);
  t->children_created = 0;
  t->state.store(nullptr, std::memory_order_relaxed);
  t->group = group;
}
// end_frame's work when t made children or got a state.
void close_frame(worker& w, task* t);
inline void end_frame(worker& w, task* t) {
  if (t->children_created || t->state.load(std::memory_order_acquire)) close_frame(w, t);
}
// Waits (running tasks) until every task counted in g has finished.
void wait_group(worker& w, taskgroup* g);

// --- completion held by an event (detach) -----------------------------------------------------
// A task marked with hold_completion completes when its body has returned and release_completion
// has been called, in either order, on any worker.
void hold_completion(task* t);
// crew: the task's gang, when the caller may be serving another (see worker::completing_for).
void release_completion(worker& w, task* t, gang* crew = nullptr);

// --- suspension (sched/suspension.cpp) -----------------------------------------------------------
// A task whose wait cannot be served by running what it waits for on its own stack parks its
// context; the worker goes on with a loop fiber, and the context resumes on the worker that picks
// it up (its own when tied). Ready-queue items with the low bit set are contexts to resume.
inline task* resume_item(fiber::context* c) {
  return reinterpret_cast<task*>(reinterpret_cast<std::uintptr_t>(c) | 1);
}
inline fiber::context* resumable_of(task* item) {
  auto v = reinterpret_cast<std::uintptr_t>(item);
  return v & 1 ? reinterpret_cast<fiber::context*>(v & ~std::uintptr_t{1}) : nullptr;
}
// The scheduling loop of every worker; runs on loop fibers, never returns.
void worker_loop();
// Runs on a worker's thread: moves its scheduling loop onto a fiber until the runtime stops.
void run_worker_thread(worker& w);
// Starts a wait of the running context: a fresh ticket to publish with the context.
std::uint64_t begin_wait(worker& w);
// Parks the running context until notify(ctx, ticket) makes it resumable (the caller published
// them and re-checked its condition after). Returns the worker it resumed on.
worker& park(worker& w, std::uint64_t ticket, fiber::wait_kind why, const void* on);
// Waits until ready(arg) by setting the running context aside on this worker's yielded list; the
// worker's loop resumes it when ready holds or when it has nothing else to run. `to`: a context to
// resume now, or null for a loop fiber. Never migrates.
worker& yield_until(worker& w, bool (*ready)(void*), void* arg, fiber::wait_kind why, fiber::context* to = nullptr);
// After notify() returned true: queue ctx to be resumed (from any thread; `signal_safe` keeps to
// lock-free pushes and a futex wake, for signal handlers and foreign threads).
void make_resumable(fiber::context* ctx, bool signal_safe = false);
// Wakes the context published in (slot_context, slot_ticket), if it is parked on that ticket.
void wake_published(const std::atomic<fiber::context*>& slot_context, const std::atomic<std::uint64_t>& slot_ticket);
// A context yielded on this worker whose condition holds (or, when idle, the oldest), or null.
fiber::context* take_yielded(worker& w, bool idle);
// A producer set aside by the throttle on this worker, or null. It goes on once resumed, whatever
// its condition: a wait with nothing else to run resumes it (else the bound could deadlock).
fiber::context* take_throttled(worker& w);
// A context this worker must resume (inbox), or null.
fiber::context* take_resumable(worker& w);
// Whether w holds work that only w can run: contexts to resume or parked here that resume only
// here, yielded ones, ready tasks in its depth-first slot or local buffer. A wait that runs nothing
// (a lock, an ordered turn) must step aside rather than block while this holds: what it waits
// for may need that work.
inline bool has_bound_work(const worker& w) {
  return !w.parked_roles.empty() || w.yielded || w.resume_next || w.next || w.local_count ||
         w.inbox.load(std::memory_order_relaxed);
}
// True when waits on the running context may run what they wait for on its stack (a thread's own
// stack, without a known bottom, always: max_nesting bounds it elsewhere).
inline bool stack_has_room(const worker& w) {
  const fiber::context* c = w.context;
  return !c->stack_low || static_cast<const char*>(__builtin_frame_address(0)) > c->stack_floor;
}
// Finished-event completions and contexts queued by foreign threads and signal handlers.
void run_deferred(worker& w);
extern std::atomic<bool> deferred_pending;
void release_fibers(runtime& rt);

// --- counters ---------------------------------------------------------------------------------
std::int64_t live_tasks();

}  // namespace weft::core

#include "sched/run_until.hpp"
