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
// Reports the children this worker finished and has not yet told their parent about, and settles
// its taskgroup account (group_created).
void flush_finished_children(worker& w);
inline constexpr std::int64_t group_credit = 64;
void group_created(worker& w, taskgroup* g);
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

// --- runtime, workers and gangs (sched/scheduler.cpp) -------------------------------------------
// Starts the runtime for one of the doors (weft_init: the native door's defaults).
struct door_options {
  bool pooled = false;    // only the initial thread serves a gang; the others wait in the pool
  int workers = 0;        // pool size when WEFT_NUM_THREADS is unset (0: one per core)
  int max_priority = -1;  // when WEFT_MAX_PRIORITY is unset (-1: weft's default)
  int bind = -1;          // when WEFT_BIND is unset: 0 none, 1 cores (-1: weft's default)
  int wait = -1;          // when WEFT_WAIT_POLICY is unset: 0 passive, 1 active
  std::size_t stack_size = 0;  // worker stacks when WEFT_STACKSIZE is unset (0: the default)
  const char* door = "native door";
};
int start_runtime(const door_options& options);
// Called by weft_finalize before it waits for the tasks (a door's own teardown), when set.
extern void (*stop_hook)();
worker* add_worker(bool start_thread);  // caller holds grow_lock (or is starting the runtime)
worker* recruit();                      // a pooled worker without a job, added when none is free
void dispatch(worker& target, gang_job* job);
worker* adopt_thread();                 // the calling foreign thread becomes a worker with its own gang
// Waits, without running tasks, until ready() holds: spins, yields, then sleeps on w's word (a
// waker sets the condition with seq_cst and calls idle_park::wake on the word).
template <class Ready>
void wait_until(worker& w, Ready&& ready);

// --- implicit tasks (OpenMP team members) -----------------------------------------------------
// An implicit task is a root-like descriptor owned by its team: never queued, never freed. Its
// children count in `group` (taskgroup) so that a team barrier can wait for every descendant.
// The descriptor must be zeroed before its first use; its parent state is kept from use to use
// (the owner deletes it with the descriptor).
void init_implicit(task* t, taskgroup* group);
// Waits for t's children and descendants (those in taskgroups t has open too) and forgets its
// dependence records; t is reusable.
void finish_implicit(worker& w, task* t);
// A task run at once on its creator's stack (an included task) uses a descriptor in the caller's
// frame: begin_frame sets it up, end_frame waits for its children and returns its state.
void begin_frame(task* t, task* parent, taskgroup* group);
void end_frame(worker& w, task* t);
// Waits (running tasks) until every task counted in g has finished.
void wait_group(worker& w, taskgroup* g);

// --- completion held by an event (detach) -----------------------------------------------------
// A task marked with hold_completion completes when its body has returned and release_completion
// has been called, in either order, on any worker.
void hold_completion(task* t);
void release_completion(worker& w, task* t);

// --- counters ---------------------------------------------------------------------------------
std::int64_t live_tasks();

}  // namespace weft::core

#include "sched/run_until.hpp"
