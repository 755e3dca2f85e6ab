#include "sched/priority_propagation.hpp"

#include <weft/weft.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/engine.hpp"

namespace weft::sched {

using core::task;
using core::worker;

std::atomic<int> propagation_mode{WEFT_PRIORITY_AS_GIVEN};

std::uint16_t priority_of(const task* t) {
  return std::atomic_ref<std::uint16_t>(const_cast<task*>(t)->priority).load(std::memory_order_relaxed);
}

void set_priority_of(task* t, std::uint16_t level) {
  // Relaxed: a hint read when t becomes ready; a stale read only queues t at its old level.
  std::atomic_ref<std::uint16_t>(t->priority).store(level, std::memory_order_relaxed);
}

namespace {

void set_priority(task* t, std::uint16_t level) { set_priority_of(t, level); }

// References keep a descriptor from being recycled while a record or the map names it. Only tasks
// that can have edges are counted (drop_ref frees any other at once): those with accesses, nodes.
bool counted(const task* t) { return t->flags & (core::flag_has_accesses | core::flag_redirect); }
void hold(task* t) { t->refs.fetch_add(1, std::memory_order_relaxed); }

enum record_kind : std::uint8_t {
  record_edges,      // subject's predecessors (subject and each predecessor held)
  record_submitted,  // subject's edges are all reported; marked: propagate from it
  record_send,       // a task that posted a send: its profile (subject held when counted, else null)
};

struct record {
  record* next;
  task* subject;
  weft_task_fn fn;  // record_send: the profile's function and parent
  task* parent;
  std::uint8_t kind;
  bool marked;
  std::uint32_t count;
  task* preds[1];  // count of them

  static record* make(std::uint8_t kind, task* subject, std::uint32_t count) {
    std::size_t bytes = sizeof(record) + sizeof(task*) * (count > 1 ? count - 1 : 0);
    auto* r = static_cast<record*>(std::malloc(bytes));
    if (!r) return nullptr;
    r->next = nullptr;
    r->subject = subject;
    r->fn = nullptr;
    r->parent = nullptr;
    r->kind = kind;
    r->marked = false;
    r->count = count;
    return r;
  }
};

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

struct node {
  std::vector<task*> preds;    // held
  std::uint32_t live_index;    // in prioritizer::live
  std::uint32_t checked = 0;   // profile generation it was last matched against (detect)
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
      tracked.store(live_.size(), std::memory_order_relaxed);
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

  // Every task has finished (finalize): releases all references. Waits for an idle holder.
  void shutdown(worker& w) {
    while (busy_.exchange(true, std::memory_order_acquire)) __builtin_ia32_pause();
    drain(w);
    for (auto& [t, n] : nodes_) {
      for (task* p : n.preds) core::drop_ref(w, p);
      core::drop_ref(w, t);
    }
    nodes_.clear();
    live_.clear();
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
      process(w, *ordered);
      std::free(ordered);
      ordered = next;
    }
  }

  void process(worker& w, record& r) {
    switch (r.kind) {
      case record_edges: {
        auto [it, fresh] = nodes_.try_emplace(r.subject);
        if (fresh) {
          it->second.live_index = static_cast<std::uint32_t>(live_.size());
          live_.push_back(r.subject);
        } else {
          core::drop_ref(w, r.subject);  // the node already holds it
        }
        it->second.preds.insert(it->second.preds.end(), r.preds, r.preds + r.count);
        return;
      }
      case record_submitted: {
        auto it = nodes_.find(r.subject);
        if (it == nodes_.end()) return;
        std::uint16_t level = priority_of(r.subject);
        if (!r.marked && propagation() == WEFT_PRIORITY_DETECT && !profiles_.empty()) {
          // Matched at creation: the profile was registered by an earlier send.
          it->second.checked = generation_;
          if (profiles_.count(profile_of(r.subject, it->second))) {
            level = max_level();
            set_priority(r.subject, level);
            r.marked = true;
          }
        }
        if (r.marked) raise_predecessors(r.subject, level);
        return;
      }
      case record_send: {
        std::size_t preds = 0;
        if (r.subject) {
          auto it = nodes_.find(r.subject);
          if (it != nodes_.end()) preds = it->second.preds.size();
          core::drop_ref(w, r.subject);
        }
        if (profiles_.insert(profile{r.fn, r.parent, preds}).second) ++generation_;
        return;
      }
    }
  }

