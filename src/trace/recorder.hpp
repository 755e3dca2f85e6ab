// Trace points: events recorded into per-thread preallocated buffers when WEFT_TRACE is set.
//
// Every layer records through this header; it depends on nothing else in weft. With tracing off a
// trace point costs one load of `trace::on` and a branch that is never taken. With tracing on an
// event is a clock read and a 32-byte store into the calling worker's own buffer: no lock, no
// allocation, no system call. A full buffer drops the event and counts it (reported at the end).
// The file format is docs/trace-format.md.
#pragma once

#include <cstdint>
#include <ctime>

namespace weft::trace {

enum class event_type : std::uint16_t {
  task_create = 1,
  task_submit = 2,
  task_ready = 3,
  task_start = 4,
  task_end = 5,
  task_suspend = 6,
  task_resume = 7,
  edge = 8,
  task_label = 9,
  idle_begin = 10,
  idle_end = 11,
  steal = 12,
  poll = 13,
  interval_begin = 14,
  interval_end = 15,
  mark = 16,
  graph_instance = 17,
  graph_edge = 18,
  counter = 19,
};

// task_create flags (event field d).
inline constexpr std::uint16_t create_undeferred = 1, create_redirect = 2, create_replayed = 4, create_member = 8;

struct event {
  std::uint64_t time;  // ns since the trace started
  std::uint64_t a;
  std::uint64_t b;
  std::uint32_t c;
  std::uint16_t type;
  std::uint16_t d;
};
static_assert(sizeof(event) == 32, "the file format fixes events at 32 bytes");

struct counters;

// One thread's events. Written only by its owner (the worker); read after the owner stopped.
struct buffer {
  event* cursor = nullptr;
  event* end = nullptr;
  event* begin = nullptr;
  std::uint64_t dropped = 0;
  bool idle = false;      // between an idle_begin and the idle_end this worker owes
  bool hw_tried = false;  // hardware counters: set up on this worker's first task (or failed)
  counters* hw = nullptr;
};

// Set once at start when WEFT_TRACE names a file, cleared when the trace has been written. Hidden:
// a trace point reads it with one instruction, not through the global offset table.
extern constinit bool on __attribute__((visibility("hidden")));
extern constinit std::uint64_t origin_ns __attribute__((visibility("hidden")));

inline std::uint64_t clock_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

inline void record(buffer& b, event_type type, std::uint64_t a, std::uint64_t bb = 0, std::uint32_t c = 0,
                   std::uint16_t d = 0) {
  if (b.cursor == b.end) [[unlikely]] {
    ++b.dropped;
    return;
  }
  *b.cursor++ = event{clock_ns() - origin_ns, a, bb, c, static_cast<std::uint16_t>(type), d};
}

// Events of threads that are not workers (a foreign thread fulfilling an event, a user's helper
// thread marking an interval): one shared buffer, slots taken with an atomic increment.
void record_foreign(event_type type, std::uint64_t a, std::uint64_t b, std::uint32_t c, std::uint16_t d);

// Kinds: task functions, labels and the interval/mark kinds of layers and users, numbered from 1.
// A function is named at the end (its symbol); the cache in front keeps interning off the lock.
enum category : std::uint16_t {
  category_task = 0,
  category_comm = 1,
  category_gpu = 2,
  category_user = 3,
  category_counter = 4,  // a hardware counter's name ("counter:PAPI_L2_DCM")
};
std::uint32_t kind_of_function(const void* fn);
std::uint32_t kind_of_name(const char* name, category cat);

// Buffers come from anonymous mappings: pages never written cost no memory.
void allocate(buffer& b);
void release(buffer& b);

// Hardware counters per task (WEFT_TRACE_COUNTERS, through PAPI when it can be loaded; counters.cpp).
inline constexpr int max_counters = 8;
inline constexpr int counter_depth = 64;  // tasks nested on one worker whose counts are kept
extern constinit bool counters_on __attribute__((visibility("hidden")));
counters* start_counters();  // the calling thread's event set; null (after one message) if it fails
void counters_at_start(buffer& b, std::uint64_t task);
void counters_at_end(buffer& b, std::uint64_t task);  // records the task's counts
void counters_at_suspend(buffer& b, std::uint64_t task);
void stop_counters(buffer& b);  // on the thread that started them

}  // namespace weft::trace
