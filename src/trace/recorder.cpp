// Trace buffers, the kind registry and the buffer shared by threads that are not workers.
#include "trace/recorder.hpp"

#include <sys/mman.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "trace/session.hpp"

namespace weft::trace {

constinit bool on = false;
constinit std::uint64_t origin_ns = 0;

namespace {

// Kinds live for the whole process (a later trace in the same process keeps the numbers): entries
// never move, so caches may keep pointers to them.
struct registry {
  std::mutex lock;
  std::deque<kind> kinds;
  std::unordered_map<const void*, std::uint32_t> by_function;
  std::unordered_map<std::string, std::uint32_t> by_name[5];
};

registry& kinds() {
  static registry* r = new registry;  // never destroyed: the exit-time writer may still use it
  return *r;
}

struct function_slot {
  const void* fn;
  std::uint32_t id;
};
struct name_slot {
  const char* text;
  const kind* entry;
};
constexpr int cache_slots = 64;
thread_local function_slot function_cache[cache_slots];
thread_local name_slot name_cache[cache_slots];

int slot_of(const void* p) { return static_cast<int>((reinterpret_cast<std::uintptr_t>(p) >> 4) % cache_slots); }

struct shared_buffer {
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> dropped{0};
  event* events = nullptr;
  std::uint64_t capacity = 0;
};
shared_buffer foreign;

std::size_t buffer_bytes = 0;

}  // namespace

std::uint32_t kind_of_function(const void* fn) {
  function_slot& s = function_cache[slot_of(fn)];
  if (s.fn == fn && s.id) return s.id;
  registry& r = kinds();
  std::lock_guard<std::mutex> g(r.lock);
  auto [it, added] = r.by_function.try_emplace(fn, static_cast<std::uint32_t>(r.kinds.size() + 1));
  if (added) r.kinds.push_back(kind{std::string(), fn, category_task, it->second});
  s = function_slot{fn, it->second};
  return it->second;
}

std::uint32_t kind_of_name(const char* name, category cat) {
  name_slot& s = name_cache[slot_of(name)];
  // The same pointer with the same text: labels are usually literals, but a reused buffer is not.
  if (s.text == name && s.entry && s.entry->cat == cat && s.entry->name == name) return s.entry->id;
  registry& r = kinds();
  std::lock_guard<std::mutex> g(r.lock);
  auto [it, added] = r.by_name[cat].try_emplace(name, static_cast<std::uint32_t>(r.kinds.size() + 1));
  if (added) r.kinds.push_back(kind{name, nullptr, cat, it->second});
  s = name_slot{name, &r.kinds[it->second - 1]};
  return it->second;
}

std::vector<kind> snapshot_kinds() {
  registry& r = kinds();
  std::lock_guard<std::mutex> g(r.lock);
  return std::vector<kind>(r.kinds.begin(), r.kinds.end());
}

void allocate(buffer& b) {
  void* p = mmap(nullptr, buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "weft: WEFT_TRACE: cannot map a %zu-byte trace buffer; this thread's events are dropped\n",
                 buffer_bytes);
    b = buffer{};
    return;
  }
  b.begin = b.cursor = static_cast<event*>(p);
  b.end = b.begin + buffer_bytes / sizeof(event);
  b.dropped = 0;
  b.idle = false;
}

void release(buffer& b) {
  if (b.begin) munmap(b.begin, buffer_bytes);
  b = buffer{};
}

void record_foreign(event_type type, std::uint64_t a, std::uint64_t b, std::uint32_t c, std::uint16_t d) {
  if (!foreign.events) return;
  // relaxed: the slot number only has to be unique; the writer reads after the threads are done.
  std::uint64_t i = foreign.next.fetch_add(1, std::memory_order_relaxed);
  if (i >= foreign.capacity) {
    foreign.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  foreign.events[i] = event{clock_ns() - origin_ns, a, b, c, static_cast<std::uint16_t>(type), d};
}

void begin_session(std::size_t bytes_per_buffer) {
  buffer_bytes = bytes_per_buffer < (std::size_t{64} << 10) ? (std::size_t{64} << 10) : bytes_per_buffer;
  buffer_bytes = (buffer_bytes + 4095) & ~std::size_t{4095};
  buffer shared;
  allocate(shared);
  foreign.events = shared.begin;
  foreign.capacity = shared.begin ? buffer_bytes / sizeof(event) : 0;
  foreign.next.store(0, std::memory_order_relaxed);
  foreign.dropped.store(0, std::memory_order_relaxed);
  origin_ns = clock_ns();
  on = true;
}

buffer foreign_events() {
  buffer b;
  std::uint64_t n = foreign.next.load(std::memory_order_relaxed);
  if (n > foreign.capacity) n = foreign.capacity;
  b.begin = foreign.events;
  b.cursor = foreign.events + n;
  b.end = foreign.events + foreign.capacity;
  b.dropped = foreign.dropped.load(std::memory_order_relaxed);
  return b;
}

void end_session(bool unmap) {
  on = false;
  counters_on = false;
  if (!unmap) return;
  if (foreign.events) munmap(foreign.events, buffer_bytes);
  foreign.events = nullptr;
  foreign.capacity = 0;
}

}  // namespace weft::trace