  static profile profile_of(const task* t, const node& n) { return profile{t->fn, t->parent, n.preds.size()}; }

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
      auto it = nodes_.find(t);
      if (it == nodes_.end()) continue;
      for (task* p : it->second.preds) {
        int v = (p->flags & core::flag_redirect) ? lv : path ? 1 : lv - 1;
        if (v <= 0) continue;
        // Relaxed: a task that becomes ready meanwhile is queued at the old level (a hint lost).
        if (p->preds.load(std::memory_order_relaxed) <= 0) continue;
        if (priority_of(p) >= v) continue;
        set_priority(p, static_cast<std::uint16_t>(v));
        stack_.emplace_back(p, static_cast<std::uint16_t>(v));
      }
    }
  }

  // Algorithm 2's matching, over the waiting tasks instead of a walk from the blocked ones (the
  // map holds exactly the tasks that can still gain a priority): up to `budget` nodes per call.
  void match(std::size_t budget) {
    if (profiles_.empty() || live_.empty()) return;
    std::uint16_t top = max_level();
    for (std::size_t k = 0; k < budget && k < live_.size(); ++k) {
      if (scan_cursor_ >= live_.size()) scan_cursor_ = 0;
      task* t = live_[scan_cursor_++];
      node& n = nodes_.find(t)->second;
      if (n.checked == generation_) continue;
      n.checked = generation_;
      if (t->preds.load(std::memory_order_relaxed) <= 0 || priority_of(t) >= top) continue;
      if (!profiles_.count(profile_of(t, n))) continue;
      set_priority(t, top);
      raise_predecessors(t, top);
    }
  }

  // Finished tasks can gain nothing: their references go (a few per call, round robin).
  void forget_finished(worker& w, std::size_t budget) {
    for (std::size_t k = 0; k < budget && !live_.empty(); ++k) {
      if (purge_cursor_ >= live_.size()) purge_cursor_ = 0;
      task* t = live_[purge_cursor_];
      // Acquire, as the domain's own checks: t's completion is not ordered otherwise.
      if (!(t->successors.load(std::memory_order_acquire) & core::successors_closed)) {
        ++purge_cursor_;
        continue;
      }
      auto it = nodes_.find(t);
      for (task* p : it->second.preds) core::drop_ref(w, p);
      std::uint32_t index = it->second.live_index;
      nodes_.erase(it);
      task* moved = live_.back();
      live_.pop_back();
      if (index < live_.size()) {
        live_[index] = moved;
        nodes_.find(moved)->second.live_index = index;
      }
      core::drop_ref(w, t);
    }
  }

  std::atomic<bool> busy_{false};
  std::unordered_map<task*, node> nodes_;
  std::vector<task*> live_;
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
  record* r = record::make(record_edges, succ, static_cast<std::uint32_t>(preds.size()));
  if (!r) {
    // Out of memory: the edges are not recorded (priorities are hints), the references go back.
    for (task* p : preds) core::drop_ref(w, p);
    core::drop_ref(w, succ);
  } else {
    std::copy(preds.begin(), preds.end(), r->preds);
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
  if (mode == WEFT_PRIORITY_NONE || mode == WEFT_PRIORITY_DETECT) set_priority(t, 0);
  if (mode == WEFT_PRIORITY_NONE) return;
  if (!propagation_records(mode)) return;
  bool marked = mode != WEFT_PRIORITY_DETECT && priority_of(t) > 0;
  if (marked && mode == WEFT_PRIORITY_DEPTH) set_priority(t, max_level_now());
  if (had_edges && (marked || mode == WEFT_PRIORITY_DETECT)) {
    if (record* r = record::make(record_submitted, t, 0)) {
      r->marked = marked;
      the_prioritizer.push(r);
    }
  }
  the_prioritizer.run(w, 4, 0);
}

void propagation_report_send(worker& w, task* t) {
  // A replayed task is a send by its node: exact, and no profile needed.
  if (t->graph_role == core::graph_instance) return core::graph_report_send(t);
  record* r = record::make(record_send, nullptr, 0);
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
