// Parallel regions on gangs of workers: fork, join, barriers, single, critical, and the start of
// the runtime through the OpenMP door.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include "core/dependency_domain.hpp"
#include "omp/gomp_abi.h"
#include "omp/omp_internal.hpp"

namespace weft::omp {

constinit thread_local member* me = nullptr;
#if defined(__SANITIZE_THREAD__)
__attribute__((noipa)) member& current_after_switch() {
  return current();
}
#endif
std::atomic<int> fiber_teams_live{0};

void yield_member(bool (*ready)(void*), void* arg) {
  static constexpr auto at_once = [](void*) { return true; };
  core::yield_context(*core::current_worker, ready ? ready : +at_once, arg);
}

namespace {

// Per worker: its sequential context (a team of one) and the team of the level-1 regions it
// starts, kept with its members between regions (a "hot" team).
struct home {
  team* solo = nullptr;
  team* hot = nullptr;
  contention_group cg;  // the one its sequential context starts
};
home homes[core::max_workers];
std::mutex start_lock;

// Members outlive their teams, as task descriptors and taskgroups do: the worker whose report
// takes a member's implicit task or group to its last count reads the waiter's slot (and the
// task's parent state) after that decrement, when the waiter may have gone on and ended the team.
// A member whose team ended waits here for the next team; all are freed when the runtime stops.
// Never destroyed: a team may end after static destructors ran (an adopted thread's, at exit).
std::mutex member_pool_lock;
std::vector<member*>& member_pool = *new std::vector<member*>;

member* take_member() {
  {
    std::lock_guard<std::mutex> lock(member_pool_lock);
    if (!member_pool.empty()) {
      member* m = member_pool.back();
      member_pool.pop_back();
      m->start_afresh();
      return m;
    }
  }
  return new member();  // zeroed: the implicit descriptor starts clean
}

void free_members() {
  std::lock_guard<std::mutex> lock(member_pool_lock);
  for (member* m : member_pool) {
    delete m->implicit.state.load(std::memory_order_relaxed);
    delete m;
  }
  member_pool.clear();
}

void reset_group(core::taskgroup& g, task* owner, void* reductions) {
  g.pending.store(0, std::memory_order_relaxed);
  g.outer = nullptr;
  g.waiting_context.store(nullptr, std::memory_order_relaxed);
  g.cancelled.store(false, std::memory_order_relaxed);
  g.owner = owner;
  g.reductions = reductions;
}

// The implicit task a member's constructs act on: its own, or the worker's root when sequential.
task* implicit_of(worker& w, member& m) {
  return m.crew->sequential ? &w.root : &m.implicit;
}

// In a child of fork(): the hot teams it inherited (see start_door). Never destroyed.
std::vector<team*>& teams_of_the_parent = *new std::vector<team*>;

void disband(team* t) {
  if (t->bound > 1) {
    t->disband.store(true, std::memory_order_seq_cst);
    for (int k = 1; k < t->bound; ++k) sched::idle_park::wake(*t->crew.words[k]);
    while (t->gone.load(std::memory_order_acquire) != t->bound - 1) sched_yield();
  }
  delete t;
}

void stop_door() {
  // The runtime stops: hot teams let their members go, sequential contexts are forgotten.
  for (home& h : homes) {
    if (h.hot) disband(h.hot);
    h.hot = nullptr;
  }
  for (home& h : homes) {
    delete h.solo;
    h.solo = nullptr;
  }
  free_members();
  me = nullptr;
}

// A new team's ICVs. bind-var: OMP_PROC_BIND's entry for the new level if the list has one,
// else the region's proc_bind clause (flags & 7) unless either is false, else the enclosing value.
icvs child_icvs(const icvs& parent, unsigned flags) {
  const settings& s = config();
  icvs c = parent;
  if (c.nthreads_pos + 1 < static_cast<int>(s.nthreads_list.size())) c.nthreads = s.nthreads_list[++c.nthreads_pos];
  const int clause = static_cast<int>(flags & 7);
  if (c.bind_pos + 1 < static_cast<int>(s.bind_list.size()))
    c.bind = static_cast<std::int8_t>(s.bind_list[++c.bind_pos]);
  else if (c.bind != 0 && clause != 0)
    c.bind = static_cast<std::int8_t>(clause);
  return c;
}

// Members of a gang-scheduled team are traced as tasks of the region's function (create flag
// "member"): the master a child of the encountering task, the others of the master. Their runs
// are then work, and their parkings at barriers suspensions, where a trace would see idle time.
// The others are created when offered (ready until a worker takes them).
[[gnu::cold]] void trace_member_created(worker& w, team* t, int k) {
  std::uint64_t id = reinterpret_cast<std::uintptr_t>(&t->members[k]->implicit);
  std::uint64_t parent =
      k == 0 ? core::trace_id(w.current) : reinterpret_cast<std::uintptr_t>(&t->members[0]->implicit);
  std::uint32_t kind = trace::kind_of_function(reinterpret_cast<const void*>(t->fn));
  trace::record(w.trace, trace::event_type::task_create, id, parent, kind, trace::create_member);
  trace::record(w.trace, trace::event_type::task_submit, id);
  if (k != 0) trace::record(w.trace, trace::event_type::task_ready, id);
}

[[gnu::cold]] void trace_member_start(worker& w, team* t, int k) {
  if (k == 0) trace_member_created(w, t, 0);  // w.current: the encountering task
  task* implicit = &t->members[k]->implicit;
  implicit->run_flags |= core::run_traced;
  core::trace_task_event(w, trace::event_type::task_start, implicit, 0);
}

void enter(worker& w, team* t, int k) {
  member& m = *t->members[k];
  m.saved_current = w.current;
  m.saved_crew = w.crew;
  m.saved_queue = w.queue;
  m.saved_me = me;
  m.saved_portable = w.portable;
  core::init_implicit(&m.implicit, &m.group);
  reset_group(m.group, &m.implicit, t->reductions);
  m.crew = t;
  m.cg = t->parent->cg;
  m.thread_num = k;
  m.level = t->level;
  m.active_level = t->active_level;
  m.icv = t->child_icv;
  m.ws = nullptr;
  m.ticket = -1;
  m.static_round = 0;
  m.team_num = t->parent->team_num;  // a parallel region inside a host teams region
  m.num_teams = t->parent->num_teams;
  if (t->fibers && trace::on) [[unlikely]]
    trace_member_start(w, t, k);
  w.current = &m.implicit;
  // Ready tasks this worker holds for the enclosing team stay with that team.
  core::adopt_role(w, core::role{&t->crew, t->queue_of[k], &m});
  if (t->fibers) {
    w.portable = true;  // the role travels with the member's context; the worker's loop keeps its home
  } else {
    if (!w.portable) w.home = core::role{w.crew, w.queue, me};  // the thread's own role
    // An implicit task is tied: the encountering context, perhaps an untied task's, stays on this
    // worker while it is the member (its queue and its place in the team are this worker's). The
    // other members run as jobs of pooled workers, tied there.
    if (k == 0) ++w.context->tied_frames;
  }
  if (config().display_affinity) display_affinity_on_entry(m);
}

void leave(worker& w, member& m) {
  if ((m.implicit.run_flags & core::run_traced) && trace::on) [[unlikely]]
    core::trace_task_event(w, trace::event_type::task_end, &m.implicit, 0);
  w.current = m.saved_current;
  if (m.crew->fibers) {
    // Member 0 goes back to the encountering context's role. The others started at a loop's
    // top and end in the worker's home role now (a member that started on a pooled worker may end
    // on one serving a team).
    bool encountering = m.thread_num == 0;
    core::adopt_role(w, encountering ? core::role{m.saved_crew, m.saved_queue, m.saved_me} : w.home);
    w.portable = encountering && m.saved_portable;
    return;
  }
  if (m.thread_num == 0) --w.context->tied_frames;
  w.crew = m.saved_crew;
  w.queue = m.saved_queue;
  me = m.saved_me;
  if (!w.portable) w.home = core::role{w.crew, w.queue, me};
}

// A gang-scheduled team is deleted by the last member out (members 1.. may still be between the
// end barrier and their last touch of it when member 0 returns).
void release_team(team* t) {
  if (t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete t;
    fiber_teams_live.fetch_sub(1, std::memory_order_relaxed);
  }
}

bool wait_at(worker& w, member& m, team::sync_point& p, bool cancellable, bool stay = true);

// The implicit barrier at a region's end. A combined parallel loop whose body gcc split inline
// (static schedule) never ends its work share: it ends with the region.
// A fiber-run member (1..) only arrives: nothing after the region needs it, and a member that
// parked here would be resumed by its worker only after that worker's own team moved on.
void end_region(worker& w, member& m) {
  if (m.ws) leave_workshare(m);
  wait_at(w, m, m.crew->end, false, !m.crew->fibers || m.thread_num == 0);
  leave(w, m);
}

void run_member(worker& w, team* t, int k) {
  enter(w, t, k);
  member& m = *t->members[k];
  if (t->combined) {
    bool init;
    m.ws = &enter_workshare(m, init);
    m.static_round = 0;
    m.ticket = -1;
  }
  t->fn(t->data);
  end_region(w, m);
}

// A gang-scheduled member, started at the top of a loop fiber of whichever worker took it.
void member_fiber_main(core::gang_job* job, worker& w) {
  auto* j = static_cast<member_job*>(job);
  team* t = j->crew;
  int reserved_on = j->reserved_on;
  run_member(w, t, j->index);
  core::instance->workers[reserved_on]->gang_load.fetch_sub(1, std::memory_order_relaxed);
  release_team(t);
}

void member_main(core::gang_job* job, worker& w) {
  auto* j = static_cast<member_job*>(job);
  team* t = j->crew;
  int k = j->index;
  unsigned seen = 0;
  for (;;) {
    core::wait_until(w, [t, &seen] {
      return t->dispatch_gen.load(std::memory_order_acquire) != seen || t->disband.load(std::memory_order_acquire);
    });
    unsigned g = t->dispatch_gen.load(std::memory_order_acquire);
    if (g != seen) {
      seen = g;
      run_member(w, t, k);
      continue;
    }
    break;
  }
  t->gone.fetch_add(1, std::memory_order_release);
}

// Whether a region enc starts runs its members as fibers: asked for (weft_omp_set_gang_sched), or
// by WEFT_GANG (nested regions, or all).
bool gang_scheduled(const member& enc) {
  core::gang_policy g = core::instance->cfg.gang;
  return enc.icv.gang || g == core::gang_policy::all || (g == core::gang_policy::nested && enc.level >= 1);
}

// The team size of a region enc starts, with the threads it takes from enc's contention group
// (its limit counts every thread the group has in parallel regions, at every level).
int team_size_for(member& enc, unsigned requested, int& reserved) {
  long n = requested ? requested : enc.icv.nthreads;
  if (enc.active_level >= enc.icv.max_active_levels || core::forked_child) n = 1;  // (a child has no workers)
  if (n > enc.icv.thread_limit) n = enc.icv.thread_limit;
  if (n > core::max_workers) n = core::max_workers;
  if (n < 1) n = 1;
  reserved = 0;
  if (n > 1 && enc.icv.thread_limit < unlimited_threads) {
    int busy = enc.cg->busy.load(std::memory_order_relaxed);
    do {
      long room = enc.icv.thread_limit - busy + 1;  // the encountering thread is busy already
      if (n > room) n = room < 1 ? 1 : room;
      if (n == 1) break;
    } while (!enc.cg->busy.compare_exchange_weak(busy, busy + static_cast<int>(n) - 1, std::memory_order_relaxed));
    reserved = static_cast<int>(n) - 1;
  }
  return static_cast<int>(n);
}

}  // namespace

void member::start_afresh() {
  core::init_implicit(&implicit, &group);  // keeps its parent state for reuse
  reset_group(group, nullptr, nullptr);
  crew = nullptr;
  cg = nullptr;
  thread_num = level = active_level = 0;
  icv = icvs{};
  ws_seq = single_seq = 0;
  ws = nullptr;
  block = nullptr;
  ws_index = static_round = 0;
  ticket = -1;
  saved_current = nullptr;
  saved_crew = nullptr;
  saved_queue = nullptr;
  saved_me = nullptr;
  saved_portable = false;
  wait_context.store(nullptr, std::memory_order_relaxed);
  wait_ticket.store(0, std::memory_order_relaxed);
  team_num = 0;
  num_teams = 1;
  icv_writer = nullptr;
  icv_saves.clear();
}

team::team(int n) : size(n), members(n), jobs(n), queues(n), queue_of(n) {
  for (int k = 0; k < n; ++k) {
    queues[k] = std::make_unique<sched::work_deque<task*>>(256);
    queue_of[k] = queues[k].get();
  }
  first_block.reset(0, n);
  for (auto& m : members) {
    m = take_member();
    m->block = &first_block;
  }
  std::vector<int> ids(n, -1);
  crew.members.assign(ids.begin(), ids.end());
  crew.words.assign(n, nullptr);
}

team::~team() {
  std::lock_guard<std::mutex> lock(member_pool_lock);
  member_pool.insert(member_pool.end(), members.begin(), members.end());
}

namespace {
// The ICV layers a context set aside took from a member: its saves, and the values and writer on
// top of them.
struct icv_layers {
  member* owner;
  std::vector<member::icv_save> saves;
  icvs top;
  task* writer;
  bool innermost;  // owner was the member the context ran as (not one it nested in)
};

// The members a context runs as, innermost first: member 0 of a team continues in the member that
// encountered the region (another member started at a worker's top: the chain ends there).
// Each member gives up the context's saves and goes back to the values below them: what the
// implicit task and any other context running as that member see.
void stash_icvs(fiber::context* c) {
  std::vector<icv_layers>* stash = nullptr;
  for (member* m = me; m; m = m->thread_num == 0 && m->crew && !m->crew->sequential ? m->saved_me : nullptr) {
    auto& saves = m->icv_saves;
    std::size_t first = saves.size();
    while (first > 0 && saves[first - 1].context == c) --first;
    if (first == saves.size()) [[likely]]
      continue;
    if (!stash) stash = new std::vector<icv_layers>;
    stash->push_back(
        {m, {saves.begin() + static_cast<std::ptrdiff_t>(first), saves.end()}, m->icv, m->icv_writer, m == me});
    m->icv = saves[first].saved;
    m->icv_writer = saves[first].writer;
    saves.resize(first);
  }
  c->door_stash = stash;
}

// Back on top of what each member holds now (a deferred task's change made meanwhile included).
// The layers of the member the context ran as go to the member it resumes as, when that is
// another member of the same team: an untied task's context may resume on another thread (the
// members it nested in resume only where they were: the encountering context is tied, see
// enter). Put back on the member it left, they showed the task another thread's values and were
// popped by a thread that did not own that member's list (wrong ICVs, then a corrupted heap).
void unstash_icvs(fiber::context* c) {
  auto* stash = static_cast<std::vector<icv_layers>*>(c->door_stash);
  c->door_stash = nullptr;
  for (icv_layers& l : *stash) {
    member& m = l.innermost && me && me->crew == l.owner->crew ? *me : *l.owner;
    l.saves.front().writer = m.icv_writer;
    l.saves.front().saved = m.icv;
    m.icv_saves.insert(m.icv_saves.end(), l.saves.begin(), l.saves.end());
    m.icv = l.top;
    m.icv_writer = l.writer;
  }
  delete stash;
}

// Starts the runtime for the OpenMP door with a pool of `workers` (unless WEFT_NUM_THREADS says).
// The caller holds start_lock.
void start_door(int workers) {
  const settings& s = config();
  core::door_options o;
  o.pooled = true;
  o.workers = workers;
  o.max_priority = s.max_task_priority;
  if (!s.bind_list.empty() && s.bind_list[0] == 0) o.bind = 0;  // OMP_PROC_BIND=false
  o.wait = s.wait_policy;
  o.stack_size = s.stacksize;
  o.process_mask = &s.process_mask;
  o.door = "OpenMP door";
  if (core::start_runtime(o) != WEFT_OK) fatal("the runtime could not start (see the message above)");
  core::stop_hook = stop_door;
  core::fork_child_hook = [] {
    // Hot teams whose members are the parent's threads: kept (reachable), never disbanded.
    for (home& h : homes)
      if (h.hot) {
        teams_of_the_parent.push_back(h.hot);
        h.hot = nullptr;
      }
  };
  core::door_role_get = [] { return static_cast<void*>(me); };
  core::door_role_set = [](void* m) { me = static_cast<member*>(m); };
  core::door_context_leave = stash_icvs;
  core::door_context_enter = unstash_icvs;
  core::door_task_end = [](worker&, task* t) {
    if (me) end_explicit_icvs(*me, t);
  };
}
}  // namespace

worker& start_or_adopt() {
  std::lock_guard<std::mutex> lock(start_lock);
  if (!core::instance)
    start_door(config().initial.nthreads);
  else
    core::adopt_thread();
  return *core::current_worker;
}

member& first_member() {
  worker& w = self();
  home& h = homes[w.id];
  if (!h.solo) {
    team* t = new team(1);
    t->crew.assign(&w.id, 1);
    t->level = 0;
    t->active_level = 0;
    t->sequential = true;
    t->child_icv = config().initial;
    member& m = *t->members[0];
    reset_group(m.group, &w.root, nullptr);
    m.crew = t;
    m.cg = &h.cg;
    m.icv = config().initial;
    m.thread_num = 0;
    // Tasks of the sequential part count in the solo member's group, so that an orphaned
    // barrier waits for them like a team barrier.
    w.root.group = &m.group;
    h.solo = t;
  }
  me = h.solo->members[0];
  return *me;
}

namespace {
// Threads of the program that became OpenMP threads (adopted workers) and have not exited.
bool foreign_threads_live(core::runtime& rt) {
  std::lock_guard<std::mutex> lock(rt.grow_lock);
  std::size_t adopted = 0;
  int n = rt.worker_count.load(std::memory_order_acquire);
  for (int i = 1; i < n; ++i) adopted += !rt.workers[i]->has_thread;
  return adopted > rt.adoptable.size();
}
}  // namespace

// The runtime stops as at exit (weft_finalize: the workers' threads end, stacks and pools are
// freed), as libgomp's pause ends its thread pool, and starts again at once with the initial
// thread alone, which keeps its ICVs; the next regions recruit their threads anew. Refused where
// stopping could break the program: inside a region or a task, on another thread than the
// initial one, with tasks pending or other threads in OpenMP, on a runtime weft_init started, and
// while a trace is recorded (a restart would begin the file again).
int pause_host(const char* caller) {
  std::lock_guard<std::mutex> lock(start_lock);  // no thread starts or adopts the runtime meanwhile
  core::runtime* rt = core::instance;
  if (!rt) return 0;
  worker* w = core::current_worker;
  const char* why = nullptr;
  if (!rt->pooled)
    why = "the runtime was started by weft_init, not by the OpenMP door";
  else if (!w || w->id != 0)
    why = "only the thread that started the OpenMP runtime may pause it";
  else if (me && me->crew != homes[0].solo)
    why = "called inside a parallel or target region";
  else if (w->current != &w->root)
    why = "called inside a task";
  else if (core::live_tasks() > 0)
    why = "tasks are pending";
  else if (foreign_threads_live(*rt))
    why = "other threads of the program are OpenMP threads";
  else if (trace::on)
    why = "a trace is being recorded (WEFT_TRACE)";
  if (why) {
    std::fprintf(stderr, "weft: %s: the runtime is not paused: %s\n", caller, why);
    return -1;
  }
  std::optional<icvs> keep;
  if (me) keep = me->icv;
  int rc = weft_finalize();
  if (core::instance) {
    std::fprintf(stderr, "weft: %s: the runtime is not paused: %s\n", caller, weft_strerror(rc));
    return -1;
  }
  if (keep) {
    start_door(1);
    first_member().icv = *keep;
  }
  return 0;
}

namespace {
// A deferred task that carries no ICVs was created while no member of its team had changed any:
// its creator's values were the team's. A member may have changed its own since (its implicit
// task, before or while this task waited): the task starts from the team's values, in a layer of
// its own, not from the member's.
void start_with_team_icvs(worker& w, task* t) {
  member* m = me;
  if (!m || !m->crew || (t->door_bits & door_own_icvs) || !m->crew->icvs_diverged.load(std::memory_order_relaxed))
    return;
  const icvs& base = m->crew->child_icv;
  if (m->icv == base) return;
  begin_explicit_icvs(*m, w.context, t);
  m->icv = base;
  t->run_flags |= core::run_door_end;
}
}  // namespace

icvs& writable_icvs() {
  worker& w = self();
  member& m = current();
  task* t = w.current;
  // Relaxed: creators read it for their own later tasks (a change made by another member meanwhile
  // is not ordered with them anyway).
  if (!m.crew->icvs_diverged.load(std::memory_order_relaxed)) {
    m.crew->icvs_diverged.store(true, std::memory_order_relaxed);
    core::door_task_begin.store(start_with_team_icvs, std::memory_order_relaxed);
  }
  // Implicit tasks (and roots) hold the thread's values; frames of included tasks are roots that
  // own their ICVs.
  if (t != m.icv_writer && ((t->door_bits & door_own_icvs) || !(t->flags & core::flag_root))) {
    begin_explicit_icvs(m, w.context, t);
    // A deferred task's end is not the door's to see: the core calls back (door_task_end).
    if (!(t->door_bits & door_own_icvs)) t->run_flags |= core::run_door_end;
  }
  return m.icv;
}

namespace {
// Whether a member of team t has a task of the region not finished.
bool tasks_in_flight(const void* t) {
  bool tasks = false;
  for (member* other : static_cast<const team*>(t)->members)
    tasks |= other->group.pending.load(std::memory_order_relaxed) != 0;
  return tasks;
}

// stay: wait for the others (else arrive and go on).
bool wait_at(worker& w, member& m, team::sync_point& p, bool cancellable, bool stay) {
  team* t = m.crew;
  core::finish_implicit(w, implicit_of(w, m));
  if (t->size == 1) return cancellable && t->cancelled.load(std::memory_order_relaxed);
  // seq_cst reads: a fiber-run member parks after publishing its context (see run_until).
  auto cancelled = [t, cancellable] { return cancellable && t->cancelled.load(std::memory_order_seq_cst); };
  if (cancelled()) return true;
  // A member that only arrives may hold a ready task that is no task of this team (the successor of a
  // detached task whose event it fulfilled, when that task's gang had its lanes full): into the
  // team's queue before it arrives, where member 0 finds it when the team ends (join). Moved later, when the member
  // leaves its role, the queue could already have been emptied and the task lost.
  if (!stay) core::spill_held(w);
  unsigned gen = p.gen.load(std::memory_order_acquire);
  if (p.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<unsigned>(t->size)) {
    p.arrived.store(0, std::memory_order_relaxed);
    p.gen.store(gen + 1, std::memory_order_seq_cst);  // seq_cst: pairs with the sleepers' fence
    if (p.sleepers.load(std::memory_order_seq_cst)) sched::idle_park::wake_all(p.gen);
    wake_members(t, m.thread_num);
    return false;
  }
  if (!stay) return false;
  if (t->fibers) {
    // The members it waits for may be queued on this very worker: they start (and this member
    // parks) rather than this member spinning.
    core::park_slot slot{m.wait_context, m.wait_ticket, &p};
    core::run_until(
        w, [&p, gen, &cancelled] { return p.gen.load(std::memory_order_seq_cst) != gen || cancelled(); }, &slot);
    return p.gen.load(std::memory_order_acquire) == gen;
  }
  // While no member has a task in flight there is nothing to run: poll the barrier alone, with
  // short pauses, so that its release is seen within a few hundred cycles. Not with more threads
  // than cores: the member it waits for may need this core (run_until gives it up soon).
  const int poll_spins = core::instance->oversubscribed.load(std::memory_order_relaxed) ? 0 : 4000;
  for (int spins = 0; spins < poll_spins; ++spins) {
    if (p.gen.load(std::memory_order_acquire) != gen || cancelled()) break;
    if (tasks_in_flight(t)) break;
    __builtin_ia32_pause();
  }
  const core::wake_word wake{p.gen, gen, p.sleepers, tasks_in_flight, t};
  core::run_until(
      w, [&p, gen, &cancelled] { return p.gen.load(std::memory_order_acquire) != gen || cancelled(); }, nullptr,
      &wake);
  // Left by a cancellation, this member's arrival stays counted: the region ends at the other
  // sync point, and the next region starts this one afresh.
  return p.gen.load(std::memory_order_acquire) == gen;
}
}  // namespace

void wake_members(team* t, int except) {
  if (t->fibers) {
    for (int k = 0; k < t->size; ++k)
      if (k != except) core::wake_published(t->members[k]->wait_context, t->members[k]->wait_ticket);
    return;
  }
  for (int k = 0; k < t->size; ++k) {
    auto& word = *t->crew.words[k];
    if (k != except && word.load(std::memory_order_seq_cst) == 1) sched::idle_park::wake(word);
  }
}

void barrier(worker& w, member& m) {
  wait_at(w, m, m.crew->inner, false);
}

bool cancellable_barrier(worker& w, member& m) {
  return wait_at(w, m, m.crew->inner, true);
}

// After a cancelled region its members may have met different numbers of constructs (and
// barriers); with every member idle, the team starts again from a common count.
void realign(team* t) {
  std::uint64_t seq = 0;
  workshare_block* oldest = nullptr;
  for (member* m : t->members) {
    seq = m->ws_seq > seq ? m->ws_seq : seq;
    if (!oldest || m->block->first < oldest->first) oldest = m->block;
  }
  // Every block from the laggard's on goes back; the team starts again in one block.
  for (workshare_block* b = oldest; b;) {
    workshare_block* next = b->next.load(std::memory_order_relaxed);
    give_block(*t, b);
    b = next;
  }
  workshare_block* restart = take_block(*t, seq - seq % workshare_block_size);
  for (member* m : t->members) {
    m->ws_seq = seq;
    m->single_seq = t->single_taken.load(std::memory_order_relaxed);
    m->block = restart;
  }
  t->inner.arrived.store(0, std::memory_order_relaxed);
}

team* fork(worker& w, void (*fn)(void*), void* data, unsigned requested, unsigned flags, bool combined) {
  member& enc = current();
  int reserved;
  int n = team_size_for(enc, requested, reserved);
  team* t;
  home& h = homes[w.id];
  const bool fibers = n > 1 && gang_scheduled(enc);
  // Only the worker's own sequential context keeps a hot team: a target region's initial task
  // is at level 0 too, but may run inside a region of that very team.
  bool hot = enc.crew->sequential && !fibers;
  if (fibers) {
    t = new team(n);
    t->fibers = true;
    t->refs.store(n, std::memory_order_relaxed);
    fiber_teams_live.fetch_add(1, std::memory_order_relaxed);
    t->crew.queues.assign(t->queue_of.begin(), t->queue_of.end());  // members name no worker
    t->bound = 1;
  } else if (hot && h.hot && h.hot->size == n) {
    t = h.hot;
  } else {
    if (hot && h.hot) {
      disband(h.hot);
      h.hot = nullptr;
    }
    t = new team(n);
    t->crew.members[0] = w.id;
    if (n == 1) t->crew.assign(&w.id, 1, t->queue_of.data());
    t->bound = 1;
    if (hot) h.hot = t;
  }
  t->parent = &enc;
  t->reserved = reserved;
  t->level = enc.level + 1;
  t->active_level = enc.active_level + (n > 1);
  t->child_icv = child_icvs(enc.icv, flags);
  t->icvs_diverged.store(false, std::memory_order_relaxed);
  t->fn = fn;
  t->data = data;
  t->combined = combined;
  t->reductions = nullptr;
  if (t->cancelled.load(std::memory_order_relaxed)) realign(t);
  t->cancelled.store(false, std::memory_order_relaxed);
  enter(w, t, 0);
  return t;
}

namespace {
// Offers members 1.. of a gang-scheduled team to reserved workers (ICS'21 Algorithm 1's
// get_workers): the workers the encountering thread serves with, starting next to it, each
// taken while its load of gang members is at most the average, else the least loaded.
void offer_members(worker& w, team* t) {
  core::runtime& rt = *core::instance;
  std::vector<int> ids;
  const core::gang* crew = w.portable ? w.home.crew : w.crew;
  if (crew && crew->size() > 1) {
    ids = crew->members;
  } else {
    // A sequential context (WEFT_GANG=all): every worker of the pool, grown to the team's size
    // (at most the initial nthreads-var) once.
    core::ensure_workers(std::min(t->size, std::max(config().initial.nthreads, 1)));
    for (int i = 0, n = rt.worker_count.load(std::memory_order_acquire); i < n; ++i)
      if (rt.workers[i]->has_thread || i == w.id) ids.push_back(i);
  }
  int count = static_cast<int>(ids.size());
  int pos = 0;
  for (int i = 0; i < count; ++i)
    if (ids[i] == w.id) pos = i;
  long load = 0;
  for (int id : ids) load += rt.workers[id]->gang_load.load(std::memory_order_relaxed);
  std::uint64_t gang_id = rt.next_gang_id.fetch_add(1, std::memory_order_relaxed);
  int next = pos + 1;
  for (int k = 1; k < t->size; ++k) {
    long average = (load + t->size - 1) / count;
    int pick = -1, least = -1;
    for (int i = 0; i < count; ++i) {
      int id = ids[(next + i) % count];
      int l = rt.workers[id]->gang_load.load(std::memory_order_relaxed);
      if (l <= average) {
        pick = (next + i) % count;
        break;
      }
      if (least < 0 || l < rt.workers[ids[least]]->gang_load.load(std::memory_order_relaxed))
        least = (next + i) % count;
    }
    if (pick < 0) pick = least;
    next = pick + 1;
    member_job& j = t->jobs[k];
    j.run = member_fiber_main;
    j.crew = t;
    j.index = k;
    j.gang_id = gang_id;
    j.nest_level = t->level;
    j.reserved_on = ids[pick];
    ++load;
    if (trace::on) [[unlikely]]
      trace_member_created(w, t, k);
    core::offer_gang_member(*rt.workers[ids[pick]], &j);
  }
}
}  // namespace

// Starts the members (after the master has set up a combined construct's work share).
void launch(team* t) {
  if (t->fibers) {
    offer_members(self(), t);
    return;
  }
  ++t->runs;
  t->dispatch_gen.store(static_cast<unsigned>(t->runs), std::memory_order_seq_cst);
  if (t->bound < t->size) {
    // New members: recruit, then publish the gang before any of them looks for work.
    std::vector<worker*> recruits;
    for (int k = t->bound; k < t->size; ++k) recruits.push_back(core::recruit(t->crew.members[0], k));
    std::vector<int> ids(t->crew.members);
    for (int k = t->bound; k < t->size; ++k) ids[k] = recruits[k - t->bound]->id;
    t->crew.assign(ids.data(), t->size, t->queue_of.data());
    for (int k = t->bound; k < t->size; ++k) {
      t->jobs[k].run = member_main;
      t->jobs[k].crew = t;
      t->jobs[k].index = k;
      core::dispatch(*recruits[k - t->bound], &t->jobs[k]);
    }
    t->bound = t->size;
  } else {
    wake_members(t, 0);
  }
}

void join(worker& w, team* t) {
  end_region(w, *t->members[0]);
  if (t->reserved) t->parent->cg->busy.fetch_sub(t->reserved, std::memory_order_relaxed);
  if (t->fibers) {
    // A task made ready in a member's queue that is no task of this team (the successor of a
    // detached task whose event a member fulfilled, its own gang's lanes full) would stay there once the team is gone:
    // it goes to the queue of the worker member 0 is back on, where its parent's wait finds it.
    worker& now = self();
    bool moved = false;
    for (auto& q : t->queues)
      while (core::task* x = q->steal()) {
        now.queue->push(x);
        moved = true;
      }
    if (moved && now.crew) now.crew->park.notify_work();
    release_team(t);
  } else if (t != homes[w.id].hot) {
    disband(t);
  }
}

void run_initial_task(void (*fn)(void*), void* data, int thread_limit) {
  worker& w = self();
  member& enc = current();
  team* t = new team(1);
  t->crew.members[0] = w.id;
  t->crew.assign(&w.id, 1, t->queue_of.data());
  t->bound = 1;
  t->sequential = false;  // its tasks are the target region's, apart from the worker's root
  t->parent = &enc;       // where enter() finds the context to restore; no ancestor (level 0)
  t->child_icv = config().initial;
  if (thread_limit > 0) t->child_icv.thread_limit = thread_limit;
  contention_group cg;
  enter(w, t, 0);
  member& m = *t->members[0];
  m.cg = &cg;
  m.team_num = 0;
  m.num_teams = 1;
  fn(data);
  end_region(w, m);
  delete t;
}

void run_parallel(void (*fn)(void*), void* data, unsigned requested, unsigned flags) {
  worker& w = self();
  team* t = fork(w, fn, data, requested, flags, false);
  launch(t);
  fn(data);
  join(w, t);
}

[[noreturn]] void fatal(const char* what) {
  std::fprintf(stderr, "weft (OpenMP door): %s\n", what);
  std::abort();
}

}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

