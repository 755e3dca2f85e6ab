// The OpenMP door's internal state: settings (ICVs), teams, their members and worksharing slots.
//
// A parallel region's team is a gang of engine workers: the encountering thread is member 0, the
// others are recruited from the pool (and stay bound to the team of a top-level region between
// regions, so a loop of parallel regions forks without recruiting). Every member runs its implicit
// task as an engine descriptor whose children count in the member's taskgroup, so a team barrier
// is "my descendants are done, then everyone arrived" and tasks stay ordinary engine tasks.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "sched/cpu_topology.hpp"

namespace weft::omp {

using core::task;
using core::worker;

// --- settings ---------------------------------------------------------------------------------
// Schedule kinds as omp_sched_t numbers them; the monotonic modifier is bit 31.
enum sched_kind : int { sched_static = 1, sched_dynamic = 2, sched_guided = 3, sched_auto = 4 };
inline constexpr unsigned sched_monotonic = 0x80000000u;

// Per data environment (an implicit task's; explicit tasks read their thread's).
struct icvs {
  int nthreads;      // nthreads-var: team size for the next parallel region
  int nthreads_pos;  // position of nthreads in the OMP_NUM_THREADS list (nested levels)
  int bind_pos;      // position in the OMP_PROC_BIND list
  bool dynamic;
  // bind-var's value here (omp_proc_bind_t): OMP_PROC_BIND's entry for this level, else the
  // enclosing region's proc_bind clause, as libgomp has it
  std::int8_t bind;
  int max_active_levels;
  int run_sched;  // run-sched-var kind (with the monotonic bit)
  int run_chunk;
  int default_device;
  int thread_limit;              // thread-limit-var (OMP_THREAD_LIMIT; teams and target narrow it)
  std::uintptr_t def_allocator;  // def-allocator-var (OMP_ALLOCATOR, omp_set_default_allocator)
  int gang;                      // weft_omp_set_gang_sched: 1 the next regions are gangs, 0 WEFT_GANG decides
  bool operator==(const icvs&) const = default;
};

struct settings {
  icvs initial;
  std::vector<int> nthreads_list;  // OMP_NUM_THREADS
  std::vector<int> bind_list;      // OMP_PROC_BIND, as omp_proc_bind_t values
  int max_task_priority = 0;
  bool cancellation = false;
  int display_env = 0;        // 0 no, 1 true, 2 verbose
  std::size_t stacksize = 0;  // OMP_STACKSIZE in bytes (0: not set)
  int wait_policy = -1;       // -1 unset, 0 passive, 1 active
  int num_places = 0;         // places from OMP_PLACES, or OMP_PROC_BIND's default (0: none)
  std::vector<std::vector<int>> places;
  // The CPUs the process may run on, read at load before the initial thread is bound to its
  // place: the engine places its workers over these, not over that one place (empty: unknown).
  sched::cpu_mask process_mask;
  int num_teams = 0, teams_thread_limit = 0;
  bool display_affinity = false;  // OMP_DISPLAY_AFFINITY
  std::string affinity_format;    // affinity-format-var (set at load; affinity_display.cpp guards it)
  std::string allocator_text;     // OMP_ALLOCATOR as given, when it made a new allocator
};
extern settings the_settings;  // environment.cpp; read on every task creation: no call for it
inline settings& config() {
  return the_settings;
}
void read_environment();  // once, at library load
void display_environment(bool verbose);

// --- teams and members ------------------------------------------------------------------------
struct team;

// The work share of one worksharing construct (loop, sections, single copyprivate).
// stage: 3q = free for construct q, 3q+1 = being set up for q, 3q+2 = set up for q.
struct alignas(64) workshare {
  std::atomic<std::uint64_t> stage{0};
  int kind = 0;  // sched_kind (static, dynamic, guided)
  bool ordered = false;
  std::uint64_t total = 0;  // iterations (logical, 0 .. total-1)
  std::uint64_t chunk = 0;
  std::uint64_t chunks = 0;  // static chunked: number of chunks (no division per chunk)
  long start = 0, incr = 1;  // signed space: iteration i is start + i*incr
  unsigned long long ustart = 0, uincr = 1;
  alignas(64) std::atomic<std::uint64_t> next{0};  // dynamic/guided: first logical iteration not handed out
  std::atomic<std::uint64_t> ordered_turn{0};      // ticket allowed into ordered regions
  std::atomic<std::uint32_t> sleepers{0};          // members asleep in wait_reaches on a counter of this
  std::atomic<bool> slow_turns{false};             // a wait_reaches of this construct lasted slow_wait_ns
  std::atomic<bool> grab_lock{false};              // ordered loops: chunk and ticket taken together
  std::int64_t tickets = 0;
  std::atomic<bool> cancelled{false};
  void* copy = nullptr;                            // single copyprivate: the winner's data
  void* mem = nullptr;                             // GOMP_loop_start's team-shared zeroed block
  std::atomic<std::uint64_t>* doacross = nullptr;  // per outer iteration: inner iterations posted
  std::vector<std::uint64_t> doacross_counts;
  void* reductions = nullptr;  // worksharing task-reduction array (shared)

