#include "sched/priority_propagation.hpp"

#include <weft/weft.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>
#include <unordered_set>
#include <vector>

#include "core/engine.hpp"

namespace weft::sched {

using core::task;
using core::worker;

std::atomic<int> propagation_mode{WEFT_PRIORITY_AS_GIVEN};

namespace {

// References keep a descriptor from being recycled while a record or the map names it. Only tasks
// that can have edges are counted (drop_ref frees any other at once): those with accesses, nodes.
bool counted(const task* t) { return t->flags & (core::flag_has_accesses | core::flag_redirect); }
void hold(task* t) { t->refs.fetch_add(1, std::memory_order_relaxed); }

enum record_kind : std::uint8_t {
  record_edges,      // subject's predecessors (subject and each predecessor held)
  record_submitted,  // subject's edges are all reported; marked: propagate from it
  record_send,       // a task that posted a send: its profile (subject held when counted, else null)
};

// A report: one fixed-size block from the reporting worker's pool, so reporting allocates nothing
// per task (a task with more predecessors than a record holds sends several). An edge record, once
// processed, stays in the map as part of its subject's predecessor list until the subject is
// forgotten; the others go back to the pool of whichever worker processed them.
struct record {
  static constexpr std::uint32_t capacity = 11;
  record* next;  // first word: the pool's link while free
  task* subject;
  weft_task_fn fn;  // record_send: the profile's function and parent
  task* parent;
  std::uint8_t kind;
  bool marked;
  std::uint32_t count;
  task* preds[capacity];  // count of them
};
static_assert(sizeof(record) <= core::propagation_record_bytes);

record* make_record(worker& w, std::uint8_t kind, task* subject) {
  void* block = w.record_cache.allocate();
  if (!block) return nullptr;
  auto* r = static_cast<record*>(block);
  r->next = nullptr;
  r->subject = subject;
  r->fn = nullptr;
  r->parent = nullptr;
  r->kind = kind;
  r->marked = false;
  r->count = 0;
  return r;
}

// FA's profile of a send task: its function, its parent, its number of predecessors.
struct profile {
  weft_task_fn fn;
  const task* parent;
  std::size_t preds;
  bool operator==(const profile&) const = default;
};
struct profile_hash {
  std::size_t operator()(const profile& p) const {
    auto h = reinterpret_cast<std::uintptr_t>(p.fn) * 0x9E3779B97F4A7C15ull;
    h ^= reinterpret_cast<std::uintptr_t>(p.parent) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h ^ (p.preds * 0xC2B2AE3D27D4EB4Full));
  }
};

// A task that can still gain a priority: held, with its predecessors (each held) in its edge
// records.
struct node {
  task* subject;
  record* edges;              // newest first
  std::uint32_t pred_count;
  std::uint32_t checked;      // profile generation it was last matched against (detect)
};

// task -> its node's position: open addressing with linear probing and backward-shift deletion.
// The table doubles when half full and never shrinks while the runtime runs, so tracking a task
// allocates nothing in the steady state (an unordered_map allocates per insertion).
class node_index {
 public:
  std::uint32_t* find(const task* t) {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(t);; i = (i + 1) & mask_) {
      if (slots_[i].key == t) return &slots_[i].value;
      if (!slots_[i].key) return nullptr;
    }
  }
  void insert(const task* t, std::uint32_t value) {  // t absent
    if (2 * (size_ + 1) > slots_.size()) grow();
    place(t, value);
    ++size_;
  }
  void erase(const task* t) {  // t present
    std::size_t hole = home(t);
    while (slots_[hole].key != t) hole = (hole + 1) & mask_;
    // Later entries of the same run move back into the hole when that keeps them reachable from
    // their home slot.
    for (std::size_t j = (hole + 1) & mask_; slots_[j].key; j = (j + 1) & mask_) {
      std::size_t h = home(slots_[j].key);
      if (((j - h) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = slot{};
    --size_;
  }
  void clear() {
    for (auto& s : slots_) s = slot{};
    size_ = 0;
  }

 private:
  struct slot {
    const task* key = nullptr;
    std::uint32_t value = 0;
  };
  std::size_t home(const task* t) const {
    return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(t) * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void place(const task* t, std::uint32_t value) {
    std::size_t i = home(t);
    while (slots_[i].key) i = (i + 1) & mask_;
    slots_[i] = slot{t, value};
  }
  void grow() {
    std::vector<slot> old = std::move(slots_);
    std::size_t n = old.empty() ? 256 : 2 * old.size();
    slots_.assign(n, slot{});
    mask_ = n - 1;
    shift_ = 64 - std::countr_zero(n);
    for (const slot& s : old)
      if (s.key) place(s.key, s.value);
  }
  std::vector<slot> slots_;
  std::size_t mask_ = 0, size_ = 0;
  int shift_ = 63;
};

// The map of predecessors and everything only the role's holder touches.
class prioritizer {
 public:
  std::atomic<record*> incoming{nullptr};
  std::atomic<std::size_t> tracked{0};  // tasks in the map after the last turn (a hint for idle workers)

  // Takes the role if free; processes what is pending, then `scan` nodes against the profiles.
  void run(worker& w, std::size_t purge, std::size_t scan) {
    // Test before the exchange: idle workers call this in their spin loop, and a write per call
    // would bounce the flag's line between them and the producers.
    if (busy_.load(std::memory_order_relaxed)) return;
    // Acquire: the previous holder's updates of the map.
    while (!busy_.exchange(true, std::memory_order_acquire)) {
      drain(w);
      forget_finished(w, purge);
      if (scan && propagation() == WEFT_PRIORITY_DETECT) match(scan);
      tracked.store(nodes_.size(), std::memory_order_relaxed);
      busy_.store(false, std::memory_order_release);
      // A report pushed while we held the role may have seen it taken: look once more.
      if (!incoming.load(std::memory_order_acquire)) return;
    }
  }

  void push(record* r) {
    record* head = incoming.load(std::memory_order_relaxed);
    do r->next = head;  // release: the record's contents and the references it carries
    while (!incoming.compare_exchange_weak(head, r, std::memory_order_release, std::memory_order_relaxed));
  }

  // Every task has finished (finalize): releases all references and records. Waits for an idle
  // holder.
  void shutdown(worker& w) {
    while (busy_.exchange(true, std::memory_order_acquire)) __builtin_ia32_pause();
    drain(w);
    for (node& n : nodes_) forget(w, n);
    nodes_.clear();
    index_.clear();
    profiles_.clear();
    tracked.store(0, std::memory_order_relaxed);
    busy_.store(false, std::memory_order_release);
  }

 private:
  void drain(worker& w) {
    record* list = incoming.exchange(nullptr, std::memory_order_acquire);
    record* ordered = nullptr;  // oldest first: a task's edges before its submission
    while (list) {
      record* next = list->next;
      list->next = ordered;
      ordered = list;
      list = next;
    }
    while (ordered) {
      record* next = ordered->next;
      if (!process(w, *ordered)) w.record_cache.release(ordered);
      ordered = next;
    }
  }

  node* find(const task* t) {
    std::uint32_t* at = index_.find(t);
    return at ? &nodes_[*at] : nullptr;
  }

  // True when the record is kept (an edge record joins its subject's node).
  bool process(worker& w, record& r) {
    switch (r.kind) {
      case record_edges: {
        node* n = find(r.subject);
        if (!n) {
          index_.insert(r.subject, static_cast<std::uint32_t>(nodes_.size()));
          n = &nodes_.emplace_back(node{r.subject, nullptr, 0, 0});
        } else {
          core::drop_ref(w, r.subject);  // the node already holds it
        }
        r.next = n->edges;
        n->edges = &r;
        n->pred_count += r.count;
        return true;
      }
      case record_submitted: {
        node* n = find(r.subject);
        if (!n) return false;
        std::uint16_t level = priority_of(r.subject);
        if (!r.marked && propagation() == WEFT_PRIORITY_DETECT && !profiles_.empty()) {
          // Matched at creation: the profile was registered by an earlier send.
          n->checked = generation_;
          if (profiles_.count(profile_of(*n))) {
            level = max_level();
            set_priority_of(r.subject, level);
            r.marked = true;
          }
        }
        if (r.marked) raise_predecessors(r.subject, level);
        return false;
      }
      case record_send: {
        std::size_t preds = 0;
        if (r.subject) {
          if (node* n = find(r.subject)) preds = n->pred_count;
          core::drop_ref(w, r.subject);
        }
        if (profiles_.insert(profile{r.fn, r.parent, preds}).second) ++generation_;
        return false;
      }
    }
    return false;
  }

  static profile profile_of(const node& n) { return profile{n.subject->fn, n.subject->parent, n.pred_count}; }

  static std::uint16_t max_level() {
    return static_cast<std::uint16_t>(core::instance ? core::instance->cfg.max_priority : 0);
  }

  // Algorithm 1 run incrementally from a marked task: an unfinished predecessor d edges above a
  // task at level m gets m - d (depth, detect) or 1 (path), unless it already has more. Redirect
  // nodes are not tasks of the program: they pass the level on unchanged. A task already ready
  // is queued at its level and its predecessors are done: the walk stops there.
  void raise_predecessors(task* from, std::uint16_t level) {
    bool path = propagation() == WEFT_PRIORITY_PATH;
    stack_.clear();
    stack_.emplace_back(from, level);
    while (!stack_.empty()) {
      auto [t, lv] = stack_.back();
      stack_.pop_back();
      node* n = find(t);
      if (!n) continue;
      for (record* r = n->edges; r; r = r->next) {
        for (std::uint32_t i = 0; i < r->count; ++i) {
          task* p = r->preds[i];
          int v = (p->flags & core::flag_redirect) ? lv : path ? 1 : lv - 1;
          if (v <= 0) continue;
          // Relaxed: a task that becomes ready meanwhile is queued at the old level (a hint lost).
          if (p->preds.load(std::memory_order_relaxed) <= 0) continue;
          if (priority_of(p) >= v) continue;
          set_priority_of(p, static_cast<std::uint16_t>(v));
          stack_.emplace_back(p, static_cast<std::uint16_t>(v));
        }
      }
    }
  }

  // Algorithm 2's matching, over the waiting tasks instead of a walk from the blocked ones (the
  // map holds exactly the tasks that can still gain a priority): up to `budget` nodes per call.
  void match(std::size_t budget) {
    if (profiles_.empty() || nodes_.empty()) return;
    std::uint16_t top = max_level();
    for (std::size_t k = 0; k < budget && k < nodes_.size(); ++k) {
      if (scan_cursor_ >= nodes_.size()) scan_cursor_ = 0;
      node& n = nodes_[scan_cursor_++];
      if (n.checked == generation_) continue;
      n.checked = generation_;
      task* t = n.subject;
      if (t->preds.load(std::memory_order_relaxed) <= 0 || priority_of(t) >= top) continue;
      if (!profiles_.count(profile_of(n))) continue;
      set_priority_of(t, top);
      raise_predecessors(t, top);
    }
  }

  // Drops a node's references and gives its records back.
  static void forget(worker& w, node& n) {
    for (record* r = n.edges; r;) {
      record* next = r->next;
      for (std::uint32_t i = 0; i < r->count; ++i) core::drop_ref(w, r->preds[i]);
      w.record_cache.release(r);
      r = next;
    }
    core::drop_ref(w, n.subject);
  }

  // Finished tasks can gain nothing: their references go (a few per call, round robin).
  void forget_finished(worker& w, std::size_t budget) {
    for (std::size_t k = 0; k < budget && !nodes_.empty(); ++k) {
      if (purge_cursor_ >= nodes_.size()) purge_cursor_ = 0;
      node& n = nodes_[purge_cursor_];
      // Acquire, as the domain's own checks: the task's completion is not ordered otherwise.
      if (!(n.subject->successors.load(std::memory_order_acquire) & core::successors_closed)) {
        ++purge_cursor_;
        continue;
      }
      index_.erase(n.subject);
      node gone = n;
      if (purge_cursor_ + 1 < nodes_.size()) {  // the last node moves into the hole
        n = nodes_.back();
        *index_.find(n.subject) = static_cast<std::uint32_t>(purge_cursor_);
      }
      nodes_.pop_back();
      forget(w, gone);
    }
  }

  std::atomic<bool> busy_{false};
  std::vector<node> nodes_;
  node_index index_;
  std::size_t purge_cursor_ = 0, scan_cursor_ = 0;
  std::unordered_set<profile, profile_hash> profiles_;
  std::uint32_t generation_ = 1;
  std::vector<std::pair<task*, std::uint16_t>> stack_;
};

prioritizer the_prioritizer;

// Hands the producer's pending edges (into w.propagation_succ) over as one record.
std::uint16_t max_level_now() { return static_cast<std::uint16_t>(core::instance->cfg.max_priority); }

void flush_edges(worker& w) {
  task* succ = w.propagation_succ;
  if (!succ) return;
  w.propagation_succ = nullptr;
  // During a submission every successor but the task itself is a redirect node.
  if (!(succ->flags & core::flag_redirect)) w.propagation_recorded = succ;
  auto& preds = w.propagation_preds;
  for (std::size_t at = 0; at < preds.size(); at += record::capacity) {
    if (at > 0) hold(succ);  // each record carries a reference on its subject
    record* r = make_record(w, record_edges, succ);
    if (!r) {
      // Out of memory: these edges are not recorded (priorities are hints), the references go back.
      for (std::size_t i = at; i < preds.size(); ++i) core::drop_ref(w, preds[i]);
      core::drop_ref(w, succ);
      break;
    }
    r->count = static_cast<std::uint32_t>(std::min<std::size_t>(record::capacity, preds.size() - at));
    std::copy(preds.begin() + static_cast<std::ptrdiff_t>(at), preds.begin() + static_cast<std::ptrdiff_t>(at + r->count), r->preds);
    the_prioritizer.push(r);
  }
  preds.clear();
}

}  // namespace

void propagation_edge(worker& w, task* pred, task* succ) {
  if (succ != w.propagation_succ) {
    flush_edges(w);
    w.propagation_succ = succ;
    hold(succ);
  }
  hold(pred);
  w.propagation_preds.push_back(pred);
}

void propagation_submit(worker& w, task* t) {
  int mode = propagation();
  bool had_edges = w.propagation_succ == t || w.propagation_recorded == t;
  flush_edges(w);
  w.propagation_recorded = nullptr;
  // none, and detect (no hints: the program's own priorities are not marks): start from 0.
  // Atomic writes: t's edges may already be in the map, where an idle worker reads its level.
  if (mode == WEFT_PRIORITY_NONE || mode == WEFT_PRIORITY_DETECT) set_priority_of(t, 0);
  if (mode == WEFT_PRIORITY_NONE) return;
  if (!propagation_records(mode)) return;
  bool marked = mode != WEFT_PRIORITY_DETECT && priority_of(t) > 0;
  if (marked && mode == WEFT_PRIORITY_DEPTH) set_priority_of(t, max_level_now());
  if (had_edges && (marked || mode == WEFT_PRIORITY_DETECT)) {
    if (record* r = make_record(w, record_submitted, t)) {
      r->marked = marked;
      the_prioritizer.push(r);
    }
  }
  the_prioritizer.run(w, 4, 0);
}

void propagation_report_send(worker& w, task* t) {
  // A replayed task is a send by its node: exact, and no profile needed.
  if (t->graph_role == core::graph_instance) return core::graph_report_send(t);
  record* r = make_record(w, record_send, nullptr);
  if (!r) return;
  r->fn = t->fn;
  r->parent = t->parent;
  if (counted(t)) {
    hold(t);  // running: alive
    r->subject = t;
  }
  the_prioritizer.push(r);
  the_prioritizer.run(w, 4, 0);
}

void propagation_idle(worker& w) {
  // Nothing reported and nothing tracked: no turn to take.
  if (!the_prioritizer.incoming.load(std::memory_order_relaxed) &&
      !the_prioritizer.tracked.load(std::memory_order_relaxed))
    return;
  the_prioritizer.run(w, 16, 64);
}

void propagation_shutdown(worker& w) {
  flush_edges(w);
  the_prioritizer.shutdown(w);
}

}  // namespace weft::sched
