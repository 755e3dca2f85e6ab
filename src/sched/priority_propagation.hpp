// Priority propagation toward predecessors: communication-aware scheduling (Quentin et al., the
// MA-2, SA and FA policies and their Algorithms 1 and 2). A task another rank waits for (a send)
// should start early, and so should every unfinished task it depends on.
//
// The engine keeps successor lists only. When a propagating mode is on, producers also report each
// edge they make (with a reference on both ends, so no descriptor named here is recycled) through
// a lock-free list; whichever thread holds the prioritizer role (a try-acquired flag: a producer
// right after a submit, an idle worker) folds the reports into a predecessor map and raises the
// priorities of tasks not yet ready. Nothing here runs, and the hot paths pay one relaxed load, in
// the default mode.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/task.hpp"

namespace weft::core {
struct worker;
}  // namespace weft::core

namespace weft::sched {

// WEFT_PRIORITY_* of weft.h. Process-wide (task-aware MPI may choose it before the runtime starts).
extern std::atomic<int> propagation_mode;
// Set by the first choice of another mode: until then there is nothing to shut down (and the code
// that would is never mapped).
inline std::atomic<bool> propagation_was_chosen{false};
inline int propagation() { return propagation_mode.load(std::memory_order_relaxed); }
// Modes that record edges (path, depth, detect).
inline bool propagation_records(int mode) { return mode >= 2; }

// Reads and writes of a task's priority once it may be visible to the prioritizer. Relaxed: a
// hint read when the task becomes ready; a stale read only queues it at its old level. Inline:
// every ready task reads it.
inline std::uint16_t priority_of(const core::task* t) {
  return std::atomic_ref<std::uint16_t>(const_cast<core::task*>(t)->priority).load(std::memory_order_relaxed);
}
inline void set_priority_of(core::task* t, std::uint16_t level) {
  std::atomic_ref<std::uint16_t>(t->priority).store(level, std::memory_order_relaxed);
}

// Producer side. An edge pred -> succ was just made (both are alive: held by the domain).
void propagation_edge(core::worker& w, core::task* pred, core::task* succ);
// t's accesses are registered and it is not yet ready: applies the mode to its own priority,
// hands over its edges and, when t is marked, propagates.
void propagation_submit(core::worker& w, core::task* t);
// The running task t posted a send (task-aware MPI): later tasks of the same profile are sends.
void propagation_report_send(core::worker& w, core::task* t);
// An idle worker's turn: pending reports, finished tasks forgotten, profile matching (detect).
void propagation_idle(core::worker& w);
// weft_finalize, every task finished: releases every reference held.
void propagation_shutdown(core::worker& w);

}  // namespace weft::sched
