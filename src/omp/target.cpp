// target and teams: the offload constructs go to an offload device when a plugin provides one
// (offload.cpp), else to the host fallback the spec prescribes. Also the `error` directive and
// `scope`.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/dependency_domain.hpp"
#include "omp/gomp_abi.h"
#include "omp/offload.hpp"
#include "omp/omp_internal.hpp"

using namespace weft::omp;
namespace offload = weft::omp::offload;

extern "C" void GOMP_taskwait_depend(void** depend);

namespace {

constexpr unsigned short map_firstprivate = 0x0c;
constexpr unsigned short map_firstprivate_int = 0x0d;

void wait_depends(void** depend) {
  if (depend) GOMP_taskwait_depend(depend);
}

// Runs fn on this thread as the initial task of a fresh device data environment: a new initial
// task (team of one, level 0, the initial ICVs) in a new contention group.
void run_on_host(void (*fn)(void*), std::size_t mapnum, void** hostaddrs, std::size_t* sizes, unsigned short* kinds,
                 int thread_limit) {
  std::vector<void*> addrs(hostaddrs, hostaddrs + mapnum);
  std::vector<void*> copies;
  for (std::size_t i = 0; i < mapnum; ++i) {
    unsigned short kind = kinds ? kinds[i] : 0;
    if ((kind & 0xff) == map_firstprivate && !hostaddrs[i]) {
      addrs[i] = nullptr;  // nothing to copy: e.g. the descriptor of an absent Fortran OPTIONAL
    } else if ((kind & 0xff) == map_firstprivate) {
      std::size_t align = std::size_t{1} << (kind >> 8);
      if (align < sizeof(void*)) align = sizeof(void*);
      void* copy = std::aligned_alloc(align, (sizes[i] + align - 1) / align * align + align);
      if (!copy) fatal("target: out of memory for a firstprivate copy");
      std::memcpy(copy, hostaddrs[i], sizes[i]);
      copies.push_back(copy);
      addrs[i] = copy;
    } else if ((kind & 0xff) == map_firstprivate_int) {
      addrs[i] = hostaddrs[i];  // the value itself travels in the pointer
    }
  }
  run_initial_task(fn, addrs.data(), thread_limit);
  for (void* c : copies) std::free(c);
}

}  // namespace

