// A task's life: allocation, submission (dependences), execution, completion, recycling.
#include <weft/weft.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/dependency_domain.hpp"
#include "core/engine.hpp"
#include "sched/priority_propagation.hpp"

namespace weft::core {

namespace {

void init_descriptor(worker& w, task* t, weft_task_fn fn, std::uint8_t flags) {
  t->fn = fn;
  t->parent = w.current;
  t->group = nullptr;
  t->preds.store(creation_guard, std::memory_order_relaxed);
  t->priority = 0;
  t->flags = flags;
  t->mutexes_held = 0;
  t->door_bits = 0;
  t->run_flags = 0;
  t->graph_role = graph_none;
  t->successors.store(0, std::memory_order_relaxed);
  t->refs.store(1, std::memory_order_relaxed);
  t->domain_refs = 0;
  t->home = static_cast<std::uint16_t>(w.id);
  t->waiter.store(-1, std::memory_order_relaxed);
  t->pending.store(body_running, std::memory_order_relaxed);
  t->children_created = 0;
  t->state.store(nullptr, std::memory_order_relaxed);
  t->more_successors = nullptr;
  t->mutex_group = nullptr;
}

task* group_at(task* t, int i) {
  if (t->flags & flag_many_mutexes) return reinterpret_cast<mutex_list*>(t->mutex_group)->group[i];
  return t->mutex_group;
}
int group_count(task* t) {
  if (!t->mutex_group) return 0;
  if (t->flags & flag_many_mutexes) return reinterpret_cast<mutex_list*>(t->mutex_group)->count;
  return 1;
}

// A group node's pending word is its mutex: the head of a stack of parked tasks, low bit = held.
constexpr std::int64_t mutex_held = 1;

// Acquires t's remaining mutexinoutset groups in address order. On a busy group, t parks there and
// the holder hands it the group when it finishes.
bool acquire_mutexes(task* t) {
  int n = group_count(t);
  while (t->mutexes_held < n) {
    task* g = group_at(t, t->mutexes_held);
    std::int64_t s = g->pending.load(std::memory_order_relaxed);
    for (;;) {
      if (!(s & mutex_held)) {
        // acq_rel: the previous holder's effects are visible to t.
        if (g->pending.compare_exchange_weak(s, s | mutex_held, std::memory_order_acq_rel, std::memory_order_relaxed)) {
          ++t->mutexes_held;
          break;
        }
      } else {
        t->next_waiter = reinterpret_cast<task*>(s & ~mutex_held);
        // Release publishes next_waiter to the holder that will pop t.
        if (g->pending.compare_exchange_weak(s, reinterpret_cast<std::int64_t>(t) | mutex_held,
                                             std::memory_order_acq_rel, std::memory_order_relaxed))
          return false;
      }
    }
  }
  t->children_created = 0;  // the union member used while parked
  return true;
}

void release_mutexes(worker& w, task* t) {
  for (int i = group_count(t) - 1; i >= 0; --i) {
    task* g = group_at(t, i);
    std::int64_t s = g->pending.load(std::memory_order_acquire);
    for (;;) {
      auto* head = reinterpret_cast<task*>(s & ~mutex_held);
      if (!head) {
        if (g->pending.compare_exchange_weak(s, 0, std::memory_order_acq_rel, std::memory_order_acquire)) break;
        continue;
      }
      // Only the holder pops, and a parked task is never pushed twice, so there is no ABA here.
      std::int64_t rest = reinterpret_cast<std::int64_t>(head->next_waiter) | mutex_held;
      if (g->pending.compare_exchange_weak(s, rest, std::memory_order_acq_rel, std::memory_order_acquire)) {
        ++head->mutexes_held;  // the group passes to head without being released
        if (acquire_mutexes(head)) make_ready(w, head, false);
        break;
      }
    }
  }
}

void release_one(worker& w, task* s, bool& first) {
  if (!last_predecessor(s)) return;
  if (s->flags & flag_redirect) {
    w.redirect_worklist.push_back(s);
    return;
  }
  predecessors_done(w, s, first);
  first = false;
}

// Closes t against new edges and releases its successors; the first released runs next here.
void release_successors(worker& w, task* t) {
  std::uint32_t n = t->successors.fetch_or(successors_closed, std::memory_order_acq_rel) & ~successors_closed;
  bool first = true;
  std::uint32_t k = 0;
  for (; k < n && k < static_cast<std::uint32_t>(inline_successors); ++k) release_one(w, t->slot[k], first);
  if (k == n) return;
  // Block pointers are read only for slots the count covers: the producer may be linking a block
  // for a slot whose edge will be pruned, concurrently.
  successor_block* b = t->more_successors;
  for (;;) {
    for (int i = 0; i < block_successors && k < n; ++i, ++k) release_one(w, b->slot[i], first);
    if (k == n) return;
    b = b->next;
  }
}

void free_task(worker& w, task* t) {
  for (successor_block* b = t->more_successors; b;) {
    successor_block* next = b->next;
    w.successor_cache.release(b);
    b = next;
  }
  if (t->flags & flag_large_args) std::free(t->arguments());
  if (t->flags & flag_many_mutexes) std::free(t->mutex_group);
  w.task_cache.release(t);
}

void discard_errors(parent_state* ps, bool warn) {
  // Nearly always empty: a load, and the exchange only when an error is there.
  if (!ps->claimed && !ps->error.load(std::memory_order_relaxed)) return;
  error_box* boxes[2] = {ps->error.exchange(nullptr, std::memory_order_acquire), ps->claimed};
  ps->claimed = nullptr;
  for (error_box* b : boxes) {
    if (!b) continue;
    if (warn) std::fprintf(stderr, "weft: a task reported an error that its parent never waited for\n");
    if (b->release) b->release(b->payload);
    delete b;
  }
}

// Past its bound, a worker hands the older half of its spares to the runtime's shared list (the rare
// path: states migrate with untied tasks, so one worker may end more than it makes).
[[gnu::noinline]] void hand_over_states(worker& w) {
  runtime& rt = *instance;
  const std::size_t half = w.spare_states.size() / 2;
  std::lock_guard<std::mutex> hold(rt.shared_states_lock);
  rt.shared_states.insert(rt.shared_states.end(), w.spare_states.begin(), w.spare_states.begin() + half);
  rt.shared_states_count.store(rt.shared_states.size(), std::memory_order_relaxed);
  w.spare_states.erase(w.spare_states.begin(), w.spare_states.begin() + half);
}

// A state nobody refers to any more, kept for reuse. Never deleted while the runtime runs: a child
// that counted itself out may still read its parent's state (notify_parent_by) after the parent
// went on and ended, so a state must stay a state (a reused one's ticket will not match).
void keep_spare_state(worker& w, parent_state* ps) {
  w.spare_states.push_back(ps);
  if (w.spare_states.size() > worker::spare_states_kept) [[unlikely]]
    hand_over_states(w);
}

// t's body has ended and every child of t has finished: nothing refers to t as a parent any more.
void fully_done(worker& w, task* t) {
#if WEFT_COUNT_CHECKS
  ++w.check_fully_done;
#endif
  if (parent_state* ps = t->state.load(std::memory_order_acquire)) {
    discard_errors(ps, true);
    t->state.store(nullptr, std::memory_order_relaxed);
    keep_spare_state(w, ps);
  }
  if (t->graph_role == graph_instance) return graph_instance_done(w, t);  // its graph owns it
  drop_ref(w, t);
}

void notify_parent_by(worker& w, task* parent, std::int64_t finished) {
  // The children's effects reach the parent's taskwait; the last child sees the parent's. seq_cst,
  // with the state's load below: a parent that counted itself in (in_taskwait) makes its state
  // only when it parks, and re-checks its count after that (see wait_published).
  std::int64_t left = parent->pending.fetch_sub(finished, std::memory_order_seq_cst) - finished;
#if WEFT_COUNT_CHECKS
  if (left < 0) {
    std::fprintf(stderr, "weft: internal error: a parent's child count went to %lld (finished %lld)\n",
                 static_cast<long long>(left), static_cast<long long>(finished));
    std::abort();
  }
#endif
  if (left == in_taskwait) {
    // The parent waits in taskwait: wake it, unless it has no state yet (it has not parked, and
    // sees this count when it re-checks after making one). It may also have seen the count itself
    // and gone on, even finished (descriptors are type-stable, a recycled one has no state or
    // another task's, whose ticket will not match).
    if (parent_state* ps = parent->state.load(std::memory_order_seq_cst))
      wake_published(ps->waiting_context, ps->waiting_ticket);
  } else if (left == 0) {
    fully_done(w, parent);
  }
}

// Children of one parent finishing in a row on this worker are counted locally and reported with
// one atomic operation (flush_finished_children): before this worker runs a task of another
// parent, waits, or idles — so a waiting parent never waits for more than this worker's current
// task, which is then one of its own children.
void notify_parent(worker& w, task* parent) {
  if (parent == w.batch_parent) {
    ++w.batch_finished;
    return;
  }
  flush_parent_batch(w);
  w.batch_parent = parent;
  w.batch_finished = 1;
}

void notify_group_by(taskgroup* g, std::int64_t finished) {
  std::int64_t left = g->pending.fetch_sub(finished, std::memory_order_acq_rel) - finished;
  if (left == in_taskwait) {
    // A stale read here (group already recycled) finds a stale ticket and wakes nothing: groups
    // come from a type-stable pool.
    wake_published(g->waiting_context, g->waiting_ticket);
  }
}

// Settles this worker's account with its current taskgroup and opens one with `next` (or none).
void flush_group(worker& w, taskgroup* next) {
  taskgroup* g = w.batch_group;
  std::int64_t owed = w.group_owed;
  w.batch_group = next;
  w.group_owed = 0;
  if (owed) notify_group_by(g, owed);
}

void drain_redirects(worker& w) {
  while (!w.redirect_worklist.empty()) {
    task* node = w.redirect_worklist.back();
    w.redirect_worklist.pop_back();
    release_successors(w, node);
    drop_ref(w, node);
  }
}

void finish_body(worker& w, task* t) {
  if (parent_state* ps = t->state.load(std::memory_order_acquire)) {
    if (ps->current_group) {
      std::fprintf(stderr, "weft: a task ended with a taskgroup still open; waiting for it\n");
      while (ps->current_group) taskgroup_end(w);
    }
    // No sibling can be created any more: the children's access records are not needed.
    ps->domain.clear(w);
  }
  if (t->mutex_group) release_mutexes(w, t);
  if (t->flags & flag_has_accesses) {
    release_successors(w, t);
    drain_redirects(w);
  } else if (t->graph_role == graph_instance) {
    graph_release(w, t);
  }
  // Counters first: once the group or the parent hears of t, a waiter may read them.
  w.finished.store(w.finished.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (taskgroup* g = t->group) {
    // Batched like the parent's count (see notify_parent and group_created).
    if (g != w.batch_group) flush_group(w, g);
    ++w.group_owed;
  }
  task* parent = t->parent;
  // Own children: fold the count created into pending; the last of them (or this) finishes t.
  bool done;
  if (t->children_created == 0) {
    done = true;
  } else {
    std::int64_t delta = body_running - t->children_created;
    std::int64_t before = t->pending.fetch_sub(delta, std::memory_order_acq_rel);
    done = before == delta;
#if WEFT_COUNT_CHECKS
    if (before < delta) {
      std::fprintf(stderr, "weft: internal error: a task's children finished more often than created (%lld < %lld)\n",
                   static_cast<long long>(before), static_cast<long long>(delta));
      std::abort();
    }
#endif
  }
#if WEFT_COUNT_CHECKS
  ++w.check_bodies;
#endif
  notify_parent(w, parent);
  if (!done) return;
  // A replayed task has no parent state of its own to drop in the common case: straight to its graph.
  if (t->graph_role == graph_instance && !t->state.load(std::memory_order_acquire)) {
#if WEFT_COUNT_CHECKS
    ++w.check_fully_done;
#endif
    return graph_instance_done(w, t);
  }
  fully_done(w, t);
}

void attach_group(worker&, task* t, task* group) {
  if (!t->mutex_group) {
    t->mutex_group = group;
    return;
  }
  int n = group_count(t);
  auto* list = static_cast<mutex_list*>(std::malloc(sizeof(mutex_list) + n * sizeof(task*)));
  if (!list) {
    out_of_memory("a task's list of mutexinoutset groups", sizeof(mutex_list) + n * sizeof(task*));
  }
  list->count = n + 1;
  for (int i = 0; i < n; ++i) list->group[i] = group_at(t, i);
  list->group[n] = group;
  if (t->flags & flag_many_mutexes) std::free(t->mutex_group);
  t->mutex_group = reinterpret_cast<task*>(list);
  t->flags |= flag_many_mutexes;
}

// A task naming one address twice gets the strongest of its kinds (identical kinds stay; mixed act as
// inout), and its mutexinoutset groups are acquired in address order. Only a task with inoutset or
// mutexinoutset accesses needs it (submit_plain tells): the domain takes in, out and inout twice as
// they come (an edge from the task to itself is dropped, so in then out, or out then in, orders it
// like inout), and the duplicate scan of every task cost 88 instructions per task of four
// accesses, a sixth of the creation path. Lists are short and duplicates rare: a quadratic scan
// avoids sorting in the common case.
void merge_accesses(pending_access* a, int& count) {
  int mutexes = 0;
  for (int i = 0; i < count; ++i) mutexes += a[i].type == WEFT_DEP_MUTEXINOUTSET;
  bool duplicates = false;
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < i; ++j) duplicates |= a[i].address == a[j].address;
  if (!duplicates && mutexes < 2) return;
  for (int i = 1; i < count; ++i)
    for (int j = i; j > 0 && a[j].address < a[j - 1].address; --j) std::swap(a[j], a[j - 1]);
  int m = 0;
  for (int i = 0; i < count; ++i) {
    if (m && a[m - 1].address == a[i].address) {
      if (a[m - 1].type != a[i].type) a[m - 1].type = WEFT_DEP_INOUT;
    } else {
      a[m++] = a[i];
    }
  }
  count = m;
}

}  // namespace

// A task joins taskgroup g. The worker takes credits ahead (group_credit at a time, one atomic on
// the group's line) and pays them back, with the members it finished, at its next flush: neither
// creating nor finishing a member of a taskgroup costs an atomic in the common case, though the
// producer and the consumers of a group are on different cores.
void group_credit_more(worker& w, taskgroup* g) {
  if (g != w.batch_group) flush_group(w, g);
  g->pending.fetch_add(group_credit, std::memory_order_relaxed);  // before the task can finish
  w.group_owed = group_credit - 1;
}

void flush_finished_children(worker& w) {
  if (w.group_owed || w.batch_group) flush_group(w, nullptr);
  flush_parent_batch(w);
}

void flush_parent_batch(worker& w) {
  if (!w.batch_finished) return;
  task* parent = w.batch_parent;
  std::int64_t finished = w.batch_finished;
  w.batch_parent = nullptr;
  w.batch_finished = 0;
  notify_parent_by(w, parent, finished);
}

void attach_mutex_group(worker& w, task* t, task* group) {
  attach_group(w, t, group);
}

task* allocate_plain(worker& w, weft_task_fn fn, std::size_t args_size, unsigned flags) {
  task* t = static_cast<task*>(w.task_cache.allocate());
  if (!t) [[unlikely]] {
    w.refused = 0;  // out of memory, not a graph's refusal
    return nullptr;
  }
  init_descriptor(w, t, fn, (flags & WEFT_TASK_UNDEFERRED) ? flag_undeferred : 0);
  if (args_size > WEFT_INLINE_ARGS_SIZE) {
    void* block = std::aligned_alloc(16, (args_size + 15) & ~std::size_t{15});
    if (!block) {
      w.task_cache.release(t);
      w.refused = 0;
      return nullptr;
    }
    std::memcpy(t->args, &block, sizeof block);
    t->flags |= flag_large_args;
  }
  if (trace::on) [[unlikely]]
    trace_created(w, t, (flags & WEFT_TASK_UNDEFERRED) ? trace::create_undeferred : 0);
  return t;
}

void trace_created(worker& w, const task* t, std::uint16_t flags) {
  std::uint32_t kind = t->fn ? trace::kind_of_function(reinterpret_cast<const void*>(t->fn)) : 0;
  trace::record(w.trace, trace::event_type::task_create, trace_id(t), trace_id(t->parent), kind, flags);
}

void trace_task_event(worker& w, trace::event_type type, const task* t, std::uint32_t c) {
  if (type == trace::event_type::task_start) trace_busy_event(w);  // one check on the hot path for both
  trace::record(w.trace, type, trace_id(t), 0, c);
  if (!trace::counters_on) return;
  if (type == trace::event_type::task_start) {
    if (!w.trace.hw_tried) {
      w.trace.hw_tried = true;
      w.trace.hw = trace::start_counters();
    }
    trace::counters_at_start(w.trace, trace_id(t));
  } else if (type == trace::event_type::task_end) {
    trace::counters_at_end(w.trace, trace_id(t));
  }
}

void trace_edge_event(worker& w, const task* pred, const task* succ) {
  trace::record(w.trace, trace::event_type::edge, trace_id(pred), trace_id(succ));
}

void trace_busy_event(worker& w) {
  if (!w.trace.idle) return;
  w.trace.idle = false;
  trace::record(w.trace, trace::event_type::idle_end, 0);
}

task* allocate_node(worker& w, std::uint8_t flags) {
  task* t = static_cast<task*>(w.task_cache.allocate());
  if (!t) [[unlikely]]
    out_of_memory("a dependence node (a task descriptor)", task_size);
  init_descriptor(w, t, nullptr, flags);
  if (flags & flag_mutex_group) t->pending.store(0, std::memory_order_relaxed);
  worker_counters::bump(w.counters.redirect_nodes);
  if (trace::on) [[unlikely]]
    trace_created(w, t, trace::create_redirect);
  return t;
}

void discard_task(worker& w, task* t) {
  if (t->graph_role == graph_instance) return graph_discard(w, t);
  auto& acc = w.accesses;
  acc.erase(std::remove_if(acc.begin(), acc.end(), [t](const pending_access& a) { return a.owner == t; }), acc.end());
  t->flags |= flag_submitted;
  free_task(w, t);
}

void drop_ref(worker& w, task* t) {
  // A task without accesses is never named by an access record (nor is it a node), and only an
  // undeferred submitter takes a second reference: otherwise the caller is the sole owner.
  if (!(t->flags & (flag_has_accesses | flag_redirect | flag_undeferred))) {
    free_task(w, t);
    return;
  }
  // References are only taken by a holder, so the sole holder (1) frees without an atomic write;
  // acquire, and acq_rel otherwise: whoever frees t sees every other holder's last use of it.
  if (t->refs.load(std::memory_order_acquire) == 1 || t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    free_task(w, t);
}

void complete_node(worker& w, task* node) {
  w.redirect_worklist.push_back(node);
  drain_redirects(w);
}

void predecessors_done(worker& w, task* t, bool may_run_next) {
  if (t->mutex_group && !acquire_mutexes(t)) return;  // parked: the holder will make it ready
  make_ready(w, t, may_run_next);
}

int add_access_rare(worker& w, task* t, const void* address, weft_dep_type type) {
  if (t->graph_role == graph_instance) graph_access_differs(w, t);  // listed from now on
  auto& list = w.accesses;
  if (list.size() == list.capacity()) {
    try {
      recoverable_allocation refusable;
      list.reserve(2 * list.capacity() + 16);
    } catch (const std::bad_alloc&) {
      return WEFT_ERR_OUT_OF_MEMORY;  // the task is as it was: the caller may discard it
    }
  }
  list.push_back({t, address, type});
  return WEFT_OK;
}

namespace {
// What every submission does first: t joins its taskgroup and is counted as its parent's child.
inline void begin_submit(worker& w, task* t) {
  task* parent = t->parent;
  t->flags |= flag_submitted;
  // Taskgroup membership: the innermost group open in the creating task, else the creator's own.
  parent_state* ps = parent->state.load(std::memory_order_acquire);
  taskgroup* g = (ps && ps->current_group) ? ps->current_group : parent->group;
  t->group = g;
  if (g) group_created(w, g);
  ++parent->children_created;
  w.submitted.store(w.submitted.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// The rest of a submission: link(domain) orders t after its predecessors, for its `count`
// accesses (count may be 0 for an undeferred task), and returns the edges it made.
template <class Link>
int submit_linked(worker& w, task* t, int count, Link&& link) {
  task* parent = t->parent;
  bool undeferred = t->flags & flag_undeferred;
  if (undeferred) {
    // An extra reference keeps t alive until this thread has run it. Set before any predecessor
    // can see t, like the parent's state, where make_ready finds the context to wake.
    t->refs.store(t->refs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    state_of(w, parent);
  }

  int added = 0;
  if (count) {
    t->flags |= flag_has_accesses;
    added = link(state_of(w, parent).domain);
  }
  trace_task(w, trace::event_type::task_submit, t, static_cast<std::uint32_t>(count));
  if (sched::propagation() != WEFT_PRIORITY_AS_GIVEN) [[unlikely]]
    sched::propagation_submit(w, t);

  if (undeferred) {
    // make_ready hands the task back to this thread instead of queueing it (see scheduler); the
    // submitter's context parks meanwhile.
    if (finish_linking(t, added)) predecessors_done(w, t, false);
    parent_state& waits = *parent->state.load(std::memory_order_acquire);
    worker& now = wait_published(
        w,
        [&waits](worker&) {
          return park_slot{waits.waiting_context, waits.waiting_ticket, nullptr};
        },
        [t] { return t->waiter.load(std::memory_order_seq_cst) == undeferred_ready; }, [](worker&) { return false; },
        fiber::wait_kind::predecessors, t);
    t->waiter.store(-1, std::memory_order_relaxed);
    execute_task(now, t);
    drop_ref(*worker_after_switch(), t);
    return WEFT_OK;
  }
  if (finish_linking(t, added)) ready_at_birth(w, t);
  return WEFT_OK;
}
}  // namespace

int submit_plain(worker& w, task* t) {
  begin_submit(w, t);
  bool undeferred = t->flags & flag_undeferred;
  if (w.accesses.empty() && !undeferred) [[likely]] {
    // No dependence (fork-join): no predecessor can see t, it is ready now.
    t->preds.store(0, std::memory_order_relaxed);
    trace_task(w, trace::event_type::task_submit, t, 0);
    if (sched::propagation() != WEFT_PRIORITY_AS_GIVEN) [[unlikely]]
      sched::propagation_submit(w, t);
    ready_at_birth(w, t);
    return WEFT_OK;
  }
  // Gather t's accesses. Normally every access pending on this worker is t's (declared just
  // before submit) and they are used in place; interleaved construction of several tasks takes
  // the general path.
  auto& acc = w.accesses;
  pending_access* a = acc.data();
  int count = static_cast<int>(acc.size());
  bool all_mine = true, sets = false;
  for (int i = 0; i < count; ++i) {
    all_mine &= a[i].owner == t;
    sets |= a[i].type >= WEFT_DEP_MUTEXINOUTSET;  // mutexinoutset or inoutset
  }
  static_assert(WEFT_DEP_INOUTSET > WEFT_DEP_MUTEXINOUTSET && WEFT_DEP_MUTEXINOUTSET > WEFT_DEP_INOUT &&
                WEFT_DEP_INOUT > WEFT_DEP_OUT && WEFT_DEP_OUT > WEFT_DEP_IN);
  std::vector<pending_access> mine;  // interleaved construction only
  if (!all_mine) [[unlikely]] {
    std::size_t keep = 0;
    for (auto& x : acc) {
      if (x.owner == t)
        mine.push_back(x);
      else
        acc[keep++] = x;
    }
    acc.resize(keep);
    a = mine.data();
    count = static_cast<int>(mine.size());
  } else {
    // Emptied before linking (the records stay readable in place: linking declares no access),
    // so that an undeferred t, run below, starts its own children's declarations afresh.
    acc.clear();
  }
  // sets: an inoutset or mutexinoutset among them, merged first when several.
  if (sets && count > 1) merge_accesses(a, count);
  return submit_linked(w, t, count, [&](dependency_domain& d) { return d.add(w, t, a, count); });
}

int submit_depend_array(worker& w, task* t, const void* const* addresses, int writes, int count,
                        void (*refuse_null)()) {
  begin_submit(w, t);
  return submit_linked(w, t, count,
                       [&](dependency_domain& d) { return d.add_array(w, t, addresses, writes, count, refuse_null); });
}

void ready_at_birth(worker& w, task* t) {
  runtime& rt = *instance;
  // While this producer already has max_ready tasks queued, or in a gang of one (no thief to
  // feed), the task goes to the worker's local buffer (no fences; the producer yields to run it
  // when it is full).
  if (w.local_count < rt.local_limit && sched::priority_of(t) == 0 && !t->mutex_group &&
      rt.cfg.schedule == schedule_policy::depth &&
      (w.crew->members.size() == 1 || w.queue->owner_holds_at_least(rt.max_ready))) {
    trace_task(w, trace::event_type::task_ready, t);
    w.push_local(t);
  } else {
    predecessors_done(w, t, false);
  }
}

void execute_task(worker& w, task* t) {
  // A batch of finished siblings is reported before running a task of another parent, which may
  // take long: the parent waiting for them must not wait for it.
  if (w.batch_finished && t->parent != w.batch_parent) flush_parent_batch(w);
  if (w.group_owed && t->group != w.batch_group) flush_group(w, nullptr);
  task* saved = w.current;
  w.current = t;
  w.set_nested(w.nested() + 1);
  fiber::context* ctx = w.context;
  bool tied = t->run_flags & run_tied;
  if (tied) ++ctx->tied_frames;  // the stack it runs on may not move to another worker now
  trace_task(w, trace::event_type::task_start, t);
  if (auto begin = door_task_begin.load(std::memory_order_relaxed)) [[unlikely]]
    begin(w, t);
  t->fn(t->arguments());
  // If t blocked, it resumed on the worker that picked its context up (the same one when tied).
  worker& now = *worker_after_switch();
  trace_task(now, trace::event_type::task_end, t);
  if (t->run_flags & run_door_end) [[unlikely]]
    door_task_end(now, t);
  if (tied) --ctx->tied_frames;
  now.set_nested(now.nested() - 1);
  now.current = saved;
  // A held task completes with the last of its body's end and its events' release.
  if (t->run_flags & run_held) [[unlikely]] {
    // Run inline, its successors' counts are not kept: they must be before anyone can end it.
    if (now.inline_graph) graph_leave_inline(now, false);
    if (t->holds.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  }
  finish_body(now, t);
}

void hold_completion(task* t) {
  // Called by the task's creator before submit, or by the task itself while its body runs: no
  // release can race with the first hold.
  if (!(t->run_flags & run_held)) {
    t->run_flags |= run_held;
    t->holds.store(2, std::memory_order_relaxed);
  } else {
    t->holds.fetch_add(1, std::memory_order_relaxed);
  }
}

void release_completion(worker& w, task* t, gang* crew) {
  // acq_rel: whichever side completes t sees the other's effects.
  if (t->holds.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (!crew || crew == w.crew) return finish_body(w, t);
  // Made ready here, its successors would run as tasks of the team this worker serves (its
  // level, its queues), or stay in a queue nobody serves once that team has ended.
  gang* outer = w.completing_for;
  w.completing_for = crew;
  finish_body(w, t);
  w.completing_for = outer;
}

void init_implicit(task* t, taskgroup* group) {
  parent_state* kept = t->state.load(std::memory_order_acquire);  // reused region after region
  std::memset(static_cast<void*>(t), 0, sizeof *t);
  t->state.store(kept, std::memory_order_relaxed);
  t->flags = flag_root | flag_submitted;
  t->refs.store(1, std::memory_order_relaxed);
  t->waiter.store(-1, std::memory_order_relaxed);
  t->pending.store(body_running, std::memory_order_relaxed);
  t->group = group;
}

void finish_implicit(worker& w, task* t) {
  taskwait(w);  // w.current == t: its children have all reported
  if (parent_state* ps = t->state.load(std::memory_order_acquire)) {
    // Taskgroups still open (an OpenMP worksharing construct's implicit one spans a barrier)
    // count their tasks apart from t's group: wait for them too, leaving them open.
    for (taskgroup* g = ps->current_group; g; g = g->outer) wait_group(w, g);
    ps->domain.clear(w);
    discard_errors(ps, true);
  }
  wait_group(w, t->group);
}

void close_frame(worker& w0, task* t) {
  if (t->children_created) taskwait(w0);  // w.current == t; its children name it as their parent
  worker& w = *worker_after_switch();     // the wait may have moved an untied context
  if (parent_state* ps = t->state.load(std::memory_order_acquire)) {
    ps->domain.clear(w);
    discard_errors(ps, true);
    t->state.store(nullptr, std::memory_order_relaxed);
    keep_spare_state(w, ps);
  }
}

void wait_group(worker& w, taskgroup* g) {
  flush_finished_children(w);
  if (g->pending.fetch_add(in_taskwait, std::memory_order_acq_rel) != 0) {
    // Members of g may run here (they are what the wait needs); anything else runs elsewhere.
    worker& now = wait_published(
        w, [g](worker&) { return park_slot{g->waiting_context, g->waiting_ticket, nullptr}; },
        [g] { return g->pending.load(std::memory_order_seq_cst) == in_taskwait; },
        [g](worker& v) {
          if (!stack_has_room(v)) return false;
          task* t = find_group_work(v, g);
          if (t) execute_task(v, t);
          return t != nullptr;
        },
        fiber::wait_kind::taskgroup, g);
    (void)now;
  }
  g->pending.store(0, std::memory_order_relaxed);  // nothing counted in g is left to race with
}

// A worker without spares takes a batch from the shared list before making new states.
[[gnu::noinline]] void take_shared_states(worker& w) {
  runtime& rt = *instance;
  std::lock_guard<std::mutex> hold(rt.shared_states_lock);
  const std::size_t n = std::min<std::size_t>(rt.shared_states.size(), worker::spare_states_kept / 4);
  w.spare_states.insert(w.spare_states.end(), rt.shared_states.end() - static_cast<std::ptrdiff_t>(n),
                        rt.shared_states.end());
  rt.shared_states.resize(rt.shared_states.size() - n);
  rt.shared_states_count.store(rt.shared_states.size(), std::memory_order_relaxed);
}

parent_state& make_state(worker& w, task* t) {
  parent_state* ps = nullptr;
  parent_state* fresh;
  if (w.spare_states.empty() && instance->shared_states_count.load(std::memory_order_relaxed)) [[unlikely]]
    take_shared_states(w);
  if (!w.spare_states.empty()) {
    fresh = w.spare_states.back();
    w.spare_states.pop_back();
  } else {
    fresh = new parent_state;
  }
  // A child reporting an error may install a state concurrently (report_error): race for it.
  // seq_cst: a taskwait's parking makes its state here (see notify_parent_by).
  if (t->state.compare_exchange_strong(ps, fresh, std::memory_order_seq_cst, std::memory_order_acquire)) return *fresh;
  keep_spare_state(w, fresh);
  return *ps;
}

int taskwait(worker& w) {
  flush_parent_batch(w);  // the wait needs the children's count; a group account may stay open
  task* c = w.current;
  worker* now = &w;
  if (c->children_created != 0) {
    std::int64_t delta = body_running - c->children_created - in_taskwait;
    // seq_cst: children that already finished are visible, and this counting-in comes before the
    // parent state a parking wait makes (the last child looks there, see notify_parent_by).
    if (c->pending.fetch_sub(delta, std::memory_order_seq_cst) - delta != in_taskwait) {
      // Its own children run here while the stack has room: the wait needs them anyway, so
      // nothing unrelated piles up above the waiting task. Otherwise the context parks; only then
      // does it need a parent state, where the last child finds it (a one-worker recursion never
      // makes one: 40 instructions per waiting task).
      now = &wait_published(
          w, [c](worker& v) { parent_state& ps = state_of(v, c); return park_slot{ps.waiting_context, ps.waiting_ticket, nullptr}; },
          [c] { return c->pending.load(std::memory_order_seq_cst) == in_taskwait; },
          [](worker& v) {
            if (!stack_has_room(v)) return false;
            task* t = find_child_work(v);
            if (t) execute_task(v, t);
            return t != nullptr;
          },
          fiber::wait_kind::children, c);
    }
    c->pending.store(body_running, std::memory_order_relaxed);  // no child left to race with
    c->children_created = 0;
    // Every sibling has finished: their access records can only create pruned edges now.
    if (parent_state* ps = c->state.load(std::memory_order_acquire)) ps->domain.clear(*now);
  }
  parent_state* ps = c->state.load(std::memory_order_acquire);
  // A load first: an error a child installs after it is this wait's or the next one's either way.
  if (ps && ps->error.load(std::memory_order_relaxed)) {
    if (error_box* b = ps->error.exchange(nullptr, std::memory_order_acquire)) {
      discard_errors(ps, false);  // an unclaimed older error is replaced
      ps->claimed = b;
      return WEFT_ERR_TASK_FAILED;
    }
  }
  return WEFT_OK;
}

int taskgroup_begin(worker& w) {
  parent_state& ps = state_of(w, w.current);
  auto* g = static_cast<taskgroup*>(w.group_cache.allocate());
  if (!g) [[unlikely]]
    out_of_memory("a taskgroup", sizeof(taskgroup));
  g->pending.store(0, std::memory_order_relaxed);
  g->outer = ps.current_group;
  g->waiting_context.store(nullptr, std::memory_order_relaxed);
  g->cancelled.store(false, std::memory_order_relaxed);
  g->hidden = false;
  g->owner = w.current;
  g->reductions = nullptr;
  ps.current_group = g;
  return WEFT_OK;
}

int taskgroup_end(worker& w) {
  parent_state* ps = w.current->state.load(std::memory_order_acquire);
  if (!ps || !ps->current_group) return WEFT_ERR_NO_TASKGROUP;
  taskgroup* g = ps->current_group;
  wait_group(w, g);
  ps->current_group = g->outer;
  worker_after_switch()->group_cache.release(g);  // the wait may have moved an untied context
  if (error_box* b = ps->error.exchange(nullptr, std::memory_order_acquire)) {
    discard_errors(ps, false);
    ps->claimed = b;
    return WEFT_ERR_TASK_FAILED;
  }
  return WEFT_OK;
}

int report_error(worker& w, void* payload, void (*release)(void*)) {
  return report_error_of(w.current, payload, release);
}

int report_error_of(task* t, void* payload, void (*release)(void*)) {
  task* parent = t->parent;
  if (!parent) return WEFT_ERR_NOT_A_WORKER;  // the implicit task has no parent to tell
  parent_state* ps = parent->state.load(std::memory_order_acquire);
  if (!ps) {
    // The parent runs elsewhere: create its state here and race to install it.
    auto* fresh = new parent_state;
    if (parent->state.compare_exchange_strong(ps, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) {
      ps = fresh;
    } else {
      delete fresh;
    }
  }
  auto* box = new error_box{payload, release};
  error_box* expected = nullptr;
  if (!ps->error.compare_exchange_strong(expected, box, std::memory_order_acq_rel, std::memory_order_relaxed)) {
    if (release) release(payload);
    delete box;
  }
  return WEFT_OK;
}

void* take_error(worker& w, void (**release)(void*)) {
  parent_state* ps = w.current->state.load(std::memory_order_acquire);
  if (release) *release = nullptr;
  if (!ps || !ps->claimed) return nullptr;
  error_box* b = ps->claimed;
  ps->claimed = nullptr;
  void* p = b->payload;
  if (release) *release = b->release;
  delete b;
  return p;
}

}  // namespace weft::core
