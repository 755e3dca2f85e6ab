// The C entry points of weft.h: argument checks and error codes around the engine.
#include <weft/weft.h>

#include "core/engine.hpp"
#include "fiber/event.hpp"
#include "sched/priority_propagation.hpp"
#include "trace/session.hpp"

using namespace weft::core;

namespace {
thread_local int last_error = WEFT_OK;

int fail(int status) {
  last_error = status;
  return status;
}

// The calling thread's worker, starting the runtime on first use from the main program.
worker* caller(int& status) {
  if (worker* w = current_worker) return w;
  if (instance) {
    status = WEFT_ERR_NOT_A_WORKER;
    return nullptr;
  }
  status = weft_init();
  if (status != WEFT_OK) return nullptr;
  return current_worker;
}

bool valid_type(weft_dep_type t) {
  return t >= WEFT_DEP_IN && t <= WEFT_DEP_INOUTSET;
}

// Handles: see public_handle (engine.hpp).
constexpr int stamp_shift = handle_stamp_shift;
constexpr std::uintptr_t address_mask = (std::uintptr_t{1} << stamp_shift) - 1;
thread_local std::uint32_t next_stamp = 0;

weft_task_t* stamped_handle(task* t) {
  t->domain_refs = (++next_stamp & 0xffff) | 1;  // never 0: an unstamped handle has 0
  return public_handle(t);
}

task* task_of(const weft_task_t* handle) {
  return reinterpret_cast<task*>(reinterpret_cast<std::uintptr_t>(handle) & address_mask);
}

// The checks of the calls made before submit: WEFT_OK, or the status to return.
int check_unsubmitted(const weft_task_t* handle) {
  if (!handle) return WEFT_ERR_INVALID_ARGUMENT;
  task* t = task_of(handle);
  if (t->flags & flag_submitted) return WEFT_ERR_ALREADY_SUBMITTED;
  auto stamp = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(handle) >> stamp_shift);
  if (stamp && t->domain_refs != stamp) [[unlikely]]
    return WEFT_ERR_INVALID_ARGUMENT;  // stale: the descriptor was recycled
  return WEFT_OK;
}
}  // namespace

