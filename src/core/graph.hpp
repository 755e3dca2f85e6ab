// Persistent task graphs: a loop's tasks recorded once, replayed without allocation or dependence
// processing, with the edges between consecutive rounds recorded as cyclic edges (no barrier).
//
// Round 0 (the first `unroll` iterations) runs as ordinary tasks through the owner's dependency
// domain while its tasks, arguments and accesses are recorded; the owner then waits for them once
// and the recorded accesses are turned into edges: within a round, and from round r to round r+1.
// Rounds r >= 1 run on instance descriptors owned by the graph, `window` arrays of them used in
// turn (round r in array r % window). Before round r opens, round r+1's array must be armed
// (predecessor counts set, a creation guard held: by every instance in re-execute mode, by the
// round's roots in taskiter mode, the others following a root), so a finishing task of round r can
// always count down its cyclic successors. Each instance re-arms itself for its array's next round when it is
// fully done; the producer opens round r only once round r+1-window has finished, which bounds the
// rounds in flight to lookahead + 1.
//
// A gang of one needs none of the counts: the producer runs the instances itself, in recorded order
// (graph.cpp, "rounds run inline"), until a task blocks or binds an event.
#pragma once

#include <weft/weft.h>

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/runtime.hpp"
#include "core/task.hpp"

namespace weft::core {

inline constexpr int max_graph_window = 8;  // lookahead + 2 arrays at most

struct graph_node {
  weft_task_fn fn;
  std::uint32_t args_size;
  std::uint32_t args_offset;   // the recorded argument block in graph::recorded_args
  std::uint32_t large_offset;  // argument block of each instance array, when over the inline size
  std::uint32_t first_access, access_count;
  std::uint32_t first_successor, successor_count;  // same round
  std::uint32_t first_cyclic, cyclic_count;        // next round
  std::int32_t round_preds, cyclic_preds;
  std::uint16_t priority;
  std::uint16_t sub;        // iteration within its round
  std::uint8_t task_flags;  // flag_undeferred / run_tied as recorded (matched on replay)
  std::uint8_t run_flags;
  std::uint8_t door_bits;
  // Priority propagation (sched/priority_propagation.hpp) over the recording, by node: the level
  // its instances run at (producer writes, read when an instance opens) and whether an instance
  // reported a send (any worker writes; detect's marks).
  std::uint16_t level;
  std::uint8_t send;
  // What arm_instance writes in a steady round (from round 2 on, not a last round cut short), set
  // once the edges are known: re-arming an instance is then a few copies, not a recomputation.
  std::int32_t armed_preds;
  std::uint16_t armed_priority;
  std::uint8_t armed_flags, armed_door_bits, armed_run_flags;
};

// Per-worker count of finished instances of each array: one writer per row, summed by the producer.
struct alignas(64) graph_done_row {
  std::atomic<std::uint64_t> finished[max_graph_window];
};

struct graph {
  // capturing: a layer's mode (weft_graph_set_layer): submitted tasks go to the layer, not run.
  enum class phase : std::uint8_t { idle, recording, replaying, plain, capturing };

  // --- read by every worker that runs an instance; written when the graph is set up ------------
  // Settings (weft_graph_options_t, with the environment's defaults filled in).
  bool taskiter = false;
  bool iteration_priority = false;
  bool rerecord = true;
  bool barrier = false;
  int unroll = 1;
  int lookahead = 0;                // as set (options, WEFT_GRAPH_LOOKAHEAD); 0: chosen as the recording ends
  int window = 2;                   // lookahead + 2 arrays (set with the arrays when the lookahead is chosen)
  long iterations = 0;              // taskiter: total, or -1 (condition)
  long partial_round = -1;          // taskiter: a last round cut short (iterations % unroll), if any,
  std::uint32_t partial_count = 0;  // and the instances it runs
  int (*condition)(void*) = nullptr;
  void* condition_arg = nullptr;

  task* owner = nullptr;
  // The owner's gang when it has one worker: its worker defers its decrements of the instances'
  // counts (graph_release). Null otherwise, and for every other gang (a worker of another gang
  // that runs an instance, from a priority lane, applies them at once).
  const gang* defer_gang = nullptr;
  std::uint16_t trace_serial = 0;
  const weft_graph_layer_t* layer = nullptr;  // capturing: the layer and what its open() gave
  void* layer_state = nullptr;                // names this recording in a trace (graph_instance.d, graph_edge.a)

  // The recording.
  std::vector<graph_node> nodes;
  std::vector<graph_access> accesses;
  std::vector<std::uint32_t> successors;  // node indices, per node (first_successor, successor_count)
  std::vector<std::uint32_t> cyclic;      // the same for cyclic edges
  std::vector<std::uint32_t> roots;       // taskiter: the nodes guarded in every full round
  std::vector<std::uint32_t> sub_start;   // first node of each iteration of a round, and nodes.size()
  std::vector<unsigned char> recorded_args;
  std::uint32_t large_bytes = 0;                         // per instance array
  std::vector<std::pair<task*, std::uint32_t>> created;  // recording: argument sizes until submit

