// weft — C++ API, header-only over the C ABI of weft.h.
//
//   weft::spawn([&] { fill(a); }, weft::out(a));
//   weft::spawn([&] { scale(a, b); }, weft::in(a), weft::out(b), weft::priority(3));
//   weft::taskwait();   // rethrows the first exception a child threw
#ifndef WEFT_WEFT_HPP
#define WEFT_WEFT_HPP

#include <weft/weft.h>

#include <cstddef>
#include <exception>
#include <iterator>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace weft {

// Every failing call of the C++ API throws this; status() is the weft_status code.
class error : public std::runtime_error {
 public:
  error(int status, const char* call)
      : std::runtime_error(std::string(call) + ": " + weft_strerror(status)), status_(status) {}
  int status() const noexcept { return status_; }

 private:
  int status_;
};

namespace detail {
inline void check(int status, const char* call) {
  if (status != WEFT_OK) throw error(status, call);
}
// A child's exception travels to the parent's taskwait as a heap exception_ptr.
inline void release_exception(void* payload) { delete static_cast<std::exception_ptr*>(payload); }
// Turns WEFT_ERR_TASK_FAILED into the child's exception, rethrown in the parent. A payload from
// a C child (another release function) is freed and reported as weft::error.
inline void rethrow_child_failure(int status, const char* call) {
  if (status == WEFT_ERR_TASK_FAILED) {
    void (*release)(void*) = nullptr;
    if (void* payload = weft_take_error(&release)) {
      if (release == &release_exception) {
        std::exception_ptr e = std::move(*static_cast<std::exception_ptr*>(payload));
        release_exception(payload);
        std::rethrow_exception(e);
      }
      if (release) release(payload);
    }
  }
  check(status, call);
}
}  // namespace detail

// An access: address, length, type. Built by in/out/inout/mutexinoutset/inoutset.
struct access {
  weft_dep_type type;
  const void* address;
  std::size_t length;
};

#define WEFT_DEFINE_ACCESS(name, kind)                                                     \
  template <class T>                                                                       \
  inline access name(const T& object) noexcept {                                           \
    return {kind, static_cast<const void*>(std::addressof(object)), sizeof(T)};            \
  }                                                                                        \
  inline access name(const void* address, std::size_t length) noexcept {                   \
    return {kind, address, length};                                                        \
  }
WEFT_DEFINE_ACCESS(in, WEFT_DEP_IN)
WEFT_DEFINE_ACCESS(out, WEFT_DEP_OUT)
WEFT_DEFINE_ACCESS(inout, WEFT_DEP_INOUT)
WEFT_DEFINE_ACCESS(mutexinoutset, WEFT_DEP_MUTEXINOUTSET)
WEFT_DEFINE_ACCESS(inoutset, WEFT_DEP_INOUTSET)
#undef WEFT_DEFINE_ACCESS

// Accesses known only at run time (the chunks a block of sparse rows reaches): any contiguous
// container of weft::access (std::vector, std::array, a C array), read when the task is spawned.
struct accesses {
  template <class Container>
  explicit accesses(const Container& list) noexcept : data(std::data(list)), count(std::size(list)) {}
  const access* data;
  std::size_t count;
};

struct priority {
  explicit priority(int value) noexcept : value(value) {}
  int value;
};

// Names the task's kind in a trace (WEFT_TRACE); by default a task is named by its closure's type.
struct label {
  explicit label(const char* name) noexcept : name(name) {}
  const char* name;
};

// The task resumes on the worker it started on after it waited (it is untied otherwise).
struct tied_t {};
inline constexpr tied_t tied{};

namespace detail {
inline void apply(weft_task_t*, const tied_t&) {}
inline void apply(weft_task_t* task, const access& a) {
  check(weft_task_depend(task, a.type, a.address, a.length), "weft::spawn (access)");
}
inline void apply(weft_task_t* task, const accesses& list) {
  for (std::size_t i = 0; i < list.count; ++i) apply(task, list.data[i]);
}
inline void apply(weft_task_t* task, const priority& p) {
  check(weft_task_set_priority(task, p.value), "weft::spawn (priority)");
}
inline void apply(weft_task_t* task, const label& l) { check(weft_task_set_label(task, l.name), "weft::spawn (label)"); }

template <class Closure>
void trampoline(void* args) {
  Closure* closure = static_cast<Closure*>(args);
  try {
    (*closure)();
  } catch (...) {
    weft_report_error(new std::exception_ptr(std::current_exception()), &release_exception);
  }
  closure->~Closure();
}
}  // namespace detail

