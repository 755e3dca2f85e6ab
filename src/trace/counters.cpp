// Hardware counters per task (WEFT_TRACE_COUNTERS=PAPI_L2_DCM,...), read through PAPI.
//
// PAPI is loaded at run time (dlopen), so weft neither links it nor needs it installed; a machine
// without it, or without the counters asked for (many virtual machines expose none), gets one clear
// message and a trace without counters. Each worker reads its own event set (PAPI's event sets
// belong to the thread that made them) when a task starts and when it ends on the same worker;
// a task that suspends gets no counts (its two readings would come from different threads).
#include <dlfcn.h>
#include <pthread.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "trace/session.hpp"

namespace weft::trace {

constinit bool counters_on = false;

namespace {

constexpr int papi_ok = 0;
constexpr int papi_null = -1;

struct papi_library {
  int (*library_init)(int);
  int (*thread_init)(unsigned long (*)());
  int (*create_eventset)(int*);
  int (*add_named_event)(int, const char*);
  int (*start)(int);
  int (*read)(int, long long*);
  int (*stop)(int, long long*);
  int (*cleanup_eventset)(int);
  int (*destroy_eventset)(int*);
  char* (*strerror)(int);
};

std::mutex setup_lock;
papi_library papi;
bool papi_ready = false;
// Never destroyed: a destructor at exit would run (and map) this file's code in every program.
std::vector<std::string>& names = *new std::vector<std::string>;         // the counters asked for
std::vector<std::uint32_t>& kinds_of = *new std::vector<std::uint32_t>;  // their kind ids (category_counter)
bool reported = false;  // one message per session about a failing counter

unsigned long thread_id() {
  return static_cast<unsigned long>(pthread_self());
}

template <class F>
bool bind(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

}  // namespace

struct counters {
  int eventset = papi_null;
  int depth = 0;
  struct frame {
    std::uint64_t task;
    long long values[max_counters];
  } frames[counter_depth];
};

bool begin_counters(const std::string& spec) {
  std::lock_guard<std::mutex> g(setup_lock);
  counters_on = false;
  names.clear();
  kinds_of.clear();
  reported = false;
  for (std::size_t at = 0; at <= spec.size();) {
    std::size_t comma = spec.find(',', at);
    if (comma == std::string::npos) comma = spec.size();
    if (comma > at) names.push_back(spec.substr(at, comma - at));
    at = comma + 1;
  }
  if (names.empty()) return false;
  if (names.size() > static_cast<std::size_t>(max_counters)) {
    std::fprintf(stderr, "weft: WEFT_TRACE_COUNTERS: at most %d counters; keeping the first %d\n", max_counters,
                 max_counters);
    names.resize(max_counters);
  }
  if (!papi_ready) {
    void* lib = nullptr;
    int version = 0;
    for (auto [soname, major] : {std::pair{"libpapi.so.7.0", 7}, std::pair{"libpapi.so.7", 7},
                                 std::pair{"libpapi.so.6.0", 6}, std::pair{"libpapi.so", 0}}) {
      if ((lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL))) {
        version = major;
        break;
      }
    }
    if (!lib) {
      std::fprintf(
          stderr,
          "weft: WEFT_TRACE_COUNTERS: PAPI is not installed (libpapi.so not found); tracing without counters\n");
      return false;
    }
    bool ok = bind(lib, "PAPI_library_init", papi.library_init) && bind(lib, "PAPI_thread_init", papi.thread_init) &&
              bind(lib, "PAPI_create_eventset", papi.create_eventset) &&
              bind(lib, "PAPI_add_named_event", papi.add_named_event) && bind(lib, "PAPI_start", papi.start) &&
              bind(lib, "PAPI_read", papi.read) && bind(lib, "PAPI_stop", papi.stop) &&
              bind(lib, "PAPI_cleanup_eventset", papi.cleanup_eventset) &&
              bind(lib, "PAPI_destroy_eventset", papi.destroy_eventset) && bind(lib, "PAPI_strerror", papi.strerror);
    if (!ok) {
      std::fprintf(stderr,
                   "weft: WEFT_TRACE_COUNTERS: the PAPI library lacks functions weft uses; tracing without counters\n");
      return false;
    }
    // PAPI_VER_CURRENT: the major and minor version in the top bytes.
    int wanted = version ? (version << 24) : 0x07000000;
    int got = papi.library_init(wanted);
    if (got != wanted) {
      std::fprintf(stderr, "weft: WEFT_TRACE_COUNTERS: PAPI_library_init failed (%s); tracing without counters\n",
                   got > 0 ? "version mismatch" : papi.strerror(got));
      return false;
    }
    if (int s = papi.thread_init(&thread_id); s != papi_ok) {
      std::fprintf(stderr, "weft: WEFT_TRACE_COUNTERS: PAPI_thread_init failed (%s); tracing without counters\n",
                   papi.strerror(s));
      return false;
    }
    papi_ready = true;
  }
  for (const std::string& n : names) kinds_of.push_back(kind_of_name(("counter:" + n).c_str(), category_counter));
  counters_on = true;
  return true;
}

counters* start_counters() {
  auto* c = new counters;
  int s = papi.create_eventset(&c->eventset);
  for (std::size_t i = 0; s == papi_ok && i < names.size(); ++i) {
    s = papi.add_named_event(c->eventset, names[i].c_str());
    if (s != papi_ok) {
      std::lock_guard<std::mutex> g(setup_lock);
      if (!reported)
        std::fprintf(stderr,
                     "weft: WEFT_TRACE_COUNTERS: %s cannot be counted on this machine (%s); tracing without counters\n",
                     names[i].c_str(), papi.strerror(s));
      reported = true;
    }
  }
  if (s == papi_ok) s = papi.start(c->eventset);
  if (s != papi_ok) {
    if (c->eventset != papi_null) {
      papi.cleanup_eventset(c->eventset);
      papi.destroy_eventset(&c->eventset);
    }
    delete c;
    return nullptr;
  }
  return c;
}

void counters_at_start(buffer& b, std::uint64_t task) {
  counters* c = b.hw;
  if (!c || c->depth == counter_depth) return;
  counters::frame& f = c->frames[c->depth++];
  f.task = task;
  papi.read(c->eventset, f.values);
}

void counters_at_end(buffer& b, std::uint64_t task) {
  counters* c = b.hw;
  if (!c || c->depth == 0 || c->frames[c->depth - 1].task != task) return;
  counters::frame& f = c->frames[--c->depth];
  long long now[max_counters];
  if (papi.read(c->eventset, now) != papi_ok) return;
  for (std::size_t i = 0; i < names.size(); ++i)
    record(b, event_type::counter, task, static_cast<std::uint64_t>(now[i] - f.values[i]), kinds_of[i]);
}

void counters_at_suspend(buffer& b, std::uint64_t task) {
  counters* c = b.hw;
  if (c && c->depth && c->frames[c->depth - 1].task == task) --c->depth;  // resumes elsewhere: no counts
}

void stop_counters(buffer& b) {
  counters* c = b.hw;
  b.hw = nullptr;
  if (!c) return;
  long long ignored[max_counters];
  papi.stop(c->eventset, ignored);
  papi.cleanup_eventset(c->eventset);
  papi.destroy_eventset(&c->eventset);
  delete c;
}

}  // namespace weft::trace
