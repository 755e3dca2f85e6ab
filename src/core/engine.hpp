// Internal entry points shared by the core (task life cycle, dependences) and the scheduler.
#pragma once

#include <weft/weft.h>

#include "core/runtime.hpp"
#include "core/task.hpp"

namespace weft::core {

// --- task life cycle (core/task_lifecycle.cpp) ------------------------------------------------
task* allocate_task(worker& w, weft_task_fn fn, std::size_t args_size, unsigned flags);
task* allocate_node(worker& w, std::uint8_t flags);  // redirect / mutex-group node
void discard_task(worker& w, task* t);
int submit_task(worker& w, task* t);
void execute_task(worker& w, task* t);
// A node that became ready with no body: completes it on the spot (no queueing).
void complete_node(worker& w, task* t);
void drop_ref(worker& w, task* t);
// Called when t's last predecessor is gone: mutexes, then the ready queues.
void predecessors_done(worker& w, task* t, bool may_run_next);
int taskwait(worker& w);
// Reports the children this worker finished and has not yet told their parent about.
void flush_finished_children(worker& w);
int taskgroup_begin(worker& w);
int taskgroup_end(worker& w);
parent_state& state_of(worker& w, task* t);

int report_error(worker& w, void* payload, void (*release)(void*));
void* take_error(worker& w, void (**release)(void*));
void attach_mutex_group(worker& w, task* t, task* group);

// --- edges (core/dependency_domain.cpp) -------------------------------------------------------
inline constexpr std::int32_t creation_guard = 1 << 30;
void add_edge(worker& w, task* pred, task* succ, int& added);
// Ends the creation guard once all of t's incoming edges exist; true when none is unresolved.
bool finish_linking(task* t, int added);

// --- scheduler (sched/scheduler.cpp) ----------------------------------------------------------
void make_ready(worker& w, task* t, bool may_run_next);
// Runs other work until done() holds. Used by taskwait, taskgroup end, throttling, finalize.
template <class Done>
void run_until(worker& w, Done&& done);
task* find_work(worker& w);
task* find_child_work(worker& w);  // a ready child of w.current, or null
void idle_wait(worker& w, bool (*ready)(void*), void* arg, int& spins);
void throttle(worker& w);

// --- counters ---------------------------------------------------------------------------------
std::int64_t live_tasks();

}  // namespace weft::core

#include "sched/run_until.hpp"
