// The runtime instance: workers, their queues and pools, and the shared scheduling state.
#pragma once

#include <pthread.h>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/config.hpp"
#include "core/task.hpp"
#include "fiber/context.hpp"
#include "sched/block_pool.hpp"
#include "sched/idle.hpp"
#include "sched/priority_lane.hpp"
#include "sched/work_deque.hpp"
#include "trace/recorder.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WEFT_COUNT_CHECKS 1
#else
#define WEFT_COUNT_CHECKS 0
#endif

namespace weft::core {

struct parent_state;
struct worker;

// A gang: the workers that share one pool of work. Members steal only from each other and are woken
// by each other's pushes. The native door runs one gang of every worker; the OpenMP door makes each
// parallel region's team a gang, so its tasks run on its threads only.
struct gang {
  std::vector<int> members;  // worker ids
  // Each member's ready queue in this gang: its own deque in the root gang, a deque of the team's
  // in an OpenMP team, so a thread that is master of a nested team keeps the outer team's tasks
  // apart from the inner team's.
  std::vector<sched::work_deque<task*>*> queues;
  std::vector<std::atomic<std::uint32_t>*> words;  // members' sleep words, for the park
  std::vector<int> cores_of;                       // the core each member is bound to (-1: none)
  sched::idle_park park;
  // Ready tasks of priority > 0 (or every task under WEFT_SCHEDULE=priority), highest level first.
  // One set per gang: a prioritised task runs only on its gang's members, so an OpenMP task runs
  // with its own team's level, size and thread numbers (with one set per runtime, the initial
  // thread ran a team's prioritised tasks at level 0). Levels 0..max_priority, taken on first
  // use from the spares that gangs give back.
  std::atomic<sched::priority_lane<task*>*> lanes[64] = {};
  alignas(64) std::atomic<std::int64_t> priority_ready{0};

  gang() = default;
  gang(const gang&) = delete;
  gang& operator=(const gang&) = delete;
  ~gang();  // gives its lanes back to the spares

  // queues: one per member, or null for the workers' own deques.
  void assign(const int* ids, int n, sched::work_deque<task*>* const* queues = nullptr);
  int size() const { return static_cast<int>(members.size()); }
};

// Work handed to a worker that belongs to no gang (the OpenMP door's thread pool): the worker runs
// run(job, itself) on its top-level loop.
struct gang_job {
  void (*run)(gang_job*, worker&);
  // A gang member offered to workers (offer_gang_member): the list it waits in, its gang's
  // order (ICS'21 Algorithm 1: nest level, then gang id) and the worker it was reserved on.
  gang_job* next = nullptr;
  std::uint64_t gang_id = 0;
  int nest_level = 0;
  int reserved_on = -1;
};

// What a worker serves: the gang, its queue in it, and the door's state for the thread (the
// OpenMP door's member). A gang member run as a fiber (a gang-scheduled nested region) carries
// its role in its context, from worker to worker.
struct role {
  gang* crew = nullptr;
  sched::work_deque<task*>* queue = nullptr;
  void* door = nullptr;
};

// Counters a single worker writes; summed by weft_get_stats. Relaxed single-writer updates.
// Tasks created and completed are the worker's submitted and finished counts (below), less their
// values at the last weft_reset_stats.
struct worker_counters {
  std::atomic<std::int64_t> submitted_at_reset{0};
  std::atomic<std::int64_t> finished_at_reset{0};
  std::atomic<std::uint64_t> edges_created{0};
  std::atomic<std::uint64_t> edges_elided{0};
  std::atomic<std::uint64_t> edges_pruned{0};
  std::atomic<std::uint64_t> redirect_nodes{0};
  std::atomic<std::uint64_t> steals{0};
  std::atomic<std::uint64_t> throttle_waits{0};
  std::atomic<std::uint64_t> max_live{0};
  std::atomic<std::uint64_t> suspensions{0};  // contexts parked or yielded
  std::atomic<std::uint64_t> resumes{0};
  std::atomic<std::uint64_t> events_fulfilled{0};
  std::atomic<std::uint64_t> graph_replayed{0};
  std::atomic<std::uint64_t> graph_recordings{0};

  static void bump(std::atomic<std::uint64_t>& c, std::uint64_t by = 1) {
    c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
};

// An access declared on a task not yet submitted (kept per worker until submit).
struct pending_access {
  task* owner;
  const void* address;
  weft_dep_type type;
};

struct alignas(64) worker {
  worker(int id, sched::block_depot& tasks, sched::block_depot& blocks, sched::block_depot& groups,
         sched::block_depot& events, sched::block_depot& records)
      : id(id),
        task_cache(tasks),
        successor_cache(blocks),
        group_cache(groups),
        event_cache(events),
        record_cache(records) {}