// Creates and submits a task running a copy of f. Options: accesses (one each, or weft::accesses),
// a priority, a label, weft::tied.
template <class F, class... Options>
void spawn(F&& f, Options&&... options) {
  using Closure = std::decay_t<F>;
  static_assert(alignof(Closure) <= 16, "weft::spawn: closures aligned over 16 bytes are not supported");
  constexpr unsigned flags = (std::is_same_v<std::decay_t<Options>, tied_t> || ...) ? unsigned{WEFT_TASK_TIED} : 0u;
  weft_task_t* task = weft_task_create(&detail::trampoline<Closure>, nullptr, sizeof(Closure), flags);
  if (!task) throw error(weft_last_error(), "weft::spawn");
  Closure* closure;
  try {
    closure = new (weft_task_args(task)) Closure(std::forward<F>(f));
  } catch (...) {
    weft_task_discard(task);  // the copy threw: nothing to destroy, the task never runs
    throw;
  }
  try {
    (detail::apply(task, options), ...);
  } catch (...) {
    closure->~Closure();
    weft_task_discard(task);
    throw;
  }
  detail::check(weft_task_submit(task), "weft::spawn");
}

// Waits for the children of the calling task; rethrows the first exception one of them threw.
inline void taskwait() { detail::rethrow_child_failure(weft_taskwait(), "weft::taskwait"); }

// A scheduling point: other ready tasks may run before the caller goes on.
inline void taskyield() { detail::check(weft_taskyield(), "weft::taskyield"); }

// An event: tasks wait on it (their worker runs other tasks meanwhile) or bind it to their
// completion. Fulfilled `count` times, from any thread. The object may go out of scope before
// the event is fulfilled: the event itself lives until then.
class event {
 public:
  explicit event(unsigned count = 1) : handle_(weft_event_create(count)) {
    if (!handle_) throw error(weft_last_error(), "weft::event");
  }
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  ~event() { weft_event_destroy(handle_); }
  void fulfill() { detail::check(weft_event_fulfill(handle_), "weft::event::fulfill"); }
  void wait() { detail::check(weft_event_wait(handle_), "weft::event::wait"); }
  // The calling task completes (for its successors and waiters) only once the event is fulfilled.
  void bind() { detail::check(weft_event_bind(handle_), "weft::event::bind"); }
  bool fulfilled() const { return weft_event_test(handle_) == 1; }
  weft_event_t* handle() const noexcept { return handle_; }

 private:
  weft_event_t* handle_;
};

inline int num_workers() { return weft_num_workers(); }
inline int worker_id() { return weft_worker_id(); }

// RAII taskgroup: waits for every descendant created in its scope. Call wait() to get a child's
// exception; the destructor waits too but does not throw while the stack is unwinding.
class taskgroup {
 public:
  taskgroup() : unwinding_at_start_(std::uncaught_exceptions()) {
    detail::check(weft_taskgroup_begin(), "weft::taskgroup");
  }
  taskgroup(const taskgroup&) = delete;
  taskgroup& operator=(const taskgroup&) = delete;
  void wait() {
    if (open_) {
      open_ = false;
      detail::rethrow_child_failure(weft_taskgroup_end(), "weft::taskgroup::wait");
    }
  }
  ~taskgroup() noexcept(false) {
    if (!open_) return;
    open_ = false;
    int status = weft_taskgroup_end();
    // Throw only if this scope is not being left by an exception (a group built inside a catch
    // block or a destructor still reports its children).
    if (std::uncaught_exceptions() == unwinding_at_start_) detail::rethrow_child_failure(status, "weft::taskgroup");
    if (status == WEFT_ERR_TASK_FAILED) {
      void (*release)(void*) = nullptr;
      void* payload = weft_take_error(&release);
      if (payload && release) release(payload);
    }
  }

 private:
  int unwinding_at_start_;
  bool open_ = true;
};

// A persistent task graph opened on the calling task (see weft_graph_begin in weft.h):
//   weft::graph g;
//   for (int it = 0; it < steps; ++it) g.iteration([&] { ...weft::spawn(...)... });
//   g.end();  // or let the destructor wait
// Taskiter mode: weft::graph g(options with mode WEFT_GRAPH_TASKITER); g.iteration(body) for the
// recorded iterations, then g.end() runs the rest.
class graph {
 public:
  graph() { detail::check(weft_graph_begin_with(nullptr), "weft::graph"); }
  explicit graph(const weft_graph_options_t& options) { detail::check(weft_graph_begin_with(&options), "weft::graph"); }
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;
  template <class F>
  void iteration(F&& body) {
    detail::check(weft_graph_iteration(), "weft::graph::iteration");
    body();
  }
  void end() {
    if (open_) {
      open_ = false;
      detail::check(weft_graph_end(), "weft::graph::end");
    }
  }
  ~graph() noexcept(false) {
    if (!open_) return;
    open_ = false;
    int status = weft_graph_end();
    if (std::uncaught_exceptions() == 0) detail::check(status, "weft::graph");
  }

 private:
  bool open_ = true;
};

}  // namespace weft

#endif  // WEFT_WEFT_HPP