extern "C" {

int weft_init(void) {
  int status = start_runtime(door_options{});
  return status == WEFT_OK ? WEFT_OK : fail(status);
}

int weft_finalize(void) {
  int status = stop_runtime();
  return status == WEFT_OK ? WEFT_OK : fail(status);
}

weft_task_t* weft_task_create(weft_task_fn fn, const void* args, size_t args_size, unsigned flags) {
  if (!fn || (flags & ~static_cast<unsigned>(WEFT_TASK_UNDEFERRED | WEFT_TASK_TIED))) {
    fail(WEFT_ERR_INVALID_ARGUMENT);
    return nullptr;
  }
  if (args_size > WEFT_MAX_ARGS_SIZE) {
    fail(WEFT_ERR_ARGS_TOO_LARGE);
    return nullptr;
  }
  int status = WEFT_OK;
  worker* w = caller(status);
  if (!w) {
    fail(status);
    return nullptr;
  }
  throttle(*w);
  task* t = allocate_task(*w, fn, args_size, flags);
  if (!t) {
    int refused = worker_after_switch()->refused;  // allocate_task may have waited (and moved)
    fail(refused ? refused : WEFT_ERR_OUT_OF_MEMORY);
    return nullptr;
  }
  if (flags & WEFT_TASK_TIED) t->run_flags = run_tied;
  if (args && args_size) {
    if (args_size <= WEFT_INLINE_ARGS_SIZE && args_size % 8 == 0) {
      // Word-sized blocks (the usual firstprivate packs): inline word copies, no call.
      auto* dst = static_cast<unsigned char*>(t->arguments());
      auto* src = static_cast<const unsigned char*>(args);
      for (size_t i = 0; i < args_size; i += 8) __builtin_memcpy(dst + i, src + i, 8);
    } else {
      __builtin_memcpy(t->arguments(), args, args_size);
    }
  }
  return stamped_handle(t);
}

void* weft_task_args(weft_task_t* handle) {
  if (int status = check_unsubmitted(handle); status == WEFT_ERR_INVALID_ARGUMENT) {
    fail(status);
    return nullptr;
  }
  return task_of(handle)->arguments();  // a running task may read its own block too
}

int weft_task_depend(weft_task_t* handle, weft_dep_type type, const void* addr, size_t) {
  if (!addr || !valid_type(type)) return fail(WEFT_ERR_INVALID_ARGUMENT);
  if (int status = check_unsubmitted(handle)) return fail(status);
  task* t = task_of(handle);
  worker* w = current_worker;
  if (!w) return fail(WEFT_ERR_NOT_A_WORKER);
  int status = add_access(*w, t, addr, type);
  return status == WEFT_OK ? WEFT_OK : fail(status);  // out of memory for the list: t is unchanged
}

int weft_task_set_label(weft_task_t* handle, const char* label) {
  if (!label) return fail(WEFT_ERR_INVALID_ARGUMENT);
  if (int status = check_unsubmitted(handle)) return fail(status);
  task* t = task_of(handle);
  if (weft::trace::on) {
    std::uint32_t kind = weft::trace::kind_of_name(label, weft::trace::category_task);
    if (worker* w = current_worker)
      weft::trace::record(w->trace, weft::trace::event_type::task_label, trace_id(t), 0, kind);
  }
  return WEFT_OK;
}

int weft_trace_enabled(void) {
  return weft::trace::on ? 1 : 0;
}

int weft_trace_set_rank(int rank, int ranks) {
  if (rank < 0 || ranks < 1 || rank >= ranks) return fail(WEFT_ERR_INVALID_ARGUMENT);
  weft::trace::process_rank.store(rank, std::memory_order_relaxed);
  weft::trace::process_ranks.store(ranks, std::memory_order_relaxed);
  return WEFT_OK;
}

uint32_t weft_trace_kind(const char* name, weft_trace_category category) {
  if (!weft::trace::on || !name || category < WEFT_TRACE_COMMUNICATION || category > WEFT_TRACE_USER) return 0;
  return weft::trace::kind_of_name(name, static_cast<weft::trace::category>(category));
}

namespace {
void record_anywhere(weft::trace::event_type type, std::uint64_t a, std::uint64_t b, std::uint32_t c) {
  if (worker* w = current_worker)
    weft::trace::record(w->trace, type, a, b, c);
  else
    weft::trace::record_foreign(type, a, b, c, 0);
}
}  // namespace

void weft_trace_begin(uint32_t kind, uint64_t id, uint64_t value) {
  if (weft::trace::on && kind) record_anywhere(weft::trace::event_type::interval_begin, id, value, kind);
}

void weft_trace_end(uint32_t kind, uint64_t id, uint64_t value) {
  if (weft::trace::on && kind) record_anywhere(weft::trace::event_type::interval_end, id, value, kind);
}

void weft_trace_mark(uint32_t kind, uint64_t value) {
  if (weft::trace::on && kind) record_anywhere(weft::trace::event_type::mark, value, 0, kind);
}

int weft_task_set_priority(weft_task_t* handle, int priority) {
  if (priority < 0) return fail(WEFT_ERR_INVALID_ARGUMENT);
  if (int status = check_unsubmitted(handle)) return fail(status);
  task* t = task_of(handle);
  int max = instance ? instance->cfg.max_priority : 0;
  t->priority = static_cast<std::uint16_t>(priority > max ? max : priority);
  return WEFT_OK;
}

int weft_task_get_priority(const weft_task_t* handle) {
  if (!handle) {
    fail(WEFT_ERR_INVALID_ARGUMENT);
    return -1;
  }
  return weft::sched::priority_of(task_of(handle));
}

int weft_set_priority_propagation(int mode) {
  if (mode < WEFT_PRIORITY_AS_GIVEN || mode > WEFT_PRIORITY_DETECT) return fail(WEFT_ERR_INVALID_ARGUMENT);
  if (mode != WEFT_PRIORITY_AS_GIVEN) weft::sched::propagation_was_chosen.store(true, std::memory_order_relaxed);
  weft::sched::propagation_mode.store(mode, std::memory_order_relaxed);
  return WEFT_OK;
}

int weft_priority_propagation(void) {
  return weft::sched::propagation();
}

int weft_task_report_send(weft_task_t* handle) {
  worker* w = current_worker;
  if (!handle || !w || task_of(handle) != w->current) return fail(WEFT_ERR_INVALID_ARGUMENT);
  if (weft::sched::propagation() == WEFT_PRIORITY_DETECT) weft::sched::propagation_report_send(*w, w->current);
  return WEFT_OK;
}

int weft_task_discard(weft_task_t* handle) {
  if (int status = check_unsubmitted(handle)) return fail(status);
  task* t = task_of(handle);
  worker* w = current_worker;
  if (!w) return fail(WEFT_ERR_NOT_A_WORKER);
  t->domain_refs = 0;  // the stamp's slot goes back to its use
  discard_task(*w, t);
  return WEFT_OK;
}

int weft_task_submit(weft_task_t* handle) {
  if (int status = check_unsubmitted(handle)) return fail(status);
  task* t = task_of(handle);
  worker* w = current_worker;
  if (!w) return fail(WEFT_ERR_NOT_A_WORKER);
  t->domain_refs = 0;  // the stamp's slot goes back to its use
  return submit_task(*w, t);
}

int weft_taskwait(void) {
  int status = WEFT_OK;
  worker* w = caller(status);
  if (!w) return fail(status);
  status = taskwait(*w);
  return status == WEFT_OK ? WEFT_OK : fail(status);
}

int weft_taskgroup_begin(void) {
  int status = WEFT_OK;
  worker* w = caller(status);
  if (!w) return fail(status);
  return taskgroup_begin(*w);
}

int weft_taskgroup_end(void) {
  worker* w = current_worker;
  if (!w) return fail(instance ? WEFT_ERR_NOT_A_WORKER : WEFT_ERR_NO_TASKGROUP);
  int status = taskgroup_end(*w);
  return status == WEFT_OK ? WEFT_OK : fail(status);
}

int weft_graph_begin(void) {
  return weft_graph_begin_with(nullptr);
}

int weft_graph_begin_with(const weft_graph_options_t* options) {
  int status = WEFT_OK;
  worker* w = caller(status);
  if (!w) return fail(status);
  status = graph_begin(*w, options);
  return status == WEFT_OK ? WEFT_OK : fail(status);
}

int weft_graph_iteration(void) {
  worker* w = current_worker;
  if (!w) return fail(instance ? WEFT_ERR_NOT_A_WORKER : WEFT_ERR_GRAPH_STATE);
  int status = graph_iteration(*w);
  return status == WEFT_OK ? WEFT_OK : fail(status);
}

int weft_graph_end(void) {
  worker* w = current_worker;
  if (!w) return fail(instance ? WEFT_ERR_NOT_A_WORKER : WEFT_ERR_GRAPH_STATE);
  int status = graph_end(*w);
  return status == WEFT_OK ? WEFT_OK : fail(status);
}

int weft_graph_set_layer(int mode, const weft_graph_layer_t* layer) {
  int status = graph_set_layer(mode, layer);
  return status == WEFT_OK ? WEFT_OK : fail(status);
}

weft_task_t* weft_task_create_recorded(const weft_recorded_task_t* r) {
  if (!r || (r->access_count > 0 && !r->accesses) || r->access_count < 0) {
    fail(WEFT_ERR_INVALID_ARGUMENT);
    return nullptr;
  }
  weft_task_t* handle = weft_task_create(r->fn, r->args, r->args_size, r->flags);
  if (!handle) return nullptr;
  task* t = task_of(handle);
  t->door_bits = static_cast<std::uint8_t>(r->door);
  int max = instance->cfg.max_priority;
  t->priority = static_cast<std::uint16_t>(r->priority > max ? max : r->priority < 0 ? 0 : r->priority);
  for (int i = 0; i < r->access_count; ++i) {
    const weft_recorded_access_t& a = r->accesses[i];
    if (!a.address || !valid_type(static_cast<weft_dep_type>(a.type))) {
      weft_task_discard(handle);
      fail(WEFT_ERR_INVALID_ARGUMENT);
      return nullptr;
    }
    if (int status = add_access(*current_worker, t, a.address, static_cast<weft_dep_type>(a.type))) {
      weft_task_discard(handle);
      fail(status);
      return nullptr;
    }
  }
  return handle;
}

int weft_report_error(void* payload, void (*release)(void*)) {
  worker* w = current_worker;
  if (!w) return fail(WEFT_ERR_NOT_A_WORKER);
  if (w->current == &w->root) return fail(WEFT_ERR_INVALID_ARGUMENT);  // not inside a task
  return report_error(*w, payload, release);
}

void* weft_take_error(void (**release)(void*)) {
  worker* w = current_worker;
  if (!w) {
    if (release) *release = nullptr;
    return nullptr;
  }
  return take_error(*w, release);
}

int weft_taskyield(void) {
  worker* w = current_worker;
  if (!w) return fail(instance ? WEFT_ERR_NOT_A_WORKER : WEFT_ERR_NOT_INITIALIZED);
  taskyield(*w);
  return WEFT_OK;
}

weft_event_t* weft_event_create(unsigned count) {
  if (count == 0 || count > 0x7fffffffu) {
    fail(WEFT_ERR_INVALID_ARGUMENT);
    return nullptr;
  }
  int status = WEFT_OK;
  worker* w = caller(status);
  if (!w) {
    fail(status);
    return nullptr;
  }
  weft::fiber::event* e = weft::fiber::create_event(*w, static_cast<std::int32_t>(count));
  if (!e) fail(WEFT_ERR_OUT_OF_MEMORY);
  return reinterpret_cast<weft_event_t*>(e);
}

int weft_event_fulfill(weft_event_t* e) {
  if (!e) return fail(WEFT_ERR_INVALID_ARGUMENT);
  if (!instance) return fail(WEFT_ERR_NOT_INITIALIZED);
  int status = weft::fiber::fulfil_event(reinterpret_cast<weft::fiber::event*>(e), false);
  return status == WEFT_OK ? WEFT_OK : fail(status);
}

int weft_event_fail(weft_event_t* e, void* payload, void (*release)(void*)) {
  if (!e) {
    if (release) release(payload);
    return fail(WEFT_ERR_INVALID_ARGUMENT);
  }
  if (!instance) return fail(WEFT_ERR_NOT_INITIALIZED);
  auto* ev = reinterpret_cast<weft::fiber::event*>(e);
  // The bound task is held until the fulfil below: it and its parent are alive here.
  weft::core::task* t = ev->bound.load(std::memory_order_acquire);
  if (!t || weft::core::report_error_of(t, payload, release) != WEFT_OK) {
    if (release) release(payload);
  }
  return weft_event_fulfill(e);
}

int weft_event_fulfill_from_signal(weft_event_t* e) {
  // No fail(): last_error is thread-local storage a signal handler should not touch first.
  if (!e) return WEFT_ERR_INVALID_ARGUMENT;
  if (!instance) return WEFT_ERR_NOT_INITIALIZED;
  return weft::fiber::fulfil_event(reinterpret_cast<weft::fiber::event*>(e), true);
}

int weft_event_test(weft_event_t* e) {
  if (!e) return -fail(WEFT_ERR_INVALID_ARGUMENT);
  // <= 0: an extra fulfilment (refused) takes the count below zero for an instant.
  return reinterpret_cast<weft::fiber::event*>(e)->count.load(std::memory_order_acquire) <= 0;
}

int weft_event_wait(weft_event_t* e) {
  if (!e) return fail(WEFT_ERR_INVALID_ARGUMENT);
  worker* w = current_worker;
  if (!w) return fail(instance ? WEFT_ERR_NOT_A_WORKER : WEFT_ERR_NOT_INITIALIZED);
  return weft::fiber::wait_event(*w, reinterpret_cast<weft::fiber::event*>(e));
}

int weft_event_bind(weft_event_t* e) {
  if (!e) return fail(WEFT_ERR_INVALID_ARGUMENT);
  worker* w = current_worker;
  if (!w) return fail(instance ? WEFT_ERR_NOT_A_WORKER : WEFT_ERR_NOT_INITIALIZED);
  if (w->current->flags & flag_root) return fail(WEFT_ERR_INVALID_ARGUMENT);  // not inside a task
  int status = weft::fiber::bind_event(*w, reinterpret_cast<weft::fiber::event*>(e));
  return status == WEFT_OK ? WEFT_OK : fail(status);
}

int weft_event_destroy(weft_event_t* e) {
  if (!e) return fail(WEFT_ERR_INVALID_ARGUMENT);
  worker* w = current_worker;
  if (!w) return fail(instance ? WEFT_ERR_NOT_A_WORKER : WEFT_ERR_NOT_INITIALIZED);
  return weft::fiber::destroy_event(*w, reinterpret_cast<weft::fiber::event*>(e));
}

int weft_last_error(void) {
  return last_error;
}

const char* weft_strerror(int status) {
  switch (status) {
    case WEFT_OK:
      return "success";
    case WEFT_ERR_INVALID_ARGUMENT:
      return "invalid argument (null pointer, unknown dependence type or flag, value out of range, or a stale task "
             "handle: its task finished and the descriptor serves another)";
    case WEFT_ERR_ALREADY_SUBMITTED:
      return "the task was already submitted (or discarded); its handle is no longer valid";
    case WEFT_ERR_NOT_INITIALIZED:
      return "weft is not initialised (weft_init)";
    case WEFT_ERR_NO_TASKGROUP:
      return "weft_taskgroup_end without a matching weft_taskgroup_begin in this task";
    case WEFT_ERR_NOT_A_WORKER:
      return "called from a thread that is not a weft worker";
    case WEFT_ERR_OUT_OF_MEMORY:
      return "out of memory";
    case WEFT_ERR_TASK_FAILED:
      return "a child task reported an error (weft_take_error returns it)";
    case WEFT_ERR_BUSY:
      return "not allowed here (weft_finalize inside a task or on another thread than weft_init's)";
    case WEFT_ERR_ARGS_TOO_LARGE:
      return "argument block larger than WEFT_MAX_ARGS_SIZE";
    case WEFT_ERR_EVENT_FULFILLED:
      return "the event was already fulfilled (as many times as its count)";
    case WEFT_ERR_EVENT_BOUND:
      return "the event is already bound to a task";
    case WEFT_ERR_STALLED:
      return "tasks still wait on events that nobody fulfilled (listed on stderr)";
    case WEFT_ERR_GRAPH_CHANGED:
      return "an iteration of the persistent graph differs from its recording (details on stderr)";
    case WEFT_ERR_GRAPH_STATE:
      return "graph call out of order (no graph open in this task, one open already, or taskiter recording over)";
    default:
      return "unknown weft status";
  }
}

}  // extern "C"