extern "C" {

// Host teams run one after the other on this thread; each team is a contention group of its own.
GOMP_API void GOMP_teams_reg(void (*fn)(void*), void* data, unsigned num_teams, unsigned thread_limit, unsigned) {
  member& m = current();
  const settings& s = config();
  if (num_teams == 0) num_teams = s.num_teams > 0 ? static_cast<unsigned>(s.num_teams) : 3;
  int saved_limit = m.icv.thread_limit;
  if (thread_limit)
    m.icv.thread_limit = static_cast<int>(thread_limit);
  else if (s.teams_thread_limit)
    m.icv.thread_limit = s.teams_thread_limit;
  int saved_num = m.team_num, saved_teams = m.num_teams;
  contention_group* saved_cg = m.cg;
  m.num_teams = static_cast<int>(num_teams);
  for (unsigned i = 0; i < num_teams; ++i) {
    contention_group cg;
    m.cg = &cg;
    m.team_num = static_cast<int>(i);
    fn(data);
  }
  m.cg = saved_cg;
  m.team_num = saved_num;
  m.num_teams = saved_teams;
  m.icv.thread_limit = saved_limit;
}

// teams inside target: gcc loops while this returns true, one team per call.
GOMP_API bool GOMP_teams4(unsigned lower, unsigned, unsigned thread_limit, bool first) {
  member& m = current();
  if (first) {
    if (thread_limit) m.icv.thread_limit = static_cast<int>(thread_limit);
    m.num_teams = static_cast<int>(lower ? lower : 1);
    m.team_num = 0;
    return true;
  }
  if (++m.team_num >= m.num_teams) {
    m.team_num = 0;
    m.num_teams = 1;
    return false;
  }
  return true;
}

GOMP_API void GOMP_teams(unsigned num_teams, unsigned thread_limit) {
  member& m = current();
  if (thread_limit) m.icv.thread_limit = static_cast<int>(thread_limit);
  m.num_teams = static_cast<int>(num_teams ? num_teams : 1);
  m.team_num = 0;
}

GOMP_API void GOMP_target_ext(int device, void (*fn)(void*), std::size_t mapnum, void** hostaddrs, std::size_t* sizes,
                              unsigned short* kinds, unsigned flags, void** depend, void** args) {
  int d = offload::resolve(device, "target");
  if (d >= 0 && offload::run_target(d, fn, mapnum, hostaddrs, sizes, kinds, flags, depend, args)) return;
  wait_depends(depend);
  // args: a null-terminated list of words: bits 0-6 the device (0: all), bit 7 "the value is the
  // next word", bits 8-15 the id (2: THREAD_LIMIT), bits 16+ the value otherwise.
  int thread_limit = 0;
  for (void** a = args; a && *a; ++a) {
    auto word = reinterpret_cast<std::uintptr_t>(*a);
    std::uintptr_t value = word >> 16;
    if (word & (1u << 7)) value = reinterpret_cast<std::uintptr_t>(*++a);
    if ((word & 0x7f) == 0 && ((word >> 8) & 0xff) == 2 && value)
      thread_limit = value > unlimited_threads ? unlimited_threads : static_cast<int>(value);
  }
  run_on_host(fn, mapnum, hostaddrs, sizes, kinds, thread_limit);
}

// gcc 14 (GOMP_5.1.2): the device address of a `declare target indirect` function. Code that calls
// it on the host runs there, where a function's address is its own (offloaded code uses the
// device's libgomp, not this one).
GOMP_API void* GOMP_target_map_indirect_ptr(void* host_function) {
  return host_function;
}

// The pre-GCC-6 entry points (unsigned char kinds) keep the host fallback.
GOMP_API void GOMP_target(int, void (*fn)(void*), const void*, std::size_t mapnum, void** hostaddrs, std::size_t* sizes,
                          unsigned char*) {
  run_on_host(fn, mapnum, hostaddrs, sizes, nullptr, 0);
}

GOMP_API void GOMP_target_data_ext(int device, std::size_t mapnum, void** hostaddrs, std::size_t* sizes,
                                   unsigned short* kinds) {
  int d = offload::resolve(device, "target data");
  if (d >= 0)
    offload::target_data(d, mapnum, hostaddrs, sizes, kinds);
  else
    offload::push_host_data();
}
GOMP_API void GOMP_target_data(int, const void*, std::size_t, void**, std::size_t*, unsigned char*) {
  offload::push_host_data();
}
GOMP_API void GOMP_target_end_data(void) {
  offload::end_target_data();
}
GOMP_API void GOMP_target_update_ext(int device, std::size_t mapnum, void** hostaddrs, std::size_t* sizes,
                                     unsigned short* kinds, unsigned, void** depend) {
  wait_depends(depend);
  int d = offload::resolve(device, "target update");
  if (d >= 0) offload::update(d, mapnum, hostaddrs, sizes, kinds);
}
GOMP_API void GOMP_target_update(int, const void*, std::size_t, void**, std::size_t*, unsigned char*) {}
// nowait on enter/exit data and update: done at once after the dependences (allowed: nowait
// permits deferral, it does not require it).
GOMP_API void GOMP_target_enter_exit_data(int device, std::size_t mapnum, void** hostaddrs, std::size_t* sizes,
                                          unsigned short* kinds, unsigned flags, void** depend) {
  wait_depends(depend);
  int d = offload::resolve(device, (flags & 2u) ? "target exit data" : "target enter data");
  if (d >= 0) offload::enter_exit(d, mapnum, hostaddrs, sizes, kinds, flags);
}
GOMP_API void GOMP_offload_register_ver(unsigned version, const void* host_table, int target_type,
                                        const void* target_data) {
  offload::register_image(version, host_table, target_type, target_data);
}
GOMP_API void GOMP_offload_unregister_ver(unsigned version, const void* host_table, int target_type,
                                          const void* target_data) {
  offload::unregister_image(version, host_table, target_type, target_data);
}
GOMP_API void GOMP_offload_register(const void* host_table, int target_type, const void* target_data) {
  offload::register_image(0, host_table, target_type, target_data);
}
GOMP_API void GOMP_offload_unregister(const void* host_table, int target_type, const void* target_data) {
  offload::unregister_image(0, host_table, target_type, target_data);
}

// scope with task reductions: a worksharing construct with no iterations; the members meet again
// in GOMP_workshare_task_reduction_unregister.
GOMP_API void GOMP_scope_start(std::uintptr_t* reductions) {
  if (!reductions) return;
  member& m = current();
  loop_spec empty{};
  empty.kind = sched_static;
  claim_with_extras(m, empty, reductions, nullptr);
  leave_workshare(m);
}

// The error directive's messages exactly as libgomp prints them, "libgomp:" included: the text is
// the program's own output, and programs and GCC's test suite match it (error-1.c, error-1.f90).
// Each is "\nlibgomp: <what>\n", <what> being "error directive encountered[: <message>]", after
// "fatal error: " for severity(fatal). A length of -1 marks a message that is not a literal.
static void print_message(const char* severity, const char* msg, std::size_t len) {
  if (!msg) {
    std::fprintf(stderr, "\nlibgomp: %serror directive encountered\n", severity);
    return;
  }
  if (len == static_cast<std::size_t>(-1)) len = std::strlen(msg);
  std::fprintf(stderr, "\nlibgomp: %serror directive encountered: %.*s\n", severity, static_cast<int>(len), msg);
}

GOMP_API void GOMP_warning(const char* msg, std::size_t len) {
  print_message("", msg, len);
}

GOMP_API void GOMP_error(const char* msg, std::size_t len) {
  print_message("fatal error: ", msg, len);
  std::exit(EXIT_FAILURE);
}

}  // extern "C"