GOMP_API void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  run_parallel(fn, data, num_threads, flags);
}

GOMP_API unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  worker& w = self();
  team* t = fork(w, fn, data, num_threads, flags, false);
  auto* d = *static_cast<std::uintptr_t**>(data);
  register_reductions(nullptr, d, t->size, 1);
  t->reductions = d;
  t->members[0]->group.reductions = d;
  unsigned n = static_cast<unsigned>(t->size);
  launch(t);
  fn(data);
  join(w, t);
  return n;
}

// Legacy split form (GCC before 4.9): the caller runs fn itself between start and end.
GOMP_API void GOMP_parallel_start(void (*fn)(void*), void* data, unsigned num_threads) {
  worker& w = self();
  team* t = fork(w, fn, data, num_threads, 0, false);
  launch(t);
}

GOMP_API void GOMP_parallel_end(void) {
  member& m = current();
  join(self(), m.crew);
}

GOMP_API void GOMP_barrier(void) {
  member& m = current();
  barrier(self(), m);
}

GOMP_API bool GOMP_barrier_cancel(void) {
  return cancellable_barrier(self(), current());
}

GOMP_API bool GOMP_single_start(void) {
  member& m = current();
  std::uint64_t s = ++m.single_seq;
  if (m.crew->size == 1) return true;
  std::uint64_t expected = s - 1;
  // A member behind the others finds the construct taken (single_taken >= s) and skips it.
  return m.crew->single_taken.compare_exchange_strong(expected, s, std::memory_order_acq_rel,
                                                      std::memory_order_relaxed);
}

