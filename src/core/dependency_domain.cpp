#include "core/dependency_domain.hpp"

#include <bit>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>

#include "core/engine.hpp"
#include "sched/priority_propagation.hpp"

namespace weft::core {

namespace {
void release_hold(worker& w, task* t) {
  if (--t->domain_refs == 0) drop_ref(w, t);
}

// The slot for pred's successor number n >= inline_successors, in its overflow blocks (made here).
[[gnu::noinline]] task** overflow_slot(worker& w, task* pred, std::uint32_t n) {
  std::uint32_t index = n - inline_successors;
  std::uint32_t in_block = index % block_successors;
  successor_block* b;
  if (index == 0) {
    b = static_cast<successor_block*>(w.successor_cache.allocate());
    if (!b) out_of_memory("successor slots", sizeof(successor_block));
    b->next = nullptr;
    b->tail = b;
    pred->more_successors = b;
  } else {
    successor_block* first = pred->more_successors;
    b = first->tail;
    if (in_block == 0) {
      // The completer reads b->next only for slots it was told exist (the count below), so
      // linking a block for a slot whose edge then gets pruned is harmless; blocks are freed
      // with the task.
      successor_block* nb = static_cast<successor_block*>(w.successor_cache.allocate());
      if (!nb) out_of_memory("successor slots", sizeof(successor_block));
      nb->next = nullptr;
      b->next = nb;
      first->tail = nb;
      b = nb;
    }
  }
  return &b->slot[in_block];
}

// What an edge made costs besides its slot: trace and priority-propagation records, when on.
[[gnu::noinline, gnu::cold]] void edge_observers(worker& w, task* pred, task* succ) {
  if (trace::on) trace_edge_event(w, pred, succ);
  if (sched::propagation_records(sched::propagation())) sched::propagation_edge(w, pred, succ);
}
}  // namespace

// The successor pred was given last, of the n it has (n > 0, pred not closed: the tail block then
// holds slot n - 1, since a block is added only for the slot about to be written).
static inline task* last_successor(const task* pred, std::uint32_t n) {
  if (n <= inline_successors) return pred->slot[n - 1];
  return pred->more_successors->tail->slot[(n - 1 - inline_successors) % block_successors];
}

// Adds pred -> succ unless pred has already completed (pruned: the successor does not need to wait
// for it) or the edge exists. The producer makes all edges into a task while it submits it, one
// after the other, so an existing edge pred -> succ is pred's newest: one compare with the slot
// written last, on the line this edge would write anyway (nodes built meanwhile may hide one; a
// duplicate edge is harmless: pred releases succ twice, succ counted it twice). Inline with its
// rare parts out of line: it runs for every access of every task.
static inline bool link(worker& w, task* pred, task* succ) {
  if (pred == succ) return false;  // a task naming an address twice: no edge to itself
  // Acquire: if pred is closed, its body's effects must be visible to whatever follows succ.
  std::uint32_t n = pred->successors.load(std::memory_order_acquire);
  if (n & successors_closed) {
    // No write to a finished task: its line stays shared with the worker that completed it.
    worker_counters::bump(w.counters.edges_pruned);
    return false;
  }
  if (n != 0 && last_successor(pred, n) == succ) {
    worker_counters::bump(w.counters.edges_elided);
    return false;
  }
  *(n < inline_successors ? &pred->slot[n] : overflow_slot(w, pred, n)) = succ;
  // Release publishes the slot; fails only if pred completed meanwhile (then the edge is pruned).
  if (!pred->successors.compare_exchange_strong(n, n + 1, std::memory_order_release, std::memory_order_acquire)) {
    worker_counters::bump(w.counters.edges_pruned);
    return false;
  }
  worker_counters::bump(w.counters.edges_created);
  if (trace::on || sched::propagation_records(sched::propagation())) [[unlikely]]
    edge_observers(w, pred, succ);
  return true;
}

static inline void add_edge(worker& w, task* pred, task* succ, int& added) {
  if (link(w, pred, succ)) ++added;
}

// Two slots at first: every task that waits for children gets a domain, and most never see an
// access (fork-join), while a deep recursion keeps one per level alive (issue 23: 1.3 KB per level
// was most of the heap of a 30M-node tree). The first table that fills grows straight to 16.
constexpr std::size_t first_slots = 2, grown_slots = 16;

dependency_domain::dependency_domain() : table_(first_slots), mask_(first_slots - 1), bits_(1) {
  for (auto& r : table_) r.address = nullptr;
}

access_record& dependency_domain::insert(worker& w, const void* address, std::uint32_t i) {
  if ((occupied_.size() + 1) * 2 > table_.size() && table_.size() < grown_slots) {
    rebuild(w, grown_slots);
    return find_or_insert(w, address);
  }
  if ((occupied_.size() + 1) * 2 > table_.size()) {
    // Half full: first forget the records whose tasks have all finished (they can only produce
    // pruned edges); if the table is still over a quarter full, double it. After a sweep at least
    // a quarter of the slots are free, so sweeps cost O(1) per insertion and the table stays
    // proportional to the live tasks.
    rebuild(w, table_.size());
    if (occupied_.size() * 4 > table_.size()) rebuild(w, table_.size() * 2);
    return find_or_insert(w, address);
  }
  access_record& r = table_[i];
  r.address = address;
  r.gate = nullptr;
  r.group = 0;
  r.count = 0;
  r.joined = 0;
  r.capacity = record_members;
  r.spilled = nullptr;
  occupied_.push_back(i);
  return r;
}

namespace {
bool finished(const task* t) {
  // Acquire, like the pruning in link(): a member or record dropped because its task finished
  // gives later accesses no edge to it, so its body's effects must reach them through this load
  // (and the producer's submit), as a pruned edge's do.
  return t->successors.load(std::memory_order_acquire) & successors_closed;
}
bool record_finished(const access_record& r) {
  if (r.joined) return false;  // its node completes only once the group closes
  if (r.gate && !finished(r.gate)) return false;
  task** m = const_cast<access_record&>(r).members();
  for (std::uint32_t i = 0; i < r.count; ++i)
    if (!finished(m[i])) return false;
  return true;
}
}  // namespace

void dependency_domain::rebuild(worker& w, std::size_t size) {
  std::vector<access_record> old(size);
  old.swap(table_);
  mask_ = static_cast<std::uint32_t>(table_.size() - 1);
  bits_ = static_cast<std::uint32_t>(std::countr_zero(table_.size()));
  for (auto& r : table_) r.address = nullptr;
  std::vector<std::uint32_t> used;
  used.swap(occupied_);
  for (std::uint32_t k : used) {
    access_record& r = old[k];
    if (record_finished(r)) {
      if (r.gate) release_hold(w, r.gate);
      task** m = r.members();
      for (std::uint32_t i = 0; i < r.count; ++i) release_hold(w, m[i]);
      std::free(r.spilled);
      continue;
    }
    std::uint32_t i = hash_address(r.address, bits_);
    while (table_[i].address) i = (i + 1) & mask_;
    table_[i] = r;
    occupied_.push_back(i);
  }
}

void dependency_domain::hold(task* t) {
  // The first reference is always taken while t is not yet visible to other threads (a task being
  // submitted, or a node being built), so a plain update is enough.
  if (t->domain_refs++ == 0) t->refs.store(t->refs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void dependency_domain::set_gate(worker& w, access_record& r, task* gate) {
  if (gate) hold(gate);
  if (r.gate) release_hold(w, r.gate);
  r.gate = gate;
}

// Joins the members of r's group into one node that becomes the gate.
void dependency_domain::reset_members(access_record& r) {
  if (r.spilled) {
    std::free(r.spilled);
    r.spilled = nullptr;
  }
  r.capacity = record_members;
  r.group = 0;
  r.count = 0;
  r.joined = 0;
}

task* dependency_domain::close_group(worker& w, access_record& r) {
  if (r.group == 0) return r.gate;
  task** m = r.members();
  task* gate;
  int node_edges = -1;  // >= 0: gate is a node whose guard ends once the record holds it
  if (r.joined) {
    gate = m[0];
    node_edges = static_cast<int>(gate->children_created);
  } else if (r.count == 1) {
    gate = m[0];
  } else {
    gate = allocate_node(w, flag_redirect);
    node_edges = 0;
    for (std::uint32_t i = 0; i < r.count; ++i) add_edge(w, m[i], gate, node_edges);
  }
  set_gate(w, r, gate);
  for (std::uint32_t i = 0; i < r.count; ++i) release_hold(w, m[i]);
  reset_members(r);
  // Only now may the node complete (and be freed): the record already holds its reference.
  if (node_edges >= 0 && finish_linking(gate, node_edges)) complete_node(w, gate);
  return gate;
}

// Gives r's (empty) group its node up front; members link to it as they arrive. The node's guard
// holds it back until the group closes; children_created counts its edges meanwhile.
void dependency_domain::join(worker& w, access_record& r, std::uint8_t node_flags) {
  task* node = allocate_node(w, node_flags);
  node->children_created = 0;
  hold(node);
  r.member[0] = node;
  r.count = 1;
  r.joined = 1;
}

// A member for a joined group (linked to its node), or one for a full list (after making room).
void dependency_domain::push_member_slow(worker& w, access_record& r, task* t) {
  if (r.joined) {
    task* node = r.member[0];
    int edges = 0;
    add_edge(w, t, node, edges);
    node->children_created += edges;
    if (node->flags & flag_mutex_group) attach_mutex_group(w, t, node);
    return;
  }
  // Full: drop the members that have finished, then grow if still more than half full, so the
  // list costs O(1) per member and stays proportional to the live ones.
  task** m = r.members();
  std::uint32_t kept = 0;
  for (std::uint32_t i = 0; i < r.count; ++i) {
    if (finished(m[i])) {
      release_hold(w, m[i]);
    } else {
      m[kept++] = m[i];
    }
  }
  r.count = kept;
  if (kept * 2 > r.capacity) {
    std::uint32_t capacity = r.capacity * 2;
    auto** grown = static_cast<task**>(std::malloc(capacity * sizeof(task*)));
    if (!grown) out_of_memory("a dependence record's list of readers", capacity * sizeof(task*));
    std::memcpy(grown, m, kept * sizeof(task*));
    std::free(r.spilled);
    r.spilled = grown;
    r.capacity = capacity;
  }
  hold(t);
  r.members()[r.count++] = t;
}

void dependency_domain::push_member(worker& w, access_record& r, task* t) {
  if (r.joined || r.count == r.capacity) [[unlikely]]
    return push_member_slow(w, r, t);
  hold(t);
  r.members()[r.count++] = t;
}

// One access of t; inlined into add's loop, so that a task pays one call and not one per access.
[[gnu::always_inline]] inline int dependency_domain::add_one(worker& w, task* t, const void* address,
                                                             weft_dep_type type) {
  access_record& r = find_or_insert(w, address);
  int added = 0;
  if (type == WEFT_DEP_OUT || type == WEFT_DEP_INOUT) {
    if (r.group == WEFT_DEP_IN) {
      // Readers then a writer: the writer follows each reader directly (no node needed).
      task** m = r.members();
      for (std::uint32_t i = 0; i < r.count; ++i) add_edge(w, m[i], t, added);
      set_gate(w, r, t);
      for (std::uint32_t i = 0; i < r.count; ++i) release_hold(w, m[i]);
      reset_members(r);
    } else {
      task* gate = close_group(w, r);
      if (gate) add_edge(w, gate, t, added);
      set_gate(w, r, t);
    }
  } else {
    auto group = static_cast<std::uint8_t>(type);
    if (r.group != group) {
      close_group(w, r);
      r.group = group;
      if (type == WEFT_DEP_MUTEXINOUTSET) join(w, r, flag_redirect | flag_mutex_group);
    }
    if (r.gate) add_edge(w, r.gate, t, added);
    push_member(w, r, t);
  }
  return added;
}

int dependency_domain::add(worker& w, task* t, const pending_access* accesses, int count) {
  int added = 0;
  for (int i = 0; i < count; ++i) added += add_one(w, t, accesses[i].address, accesses[i].type);
  return added;
}
int dependency_domain::add_array(worker& w, task* t, const void* const* addresses, int writes, int count,
                                 void (*refuse_null)()) {
  int added = 0;
  for (int i = 0; i < count; ++i) {
    const void* address = addresses[i];
    if (!address) [[unlikely]]
      refuse_null();  // a null key would read as a free slot
    added += add_one(w, t, address, i < writes ? WEFT_DEP_INOUT : WEFT_DEP_IN);
  }
  return added;
}

void dependency_domain::clear_records(worker& w) {
  for (std::uint32_t i : occupied_) {
    access_record& r = table_[i];
    if (r.joined) close_group(w, r);  // ends the node's guard
    if (r.gate) release_hold(w, r.gate);
    task** m = r.members();
    for (std::uint32_t k = 0; k < r.count; ++k) release_hold(w, m[k]);
    std::free(r.spilled);
    r.address = nullptr;
  }
  occupied_.clear();
}

}  // namespace weft::core