  workshare() = default;
  workshare(const workshare&) = delete;
  ~workshare() {
    std::free(mem);
    delete[] doacross;
  }
};

// The work shares of workshare_block_size consecutive constructs of a team, from `first` on.
// Members meet the constructs in the same order; the first to cross into the next block's range
// links it (a spare or a new one), so that no member ever waits for a lagging one, however many
// nowait constructs apart they are (as in libgomp, whose chain of work shares has no bound: a ring
// of 8 hung a program whose thread waited for another to pass 9 nowait loops). A block goes back
// to the team's spares once every member has moved past it.
inline constexpr int workshare_block_size = 8;
struct workshare_block {
  workshare ws[workshare_block_size];
  std::uint64_t first = 0;
  std::atomic<workshare_block*> next{nullptr};
  std::atomic<int> members_in{0};  // members that have not moved to a later block
  workshare_block* spare_next = nullptr;
  // Serves constructs first .. first + workshare_block_size - 1 for `members` members.
  void reset(std::uint64_t first_construct, int members) {
    first = first_construct;
    for (int i = 0; i < workshare_block_size; ++i) ws[i].stage.store(3 * (first + i), std::memory_order_relaxed);
    next.store(nullptr, std::memory_order_relaxed);
    members_in.store(members, std::memory_order_relaxed);
  }
};

// The threads an initial thread and its nested teams share under thread-limit-var: an initial
// thread's, a target region's (a new initial task) and each host team's. Only touched when the
// limit is set (OMP_THREAD_LIMIT, thread_limit clauses).
struct contention_group {
  std::atomic<int> busy{1};  // threads of the group in parallel regions now
};

// A thread's implicit task in a team, plus what the OpenMP constructs track per thread.
struct alignas(64) member {
  task implicit;
  core::taskgroup group;  // counts the implicit task's descendants (barriers wait on it)
  team* crew = nullptr;
  contention_group* cg = nullptr;
  int thread_num = 0;
  int level = 0, active_level = 0;
  icvs icv{};
  std::uint64_t ws_seq = 0;  // worksharing constructs started in this team
  std::uint64_t single_seq = 0;
  workshare* ws = nullptr;           // the current worksharing construct
  workshare_block* block = nullptr;  // the block of the constructs it meets now
  std::uint64_t ws_index = 0;
  std::uint64_t static_round = 0;  // static schedule: chunks this thread took so far
  std::int64_t ticket = -1;        // ordered: ticket of the chunk held, -1 none
  // Asleep in an ordered or doacross wait (more threads than cores): the counter and the value it
  // waits for, and the word it sleeps on (worksharing.cpp, wait_reaches and wake_reached).
  std::atomic<const std::atomic<std::uint64_t>*> wait_counter{nullptr};
  std::atomic<std::uint64_t> wait_value{0};
  std::atomic<std::uint32_t> wait_word{0};
  // Saved on entry, restored on exit.
  task* saved_current = nullptr;
  core::gang* saved_crew = nullptr;
  sched::work_deque<task*>* saved_queue = nullptr;
  member* saved_me = nullptr;
  bool saved_portable = false;
  // A fiber-run member parked at a barrier: where its waker finds it.
  std::atomic<fiber::context*> wait_context{nullptr};
  std::atomic<std::uint64_t> wait_ticket{0};
  int team_num = 0, num_teams = 1;  // teams construct on the host
  // ICVs an undeferred or included task changed: that task's own copy, and what its end restores.
  struct icv_save {
    task* writer;
    fiber::context* context;  // where the writing task runs (see writable_icvs)
    icvs saved;
  };
  task* icv_writer = nullptr;  // the explicit task whose changes icv holds, if any
  std::vector<icv_save> icv_saves;

