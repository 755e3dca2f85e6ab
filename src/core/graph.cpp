// Persistent task graphs (see graph.hpp for the design).
#include "core/graph.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "core/dependency_domain.hpp"
#include "core/engine.hpp"
#include "fiber/poller.hpp"
#include "sched/priority_propagation.hpp"
#include "trace/names.hpp"

namespace weft::core {

namespace {

graph* open_graph_of(task* t) {
  if (t->graph_role != graph_owner) return nullptr;
  return t->state.load(std::memory_order_acquire)->open_graph;
}

// --- the recording turned into edges --------------------------------------------------------

// The sequential rule of OpenMP dependences on one address: a writer follows the open group of
// readers (or inoutset members) if there is one, else the last writer; a reader or set member
// follows the gate (the last writer, or the group its kind closed). mutexinoutset replays as
// inout: one of the orders its semantics allow.
struct address_state {
  std::vector<std::uint32_t> gate;
  std::vector<std::uint32_t> group;
  int group_type = 0;
};

// Whether a node's instances wait for the producer to open them (a creation guard) in a full
// round. In re-execute mode every task does: the producer writes its arguments first. A taskiter
// round only needs its roots guarded (the tasks without a predecessor in the round): every other
// task follows a root through the round's edges.
inline bool guarded_in_full_round(const graph& g, const graph_node& node) {
  return !g.taskiter || node.round_preds == 0;
}

// The steady round's values (see graph_node::armed_preds).
void set_armed(const graph& g, graph_node& node) {
  node.armed_preds = node.round_preds + node.cyclic_preds + (guarded_in_full_round(g, node) ? creation_guard : 0);
  node.armed_priority = g.taskiter ? node.priority : 0;
  node.armed_flags = node.args_size > WEFT_INLINE_ARGS_SIZE ? flag_large_args : 0;
  node.armed_door_bits = g.taskiter ? node.door_bits : 0;
  node.armed_run_flags = g.taskiter ? node.run_flags : 0;
}

void build_edges(graph& g) {
  const std::uint32_t n = g.size();
  std::unordered_map<const void*, address_state> addresses;
  std::vector<std::uint32_t> last_linked(2 * std::size_t{n}, UINT32_MAX);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> same, next;
  // Round 0 gives the edges within a round; a second pass over the same accesses (as round 1)
  // gives the edges from round 0 into round 1: the cyclic edges, identical between any two rounds.
  for (std::uint32_t pass = 0; pass < 2; ++pass) {
    for (std::uint32_t v = 0; v < n; ++v) {
      const std::uint32_t id = v + pass * n;
      auto link = [&](std::uint32_t p) {
        if (p == id || last_linked[p] == id) return;
        last_linked[p] = id;
        if (pass == 0) {
          same.emplace_back(p, v);
        } else if (p < n) {
          next.emplace_back(p, v);
        }
      };
      const graph_node& node = g.nodes[v];
      for (std::uint32_t i = 0; i < node.access_count; ++i) {
        const graph_access& a = g.accesses[node.first_access + i];
        address_state& st = addresses[a.address];
        bool writer = a.type == WEFT_DEP_OUT || a.type == WEFT_DEP_INOUT || a.type == WEFT_DEP_MUTEXINOUTSET;
        if (writer) {
          for (std::uint32_t p : st.group.empty() ? st.gate : st.group) link(p);
          st.gate.assign(1, id);
          st.group.clear();
          st.group_type = 0;
        } else {
          if (st.group_type != a.type) {
            if (!st.group.empty()) st.gate.swap(st.group);
            st.group.clear();
            st.group_type = a.type;
          }
          for (std::uint32_t p : st.gate) link(p);
          st.group.push_back(id);
        }
      }
    }
  }
  auto to_lists = [n](std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges, std::vector<std::uint32_t>& out,
                      std::vector<std::uint32_t>& first, std::vector<std::uint32_t>& count) {
    std::sort(edges.begin(), edges.end());
    out.resize(edges.size());
    first.assign(n, 0);
    count.assign(n, 0);
    for (std::size_t i = 0; i < edges.size(); ++i) {
      out[i] = edges[i].second;
      if (count[edges[i].first]++ == 0) first[edges[i].first] = static_cast<std::uint32_t>(i);
    }
  };
  std::vector<std::uint32_t> first, count;
  to_lists(same, g.successors, first, count);
  for (std::uint32_t v = 0; v < n; ++v) {
    g.nodes[v].first_successor = first[v];
    g.nodes[v].successor_count = count[v];
    g.nodes[v].round_preds = 0;
    g.nodes[v].cyclic_preds = 0;
  }
  for (auto& e : same) ++g.nodes[e.second].round_preds;
  to_lists(next, g.cyclic, first, count);
  for (std::uint32_t v = 0; v < n; ++v) {
    g.nodes[v].first_cyclic = first[v];
    g.nodes[v].cyclic_count = count[v];
  }
  for (auto& e : next) ++g.nodes[e.second].cyclic_preds;
  g.roots.clear();
  for (std::uint32_t v = 0; v < n; ++v) {
    set_armed(g, g.nodes[v]);
    if (guarded_in_full_round(g, g.nodes[v])) g.roots.push_back(v);
  }
}

// The recorded edges, once per recording: a trace expands them to every replayed round.
void trace_graph_edges(worker& w, const graph& g) {
  for (std::uint32_t v = 0; v < g.size(); ++v) {
    const graph_node& node = g.nodes[v];
    for (std::uint32_t i = 0; i < node.successor_count; ++i)
      trace::record(w.trace, trace::event_type::graph_edge, g.trace_serial,
                    std::uint64_t{v} << 32 | g.successors[node.first_successor + i], 0);
    for (std::uint32_t i = 0; i < node.cyclic_count; ++i)
      trace::record(w.trace, trace::event_type::graph_edge, g.trace_serial,
                    std::uint64_t{v} << 32 | g.cyclic[node.first_cyclic + i], 1);
  }
}

// --- instance arrays --------------------------------------------------------------------------

void prepare_array(graph& g, int a);

// Before the arrays go: the deferred decrements (graph_release) its worker still holds for them.
// They can only be for instances never opened (the rounds after the last, or after a change):
// opened ones have all finished, and a held decrement keeps its task from finishing.
void drop_deferred(const graph& g) {
  worker* w = current_worker;  // the producer's: a graph defers only in a gang of one
  if (!w || !w->deferred_n) return;
  for (int i = 0; i < worker::deferred_slots; ++i) {
    task* t = w->deferred_task[i];
    if (!t || t->replay.owner_graph != &g) continue;
    w->empty_deferred_slot(i);
  }
}

// Instance arrays go back to the runtime, not to malloc: see runtime::spare_graph_arrays.
void free_arrays(graph& g) {
  drop_deferred(g);
  std::lock_guard<std::mutex> lock(instance->graph_arrays_lock);
  for (int a = 0; a < max_graph_window; ++a) {
    if (g.instances[a]) instance->spare_graph_arrays.emplace_back(g.instances[a], g.array_bytes[a]);
    std::free(g.large_args[a]);
    g.instances[a] = nullptr;
    g.large_args[a] = nullptr;
  }
}

// An instance array of at least `bytes`: the smallest spare one that fits, else a new one. Every
// descriptor is zeroed but for its parent state, which a late reader may still load (atomically).
task* take_array(std::size_t bytes, std::size_t& got) {
  {
    std::lock_guard<std::mutex> lock(instance->graph_arrays_lock);
    auto& spare = instance->spare_graph_arrays;
    auto best = spare.end();
    for (auto it = spare.begin(); it != spare.end(); ++it)
      if (it->second >= bytes && (best == spare.end() || it->second < best->second)) best = it;
    if (best != spare.end()) {
      auto* array = static_cast<task*>(best->first);
      got = best->second;
      *best = spare.back();
      spare.pop_back();
      constexpr std::size_t at = offsetof(task, state), after = at + sizeof(task::state);
      for (std::size_t i = 0; i < got / sizeof(task); ++i) {
        auto* bytes_of = reinterpret_cast<unsigned char*>(array + i);
        std::memset(bytes_of, 0, at);
        std::memset(bytes_of + after, 0, sizeof(task) - after);
        array[i].state.store(nullptr, std::memory_order_relaxed);
      }
      return array;
    }
  }
  auto* array = static_cast<task*>(std::aligned_alloc(64, bytes));
  if (array) std::memset(static_cast<void*>(array), 0, bytes);
  got = bytes;
  return array;
}

bool make_arrays(graph& g) {
  free_arrays(g);
  std::size_t bytes = std::max<std::size_t>(g.size(), 1) * sizeof(task);
  for (int a = 0; a < g.window; ++a) {
    g.instances[a] = take_array(bytes, g.array_bytes[a]);
    if (!g.instances[a]) return false;
    if (g.large_bytes) {
      g.large_args[a] = static_cast<unsigned char*>(std::aligned_alloc(16, g.large_bytes));
      if (!g.large_args[a]) return false;
    }
    prepare_array(g, a);
  }
  return true;
}

// Fields of an instance that stay the same from round to round: set once per array.
void prepare_array(graph& g, int a) {
  task* base = g.instances[a];
  for (std::uint32_t v = 0; v < g.size(); ++v) {
    const graph_node& node = g.nodes[v];
    task* t = base + v;
    t->fn = node.fn;
    t->parent = g.owner;
    t->mutex_group = nullptr;
    t->mutexes_held = 0;
    t->successors.store(0, std::memory_order_relaxed);
    t->graph_role = graph_instance;
    t->holds.store(0, std::memory_order_relaxed);
    t->domain_refs = 0;
    t->waiter.store(-1, std::memory_order_relaxed);
    t->state.store(nullptr, std::memory_order_relaxed);  // fully_done leaves it null
    t->more_successors = nullptr;
    t->group = nullptr;
    t->replay.owner_graph = &g;
    t->replay.node = v;
    t->graph_array = static_cast<std::uint8_t>(a);
    t->flags = 0;
    if (node.args_size > WEFT_INLINE_ARGS_SIZE) {
      void* block = g.large_args[a] + node.large_offset;
      std::memcpy(t->args, &block, sizeof block);
      t->flags = flag_large_args;  // for arguments() below
    }
    // Taskiter rounds run with the recorded arguments: copied once, never written again.
    if (g.taskiter && node.args_size)
      std::memcpy(t->arguments(), g.recorded_args.data() + node.args_offset, node.args_size);
  }
}

// Whether instance v of round r waits for the producer to open it: as in a full round, and in a
// last round cut short, the tasks not opened stay guarded.
inline bool guarded(const graph& g, const graph_node& node, std::uint32_t v, long r) {
  return guarded_in_full_round(g, node) || (r == g.partial_round && v >= g.partial_count);
}

// The producer matches the instance's declared accesses from the first recorded one.
inline void rewind_accesses(const graph& g, task* t, const graph_node& node) {
  t->replay.next_access = g.accesses.data() + node.first_access;
  t->replay.accesses_left = node.access_count;
}

// Sets an instance up for round r: it waits for its predecessors in round r (and, from round 2 on,
// in round r-1: round 1 follows the recorded round through the wait that ended it), plus, when
// guarded, the creation guard the producer lifts when it opens the task.
inline void arm_instance(const graph& g, task* t, const graph_node& node, long r) {
  std::int32_t preds = node.armed_preds;
  if (r < 2 || r == g.partial_round) [[unlikely]]
    preds = node.round_preds + (r >= 2 ? node.cyclic_preds : 0) +
            (guarded(g, node, t->replay.node, r) ? creation_guard : 0);
  t->preds.store(preds, std::memory_order_relaxed);
  t->priority = node.armed_priority;
  t->flags = node.armed_flags;
  t->door_bits = node.armed_door_bits;
  t->run_flags = node.armed_run_flags;
  t->refs.store(1, std::memory_order_relaxed);
  t->pending.store(body_running, std::memory_order_relaxed);
  t->children_created = 0;
  rewind_accesses(g, t, node);
  t->replay.round = r;
}

// Arms the first round of every array; later, each instance re-arms itself for its array's next
// round when it is fully done (graph_instance_done), on the worker that ran it.
void arm_first_rounds(graph& g) {
  for (long r = 1; r <= g.window; ++r) {
    task* base = g.instances[g.array_of(r)];
    for (std::uint32_t v = 0; v < g.size(); ++v) arm_instance(g, base + v, g.nodes[v], r);
  }
}

// --- completion of rounds ---------------------------------------------------------------------

bool array_finished(const graph& g, int a) {
  std::uint64_t sum = 0;
  int n = instance->worker_count.load(std::memory_order_acquire);
  // Acquire: pairs with the release in graph_instance_done, so the slots are free to rewrite.
  for (int i = 0; i < n; ++i) sum += g.rows[i].finished[a].load(std::memory_order_acquire);
  return sum == g.opened[a];
}

struct round_wait {
  const graph* g;
  int array;
};

bool round_wait_over(void* p) {
  auto* rw = static_cast<round_wait*>(p);
  return array_finished(*rw->g, rw->array);
}

// Waits until every task of round r has finished; the producer's worker runs other work meanwhile.
// Returns the worker the context is on afterwards (the waits below may move it).
worker& wait_round(worker& w, const graph& g, long r) {
  if (r < 1 || r > g.round) return w;  // rounds not opened yet have nothing to wait for
  round_wait rw{&g, g.array_of(r)};
  // A yielded context comes back when its condition holds or when its worker has nothing else to
  // run: check again each time.
  // The waiting context may resume on another worker: each wait hands back the one it is on.
  worker* on = &w;
  while (!round_wait_over(&rw)) on = &yield_until(*on, round_wait_over, &rw, fiber::wait_kind::graph, nullptr);
  return *on;
}

bool all_finished(void* p) {
  auto* g = static_cast<const graph*>(p);
  for (int a = 0; a < g->window; ++a)
    if (g->instances[a] && !array_finished(*g, a)) return false;
  return true;
}

// Waits for every task the owner created (the graph's instances are among its children), then for
// the instances' own children: only then may the arrays be rewritten or freed. Returns the worker
// the context is on afterwards.
worker& drain(worker& w, graph& g) {
  flush_finished_children(w);
  taskwait(w);
  // After a wait the context may run on another worker: callers re-read theirs too.
  worker* on = worker_after_switch();
  while (!all_finished(&g)) on = &yield_until(*on, all_finished, &g, fiber::wait_kind::graph, nullptr);
  return *on;
}

void ready(worker& w, const graph& g, task* t, bool may_run_next) {
  if (g.iteration_priority) t->priority = instance->cfg.max_priority > 0 ? 1 : 0;
  make_ready(w, t, may_run_next);
}

// A replayed task is "created" when the producer allocates it (re-execute: its label and arguments
// follow) or, in taskiter mode, when its round opens.
void trace_replayed(worker& w, const graph& g, const task* t) {
  trace_created(w, t, trace::create_replayed);
  trace::record(w.trace, trace::event_type::graph_instance, trace_id(t), static_cast<std::uint64_t>(t->replay.round),
                t->replay.node, g.trace_serial);
}

// Algorithm 1 over the recording (paper 001): the marked nodes run at the top level (path: at 1),
// a node d same-round edges above one at top - d (path: 1). A round's edges go from earlier to
// later nodes, so one backward pass suffices. Marks: detect, the nodes whose instances reported a
// send; path and depth, the nodes recorded with a priority.
void compute_levels(graph& g) {
  const int mode = sched::propagation();
  const bool path = mode == WEFT_PRIORITY_PATH;
  const int top = path ? 1 : instance->cfg.max_priority;
  for (std::uint32_t v = g.size(); v-- > 0;) {
    graph_node& node = g.nodes[v];
    bool marked = mode == WEFT_PRIORITY_DETECT
                      ? std::atomic_ref<std::uint8_t>(node.send).load(std::memory_order_relaxed) != 0
                      : node.priority > 0;
    int level = 0;
    if (marked) {
      level = top;
    } else {
      const std::uint32_t* succ = g.successors.data() + node.first_successor;
      for (std::uint32_t i = 0; i < node.successor_count; ++i) level = std::max<int>(level, g.nodes[succ[i]].level);
      if (!path) level = std::max(0, level - 1);
    }
    node.level = static_cast<std::uint16_t>(level);  // the producer's: instances read it when opened
  }
}

// The level an opened instance runs at under priority propagation: its node's, or more if the
// program gave it more (none and detect ignore the program's priorities; depth runs a marked
// task at the top).
void apply_level(const graph& g, task* t) {
  const int mode = sched::propagation();
  if (mode == WEFT_PRIORITY_AS_GIVEN) return;
  int given = (mode == WEFT_PRIORITY_NONE || mode == WEFT_PRIORITY_DETECT) ? 0 : sched::priority_of(t);
  if (mode == WEFT_PRIORITY_DEPTH && given > 0) given = instance->cfg.max_priority;
  int level = mode == WEFT_PRIORITY_NONE ? 0 : g.nodes[t->replay.node].level;
  sched::set_priority_of(t, static_cast<std::uint16_t>(std::max(given, level)));
}

// Ready when opened: like an ordinary task ready at birth (see submit_plain), to the producer's
// local buffer when nothing should see it sooner.
void ready_opened(worker& w, const graph& g, task* t) {
  if (g.iteration_priority) return ready(w, g, t, false);
  ready_at_birth(w, t);
}

// Everything an opened instance needs before it may run, but its counts.
inline void prepare_open(worker& w, graph& g, task* t, taskgroup* group) {
  if (trace::on && g.taskiter) [[unlikely]]
    trace_replayed(w, g, t);
  apply_level(g, t);
  t->flags |= flag_submitted;
  t->group = group;
  if (group) group_created(w, group);
  trace_point(w, trace::event_type::task_submit, trace_id(t), 0, g.nodes[t->replay.node].access_count);
}

// Counts n opened instances of array a as the owner's children.
inline void count_opened(worker& w, graph& g, int a, std::uint32_t n) {
  g.owner->children_created += n;
  g.opened[a] += n;
  worker_counters::bump(w.counters.graph_replayed, n);
  w.submitted.store(w.submitted.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// The owner's innermost open taskgroup: instances are counted in it, like ordinary children.
taskgroup* group_of_owner(const graph& g) {
  parent_state* ps = g.owner->state.load(std::memory_order_acquire);
  return ps->current_group ? ps->current_group : g.owner->group;
}

// Lifts an instance's creation guard (acq_rel: the producer's writes, arguments included, reach the
// task; the predecessors' effects too).
inline void lift_guard(worker& w, const graph& g, task* t) {
  if (t->preds.fetch_sub(creation_guard, std::memory_order_acq_rel) == creation_guard) ready_opened(w, g, t);
}

// Re-execute mode: one instance, matched and given its arguments, in creation order (the round's
// opened instances are always its first opened_in_round).
void open(worker& w, graph& g, task* t) {
  prepare_open(w, g, t, group_of_owner(g));
  count_opened(w, g, t->graph_array, 1);
  g.opened_in_round = t->replay.node + 1;
  if (g.inline_rounds) return;  // keeps its guard: run later on the producer's stack (run_opened)
  lift_guard(w, g, t);
}

void run_opened(worker& producer, graph& g, long last);

// Taskiter: sets up the first `count` instances of round r and counts them as the owner's
// children, their creation guards still held.
void prepare_round(worker& w, graph& g, long r, std::uint32_t count) {
  task* base = g.instances[g.array_of(r)];
  taskgroup* group = group_of_owner(g);
  if (trace::on || group || sched::propagation() != WEFT_PRIORITY_AS_GIVEN) [[unlikely]] {
    for (std::uint32_t v = 0; v < count; ++v) prepare_open(w, g, base + v, group);
  } else {  // nothing to trace, count or re-prioritise: prepare_open's stores alone
    for (std::uint32_t v = 0; v < count; ++v) {
      base[v].flags |= flag_submitted;
      base[v].group = nullptr;
    }
  }
  count_opened(w, g, g.array_of(r), count);
}

// Taskiter: opens the first `count` instances of round r. All are set up and counted before the
// first guard is lifted: the unguarded ones may run as soon as a root does.
void open_round(worker& w, graph& g, long r, std::uint32_t count) {
  prepare_round(w, g, r, count);
  task* base = g.instances[g.array_of(r)];
  if (r != g.partial_round) [[likely]] {
    for (std::uint32_t v : g.roots) lift_guard(w, g, base + v);
    return;
  }
  for (std::uint32_t v = 0; v < count; ++v)
    if (guarded(g, g.nodes[v], v, r)) lift_guard(w, g, base + v);
}

// Round r starts being created. Round r+1 must be armed first, so that round r's tasks can count
// down their cyclic successors: its array was re-armed when round r+1-window finished. Waiting for
// that round is also what bounds the rounds in flight.
void start_round(worker& w, graph& g, long r) {
  // Re-executed rounds run inline what the wait below would wait for.
  if (g.inline_rounds && !g.taskiter) run_opened(w, g, g.barrier ? r - 1 : r + 1 - g.window);
  worker& on = wait_round(*worker_after_switch(), g, r + 1 - g.window);
  if (g.barrier) wait_round(on, g, r - 1);
  // Acquire: the reporters' marks on the nodes.
  if (g.sends_changed.load(std::memory_order_relaxed) && g.sends_changed.exchange(false, std::memory_order_acquire))
    compute_levels(g);
  g.round = r;
  g.round_array = g.array_of(r);
  g.sub = 0;
  g.cursor = 0;
  g.opened_in_round = 0;
}

// The recorded round runs as ordinary tasks in a taskgroup of the graph's own, so that the wait
// after it covers their descendants too (round 1 may then rewrite nothing they still use, and the
// lookahead bound holds for the first round as for the others).
// Returns the worker the context is on afterwards (the taskgroup's wait may move it).
worker& end_record_group(worker& w, graph& g) {
  if (!g.record_group) return w;
  g.record_group = false;
  taskgroup_end(w);
  return *worker_after_switch();
}

std::uint64_t monotonic_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void start_recording(worker& producer, graph& g) {
  worker& w = end_record_group(producer, g);
  taskgroup_begin(w);
  g.record_group = true;
  g.state = graph::phase::recording;
  g.record_began_ns = monotonic_ns();
  g.nodes.clear();
  g.accesses.clear();
  g.recorded_args.clear();
  g.sub_start.assign(1, 0);
  g.large_bytes = 0;
  g.round = 0;
  g.round_array = 0;
  g.sub = 0;
  worker_counters::bump(w.counters.graph_recordings);
  if (trace::on) [[unlikely]] {
    static std::atomic<std::uint16_t> serials{0};
    g.trace_serial = static_cast<std::uint16_t>(serials.fetch_add(1, std::memory_order_relaxed) + 1);
  }
}

// The recorded function's symbol (trace/names.hpp), or its address.
std::string describe_fn(weft_task_fn fn) {
  return trace::symbolizer().name_of(reinterpret_cast<const void*>(fn));
}

// The iteration being created differs from the recording at recorded task v. Never replays past
// it: everything opened so far finishes first, then the rest runs as ordinary tasks (recorded again
// from the next iteration, or never replayed again).
int changed(worker& w, graph& g, std::uint32_t v, const char* what) {
  weft_task_fn fn = v < g.size() ? g.nodes[v].fn : nullptr;
  if (!g.rerecord || instance->cfg.display_env)
    std::fprintf(
        stderr,
        "weft: persistent graph: iteration %ld differs from its recording at task %u (recorded "
        "function %s): %s; %s\n",
        g.iteration, v, fn ? describe_fn(fn).c_str() : "none", what,
        g.rerecord ? "recording it again from the next iteration" : "replaying stops (WEFT_GRAPH_ON_CHANGE=error)");
  // The opened instances not run yet go to the scheduler before the drain waits for them (its wait
  // would also do it when it parks: this does not depend on how it waits).
  if (w.inline_graph == &g) graph_leave_inline(w, false);
  drain(w, g);
  g.state = graph::phase::plain;
  if (g.rerecord) return WEFT_OK;
  g.status = WEFT_ERR_GRAPH_CHANGED;
  return WEFT_ERR_GRAPH_CHANGED;
}

// The lookahead of a graph for which neither its options nor WEFT_GRAPH_LOOKAHEAD chose one: the
// fewest rounds (2 at least) that keep about auto_slack_tasks tasks in flight for each worker of the
// owner's gang. Small rounds need more: the width-8 stencil (16 tasks a round) on 2 workers runs
// 1.16x (taskiter) and 1.28x (re-executed) faster 4 rounds ahead than 2. Large rounds need no
// more, and memory-bound ones lose locality with more (Jacobi, 512 tasks a round, 8% slower at 4
// on 2 workers). docs/perf-history.md, 2026-11-26.
inline constexpr std::uint64_t auto_slack_tasks = 40;
// Rounds whose recorded tasks took this long on average run through the scheduler (finish_recording).
inline constexpr std::uint64_t inline_task_ns = 20000;
int auto_lookahead(std::uint32_t round_size, int gang_size) {
  for (int lookahead = 2; lookahead < max_graph_window - 2; ++lookahead)
    if (std::uint64_t(lookahead + 1) * round_size >= auto_slack_tasks * std::uint64_t(gang_size)) return lookahead;
  return max_graph_window - 2;
}

void finish_recording(worker& producer, graph& g) {
  worker& w = drain(end_record_group(producer, g), g);  // the one wait: round 1 follows round 0 through it
  for (int a = 0; a < max_graph_window; ++a) g.opened[a] = 0;
  int n = instance->worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    for (auto& f : g.rows[i].finished) f.store(0, std::memory_order_relaxed);
  g.sub_start.push_back(g.size());
  g.sub_start.resize(static_cast<std::size_t>(g.unroll) + 1, g.size());
  build_edges(g);
  // Taskiter with a trip count that is not a multiple of unroll: its last round runs only the
  // first iterations of the recording.
  if (g.taskiter && g.iterations != -1 && g.iterations % g.unroll) {
    g.partial_round = (g.iterations + g.unroll - 1) / g.unroll - 1;
    g.partial_count = g.sub_start[static_cast<std::size_t>(g.iterations % g.unroll)];
  }
  if (sched::propagation() != WEFT_PRIORITY_AS_GIVEN) compute_levels(g);
  if (trace::on) [[unlikely]]
    trace_graph_edges(w, g);
  // The window changes only here, where no array of the previous recording is in use (drained).
  if (g.lookahead == 0) g.window = auto_lookahead(g.size(), w.crew ? w.crew->size() : 1) + 2;
  g.defer_gang = w.crew && w.crew->size() == 1 ? w.crew : nullptr;
  // Running rounds inline saves about 180 instructions per task (a. 50 ns), and gives up the
  // scheduler's depth-first order along chains of tasks across rounds, which keeps what a chain
  // reads in cache: a matvec's blocks of A were fetched again every round instead of once per
  // burst of rounds (cachegrind, 8 MiB last level: 10.8M misses against 2.8M). So only rounds of
  // short tasks run inline by default: under inline_task_ns a task on average in the recording
  // (which first touches and cold caches make longer than the rounds after it), where the saving
  // may still be worth 0.25% or more (WEFT_GRAPH_INLINE=1: always, 0: never).
  const std::uint64_t mean_task_ns = (monotonic_ns() - g.record_began_ns) / std::max<std::uint32_t>(1, g.size());
  const auto mode = instance->cfg.graph_inline;
  g.inline_rounds = g.defer_gang &&
                    (mode == config::inline_mode::always ||
                     (mode == config::inline_mode::automatic && mean_task_ns < inline_task_ns)) &&
                    std::none_of(g.nodes.begin(), g.nodes.end(), [](const graph_node& n) { return n.priority > 0; });
  g.inline_running = false;
  if (g.inline_rounds && !g.taskiter) {
    // Re-executed: the worker holds opened instances from now on (see graph_leave_inline). Not while
    // it holds another graph's, nor under priority propagation (levels would order the tasks).
    g.inline_rounds = !w.inline_graph && sched::propagation() == WEFT_PRIORITY_AS_GIVEN;
    if (g.inline_rounds) w.inline_graph = &g;
    g.inline_round = 1;
    g.inline_node = 0;
    g.opened_in_round = 0;
  }
  if (!make_arrays(g)) {
    std::fprintf(stderr, "weft: persistent graph: out of memory for %u replayed tasks; running it as ordinary tasks\n",
                 g.size());
    free_arrays(g);
    g.state = graph::phase::plain;
    return;
  }
  g.state = graph::phase::replaying;
  arm_first_rounds(g);
}

// The layer of WEFT_GRAPH_DISTRIBUTED (weft_graph_set_layer). Acquire/release: a graph opened on
// another thread sees the table the registering thread filled.
std::atomic<const weft_graph_layer_t*> distributed_layer{nullptr};

// Interprets the options; -1 when one is invalid (its name is printed).
int settings(graph& g, const weft_graph_options_t* o) {
  const config& cfg = instance->cfg;
  g.iteration_priority = cfg.graph_iteration_priority;
  g.rerecord = cfg.graph_rerecord;
  g.lookahead = cfg.graph_lookahead;
  if (!o) {
    g.window = g.lookahead + 2;
    return WEFT_OK;
  }
  auto bad = [](const char* field) {
    std::fprintf(stderr, "weft_graph_begin_with: invalid options.%s\n", field);
    return WEFT_ERR_INVALID_ARGUMENT;
  };
  if (o->mode == WEFT_GRAPH_DISTRIBUTED) {
    g.layer = distributed_layer.load(std::memory_order_acquire);
    if (!g.layer) return bad("mode (WEFT_GRAPH_DISTRIBUTED needs libweft-dist linked: weft/dist.h)");
    if (o->condition || o->iterations < 1) return bad("iterations (>= 1: a distributed graph takes a count)");
  } else if (o->mode != WEFT_GRAPH_REEXECUTE && o->mode != WEFT_GRAPH_TASKITER) {
    return bad("mode");
  }
  if (o->unroll < 0 || o->unroll > 4096) return bad("unroll (0..4096)");
  if (o->lookahead < 0 || o->lookahead > max_graph_window - 2) return bad("lookahead (0..6)");
  if (o->policy < WEFT_GRAPH_POLICY_DEFAULT || o->policy > WEFT_GRAPH_ITERATION_PRIORITY) return bad("policy");
  if (o->on_change < WEFT_GRAPH_ON_CHANGE_DEFAULT || o->on_change > WEFT_GRAPH_ERROR) return bad("on_change");
  g.taskiter = o->mode == WEFT_GRAPH_TASKITER || o->mode == WEFT_GRAPH_DISTRIBUTED;
  g.unroll = o->unroll > 1 ? o->unroll : 1;
  if (g.taskiter) {
    if (o->iterations == -1 ? !o->condition : o->iterations < 1)
      return bad("iterations (>= 1, or -1 with a condition)");
    g.iterations = o->iterations;
    g.condition = o->condition;
    g.condition_arg = o->condition_arg;
  } else if (o->condition || o->iterations) {
    return bad("iterations/condition (taskiter mode only)");
  }
  if (o->policy) g.iteration_priority = o->policy == WEFT_GRAPH_ITERATION_PRIORITY;
  if (o->on_change) g.rerecord = o->on_change == WEFT_GRAPH_RERECORD;
  if (o->lookahead) g.lookahead = o->lookahead;
  g.window = g.lookahead + 2;
  g.barrier = o->barrier != 0;
  return WEFT_OK;
}

// --- rounds run inline (a gang of one) ------------------------------------------------------------
//
// One worker can run a round's tasks in the order they were recorded: it is a topological order of
// the round, and the rounds before have all run. The producer then calls each task's body itself:
// no predecessor count is decremented (graph_release returns at once), nothing is queued or taken
// from a queue. Creation order is the schedule, which the depth-first policy would not give on one
// worker; the program's priorities would be ignored, so graphs with any run the general way.
// Taskiter rounds run as they open (run_round_inline); re-executed ones once the producer reaches
// the lookahead bound, where it would wait for them anyway (run_opened).
//
// A task that blocks (an event, a taskwait that parks, blocking MPI) may wait for a task recorded
// after it, which nothing would run: before its context is set aside, graph_leave_inline brings
// the counts up to date and hands the tasks not run to the scheduler. So does a task that binds an
// event (its successors wait for the event, not for its body). The graph runs the general way from
// then on.

// Applies the decrements that the inline ends skipped: of every task of round r-1 on round r
// (rounds up to r-1 ran inline; round 1 follows the recorded round through a wait, not edges), and
// of round r's first `ended` tasks on rounds r and r+1. Only round r's tasks from `first` on are
// counted down: the ones before have run, and may already be armed for a later round of their
// array (graph_instance_done). No task counted down is visible to another worker yet: plain stores.
void catch_up_counts(graph& g, long r, std::uint32_t ended, std::uint32_t first) {
  task* same = g.instances[g.array_of(r)];
  task* next = g.instances[g.next_array(g.array_of(r))];
  auto drop = [](task* s) { s->preds.store(s->preds.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed); };
  auto drop_same = [&](const std::vector<std::uint32_t>& edges, std::uint32_t from, std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i)
      if (edges[from + i] >= first) drop(same + edges[from + i]);
  };
  if (r >= 2)
    for (const graph_node& node : g.nodes) drop_same(g.cyclic, node.first_cyclic, node.cyclic_count);
  for (std::uint32_t p = 0; p < ended; ++p) {
    const graph_node& node = g.nodes[p];
    drop_same(g.successors, node.first_successor, node.successor_count);
    for (std::uint32_t i = 0; i < node.cyclic_count; ++i) drop(next + g.cyclic[node.first_cyclic + i]);
  }
}

void run_rounds(graph& g, long from);

// A task of the owner's that opens the rounds after a blocked inline task's, in its producer's stead.
void continue_rounds(void* p) {
  graph& g = **static_cast<graph**>(p);
  run_rounds(g, g.handed_from);
  g.rounds_opened.store(true, std::memory_order_release);  // publishes the producer state it wrote
}

void hand_off_rounds(worker& w, graph& g, long from) {
  g.handed_off = true;
  g.handed_from = from;
  // Created as the owner's child, as the instances are: the owner's drain waits for it. The owner is
  // set aside below this until it resumes, and then waits for rounds_opened: nothing else writes its
  // child count meanwhile.
  task* blocked = w.current;
  w.current = g.owner;
  task* t = allocate_plain(w, continue_rounds, sizeof(graph*), 0);
  graph* arg = &g;
  std::memcpy(t->arguments(), &arg, sizeof arg);
  submit_plain(w, t);
  w.current = blocked;
}

bool rounds_opened(void* p) {
  return static_cast<graph*>(p)->rounds_opened.load(std::memory_order_acquire);
}

void leave_inline(worker& w, graph& g, bool blocks) {
  w.inline_graph = nullptr;
  g.inline_rounds = false;
  const long r = g.inline_round;
  const std::uint32_t v = g.inline_node;
  // A task still running counts its successors down itself when it ends.
  const std::uint32_t first = g.inline_running ? v + 1 : v;
  catch_up_counts(g, r, v, first);
  if (g.taskiter) {
    // Every task after v gets a creation guard (the round was prepared with its roots' guards
    // held), lifted once all are set: one that becomes ready may run at once, elsewhere too, and
    // count the others down.
    task* base = g.instances[g.array_of(r)];
    for (std::uint32_t u = first; u < g.inline_count; ++u)
      if (!guarded(g, g.nodes[u], u, r))
        base[u].preds.store(base[u].preds.load(std::memory_order_relaxed) + creation_guard, std::memory_order_relaxed);
    for (std::uint32_t u = first; u < g.inline_count; ++u) lift_guard(w, g, base + u);
    if (blocks) hand_off_rounds(w, g, r + 1);
    return;
  }
  // Re-executed: every instance kept its guard when opened; the opened ones not run lose it now, in
  // recorded order. The producer, if stuck under the blocked task, is at the lookahead bound, where
  // it would wait for this round anyway: nothing to hand off.
  for (long k = r; k <= g.round; ++k) {
    task* base = g.instances[g.array_of(k)];
    const std::uint32_t end = k == g.round ? g.opened_in_round : g.size();
    for (std::uint32_t u = k == r ? first : 0; u < end; ++u) lift_guard(w, g, base + u);
  }
}

bool inline_possible(const worker& w, const graph& g) {
  // Not inside another graph's inline task (only one is tracked per worker), nor when priorities
  // are propagated (they would order the round).
  return w.crew == g.defer_gang && !w.inline_graph && sched::propagation() == WEFT_PRIORITY_AS_GIVEN;
}

bool at_once(void*) {
  return true;
}

// Runs instance t inline; the context may come back on another worker (returned).
worker& run_inline(worker& w, graph& g, task* t) {
  g.inline_running = true;
  execute_task(w, t);
  g.inline_running = false;
  return *worker_after_switch();
}

// Between two inline tasks, every 16: what the worker loop sees to between tasks. Pollers and
// deferred completions run here; a context to resume runs while the producer steps aside.
worker& between_inline_tasks(worker& w) {
  if (fiber::pollers_active()) fiber::poll_all(w.id);
  if (deferred_pending.load(std::memory_order_relaxed)) run_deferred(w);
  fiber::context* c = take_resumable(w);
  if (!c && w.yielded) c = take_yielded(w, false);
  if (!c) return w;
  return yield_until(w, at_once, nullptr, fiber::wait_kind::graph, c);
}

// Round r's first `count` tasks, run here one after the other, unless one of them blocks or binds
// an event: the rest of the round then goes to the scheduler (graph_leave_inline).
void run_round_inline(worker& producer, graph& g, long r, std::uint32_t count) {
  prepare_round(producer, g, r, count);
  task* base = g.instances[g.array_of(r)];
  g.inline_round = r;
  g.inline_count = count;
  worker* w = &producer;
  for (std::uint32_t v = 0; v < count; ++v) {
    if ((v & 15) == 15) [[unlikely]]
      w = &between_inline_tasks(*w);
    g.inline_node = v;
    w->inline_graph = &g;
    if (v == 0) trace_task(*w, trace::event_type::task_ready, base);  // the others: graph_release
    w = &run_inline(*w, g, base + v);
    if (!g.inline_rounds) return;  // a task blocked or bound an event: see leave_inline
    w->inline_graph = nullptr;
  }
}

// Re-executed, in a gang of one: runs the opened instances of the rounds up to `last`, in recorded
// order, on the producer's stack. The producer is at the lookahead bound: it would wait for them
// here anyway. Its worker holds the graph's opened instances all along (w.inline_graph), so that
// anything that sets the producer's context aside hands them to the scheduler first.
void run_opened(worker& producer, graph& g, long last) {
  worker* w = &producer;
  for (int ran = 1; g.inline_rounds && g.inline_round <= last; ++ran) {
    const long r = g.inline_round;
    if (g.inline_node >= (r == g.round ? g.opened_in_round : g.size())) {
      if (r == g.round) return;  // the rest of the round is not opened yet
      ++g.inline_round;
      g.inline_node = 0;
      continue;
    }
    if ((ran & 15) == 0) [[unlikely]] {
      w->inline_graph = nullptr;  // stepping aside for another context leaves the instances held
      w = &between_inline_tasks(*w);
      w->inline_graph = &g;
    }
    task* t = g.instances[g.array_of(r)] + g.inline_node;
    trace_task(*w, trace::event_type::task_ready, t);
    w = &run_inline(*w, g, t);
    ++g.inline_node;
  }
}

// Taskiter: rounds `from`.. run from the recording alone.
void run_rounds(graph& g, long from) {  // each wait may move this context: the worker is re-read after it
  long rounds = g.iterations == -1 ? LONG_MAX : (g.iterations + g.unroll - 1) / g.unroll;
  for (long r = from; r < rounds && g.state == graph::phase::replaying; ++r) {
    if (g.condition) {
      wait_round(*worker_after_switch(), g, r - 1);  // the control step: after every task of the previous round
      if (!g.condition(g.condition_arg)) break;
    }
    start_round(*worker_after_switch(), g, r);
    worker& on = *worker_after_switch();  // the waits above may have moved this context
    g.iteration = r * g.unroll;
    const std::uint32_t count = r == g.partial_round ? g.partial_count : g.size();
    if (g.inline_rounds) {
      if (inline_possible(on, g)) {
        run_round_inline(on, g, r, count);
        if (g.handed_off) {  // continue_rounds opens the rest: wait until it has
          worker* at = worker_after_switch();
          while (!rounds_opened(&g)) at = &yield_until(*at, rounds_opened, &g, fiber::wait_kind::graph, nullptr);
          return;
        }
        continue;
      }
      g.inline_rounds = false;  // the general way from this round on
      catch_up_counts(g, r, 0, 0);
    }
    open_round(on, g, r, count);
  }
}

void record(worker& w, graph& g, task* t) {
  graph_node node{};
  node.fn = t->fn;
  auto made = std::find_if(g.created.begin(), g.created.end(), [t](const auto& c) { return c.first == t; });
  if (made != g.created.end()) {
    node.args_size = made->second;
    *made = g.created.back();
    g.created.pop_back();
  }
  node.priority = sched::priority_of(t);
  node.sub = static_cast<std::uint16_t>(g.sub);
  node.task_flags = t->flags & flag_undeferred;
  node.run_flags = t->run_flags & run_tied;
  node.door_bits = t->door_bits;
  node.args_offset = static_cast<std::uint32_t>(g.recorded_args.size());
  g.recorded_args.resize(g.recorded_args.size() + ((node.args_size + 15) & ~std::uint32_t{15}));
  if (node.args_size) std::memcpy(g.recorded_args.data() + node.args_offset, t->arguments(), node.args_size);
  if (node.args_size > WEFT_INLINE_ARGS_SIZE) {
    node.large_offset = g.large_bytes;
    g.large_bytes += (node.args_size + 15) & ~std::uint32_t{15};
  }
  node.first_access = static_cast<std::uint32_t>(g.accesses.size());
  for (const pending_access& a : w.accesses)
    if (a.owner == t) g.accesses.push_back({a.address, a.type});
  node.access_count = static_cast<std::uint32_t>(g.accesses.size()) - node.first_access;
  trace_point(w, trace::event_type::graph_instance, trace_id(t), 0, static_cast<std::uint32_t>(g.nodes.size()),
              g.trace_serial);
  g.nodes.push_back(node);
}

// A layer's round: t is described to the layer, then freed without running.
int capture(worker& w, graph& g, task* t) {
  weft_recorded_task_t r{};
  r.fn = t->fn;
  auto made = std::find_if(g.created.begin(), g.created.end(), [t](const auto& c) { return c.first == t; });
  if (made != g.created.end()) {
    r.args_size = made->second;
    *made = g.created.back();
    g.created.pop_back();
  }
  r.args = t->arguments();
  r.flags = (t->flags & flag_undeferred ? WEFT_TASK_UNDEFERRED : 0) | (t->run_flags & run_tied ? WEFT_TASK_TIED : 0);
  r.priority = t->priority;
  r.iteration = g.sub < 0 ? 0 : g.sub;
  r.door = t->door_bits;
  thread_local std::vector<weft_recorded_access_t> accesses;  // no allocation per captured task
  accesses.clear();
  for (const pending_access& a : w.accesses)
    if (a.owner == t) accesses.push_back({a.address, static_cast<int>(a.type)});
  r.accesses = accesses.data();
  r.access_count = static_cast<int>(accesses.size());
  int status = g.layer->record(g.layer_state, public_handle(t), &r);
  discard_task(w, t);
  return status;
}

}  // namespace

// --- entry points -------------------------------------------------------------------------------

int graph_set_layer(int mode, const weft_graph_layer_t* layer) {
  if (mode != WEFT_GRAPH_DISTRIBUTED || !layer || !layer->open || !layer->record || !layer->run)
    return WEFT_ERR_INVALID_ARGUMENT;
  distributed_layer.store(layer, std::memory_order_release);
  return WEFT_OK;
}

int graph_begin(worker& w, const weft_graph_options_t* options) {
  task* owner = w.current;
  if (owner->graph_role == graph_owner) return WEFT_ERR_GRAPH_STATE;
  auto* g = new graph;
  if (int s = settings(*g, options); s != WEFT_OK) {
    delete g;
    return s;
  }
  if (g->layer) {
    // A layer's mode: the round is captured for the layer, which runs the loop at graph_end.
    g->layer_state = g->layer->open(options);
    if (!g->layer_state) {
      delete g;
      return WEFT_ERR_INVALID_ARGUMENT;
    }
    g->state = graph::phase::capturing;
    g->sub = -1;
  }
  g->rows = new graph_done_row[max_workers]();
  g->owner = owner;
  state_of(w, owner).open_graph = g;
  owner->graph_role = graph_owner;
  return WEFT_OK;
}

int graph_iteration(worker& w) {
  graph* g = open_graph_of(w.current);
  if (!g) return WEFT_ERR_GRAPH_STATE;
  ++g->iteration;
  switch (g->state) {
    case graph::phase::idle:
      start_recording(w, *g);
      return WEFT_OK;
    case graph::phase::recording:
      if (++g->sub < g->unroll) {
        g->sub_start.push_back(g->size());
        return WEFT_OK;
      }
      if (g->taskiter) {
        --g->sub;
        --g->iteration;
        std::fprintf(stderr,
                     "weft_graph_iteration: a taskiter graph records %d iteration(s); weft_graph_end runs the rest\n",
                     g->unroll);
        return WEFT_ERR_GRAPH_STATE;
      }
      finish_recording(w, *g);
      if (g->state == graph::phase::replaying) start_round(*worker_after_switch(), *g, 1);
      return WEFT_OK;
    case graph::phase::replaying: {
      if (g->cursor != g->sub_start[static_cast<std::size_t>(g->sub) + 1]) {
        --g->iteration;  // the message names the iteration that created too few tasks
        int s = changed(w, *g, g->cursor, "fewer tasks than recorded");
        ++g->iteration;
        if (g->rerecord) start_recording(*worker_after_switch(), *g);
        return s;
      }
      if (++g->sub < g->unroll) return WEFT_OK;
      start_round(w, *g, g->round + 1);
      return WEFT_OK;
    }
    case graph::phase::plain:
      if (g->rerecord) start_recording(w, *g);
      return WEFT_OK;
    case graph::phase::capturing:
      if (g->sub + 1 < g->unroll) {
        ++g->sub;
        return WEFT_OK;
      }
      --g->iteration;
      std::fprintf(stderr,
                   "weft_graph_iteration: a distributed graph records %d iteration(s); weft_graph_end runs the rest\n",
                   g->unroll);
      return WEFT_ERR_GRAPH_STATE;
  }
  return WEFT_OK;
}

int graph_end(worker& w) {
  graph* g = open_graph_of(w.current);
  if (!g) return WEFT_ERR_GRAPH_STATE;
  if (g->state == graph::phase::capturing) {
    // The layer runs the loop on this task, as graphs of its own: this one is closed first.
    const weft_graph_layer_t* layer = g->layer;
    void* state = g->layer_state;
    g->owner->graph_role = graph_none;
    g->owner->state.load(std::memory_order_acquire)->open_graph = nullptr;
    delete[] g->rows;
    delete g;
    return layer->run(state);
  }
  int status = WEFT_OK;
  if (g->taskiter && g->state == graph::phase::recording) {
    finish_recording(w, *g);
    if (g->state == graph::phase::replaying) run_rounds(*g, 1);
  } else if (g->state == graph::phase::replaying && g->cursor != g->sub_start[static_cast<std::size_t>(g->sub) + 1]) {
    status = changed(w, *g, g->cursor, "fewer tasks than recorded");
  } else if (g->inline_rounds && !g->taskiter) {
    run_opened(w, *g, LONG_MAX);
    if (worker_after_switch()->inline_graph == g) worker_after_switch()->inline_graph = nullptr;
    g->inline_rounds = false;  // nothing left that was not run
  }
  worker& on = *worker_after_switch();  // the waits above may have moved this context
  drain(end_record_group(on, *g), *g);
  if (g->status != WEFT_OK) status = g->status;
  g->owner->graph_role = graph_none;
  g->owner->state.load(std::memory_order_acquire)->open_graph = nullptr;
  free_arrays(*g);
  delete[] g->rows;
  delete g;
  return status;
}

namespace {
// Everything but the match of a replayed task: recording, plain phases, and changes.
[[gnu::noinline, gnu::cold]] task* allocate_other(worker& w, graph& g, weft_task_fn fn, std::size_t args_size,
                                                  unsigned flags, int& status) {
  if (g.state == graph::phase::recording) {
    if (flags & WEFT_TASK_UNDEFERRED) {
      // Its creator waits for it: no replay can keep that promise without a wait per iteration.
      std::fprintf(
          stderr, "weft: persistent graph: iteration %ld creates an undeferred task; the loop runs as ordinary tasks\n",
          g.iteration);
      drain(end_record_group(w, g), g);
      g.state = graph::phase::plain;
      g.rerecord = false;
    }
    return nullptr;
  }
  if (g.state == graph::phase::capturing && (flags & WEFT_TASK_UNDEFERRED)) {
    std::fprintf(stderr,
                 "weft: distributed graph: iteration %ld creates an undeferred task; refused (its creator "
                 "would wait for it on every rank)\n",
                 g.iteration);
    status = WEFT_ERR_INVALID_ARGUMENT;
    return nullptr;
  }
  if (g.state != graph::phase::replaying) return nullptr;
  const std::uint32_t v = g.cursor;
  const char* what = "other task flags";
  if (v >= g.sub_start[static_cast<std::size_t>(g.sub) + 1]) {
    what = "more tasks than recorded";
  } else if (g.nodes[v].fn != fn) {
    what = "another task function";
  } else if (g.nodes[v].args_size != args_size) {
    what = "another argument size";
  }
  status = changed(w, g, v, what);
  return nullptr;
}

}  // namespace

// From now on the instance's accesses are gathered like an ordinary task's, the matched ones first.
void graph_access_differs(worker& w, task* t) {
  if (t->replay.accesses_left == access_gathered) return;
  const graph& g = *t->replay.owner_graph;
  const graph_node& node = g.nodes[t->replay.node];
  const std::uint32_t matched = node.access_count - t->replay.accesses_left;
  for (std::uint32_t i = 0; i < matched; ++i) {
    const graph_access& r = g.accesses[node.first_access + i];
    w.accesses.push_back({t, r.address, r.type});
  }
  t->replay.accesses_left = access_gathered;
}

task* graph_allocate(worker& w, weft_task_fn fn, std::size_t args_size, unsigned flags, int& status) {
  graph& g = *open_graph_of(w.current);
  status = WEFT_OK;
  const std::uint32_t v = g.cursor;
  if (g.state == graph::phase::replaying && v < g.sub_start[static_cast<std::size_t>(g.sub) + 1]) {
    const graph_node& node = g.nodes[v];
    if (node.fn == fn && node.args_size == args_size &&
        node.task_flags == ((flags & WEFT_TASK_UNDEFERRED) ? flag_undeferred : 0)) {
      g.cursor = v + 1;
      task* t = g.instances[g.round_array] + v;
      rewind_accesses(g, t, node);
      if (trace::on) [[unlikely]]
        trace_replayed(w, g, t);
      return t;
    }
  }
  return allocate_other(w, g, fn, args_size, flags, status);
}

namespace {
[[gnu::noinline, gnu::cold]] int submit_other(worker& w, task* t) {
  graph& g = *open_graph_of(t->parent);
  if (g.state == graph::phase::capturing) return capture(w, g, t);
  if (t->graph_role != graph_instance) {
    if (g.state == graph::phase::recording) record(w, g, t);
    return submit_plain(w, t);
  }
  const graph_node& node = g.nodes[t->replay.node];
  graph_access_differs(w, t);  // fewer accesses than recorded, if none differed
  auto& acc = w.accesses;
  std::uint32_t matched = 0;
  bool same = true;
  std::size_t keep = 0;
  for (std::size_t i = 0; i < acc.size(); ++i) {
    if (acc[i].owner != t) {
      acc[keep++] = acc[i];
      continue;
    }
    if (matched < node.access_count) {
      const graph_access& r = g.accesses[node.first_access + matched];
      same &= r.address == acc[i].address && r.type == acc[i].type;
    } else {
      same = false;
    }
    ++matched;
  }
  same &= matched == node.access_count;
  // Dependences follow the order of submission, and so does the recording: an instance submitted
  // before one created earlier would be ordered by the wrong recorded edges.
  const bool in_order = t->replay.node == g.opened_in_round;
  const bool replaying = g.state == graph::phase::replaying;  // else changed since t was allocated
  if (same && in_order && replaying) {
    acc.resize(keep);
    open(w, g, t);
    return WEFT_OK;
  }
  int status = WEFT_OK;
  if (replaying) {
    const char* what = !in_order                      ? "a task submitted before one created earlier"
                       : matched != node.access_count ? "another number of accesses"
                                                      : "other accesses";
    status = changed(w, g, t->replay.node, what);
  }
  if (status != WEFT_OK || (t->run_flags & run_held)) {
    acc.erase(std::remove_if(acc.begin(), acc.end(), [t](const pending_access& a) { return a.owner == t; }), acc.end());
    return status != WEFT_OK ? status : WEFT_ERR_GRAPH_CHANGED;
  }
  // Recorded again from the next iteration (or never replayed again): this one goes on as an
  // ordinary task.
  task* plain = allocate_plain(w, t->fn, node.args_size, 0);
  if (!plain) return WEFT_ERR_OUT_OF_MEMORY;
  if (node.args_size) std::memcpy(plain->arguments(), t->arguments(), node.args_size);
  plain->priority = sched::priority_of(t);
  plain->run_flags = t->run_flags;
  plain->door_bits = t->door_bits;
  for (pending_access& a : acc)
    if (a.owner == t) a.owner = plain;
  return submit_plain(w, plain);
}
}  // namespace

int graph_submit(worker& w, task* t) {
  if (t->graph_role == graph_instance) {
    graph& g = *t->replay.owner_graph;
    // Every recorded access matched, in order, and no other; submitted in creation order; the
    // graph still replaying.
    if (t->replay.accesses_left == 0 && t->replay.node == g.opened_in_round && g.state == graph::phase::replaying)
        [[likely]] {
      open(w, g, t);
      return WEFT_OK;
    }
  }
  return submit_other(w, t);
}

void graph_created(worker&, task* t, std::size_t args_size) {
  graph& g = *open_graph_of(t->parent);
  if (g.state == graph::phase::recording || g.state == graph::phase::capturing)
    g.created.emplace_back(t, static_cast<std::uint32_t>(args_size));
}

void graph_discard(worker& w, task* t) {
  auto& acc = w.accesses;
  acc.erase(std::remove_if(acc.begin(), acc.end(), [t](const pending_access& a) { return a.owner == t; }), acc.end());
  graph& g = *t->replay.owner_graph;
  // Not created after all: the next creation matches the same recorded task.
  if (g.state == graph::phase::replaying && g.cursor == t->replay.node + 1) --g.cursor;
}

namespace {
// One predecessor of s done, on the one worker of its graph owner's gang: true when s is ready. No
// other worker runs this gang's tasks, so s's other predecessors mostly finish here too: the
// decrement is kept in the worker's slots instead of being applied with a locked instruction, and
// s is ready when its count, read, equals what the worker holds (every predecessor left is one of
// this worker's, so nobody else writes the count any more: last_predecessor's rule, for several).
// Sound with other writers too (a decrement is only late, never lost): a count that another
// writer brings down to the held amount is ended by the flush, which every path that stops
// running this worker's own ready tasks goes through. A task still guarded by its producer is
// decremented at once: its guard may be lifted long after (a later round), by then a flush away.
inline bool counted_down_deferred(worker& w, task* s) {
  // Acquire: the other predecessors' effects (their decrements released them).
  const std::int32_t count = s->preds.load(std::memory_order_acquire);
  if (count >= creation_guard) return s->preds.fetch_sub(1, std::memory_order_acq_rel) == 1;
  const int slot = worker::deferred_slot(s);
  if (w.deferred_task[slot] == s) {
    const std::int32_t mine = w.deferred_count[slot] + 1;
    if (count == mine) {
      w.empty_deferred_slot(slot);
      return true;
    }
    w.deferred_count[slot] = mine;
    return false;
  }
  if (count == 1) return true;  // the last one
  if (!w.deferred_task[slot]) {
    w.deferred_task[slot] = s;
    w.deferred_count[slot] = 1;
    ++w.deferred_n;
    return false;
  }
  return s->preds.fetch_sub(1, std::memory_order_acq_rel) == 1;  // slot taken: applied at once
}
}  // namespace

void graph_flush_deferred(worker& w) {
  for (int i = 0; i < worker::deferred_slots && w.deferred_n; ++i) {
    task* s = w.deferred_task[i];
    if (!s) continue;
    const std::int32_t n = w.deferred_count[i];
    w.empty_deferred_slot(i);
    if (s->preds.fetch_sub(n, std::memory_order_acq_rel) == n) ready(w, *s->replay.owner_graph, s, false);
  }
}

void graph_leave_inline(worker& w, bool blocks) {
  leave_inline(w, *w.inline_graph, blocks);
}

void graph_release(worker& w, task* t) {
  const graph& g = *t->replay.owner_graph;
  if (w.inline_graph == &g) {  // run inline: no count is kept ("rounds run inline" above)
    // The next task in recorded order is ready now (its predecessors all come before it): traced
    // here, where a released successor would be.
    if (trace::on && g.taskiter && g.inline_node + 1 < g.inline_count) [[unlikely]]
      trace_task(w, trace::event_type::task_ready, g.instances[g.array_of(g.inline_round)] + g.inline_node + 1);
    return;
  }
  const graph_node& node = g.nodes[t->replay.node];
  task* same = g.instances[t->graph_array];
  task* next = g.instances[g.next_array(t->graph_array)];
  bool first = !g.iteration_priority;
  const bool alone = w.crew == g.defer_gang;
  auto count_down = [&](task* s) {
    if (alone ? counted_down_deferred(w, s) : last_predecessor(s)) {
      ready(w, g, s, first);
      first = false;
    }
  };
  const std::uint32_t* succ = g.successors.data() + node.first_successor;
  for (std::uint32_t i = 0; i < node.successor_count; ++i) count_down(same + succ[i]);
  const std::uint32_t* cyc = g.cyclic.data() + node.first_cyclic;
  for (std::uint32_t i = 0; i < node.cyclic_count; ++i) count_down(next + cyc[i]);
}

void graph_report_send(task* t) {
  graph& g = *t->replay.owner_graph;
  std::atomic_ref<std::uint8_t>(g.nodes[t->replay.node].send).store(1, std::memory_order_relaxed);
  g.sends_changed.store(true, std::memory_order_release);  // publishes the mark to start_round
}

void graph_instance_done(worker& w, task* t) {
  graph& g = *t->replay.owner_graph;
  const long r = t->replay.round;
  auto& slot = g.rows[w.id].finished[t->graph_array];
  // Ready for its array's next round (nothing refers to it any more); the descriptor is hot here,
  // and the producer does not have to walk the array again.
  arm_instance(g, t, g.nodes[t->replay.node], r + g.window);
  // Release: publishes the re-armed descriptor to the producer that sees the count (and, through
  // its opening of round r+window-1, to whoever counts this instance down).
  slot.store(slot.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

}  // namespace weft::core