  // The instance arrays.
  task* instances[max_graph_window] = {};
  std::size_t array_bytes[max_graph_window] = {};  // each array's size (a spare one may be larger)
  unsigned char* large_args[max_graph_window] = {};
  graph_done_row* rows = nullptr;  // max_workers rows

  // --- the producer's, written as it creates or opens each task: lines of their own, so that the
  // workers running instances do not lose the lines above to it ------------------------------------
  alignas(64) phase state = phase::idle;
  int status = WEFT_OK;       // WEFT_ERR_GRAPH_CHANGED once a change was refused
  bool record_group = false;  // the taskgroup around the recorded round is open
  long iteration = -1;        // loop iterations started (producer's count, for messages)
  long round = 0;             // round being created (the last one opened)
  int round_array = 0;        // its array (array_of(round))
  int sub = 0;                // iteration within it
  std::uint32_t cursor = 0;   // next recorded task to match in this round
  // Re-execute mode: the current round's instances opened so far (always a prefix: instances open
  // in creation order).
  std::uint32_t opened_in_round = 0;
  std::uint64_t opened[max_graph_window] = {};  // instances opened in each array so far
  // A gang of one runs the instances on the producer's stack, in recorded order, with no
  // predecessor count kept: taskiter rounds one after the other (run_round_inline), re-executed
  // ones when the producer reaches the lookahead bound (run_opened). Cleared for good once such a
  // task blocks or binds an event, or the producer's context is set aside: the counts are then
  // brought up to date and the tasks not run handed to the scheduler (graph_leave_inline).
  // inline_round and inline_node: the task running (inline_running), else the next to run;
  // inline_count: the taskiter round's tasks.
  bool inline_rounds = false;
  bool inline_running = false;
  std::uint64_t record_began_ns = 0;  // the recording's start: its mean task time decides inline_rounds
  long inline_round = 0;
  std::uint32_t inline_node = 0, inline_count = 0;
  // The producer is stuck under an inline task that blocked, and what that task waits for may be in
  // a later round: a task of the owner's (continue_rounds) opens the rounds from handed_from on and
  // sets rounds_opened; the producer waits for it before draining.
  bool handed_off = false;
  long handed_from = 0;

  // --- written by other threads now and then ----------------------------------------------------
  alignas(64) std::atomic<bool> sends_changed{false};  // an instance reported a send: levels to recompute
  std::atomic<bool> rounds_opened{false};

  std::uint32_t size() const { return static_cast<std::uint32_t>(nodes.size()); }
  int array_of(long r) const { return static_cast<int>(r % window); }
  int next_array(int a) const { return a + 1 == window ? 0 : a + 1; }
};

// C API bodies (worker = the caller's).
int graph_begin(worker& w, const weft_graph_options_t* options);
int graph_iteration(worker& w);
int graph_end(worker& w);
int graph_set_layer(int mode, const weft_graph_layer_t* layer);  // no worker needed

// Hooks on the task paths, taken when the creating task is a graph owner (graph_role) or the
// task is an instance.
// allocate_task: the instance matching the next recorded task (replay), or null for an ordinary
// task (status WEFT_OK) or a refused change (status set).
task* graph_allocate(worker& w, weft_task_fn fn, std::size_t args_size, unsigned flags, int& status);
// An ordinary task made by a graph owner (the recording needs its argument size).
void graph_created(worker& w, task* t, std::size_t args_size);
// An access declared on an instance differs from the recording (add_access matched the others
// inline): the recorded ones matched so far are listed in w.accesses, and the caller lists this
// one (submit then sees the difference).
void graph_access_differs(worker& w, task* t);
// weft_task_discard of an instance not yet submitted.
void graph_discard(worker& w, task* t);
// submit_task for a child of a graph owner: records it, opens an instance, or submits it plainly.
int graph_submit(worker& w, task* t);
// A replayed task's body has ended: count down its successors in this round and the next.
void graph_release(worker& w, task* t);
// A replayed task is fully done (body and children): its array slot may be reused.
void graph_instance_done(worker& w, task* t);
// A replayed task posted a send (weft_task_report_send under detect): its node is a send-task.
void graph_report_send(task* t);
// The graph w runs inline (w.inline_graph) must stop: the producer's context is about to be set
// aside (`blocks`: an instance blocks, or the producer waits), an instance binds an event, or the
// iteration changed. Its counts are brought up to date, the instances not run are handed to the
// scheduler, and the graph runs the general way from now on (in taskiter mode, when the producer
// blocks, a task of the owner's opens the later rounds).
void graph_leave_inline(worker& w, bool blocks);
// Applies this worker's deferred decrements (worker::deferred_task), making ready the tasks whose
// count they end.
void graph_flush_deferred(worker& w);

}  // namespace weft::core