GOMP_API void* GOMP_single_copy_start(void) {
  member& m = current();
  bool init;
  workshare& ws = enter_workshare(m, init);
  m.ws = &ws;
  if (init) return nullptr;  // this member runs the single region, then calls copy_end
  barrier(self(), m);        // until the winner has published its data
  void* data = ws.copy;
  leave_workshare(m);
  return data;
}

GOMP_API void GOMP_single_copy_end(void* data) {
  member& m = current();
  m.ws->copy = data;
  barrier(self(), m);
  leave_workshare(m);
}

// Unnamed critical and GOMP_atomic each use one lock for the whole process, as the spec's
// "all unnamed critical regions" rule and libgomp do.
namespace {
std::atomic<int> unnamed_critical{0};
std::atomic<int> atomic_lock{0};
}  // namespace

GOMP_API void GOMP_critical_start(void) {
  lock_word(unnamed_critical);
}
GOMP_API void GOMP_critical_end(void) {
  unlock_word(unnamed_critical);
}

// gcc passes the address of a zero-initialised pointer-sized common symbol per name: its first
// four bytes are the lock word.
GOMP_API void GOMP_critical_name_start(void** slot) {
  lock_word(*reinterpret_cast<std::atomic<int>*>(slot));
}
GOMP_API void GOMP_critical_name_end(void** slot) {
  unlock_word(*reinterpret_cast<std::atomic<int>*>(slot));
}

GOMP_API void GOMP_atomic_start(void) {
  lock_word(atomic_lock);
}
GOMP_API void GOMP_atomic_end(void) {
  unlock_word(atomic_lock);
}

}  // extern "C"
