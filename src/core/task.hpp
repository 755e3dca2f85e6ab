// The task descriptor: three cache lines from a per-worker pool, with the common-case successor
// slots and the argument block inline so that creating a dependent task allocates nothing else.
#pragma once

#include <weft/weft.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft::fiber {
struct context;
}

namespace weft::core {

struct parent_state;
struct taskgroup;
struct successor_block;
struct graph;

// An access as a persistent graph recorded it (a replayed task's declared accesses are matched
// against these).
struct graph_access {
  const void* address;
  weft_dep_type type;
};
// replay.accesses_left once a declared access differed from the recording.
inline constexpr std::uint32_t access_gathered = UINT32_MAX;

inline constexpr std::size_t task_size = 192;
inline constexpr int inline_successors = 4;

// successors word: number of successor slots in use, plus a bit set once the task has completed
// (after which no edge may be added: the producer sees the bit and prunes the edge).
inline constexpr std::uint32_t successors_closed = 1u << 31;

// pending word of a task seen as a parent. While the body runs it holds body_running minus the
// children finished so far; the producer keeps the number it created in a plain field and folds it
// in at taskwait (adding in_taskwait) or at the body's end, so creating a child costs no atomic.
inline constexpr std::int64_t body_running = std::int64_t{1} << 40;
inline constexpr std::int64_t in_taskwait = std::int64_t{1} << 50;

// waiter value of an undeferred task once it may run (its submitter then runs it).
inline constexpr std::int16_t undeferred_ready = -2;

enum run_flag : std::uint8_t {
  run_held = 1,  // completion also waits for bound events (hold_completion)
  run_tied = 2,  // once started, runs only on the worker it started on (OpenMP tied tasks)
  run_door_end = 4,  // the door hears of the body's end (door_task_end): set by the running body
  // A root (implicit) task traced as a task: a member of a gang-scheduled team, whose runs and
  // parkings the trace records like a task's (its work is not idle time).
  run_traced = 8,
};

enum graph_role : std::uint8_t {
  graph_none = 0,
  graph_owner = 1,     // has a persistent graph open: the tasks it creates go through the graph
  graph_instance = 2,  // a replayed task: descriptor owned by its graph, edges from the recording
};

enum task_flag : std::uint8_t {
  flag_submitted = 1,      // handed to the runtime: depend/priority/submit now refused
  flag_has_accesses = 2,   // may be referenced by a dependency domain: successors can appear
  flag_redirect = 4,       // empty node joining a set of concurrent accesses to later ones
  flag_large_args = 8,     // args live in a heap block whose pointer is stored inline
  flag_undeferred = 16,
  flag_root = 32,          // implicit task of a worker thread (never freed, never queued)
  flag_mutex_group = 64,   // redirect node whose mutex word serialises a mutexinoutset set
  flag_many_mutexes = 128, // mutex_group points to a mutex_list
};

struct alignas(64) task {
  // First line: what the producer writes when it links a later task to this one (successor slots,
  // their count, the references the dependency domain holds), and what this task reads and writes
  // as a parent while its body creates children (its flags, door bits, graph role, children count,
  // state). Other workers' counts live in the second line: predecessors' completers decrement
  // preds, and finishing children pending. When they shared this line, a producer linking to a
  // task still waiting for its predecessors fought their completers for it once per edge, and a
  // parent creating a child missed on its own final bit after each batch of finished children.
  std::atomic<std::uint32_t> successors;  // slot count | successors_closed
  std::atomic<std::int32_t> refs;         // execution + dependency domain
  std::uint32_t domain_refs;              // producer only: how many access records name this task
  std::uint8_t flags;
  std::uint8_t door_bits;   // owned by the door that created the task (OpenMP: final)
  std::uint8_t run_flags;   // run_held, run_tied, run_door_end
  std::uint8_t graph_role;  // graph_owner / graph_instance (persistent graphs), else 0
  union {
    std::int64_t children_created;  // producer only (the thread running this task)
    task* next_waiter;              // while parked on a mutexinoutset group, before it runs
  };
  // Lazily: dependency domain, taskgroups, errors. A failing child may install it from another
  // worker (report_error), so every load that reads through it is acquire (free on x86).
  std::atomic<parent_state*> state;
  union {
    task* slot[inline_successors];  // successors (tasks made through a dependency domain)
    struct {                         // a persistent graph's instance: its edges are the graph's
      graph* owner_graph;
      const graph_access* next_access;  // while the producer declares its accesses: the next recorded
      std::uint32_t node;
      std::uint32_t accesses_left;      // recorded accesses not yet matched, or access_gathered
      std::int64_t round;
    } replay;
  };
  // Second line: read when the task runs, and written by other workers: predecessors finishing
  // (preds), children finishing (pending), events (holds), mutexinoutset holders (mutexes_held).
  weft_task_fn fn;
  task* parent;
  task* mutex_group;  // mutexinoutset group node, or a mutex_list
  successor_block* more_successors;
  taskgroup* group;                   // taskgroup this task is counted in, or null
  std::atomic<std::int32_t> preds;    // unresolved predecessors (plus a creation guard while linking)
  std::atomic<std::int32_t> holds;    // body + bound events, while held
  std::atomic<std::int64_t> pending;  // see body_running
  std::uint16_t priority;
  std::uint8_t mutexes_held;          // mutexinoutset groups acquired so far (in address order)
  std::uint8_t graph_array;           // an instance's array in its graph (fixed): no division on its paths
  std::uint16_t home;                 // worker whose pool it came from (statistics, locality)
  std::atomic<std::int16_t> waiter;   // undeferred: undeferred_ready once it may run, else -1
  alignas(16) unsigned char args[WEFT_INLINE_ARGS_SIZE];

  void* arguments() {
    if (flags & flag_large_args) {
      void* p;
      __builtin_memcpy(&p, args, sizeof p);
      return p;
    }
    return args;
  }
};
static_assert(sizeof(task) == task_size, "task descriptor must stay three cache lines");
static_assert(offsetof(task, fn) == 64, "the linking fields and the counted ones must not share a line");

// Overflow successor slots (appended in order). The first block of a chain also records the
// chain's tail, so adding an edge to a task with thousands of successors stays O(1).
inline constexpr int block_successors = task_size / sizeof(task*) - 2;
struct alignas(64) successor_block {
  task* slot[block_successors];
  successor_block* next;
  successor_block* tail;  // meaningful in the first block only
};

// The mutexinoutset groups of a task with more than one such access, in address order (the order
// they are acquired in, so that two tasks never wait on each other).
struct mutex_list {
  int count;
  task* group[1];
};
static_assert(sizeof(successor_block) == task_size);

// Completion-counted group of descendants (weft_taskgroup_begin/end).
struct alignas(64) taskgroup {
  std::atomic<std::int64_t> pending;  // descendants not finished (+ in_taskwait while waited on)
  taskgroup* outer;                   // enclosing group opened by the same task
  std::atomic<bool> cancelled;        // OpenMP cancel taskgroup: tasks not yet started are skipped
  // The OpenMP door's group around a worksharing construct's task reduction: `cancel taskgroup`
  // in its tasks cancels the enclosing group instead, as in libgomp (the program never named it).
  bool hidden;
  task* owner;                        // the task that opened it
  void* reductions;                   // OpenMP task-reduction descriptor registered in it, or null
  std::atomic<fiber::context*> waiting_context;  // the context parked in taskgroup end, its ticket
  std::atomic<std::uint64_t> waiting_ticket;
  unsigned char pad[task_size - 56];
};
static_assert(sizeof(taskgroup) == task_size);

}  // namespace weft::core
