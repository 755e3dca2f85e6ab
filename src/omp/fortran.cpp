// The OpenMP API as gfortran calls it (GCC 12's set, and GCC 13's omp_in_explicit_task): `use omp_lib` (or omp_lib.h)
// compiles a call of omp_get_thread_num() to a reference to omp_get_thread_num_, with every argument passed by
// reference, LOGICAL as a 4-byte integer, and each CHARACTER argument's length as a hidden size_t
// after the others. The module's generic interfaces send INTEGER(8) arguments to the `_8_`
// variants. Without these entry points a gfortran -fopenmp program does not even load on weft.
// Kinds (gcc 12's omp_lib): omp_lock_kind 4 (weft's lock word fits: used in place),
// omp_nest_lock_kind 8 (weft's nest lock is 16 bytes: the variable holds a pointer to one),
// omp_sched_kind, omp_proc_bind_kind and omp_pause_resource_kind 4, handles intptr_t.
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "omp/gomp_abi.h"
#include "omp/omp_internal.hpp"

// The C entry points the wrappers forward to (api.cpp, affinity_display.cpp, allocators.cpp,
// tasking.cpp).
extern "C" {
void omp_set_num_threads(int n);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
int omp_get_thread_num(void);
int omp_get_num_procs(void);
int omp_in_parallel(void);
void omp_set_dynamic(int on);
int omp_get_dynamic(void);
void omp_set_nested(int on);
int omp_get_nested(void);
int omp_get_thread_limit(void);
void omp_set_max_active_levels(int n);
int omp_get_max_active_levels(void);
int omp_get_supported_active_levels(void);
int omp_get_level(void);
int omp_get_active_level(void);
int omp_get_ancestor_thread_num(int level);
int omp_get_team_size(int level);
int omp_in_final(void);
int omp_in_explicit_task(void);
int omp_get_cancellation(void);
int omp_get_max_task_priority(void);
void omp_set_schedule(int kind, int chunk);
void omp_get_schedule(int* kind, int* chunk);
int omp_get_proc_bind(void);
int omp_get_num_places(void);
int omp_get_place_num_procs(int place);
void omp_get_place_proc_ids(int place, int* ids);
int omp_get_place_num(void);
int omp_get_partition_num_places(void);
void omp_get_partition_place_nums(int* nums);
void omp_set_default_device(int d);
int omp_get_default_device(void);
int omp_get_num_devices(void);
int omp_get_device_num(void);
int omp_is_initial_device(void);
int omp_get_initial_device(void);
int omp_get_num_teams(void);
int omp_get_team_num(void);
void omp_set_num_teams(int n);
int omp_get_max_teams(void);
void omp_set_teams_thread_limit(int n);
int omp_get_teams_thread_limit(void);
double omp_get_wtime(void);
double omp_get_wtick(void);
void omp_init_lock(void* lock);
void omp_destroy_lock(void* lock);
void omp_set_lock(void* lock);
void omp_unset_lock(void* lock);
int omp_test_lock(void* lock);
void omp_init_nest_lock(void* lock);
void omp_destroy_nest_lock(void* lock);
void omp_set_nest_lock(void* lock);
void omp_unset_nest_lock(void* lock);
int omp_test_nest_lock(void* lock);
int omp_pause_resource(int kind, int device);
int omp_pause_resource_all(int kind);
void omp_display_env(int verbose);
void omp_fulfill_event(std::uintptr_t handle);
void omp_set_affinity_format(const char* format);
std::size_t omp_get_affinity_format(char* buffer, std::size_t size);
std::size_t omp_capture_affinity(char* buffer, std::size_t size, const char* format);
void omp_display_affinity(const char* format);
std::uintptr_t omp_init_allocator(std::uintptr_t memspace, int ntraits, const weft::omp::alloc_trait* traits);
void omp_destroy_allocator(std::uintptr_t a);
void omp_set_default_allocator(std::uintptr_t a);
std::uintptr_t omp_get_default_allocator(void);
}