  const int id;
  sched::work_deque<task*> deque;            // its queue in the root gang (and in a gang of its own)
  sched::work_deque<task*>* queue = &deque;  // its queue in the gang it serves now
  gang* crew = nullptr;                      // the gang this worker serves now; null while pooled
  task* next = nullptr;                      // depth-first: the successor this worker runs next
  // While this worker completes a task of another gang (a detached task whose event it fulfilled
  // from a nested team, or a deferred completion): that gang, whose shared lanes take the tasks
  // the completion makes ready. Its queues are its members' own; this worker's are another team's.
  gang* completing_for = nullptr;
  // Ready tasks kept out of the thieves' reach, run without the queue's fences (owner only;
  // emptied before the worker changes gangs, see spill_local): those made ready at birth while
  // the queue already holds max_ready, and in a gang of one every ready task. A ring: a gang of
  // several runs them newest first (its thieves take the oldest from the queue), a gang of one
  // oldest first. With nobody to take the old ones, newest first would leave them waiting while
  // later work runs ahead: a replayed graph's next iterations, spreading one worker's working set
  // over every round in flight (Jacobi on 1 worker: 2x slower than oldest first).
  static constexpr int local_capacity = 128;  // a power of two
  int local_count = 0;
  int local_head = 0;  // ring index of the oldest
  task* local[local_capacity];
  void push_local(task* t) { local[(local_head + local_count++) & (local_capacity - 1)] = t; }
  task* newest_local() const { return local[(local_head + local_count - 1) & (local_capacity - 1)]; }
  task* pop_newest_local() { return local[(local_head + --local_count) & (local_capacity - 1)]; }
  task* pop_oldest_local() {
    task* t = local[local_head];
    local_head = (local_head + 1) & (local_capacity - 1);
    --local_count;
    return t;
  }
  // The local task this worker runs next (local_count > 0, so crew is set): see above.
  task* local_to_run() const { return crew->size() == 1 ? local[local_head] : newest_local(); }
  task* pop_local_to_run() { return crew->size() == 1 ? pop_oldest_local() : pop_newest_local(); }
  task* current = nullptr;  // running task (root when none)
  // Tasks run on this stack above the worker's own loop: > 0 while the worker runs a task. Written
  // by this worker only; other workers read it (a throttled producer waits while one is above 0).
  std::atomic<int> nesting{0};
  int nested() const { return nesting.load(std::memory_order_relaxed); }
  void set_nested(int n) { nesting.store(n, std::memory_order_relaxed); }
  std::uint64_t random_state = 0;
  int history[4] = {-1, -1, -1, -1};  // hybrid victim selection (ICS'21 Algorithm 2)
  int history_index = 0;
  int throttle_countdown = 0;
  int throttled = 0;  // producers this worker has set aside for the throttle (at most max_throttled)
  std::int64_t hold_since = 0;  // when its loop began to hold a throttled producer back (0: not)
  // Neither running nor about to run a task: in idle_wait since it last found work, or back in the
  // program's own code after a wait (read by the members of its gang holding a throttled producer
  // back, see hold_throttled).
  std::atomic<bool> idle{true};
  int refused = 0;    // why the last allocate_task returned null (0: out of memory)
#if WEFT_COUNT_CHECKS
  // Sanitizer builds: every finished body must be followed by exactly one fully_done (checked at
  // finalize; a lost or doubled child count shows up here instead of as a leaked parent state).
  std::uint64_t check_bodies = 0, check_fully_done = 0;
#endif
  // A gang of one's decrements of replayed tasks' predecessor counts, not yet applied (see
  // graph_release): the task (null: a free slot) and how many, in a slot chosen by the task's
  // address. Applied before this worker looks past its own ready tasks (find_queued_work) or
  // changes gangs (spill_local).
  static constexpr int deferred_slots = 32;  // a power of two
  int deferred_n = 0;                        // slots in use
  task* deferred_task[deferred_slots] = {};
  std::int32_t deferred_count[deferred_slots] = {};
  void empty_deferred_slot(int slot) {
    deferred_task[slot] = nullptr;
    --deferred_n;
  }
  static int deferred_slot(const task* t) {
    // Descriptors are 192 bytes apart: 3 lines, coprime with the slot count, so 32 consecutive
    // instances take 32 different slots.
    return static_cast<int>(reinterpret_cast<std::uintptr_t>(t) >> 6) & (deferred_slots - 1);
  }
  // The persistent graph whose instances this worker runs on the producer's stack, successors not
  // counted down (graph.cpp, "rounds run inline"): while a taskiter instance runs, and for the
  // whole replay of a re-executed graph, whose opened instances it holds. Null otherwise. Whatever
  // sets this worker's running context aside first calls graph_leave_inline.
  graph* inline_graph = nullptr;
  // Priority propagation (sched/priority_propagation.cpp), when a mode records edges: the
  // successor whose incoming edges are being gathered, its predecessors (each held), and the last
  // task whose edges were handed over.
  task* propagation_succ = nullptr;
  std::vector<task*> propagation_preds;
  task* propagation_recorded = nullptr;
  task* batch_parent = nullptr;      // parent of the children counted in batch_finished
  std::int64_t batch_finished = 0;   // finished children not yet subtracted from its pending
  taskgroup* batch_group = nullptr;  // the taskgroup this worker keeps an account with
  std::int64_t group_owed = 0;       // to subtract from its pending: members finished + unused credits