  // A member of an ended team joins a new one (team.cpp keeps members type-stable): every field as
  // in a new member. The implicit task and its group are set up as for a hot team's next region,
  // with atomic stores where a late reporter of the old team may still read.
  void start_afresh();
};

struct member_job : core::gang_job {
  team* crew;
  int index;
};

struct alignas(64) team {
  explicit team(int size);
  ~team();
  int size;
  std::vector<member*> members;
  std::vector<member_job> jobs;
  // The members' ready queues in this team (a member that is master of a nested team keeps this
  // team's tasks apart from the nested team's).
  std::vector<std::unique_ptr<sched::work_deque<task*>>> queues;
  std::vector<sched::work_deque<task*>*> queue_of;
  core::gang crew;
  int level = 0, active_level = 0;
  bool sequential = false;  // an initial task's team of one (its implicit task is the worker's root)
  // Gang-scheduled (WEFT_GANG): members 1.. run as fibers on the existing workers, and the last
  // of the members to leave deletes the team.
  bool fibers = false;
  std::atomic<int> refs{0};
  int reserved = 0;          // threads taken from the contention group for this region
  member* parent = nullptr;  // the encountering thread's member
  icvs child_icv{};
  // Some task of the region changed its ICVs: members may hold different values, so a deferred
  // task takes its creator's along (tasking.cpp). Until then any member's values are the task's.
  std::atomic<bool> icvs_diverged{false};
  void (*fn)(void*) = nullptr;
  void* data = nullptr;
  bool combined = false;       // a combined parallel loop/sections: its work share is set up
  void* reductions = nullptr;  // GOMP_parallel_reductions descriptor
  // Barriers inside the region, and the region's end (apart, so that members leaving a cancelled
  // region's barrier early still meet at its end).
  struct alignas(64) sync_point {
    std::atomic<unsigned> arrived{0};
    std::atomic<std::uint32_t> gen{0};
    std::atomic<std::uint32_t> sleepers{0};  // members asleep on gen (more threads than cores)
  };
  sync_point inner, end;
  alignas(64) std::atomic<std::uint64_t> single_taken{0};
  std::atomic<bool> cancelled{false};
  alignas(64) std::atomic<unsigned> dispatch_gen{0};
  std::atomic<bool> disband{false};
  std::atomic<int> done{0};     // member runs finished (monotonic)
  std::atomic<int> gone{0};     // members that left the team for the pool
  int bound = 0;                // members 1..bound-1 run the job loop
  int runs = 0;                 // regions dispatched
  workshare_block first_block;  // constructs 0 .. at first; later a spare like the others
  // Spares, and the blocks made beyond the first (taken once per block of constructs).
  std::atomic<int> blocks_lock{0};  // lock_word
  workshare_block* spare_blocks = nullptr;
  std::vector<std::unique_ptr<workshare_block>> made_blocks;
};

// The calling thread's OpenMP context; null before the thread's first OpenMP call.
extern constinit thread_local member* me;

// The calling thread as an engine worker, starting the runtime on first use.
worker& start_or_adopt();
inline worker& self() {
  if (worker* w = core::current_worker) return *w;
  return start_or_adopt();
}
// The calling thread's member (a team of one outside parallel regions).
member& first_member();
inline member& current() {
  if (member* m = me) return *m;
  return first_member();
}
// The same, read after the running context may have moved to another thread (a wait in a task
// body): under ThreadSanitizer through a call, as core::worker_after_switch.
#if defined(__SANITIZE_THREAD__)
member& current_after_switch();
#else
inline member& current_after_switch() {
  return current();
}
#endif

// Bits of task::door_bits.
enum door_bit : std::uint8_t {
  door_final = 1,     // a final task: its descendants are included tasks
  door_own_icvs = 2,  // an undeferred or included task: it runs on this thread, start to end
};

// The ICVs an omp_set_* routine changes: the calling task's. The first change made by an explicit
// task saves the thread's copy, which end_explicit_icvs puts back when that task ends (called by
// the door for undeferred and included tasks, by the core through door_task_end for deferred
// ones). A deferred task starts from the values of any member while none changed them in the
// region (team::icvs_diverged); after that, from its creator's, which it carries. A context set
// aside takes its saves along, from its member and the members it nested in (a gang-scheduled
// team may run another context as one of them meanwhile, see team.cpp): so a member holds the
// running context's saves only, and tasks end in the reverse order of their saves.
icvs& writable_icvs();
// t's own layer on m: the values below are saved for end_explicit_icvs.
inline void begin_explicit_icvs(member& m, fiber::context* running_on, task* t) {
  m.icv_saves.push_back({m.icv_writer, running_on, m.icv});
  m.icv_writer = t;
}
inline void end_explicit_icvs(member& m, task* t) {
  if (m.icv_writer != t) return;  // the common case: the task changed nothing
  m.icv = m.icv_saves.back().saved;
  m.icv_writer = m.icv_saves.back().writer;
  m.icv_saves.pop_back();
}

// --- waits that may need another member of this worker (team.cpp) ------------------------------
// While gang-scheduled teams (WEFT_GANG) exist, the thread a wait depends on (a lock's holder, the
// member whose turn it is) may be a fiber parked on this very worker: such waits give the context
// up to the worker's loop instead of blocking or spinning in place.
extern std::atomic<int> fiber_teams_live;
// Whether a wait that runs no task (a lock, an ordered turn) must step aside rather than spin or
// sleep: what it waits for may need this worker, as a member fiber of it (fiber teams exist) or as
// work only this worker runs (core::has_bound_work: a tied task parked here, its local buffer...).
inline bool waits_must_yield() {
  core::worker* w = core::current_worker;
  return w && (fiber_teams_live.load(std::memory_order_relaxed) > 0 || (w->crew && core::has_bound_work(*w)));
}
// Before a wait that runs no task (a lock, an ordered turn, a work-share slot): the counts of
// finished tasks this worker still batches go out, since a waiter elsewhere may need them (a thread
// spinning for its ordered turn held the last count of a taskgroup its predecessor waited for).
inline void report_finished_before_waiting() {
  if (core::worker* w = core::current_worker) core::flush_finished_children(*w);
}
// Steps aside until ready(arg) holds (null: at once after other work had a turn).
void yield_member(bool (*ready)(void*), void* arg);

// --- team operations (team.cpp) -----------------------------------------------------------------
void barrier(worker& w, member& m);
bool cancellable_barrier(worker& w, member& m);  // true: the region was cancelled
void wake_members(team* t, int except);
// Starts a region: the encountering thread becomes member 0 of the returned team.
team* fork(worker& w, void (*fn)(void*), void* data, unsigned requested, unsigned flags, bool combined);
void launch(team* t);
void join(worker& w, team* t);
void run_parallel(void (*fn)(void*), void* data, unsigned requested, unsigned flags);
// Runs fn as a new initial task on this thread (a host-fallback target region): a team of one at
// level 0, the initial ICVs, a new contention group (thread_limit > 0 narrows its limit).
void run_initial_task(void (*fn)(void*), void* data, int thread_limit);
inline constexpr int unlimited_threads = 1 << 30;  // thread-limit-var when no limit is set
// omp_pause_resource on the host: stops the runtime and starts it again with the calling thread
// alone, its ICVs kept (0), or refuses where stopping is not safe (-1, see team.cpp).
int pause_host(const char* caller);

// --- memory allocators (allocators.cpp) ---------------------------------------------------------
// omp_alloctrait_t: an enum key (int-sized, then padding) and a pointer-sized value.
struct alloc_trait {
  int key;
  std::uintptr_t value;
};
// omp_init_allocator: a new allocator's handle, or 0 (omp_null_allocator) with `why` naming the
// memory space or trait it cannot accept.
std::uintptr_t make_allocator(std::uintptr_t memspace, int ntraits, const alloc_trait* traits, std::string& why);

// --- affinity display (affinity_display.cpp) ----------------------------------------------------
// OMP_DISPLAY_AFFINITY: the calling thread, just made member m of a region, prints its affinity
// line when what the format's fields show differs from its last line (teams of two or more).
void display_affinity_on_entry(const member& m);
std::string current_affinity_format();  // affinity-format-var now (omp_set_affinity_format changes it)

// --- worksharing (worksharing.cpp) ------------------------------------------------------------
struct loop_spec {
  int kind;  // sched_kind after resolving runtime/auto
  bool ordered;
  // Each call hands out one item whatever the team (sections: the ABI returns a section number, not
  // a range), and a doacross loop keeps its chunks; otherwise a team of one takes the whole range.
  bool itemwise;
  std::uint64_t total;
  std::uint64_t chunk;
  long start, incr;
  unsigned long long ustart, uincr;
};
workshare& enter_workshare(member& m, bool& initializer);
void leave_workshare(member& m);
// A spare block of t (or a new one) reset for the constructs from `first` on; giving one back.
workshare_block* take_block(team& t, std::uint64_t first);
void give_block(team& t, workshare_block* b);
void setup_loop(member& m, const loop_spec& s);
bool next_chunk(member& m, std::uint64_t& first, std::uint64_t& last);  // logical [first, last)
loop_spec signed_loop(long start, long end, long incr, int kind, long chunk);
int resolve_schedule(int sched, long& chunk);

// --- tasking (tasking.cpp) ----------------------------------------------------------------------
// Allocates the private copies of descriptor d for `threads` threads and chains d into g (when
// given); `holders` calls of the unregister entry points free them.
void register_reductions(core::taskgroup* g, std::uintptr_t* d, int threads, int holders);
// Task reductions and shared block of a worksharing construct (loops, sections, scope).
workshare& claim_with_extras(member& m, const loop_spec& s, std::uintptr_t* reductions, void** mem);
[[noreturn]] void fatal(const char* what);

// --- locks (mutex.cpp) --------------------------------------------------------------------------
void lock_word(std::atomic<int>& word);
void unlock_word(std::atomic<int>& word);
bool try_lock_word(std::atomic<int>& word);

}  // namespace weft::omp