namespace {

// INTEGER(8) arguments where the C routine takes an int: clamped, as libgomp does.
int narrow(std::int64_t v) {
  return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : static_cast<int>(v);
}

std::int32_t logical(int v) {
  return v ? 1 : 0;
}

// A Fortran nest lock variable holds the address of weft's 16-byte lock.
void* nest_of(const std::int64_t* var) {
  return reinterpret_cast<void*>(static_cast<std::intptr_t>(*var));
}

// Fortran's CHARACTER result convention: the text, cut to the buffer or padded with blanks; the
// result is the text's full length.
std::int32_t blank_padded(const std::string& text, char* buffer, std::size_t size) {
  std::size_t n = text.size() < size ? text.size() : size;
  std::memcpy(buffer, text.data(), n);
  std::memset(buffer + n, ' ', size - n);
  return static_cast<std::int32_t>(text.size());
}

std::string expanded(const char* format, std::size_t format_len) {
  // An empty format means affinity-format-var, as omp_capture_affinity's null format does.
  std::string f(format, format_len);
  const char* fmt = format_len ? f.c_str() : nullptr;
  std::string out(omp_capture_affinity(nullptr, 0, fmt), '\0');
  omp_capture_affinity(out.data(), out.size() + 1, fmt);
  return out;
}

}  // namespace