  sched::block_cache task_cache;
  sched::block_cache successor_cache;
  sched::block_cache group_cache;
  sched::block_cache event_cache;
  sched::block_cache record_cache;       // priority propagation's reports
  std::vector<pending_access> accesses;  // declared on tasks being built
  std::vector<task*> redirect_worklist;  // redirect nodes ready to complete
  // Parent states (of tasks that had children) for reuse, at most spare_states_kept; the excess
  // goes to the runtime's shared list, where workers without spares take from. States migrate
  // with untied tasks, so one worker may free more than it makes, and an unbounded list per
  // worker grew without end (11,000 on 2 threads for issue 23's 30M-node tree, most of its heap).
  // They flow both ways too: a bound of 64 made every swing a trip to the shared supply (a heap
  // allocation then: that tree 7% slower). States are never deleted before finalize.
  static constexpr std::size_t spare_states_kept = 1024;
  std::vector<parent_state*> spare_states;

  worker_counters counters;
  trace::buffer trace;  // this worker's events (WEFT_TRACE); empty when tracing is off
  // Live-task accounting for throttling: tasks submitted here minus tasks finished here (also the
  // created and completed counts of weft_get_stats).
  alignas(64) std::atomic<std::int64_t> submitted{0};
  std::atomic<std::int64_t> finished{0};
  alignas(64) std::atomic<std::uint32_t> sleep_word{0};
  std::atomic<gang_job*> job{nullptr};  // set by whoever recruits this pooled worker
  // Gang members (fiber-run, see role) reserved on this worker and not started yet, under
  // gang_lock (taken at forks and by the worker that starts one, never on a task path); how many
  // it has been given and not finished (Algorithm 1's load); the one its loop starts next.
  std::atomic<bool> gang_lock{false};
  gang_job* gang_members = nullptr;
  std::atomic<int> gang_queued{0};  // members in the list (read without the lock to skip it)
  std::atomic<int> gang_load{0};
  gang_job* gang_start = nullptr;
  // Whether the running context serves a fiber-run member's role (it is then saved with the
  // context, see set_aside), and the role this worker's own loop serves meanwhile.
  bool portable = false;
  role home{nullptr, &deque, nullptr};
  // The roles of the contexts parked here that resume only here (a thread's stack, a tied task
  // on it, a fiber-run member), each with how many: owner only. While one's team has ready tasks
  // and this worker serves another role, its loop serves that one: nobody else may use the queue
  // of a parked member (a fiber-run member's, or a nested team of one's, left when the worker
  // resumed a context of an enclosing team).
  struct parked_role {
    role r;
    int contexts;
  };
  std::vector<parked_role> parked_roles;
  std::unique_ptr<gang> own_gang;  // an adopted thread's gang of one
  // Execution contexts (see fiber/context.hpp). The running one, the thread's own stack, loop
  // fibers kept for the next suspension, contexts yielded here (resumed by this worker only), and
  // contexts others made resumable for this worker (lock-free; the owner takes them all at once).
  fiber::context* context = nullptr;
  fiber::context thread_context;
  fiber::context* spare_fibers = nullptr;
  int spare_count = 0;
  fiber::context* yielded = nullptr;
  fiber::context* resume_next = nullptr;  // taken from the inbox, not yet resumed (owner only)
  alignas(64) std::atomic<fiber::context*> inbox{nullptr};
  std::uint64_t ticket_seq = 0;
  std::int64_t yields_stall_until = 0;  // steady-clock ns: waits sleep rather than yield until then
  std::int64_t stall_window_ns = 0;     // the length of the last such window (yield_core)
  // Steady-clock ns of its last yield's end; INT64_MAX while asleep. Read by the workers bound to
  // the same core: one that has not given its core up since is running there (yield_core).
  std::atomic<std::int64_t> gave_core_ns{0};
  int core_slot = -1;                   // the core (index in the process's cores) it is bound to, or -1
  bool floating = false;                // bound, but let onto every CPU of the process (float_worker)
  task root;           // implicit task of this worker's thread
  pthread_t thread{};  // started by the runtime when has_thread (not for adopted threads)
  bool has_thread = false;
};

inline constexpr int max_workers = 1024;
inline constexpr int max_throttled = 4;  // producers one worker sets aside for the throttle at once
inline constexpr std::int64_t solo_window_default = 64;       // a gang of one's window (runtime::solo_window)
inline constexpr std::size_t propagation_record_bytes = 128;  // sched/priority_propagation.cpp's report blocks

struct runtime {
  config cfg;
  // Workers only ever get added (OpenMP teams larger than the pool, adopted threads): slots below
  // worker_count are set and never change until finalize.
  std::atomic<int> worker_count{0};
  bool pooled = false;  // OpenMP door: workers not in a team wait in the pool
  gang root_gang;       // native door: every worker; OpenMP door: the initial thread
  std::int64_t max_tasks = 0;
  std::int64_t max_ready = 0;
  int local_limit = 0;  // local buffer size in use: min(local_capacity, max_ready)
  int throttle_interval = 1;
  std::int64_t throttle_floor = 1;  // outstanding children from which a producer may be throttled
  // A producer in a gang of one steps aside past this many children of its own outstanding: no
  // thief needs lookahead there, and a window that fits in the core's first-level cache is what
  // makes each task cheap (see decisions.md, "A gang of one keeps a window of 64").
  std::int64_t solo_window = 1;
  int solo_interval = 1;  // creations between two looks at the window in a gang of one
  sched::block_depot task_depot{task_size, 64};
  sched::block_depot successor_depot{task_size, 64};
  sched::block_depot group_depot{task_size, 16};
  sched::block_depot event_depot{64, 64};
  sched::block_depot record_depot{propagation_record_bytes, 64};
  std::vector<std::unique_ptr<worker>> workers{max_workers};
  std::mutex grow_lock;        // adding workers, recruiting pooled ones (not on a task path)
  std::vector<int> pool;       // ids of pooled workers without a job (under grow_lock)
  std::vector<int> adoptable;  // workers of adopted threads that have exited (under grow_lock)
  std::atomic<bool> threads_adopted{false};  // set by the first adoption, never cleared
  sched::idle_park pool_park;  // waits outside any gang (the pool, between regions)
  // Pause rounds (of 16 pauses, ~tens of microseconds in all) before an idle wait yields; few once
  // there are more workers than cores.
  std::atomic<int> spin_rounds{2000};
  // More workers than cores in the mask: a waiter that spins holds the core of the thread it waits
  // for, so every wait gives the core up after a short spin.
  std::atomic<bool> oversubscribed{false};
  // With workers bound: how many workers bound to each core are awake (not asleep in a wait), so
  // that a producer tells a core that idles from one a looker shares with busy threads
  // (idle_park::notify_work). Null when binding is off.
  std::unique_ptr<std::atomic<int>[]> awake_on_core;
  int core_count = 0;  // cores in the process mask
  // Parent states workers handed over past their bound (keep_spare_state), and how many, read
  // without the lock: rare paths only.
  std::mutex shared_states_lock;
  std::vector<parent_state*> shared_states;
  std::atomic<std::size_t> shared_states_count{0};
  // Gang members offered and not yet started, on all workers (a scheduling point looks at the
  // lists only when this is positive; written at forks and starts only).
  alignas(64) std::atomic<int> gang_members_waiting{0};
  std::atomic<std::uint64_t> next_gang_id{0};
  std::size_t fiber_stack = 0;  // bytes per fiber stack
  std::mutex fiber_lock;        // spare loop fibers beyond the workers' own (rare path)
  std::vector<fiber::context*> spare_fibers;
  // Persistent graphs' instance arrays no graph uses, with their sizes in bytes: instance
  // descriptors stay type-stable like pooled ones (a worker reporting a child's end may read its
  // parent's descriptor after the parent finished, and the graph ended). Freed at finalize.
  std::mutex graph_arrays_lock;
  std::vector<std::pair<void*, std::size_t>> spare_graph_arrays;
  alignas(64) std::atomic<bool> stopping{false};
};

// The running instance, or null. Set by weft_init, cleared by weft_finalize.
extern runtime* instance;
// The calling thread's worker, or null on a thread that is not a worker.
extern constinit thread_local worker* current_worker;
// The same, read after a point where the running context may have moved to another thread (a
// wait). ThreadSanitizer's instrumentation computes a thread-local address once per function and
// would check the old thread's copy: under it the read goes through a call.
#if defined(__SANITIZE_THREAD__)
worker* worker_after_switch();
#else
inline worker* worker_after_switch() {
  return current_worker;
}
#endif

}  // namespace weft::core