extern "C" {

// --- threads and teams ---------------------------------------------------------------------
GOMP_API void omp_set_num_threads_(const std::int32_t* n) {
  omp_set_num_threads(*n);
}
GOMP_API void omp_set_num_threads_8_(const std::int64_t* n) {
  omp_set_num_threads(narrow(*n));
}
GOMP_API std::int32_t omp_get_num_threads_(void) {
  return omp_get_num_threads();
}
GOMP_API std::int32_t omp_get_max_threads_(void) {
  return omp_get_max_threads();
}
GOMP_API std::int32_t omp_get_thread_num_(void) {
  return omp_get_thread_num();
}
GOMP_API std::int32_t omp_get_num_procs_(void) {
  return omp_get_num_procs();
}
GOMP_API std::int32_t omp_in_parallel_(void) {
  return logical(omp_in_parallel());
}
GOMP_API void omp_set_dynamic_(const std::int32_t* on) {
  omp_set_dynamic(*on != 0);
}
GOMP_API void omp_set_dynamic_8_(const std::int64_t* on) {
  omp_set_dynamic(*on != 0);
}
GOMP_API std::int32_t omp_get_dynamic_(void) {
  return logical(omp_get_dynamic());
}
GOMP_API void omp_set_nested_(const std::int32_t* on) {
  omp_set_nested(*on != 0);
}
GOMP_API void omp_set_nested_8_(const std::int64_t* on) {
  omp_set_nested(*on != 0);
}
GOMP_API std::int32_t omp_get_nested_(void) {
  return logical(omp_get_nested());
}
GOMP_API std::int32_t omp_get_thread_limit_(void) {
  return omp_get_thread_limit();
}
GOMP_API void omp_set_max_active_levels_(const std::int32_t* n) {
  omp_set_max_active_levels(*n);
}
GOMP_API void omp_set_max_active_levels_8_(const std::int64_t* n) {
  omp_set_max_active_levels(narrow(*n));
}
GOMP_API std::int32_t omp_get_max_active_levels_(void) {
  return omp_get_max_active_levels();
}
GOMP_API std::int32_t omp_get_supported_active_levels_(void) {
  return omp_get_supported_active_levels();
}
GOMP_API std::int32_t omp_get_level_(void) {
  return omp_get_level();
}
GOMP_API std::int32_t omp_get_active_level_(void) {
  return omp_get_active_level();
}
GOMP_API std::int32_t omp_get_ancestor_thread_num_(const std::int32_t* level) {
  return omp_get_ancestor_thread_num(*level);
}
GOMP_API std::int32_t omp_get_ancestor_thread_num_8_(const std::int64_t* level) {
  return omp_get_ancestor_thread_num(narrow(*level));
}
GOMP_API std::int32_t omp_get_team_size_(const std::int32_t* level) {
  return omp_get_team_size(*level);
}
GOMP_API std::int32_t omp_get_team_size_8_(const std::int64_t* level) {
  return omp_get_team_size(narrow(*level));
}
GOMP_API std::int32_t omp_in_final_(void) {
  return logical(omp_in_final());
}
GOMP_API std::int32_t omp_in_explicit_task_(void) {
  return logical(omp_in_explicit_task());
}
GOMP_API std::int32_t omp_get_cancellation_(void) {
  return logical(omp_get_cancellation());
}
GOMP_API std::int32_t omp_get_max_task_priority_(void) {
  return omp_get_max_task_priority();
}

// --- schedule ------------------------------------------------------------------------------
GOMP_API void omp_set_schedule_(const std::int32_t* kind, const std::int32_t* chunk) {
  omp_set_schedule(*kind, *chunk);
}
GOMP_API void omp_set_schedule_8_(const std::int32_t* kind, const std::int64_t* chunk) {
  omp_set_schedule(*kind, narrow(*chunk));
}
GOMP_API void omp_get_schedule_(std::int32_t* kind, std::int32_t* chunk) {
  omp_get_schedule(kind, chunk);
}
GOMP_API void omp_get_schedule_8_(std::int32_t* kind, std::int64_t* chunk) {
  int c;
  omp_get_schedule(kind, &c);
  *chunk = c;
}

// --- places ----------------------------------------------------------------------------------
GOMP_API std::int32_t omp_get_proc_bind_(void) {
  return omp_get_proc_bind();
}
GOMP_API std::int32_t omp_get_num_places_(void) {
  return omp_get_num_places();
}
GOMP_API std::int32_t omp_get_place_num_procs_(const std::int32_t* place) {
  return omp_get_place_num_procs(*place);
}
GOMP_API std::int32_t omp_get_place_num_procs_8_(const std::int64_t* place) {
  return omp_get_place_num_procs(narrow(*place));
}
GOMP_API void omp_get_place_proc_ids_(const std::int32_t* place, std::int32_t* ids) {
  omp_get_place_proc_ids(*place, ids);
}
GOMP_API void omp_get_place_proc_ids_8_(const std::int64_t* place, std::int64_t* ids) {
  int p = narrow(*place);
  int n = omp_get_place_num_procs(p);
  std::vector<int> narrow_ids(n > 0 ? n : 0);
  omp_get_place_proc_ids(p, narrow_ids.data());
  for (int i = 0; i < n; ++i) ids[i] = narrow_ids[i];
}
GOMP_API std::int32_t omp_get_place_num_(void) {
  return omp_get_place_num();
}
GOMP_API std::int32_t omp_get_partition_num_places_(void) {
  return omp_get_partition_num_places();
}
GOMP_API void omp_get_partition_place_nums_(std::int32_t* nums) {
  omp_get_partition_place_nums(nums);
}
GOMP_API void omp_get_partition_place_nums_8_(std::int64_t* nums) {
  int n = omp_get_partition_num_places();
  std::vector<int> narrow_nums(n > 0 ? n : 0);
  omp_get_partition_place_nums(narrow_nums.data());
  for (int i = 0; i < n; ++i) nums[i] = narrow_nums[i];
}

// --- devices and teams constructs ----------------------------------------------------------
GOMP_API void omp_set_default_device_(const std::int32_t* d) {
  omp_set_default_device(*d);
}
GOMP_API void omp_set_default_device_8_(const std::int64_t* d) {
  omp_set_default_device(narrow(*d));
}
GOMP_API std::int32_t omp_get_default_device_(void) {
  return omp_get_default_device();
}
GOMP_API std::int32_t omp_get_num_devices_(void) {
  return omp_get_num_devices();
}
GOMP_API std::int32_t omp_get_device_num_(void) {
  return omp_get_device_num();
}
GOMP_API std::int32_t omp_is_initial_device_(void) {
  return logical(omp_is_initial_device());
}
GOMP_API std::int32_t omp_get_initial_device_(void) {
  return omp_get_initial_device();
}
GOMP_API std::int32_t omp_get_num_teams_(void) {
  return omp_get_num_teams();
}
GOMP_API std::int32_t omp_get_team_num_(void) {
  return omp_get_team_num();
}
GOMP_API void omp_set_num_teams_(const std::int32_t* n) {
  omp_set_num_teams(*n);
}
GOMP_API void omp_set_num_teams_8_(const std::int64_t* n) {
  omp_set_num_teams(narrow(*n));
}
GOMP_API std::int32_t omp_get_max_teams_(void) {
  return omp_get_max_teams();
}
GOMP_API void omp_set_teams_thread_limit_(const std::int32_t* n) {
  omp_set_teams_thread_limit(*n);
}
GOMP_API void omp_set_teams_thread_limit_8_(const std::int64_t* n) {
  omp_set_teams_thread_limit(narrow(*n));
}
GOMP_API std::int32_t omp_get_teams_thread_limit_(void) {
  return omp_get_teams_thread_limit();
}

// --- timers ----------------------------------------------------------------------------------
GOMP_API double omp_get_wtime_(void) {
  return omp_get_wtime();
}
GOMP_API double omp_get_wtick_(void) {
  return omp_get_wtick();
}

// --- locks -----------------------------------------------------------------------------------
GOMP_API void omp_init_lock_(std::int32_t* var) {
  omp_init_lock(var);
}
GOMP_API void omp_destroy_lock_(std::int32_t* var) {
  omp_destroy_lock(var);
}
GOMP_API void omp_set_lock_(std::int32_t* var) {
  omp_set_lock(var);
}
GOMP_API void omp_unset_lock_(std::int32_t* var) {
  omp_unset_lock(var);
}
GOMP_API std::int32_t omp_test_lock_(std::int32_t* var) {
  return logical(omp_test_lock(var));
}
GOMP_API void omp_init_nest_lock_(std::int64_t* var) {
  void* lock = std::malloc(16);
  if (!lock) weft::omp::fatal("omp_init_nest_lock: out of memory for the lock");
  omp_init_nest_lock(lock);
  *var = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(lock));
}
GOMP_API void omp_destroy_nest_lock_(std::int64_t* var) {
  void* lock = nest_of(var);
  omp_destroy_nest_lock(lock);
  std::free(lock);
  *var = 0;
}
GOMP_API void omp_set_nest_lock_(std::int64_t* var) {
  omp_set_nest_lock(nest_of(var));
}
GOMP_API void omp_unset_nest_lock_(std::int64_t* var) {
  omp_unset_nest_lock(nest_of(var));
}
GOMP_API std::int32_t omp_test_nest_lock_(std::int64_t* var) {
  return omp_test_nest_lock(nest_of(var));
}

// --- pause, events, environment display --------------------------------------------------
GOMP_API std::int32_t omp_pause_resource_(const std::int32_t* kind, const std::int32_t* device) {
  return omp_pause_resource(*kind, *device);
}
GOMP_API std::int32_t omp_pause_resource_all_(const std::int32_t* kind) {
  return omp_pause_resource_all(*kind);
}
GOMP_API void omp_fulfill_event_(std::intptr_t event) {  // VALUE in omp_lib's interface
  omp_fulfill_event(static_cast<std::uintptr_t>(event));
}
GOMP_API void omp_display_env_(const std::int32_t* verbose) {
  omp_display_env(*verbose != 0);
}
GOMP_API void omp_display_env_8_(const std::int64_t* verbose) {
  omp_display_env(*verbose != 0);
}

// --- affinity display (strings: the hidden lengths follow the other arguments) ---------------
GOMP_API void omp_set_affinity_format_(const char* format, std::size_t format_len) {
  omp_set_affinity_format(std::string(format, format_len).c_str());
}
GOMP_API std::int32_t omp_get_affinity_format_(char* buffer, std::size_t buffer_len) {
  std::string text(omp_get_affinity_format(nullptr, 0), '\0');
  omp_get_affinity_format(text.data(), text.size() + 1);
  return blank_padded(text, buffer, buffer_len);
}
GOMP_API void omp_display_affinity_(const char* format, std::size_t format_len) {
  std::string f(format, format_len);
  omp_display_affinity(format_len ? f.c_str() : nullptr);
}
GOMP_API std::int32_t omp_capture_affinity_(char* buffer, const char* format, std::size_t buffer_len,
                                            std::size_t format_len) {
  return blank_padded(expanded(format, format_len), buffer, buffer_len);
}

// --- allocators (traits: an INTEGER(c_int) key and an INTEGER(c_intptr_t) value, C's layout) --
GOMP_API std::intptr_t omp_init_allocator_(const std::intptr_t* memspace, const std::int32_t* ntraits,
                                           const weft::omp::alloc_trait* traits) {
  return static_cast<std::intptr_t>(omp_init_allocator(static_cast<std::uintptr_t>(*memspace), *ntraits, traits));
}
GOMP_API std::intptr_t omp_init_allocator_8_(const std::intptr_t* memspace, const std::int64_t* ntraits,
                                             const weft::omp::alloc_trait* traits) {
  return static_cast<std::intptr_t>(
      omp_init_allocator(static_cast<std::uintptr_t>(*memspace), narrow(*ntraits), traits));
}
GOMP_API void omp_destroy_allocator_(const std::intptr_t* a) {
  omp_destroy_allocator(static_cast<std::uintptr_t>(*a));
}
GOMP_API void omp_set_default_allocator_(const std::intptr_t* a) {
  omp_set_default_allocator(static_cast<std::uintptr_t>(*a));
}
GOMP_API std::intptr_t omp_get_default_allocator_(void) {
  return static_cast<std::intptr_t>(omp_get_default_allocator());
}

}  // extern "C"
