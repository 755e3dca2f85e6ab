// Offload devices of the OpenMP door: the host side of libgomp's plugin interface.
//
// A plugin is a shared library with libgomp's GOMP_OFFLOAD_* entry points (GCC 12's interface,
// GOMP_VERSION 1), e.g. Debian's libgomp-plugin-nvptx.so.1; it calls back the GOMP_PLUGIN_*
// functions defined at the end of this file. The plugins named by WEFT_OFFLOAD_PLUGINS (colon-
// separated paths), else libgomp-plugin-nvptx.so.1, are loaded on first use; one that does not load
// or has no device is skipped. Devices are numbered in plugin order, as libgomp does; the host is
// the initial device. Each device has its own data environment: a table of host ranges mapped to
// device addresses with a structured and a dynamic reference count (OpenMP 5.1's), copies through
// the plugin's host2dev/dev2host. Offload images registered by GOMP_offload_register_ver are
// loaded into a device of their type when it is initialised (its first use).
//
// target nowait becomes a door task (GOMP_task, so that depend works as for any task) whose body
// maps, starts the region with GOMP_OFFLOAD_async_run and suspends on a weft event that
// GOMP_PLUGIN_target_task_completion fulfils: the worker runs other tasks meanwhile. A plugin
// without async_run (nvptx in GCC 12) runs the region synchronously inside that task.
#include "omp/offload.hpp"

#include <dlfcn.h>
#include <strings.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "omp/gomp_abi.h"
#include "omp/omp_internal.hpp"
#include "weft/weft.h"

extern "C" {
void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
               bool if_clause, unsigned flags, void** depend, int priority, void* detach);
void GOMP_taskwait_depend(void** depend);
int omp_get_default_device(void);
}

namespace weft::omp::offload {
namespace {

// --- GCC 12's interface constants (include/gomp-constants.h, libgomp/libgomp-plugin.h) --------
constexpr unsigned gomp_version = 1;
constexpr unsigned cap_shared_mem = 1u << 0;
constexpr unsigned cap_native_exec = 1u << 1;
constexpr unsigned cap_openmp_400 = 1u << 2;
constexpr int device_icv = -1;
constexpr int device_host_fallback = -2;
constexpr unsigned target_flag_nowait = 1u << 0;
constexpr unsigned target_flag_exit_data = 1u << 1;

enum map_kind : unsigned {
  map_alloc = 0,
  map_to = 1,
  map_from = 2,
  map_tofrom = 3,
  map_pointer = 4,
  map_to_pset = 5,
  map_force_present = 6,
  map_delete = 7,
  map_force_deviceptr = 8,
  map_device_resident = 9,
  map_link = 10,
  map_if_present = 11,
  map_firstprivate = 12,
  map_firstprivate_int = 13,
  map_use_device_ptr = 14,
  map_zero_len_array_section = 15,
  map_use_device_ptr_if_present = 16,
  map_always_to = 17,
  map_always_from = 18,
  map_always_tofrom = 19,
  map_release = 23,
  map_struct = 28,
  map_always_pointer = 29,
  map_delete_zero_len_array_section = 31,
  map_attach = 80,
  map_detach = 81,
  map_force_alloc = 128,
  map_force_to = 129,
  map_force_from = 130,
  map_force_tofrom = 131,
  map_force_detach = 209,
  map_special_bits = 0x70,  // GOMP_MAP_FLAG_SPECIAL_BITS (GCC 12)
  map_implicit = 0x60,      // GOMP_MAP_IMPLICIT (GCC 12)
};

const char* kind_name(unsigned k) {
  switch (k) {
    case map_alloc:
      return "GOMP_MAP_ALLOC";
    case map_to:
      return "GOMP_MAP_TO";
    case map_from:
      return "GOMP_MAP_FROM";
    case map_tofrom:
      return "GOMP_MAP_TOFROM";
    case map_pointer:
      return "GOMP_MAP_POINTER";
    case map_to_pset:
      return "GOMP_MAP_TO_PSET";
    case map_force_present:
      return "GOMP_MAP_FORCE_PRESENT";
    case map_delete:
      return "GOMP_MAP_DELETE";
    case map_force_deviceptr:
      return "GOMP_MAP_FORCE_DEVICEPTR";
    case map_device_resident:
      return "GOMP_MAP_DEVICE_RESIDENT";
    case map_link:
      return "GOMP_MAP_LINK";
    case map_if_present:
      return "GOMP_MAP_IF_PRESENT";
    case map_firstprivate:
      return "GOMP_MAP_FIRSTPRIVATE";
    case map_firstprivate_int:
      return "GOMP_MAP_FIRSTPRIVATE_INT";
    case map_use_device_ptr:
      return "GOMP_MAP_USE_DEVICE_PTR";
    case map_zero_len_array_section:
      return "GOMP_MAP_ZERO_LEN_ARRAY_SECTION";
    case map_use_device_ptr_if_present:
      return "GOMP_MAP_USE_DEVICE_PTR_IF_PRESENT";
    case map_always_to:
      return "GOMP_MAP_ALWAYS_TO";
    case map_always_from:
      return "GOMP_MAP_ALWAYS_FROM";
    case map_always_tofrom:
      return "GOMP_MAP_ALWAYS_TOFROM";
    case map_release:
      return "GOMP_MAP_RELEASE";
    case map_struct:
      return "GOMP_MAP_STRUCT";
    case map_always_pointer:
      return "GOMP_MAP_ALWAYS_POINTER";
    case map_delete_zero_len_array_section:
      return "GOMP_MAP_DELETE_ZERO_LEN_ARRAY_SECTION";
    case map_attach:
      return "GOMP_MAP_ATTACH";
    case map_detach:
      return "GOMP_MAP_DETACH";
    case map_force_alloc:
      return "GOMP_MAP_FORCE_ALLOC";
    case map_force_to:
      return "GOMP_MAP_FORCE_TO";
    case map_force_from:
      return "GOMP_MAP_FORCE_FROM";
    case map_force_tofrom:
      return "GOMP_MAP_FORCE_TOFROM";
    case map_force_detach:
      return "GOMP_MAP_FORCE_DETACH";
    default:
      return "an unknown map kind";
  }
}

[[noreturn]] void unsupported(const char* construct, unsigned kind) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s: map kind %s (%u) is not supported on an offload device", construct,
                kind_name(kind), kind);
  fatal(buf);
}

struct addr_pair {
  std::uintptr_t start;
  std::uintptr_t end;
};

// --- plugins and devices ------------------------------------------------------------------------
struct plugin {
  std::string path;
  void* handle = nullptr;
  const char* name = "";
  unsigned caps = 0;
  int type = 0;
  const char* (*get_name)();
  unsigned (*get_caps)();
  int (*get_type)();
  int (*get_num_devices)();
  bool (*init_device)(int);
  bool (*fini_device)(int);
  unsigned (*version)();
  int (*load_image)(int, unsigned, const void*, addr_pair**);
  bool (*unload_image)(int, unsigned, const void*);
  void* (*alloc)(int, std::size_t);
  bool (*free)(int, void*);
  bool (*dev2host)(int, void*, const void*, std::size_t);
  bool (*host2dev)(int, void*, const void*, std::size_t);
  bool (*dev2dev)(int, void*, const void*, std::size_t);
  bool (*can_run)(void*);
  void (*run)(int, void*, void*, void**);
  void (*async_run)(int, void*, void*, void**, void*);
};

struct mapping {
  std::uintptr_t host_end;
  std::uintptr_t dev;       // the device address of the range's start
  void* block;              // what the plugin allocated (freed when the mapping goes), or null
  std::uint64_t refs;       // structured reference count (target, target data)
  std::uint64_t dyn;        // dynamic reference count (enter/exit data, associate_ptr)
  bool infinite;            // declare target variables and omp_target_associate_ptr: never unmapped
  bool associated = false;  // by omp_target_associate_ptr (omp_target_disassociate_ptr removes it)
};

struct device {
  plugin* p;
  int ord;     // the plugin's device number
  int number;  // the OpenMP device number
  bool initialised = false;
  std::mutex lock;  // the table and initialisation
  std::map<std::uintptr_t, mapping> table;
  std::unordered_map<const void*, void*> functions;  // host function -> device function
};

struct image {
  unsigned version;
  const void* host_table;
  int type;
  const void* target_data;
};

std::once_flag plugins_loaded;
// Never destroyed (the process's exit frees them): a destructor at exit would run, and map, this
// file's code in every program, offloading or not.
std::vector<std::unique_ptr<plugin>>& plugins = *new std::vector<std::unique_ptr<plugin>>;
std::vector<std::unique_ptr<device>>& devices = *new std::vector<std::unique_ptr<device>>;
std::mutex images_lock;
std::vector<image>& images = *new std::vector<image>;
bool mandatory = false;

template <class F>
bool find(void* h, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(h, name));
  return out != nullptr;
}

bool debug_on() {
  static const bool on = [] {
    const char* v = std::getenv("WEFT_OFFLOAD_DEBUG");
    return v && *v && *v != '0';
  }();
  return on;
}

void try_plugin(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    if (debug_on()) std::fprintf(stderr, "weft: offload plugin %s: %s\n", path.c_str(), dlerror());
    return;
  }
  auto p = std::make_unique<plugin>();
  p->path = path;
  p->handle = h;
  bool ok =
      find(h, "GOMP_OFFLOAD_get_name", p->get_name) && find(h, "GOMP_OFFLOAD_get_caps", p->get_caps) &&
      find(h, "GOMP_OFFLOAD_get_type", p->get_type) && find(h, "GOMP_OFFLOAD_get_num_devices", p->get_num_devices) &&
      find(h, "GOMP_OFFLOAD_init_device", p->init_device) && find(h, "GOMP_OFFLOAD_fini_device", p->fini_device) &&
      find(h, "GOMP_OFFLOAD_version", p->version) && find(h, "GOMP_OFFLOAD_load_image", p->load_image) &&
      find(h, "GOMP_OFFLOAD_unload_image", p->unload_image) && find(h, "GOMP_OFFLOAD_alloc", p->alloc) &&
      find(h, "GOMP_OFFLOAD_free", p->free) && find(h, "GOMP_OFFLOAD_dev2host", p->dev2host) &&
      find(h, "GOMP_OFFLOAD_host2dev", p->host2dev);
  find(h, "GOMP_OFFLOAD_dev2dev", p->dev2dev);
  find(h, "GOMP_OFFLOAD_can_run", p->can_run);
  find(h, "GOMP_OFFLOAD_async_run", p->async_run);
  bool has_run = find(h, "GOMP_OFFLOAD_run", p->run);
  const char* why = nullptr;
  if (!ok)
    why = "an entry point is missing";
  else if (p->version() != gomp_version)
    why = "plugin version mismatch";
  else if (!((p->caps = p->get_caps()) & cap_openmp_400) || !has_run)
    why = "no OpenMP offloading";
  if (why) {
    if (debug_on()) std::fprintf(stderr, "weft: offload plugin %s skipped: %s\n", path.c_str(), why);
    dlclose(h);
    return;
  }
  int n = p->get_num_devices();
  if (n <= 0) {
    if (debug_on()) std::fprintf(stderr, "weft: offload plugin %s: no device\n", path.c_str());
    dlclose(h);
    return;
  }
  p->name = p->get_name();
  p->type = p->get_type();
  for (int i = 0; i < n; ++i) {
    auto d = std::make_unique<device>();
    d->p = p.get();
    d->ord = i;
    d->number = static_cast<int>(devices.size());
    devices.push_back(std::move(d));
  }
  plugins.push_back(std::move(p));
}

void load_plugins() {
  const char* t = std::getenv("OMP_TARGET_OFFLOAD");
  mandatory = t && strcasecmp(t, "mandatory") == 0;
  if (t && strcasecmp(t, "disabled") == 0) return;  // no device: everything on the host
  if (const char* list = std::getenv("WEFT_OFFLOAD_PLUGINS")) {
    std::string s(list);
    std::size_t at = 0;
    while (at <= s.size()) {
      std::size_t end = s.find(':', at);
      if (end == std::string::npos) end = s.size();
      if (end > at) try_plugin(s.substr(at, end - at));
      at = end + 1;
    }
  } else {
    try_plugin("libgomp-plugin-nvptx.so.1");
  }
  const char* show = std::getenv("WEFT_DISPLAY_ENV");
  if (show && *show && *show != '0') {
    std::fprintf(stderr, "weft offload: %zu device(s)\n", devices.size());
    for (auto& d : devices)
      std::fprintf(stderr, "  device %d: %s device %d (plugin %s, caps 0x%x%s)\n", d->number, d->p->name, d->ord,
                   d->p->path.c_str(), d->p->caps, d->p->async_run ? ", async_run" : "");
  }
}

void ensure_plugins() {
  std::call_once(plugins_loaded, load_plugins);
}

void check(bool ok, const char* what) {
  if (!ok) fatal(what);
}

void host2dev(device& d, std::uintptr_t dev, const void* host, std::size_t n) {
  if (n) check(d.p->host2dev(d.ord, reinterpret_cast<void*>(dev), host, n), "offload: host to device copy failed");
}
void dev2host(device& d, void* host, std::uintptr_t dev, std::size_t n) {
  if (n)
    check(d.p->dev2host(d.ord, host, reinterpret_cast<const void*>(dev), n), "offload: device to host copy failed");
}

// Loads one image into d (d.lock held).
void load_image(device& d, const image& im) {
  auto* const* table = static_cast<void* const*>(im.host_table);
  auto** funcs = static_cast<void**>(table[0]);
  auto** funcs_end = static_cast<void**>(table[1]);
  auto** vars = static_cast<void**>(table[2]);
  auto** vars_end = static_cast<void**>(table[3]);
  std::size_t nf = static_cast<std::size_t>(funcs_end - funcs), nv = static_cast<std::size_t>(vars_end - vars) / 2;
  addr_pair* out = nullptr;
  int n = d.p->load_image(d.ord, im.version, im.target_data, &out);
  if (n < 0 || (static_cast<std::size_t>(n) != nf + nv && static_cast<std::size_t>(n) != nf + nv + 1))
    fatal("offload: cannot load an offload image into the device (the plugin's table does not match the host's)");
  for (std::size_t i = 0; i < nf; ++i) d.functions[funcs[i]] = reinterpret_cast<void*>(out[i].start);
  constexpr std::uintptr_t link_bit = std::uintptr_t{1} << (8 * sizeof(std::uintptr_t) - 1);
  for (std::size_t i = 0; i < nv; ++i) {
    auto host = reinterpret_cast<std::uintptr_t>(vars[2 * i]);
    auto size = reinterpret_cast<std::uintptr_t>(vars[2 * i + 1]);
    if (size & link_bit) continue;  // declare target link: mapped by the program's own map clauses
    d.table[host] = mapping{host + size, out[nf + i].start, nullptr, 0, 0, true};
  }
  if (static_cast<std::size_t>(n) == nf + nv + 1 && out[nf + nv].start) {
    // The device's omp_get_device_num() variable.
    int number = d.number;
    if (out[nf + nv].end - out[nf + nv].start == sizeof number) host2dev(d, out[nf + nv].start, &number, sizeof number);
  }
  std::free(out);
}

device& initialised(int number) {
  device& d = *devices[static_cast<std::size_t>(number)];
  std::lock_guard<std::mutex> g(d.lock);
  if (!d.initialised) {
    if (!d.p->init_device(d.ord)) fatal("offload: the plugin could not initialise its device");
    std::lock_guard<std::mutex> gi(images_lock);
    for (const image& im : images)
      if (im.type == d.p->type) load_image(d, im);
    d.initialised = true;
  }
  return d;
}

// --- the data environment -------------------------------------------------------------------------
using table_it = std::map<std::uintptr_t, mapping>::iterator;

// The mapping that contains [h, h + size) (size 0: the one containing h, else one ending at h), or
// end(). A range that overlaps a mapping without being inside it is an error.
table_it lookup(device& d, std::uintptr_t h, std::size_t size) {
  auto& t = d.table;
  auto next = t.upper_bound(h);
  if (next != t.begin()) {
    auto it = std::prev(next);
    if (h < it->second.host_end || (size == 0 && h == it->second.host_end && h > it->first)) {
      if (size == 0 || h + size <= it->second.host_end) return it;
      fatal("offload: a map clause's range is partially mapped already (it extends past an existing mapping)");
    }
  }
  if (size && next != t.end() && next->first < h + size)
    fatal("offload: a map clause's range is partially mapped already (an existing mapping starts inside it)");
  return t.end();
}

// The first mapping that overlaps [h, h + size), or end().
table_it lookup_overlap(device& d, std::uintptr_t h, std::size_t size) {
  auto& t = d.table;
  auto next = t.upper_bound(h);
  if (next != t.begin()) {
    auto it = std::prev(next);
    if (h < it->second.host_end) return it;
  }
  if (next != t.end() && next->first < h + size) return next;
  return t.end();
}

// One entry mapped by a construct, to be unmapped at its end.
struct record {
  std::uintptr_t key;  // the mapping's host start
  std::uintptr_t host;
  std::size_t size;
  unsigned kind;
};

struct frame {
  device* d = nullptr;  // null: a host-fallback target data
  std::vector<record> records;
  std::vector<void*> blocks;  // firstprivate copies and the argument block, freed at the end
};

std::size_t alignment_of(unsigned short kind) {
  return std::size_t{1} << (kind >> 8);
}

bool copies_to(unsigned k) {
  return k == map_to || k == map_tofrom || k == map_always_to || k == map_always_tofrom || k == map_force_to ||
         k == map_force_tofrom;
}
bool copies_from(unsigned k) {
  return k == map_from || k == map_tofrom || k == map_always_from || k == map_always_tofrom || k == map_force_from ||
         k == map_force_tofrom;
}
bool always(unsigned k) {
  return k == map_always_to || k == map_always_from || k == map_always_tofrom;
}

std::uintptr_t device_block(device& d, std::size_t size, std::size_t align, void** block) {
  if (align < 1) align = 1;
  void* b = d.p->alloc(d.ord, (size ? size : 1) + align - 1);
  if (!b) fatal("offload: out of device memory");
  *block = b;
  auto a = reinterpret_cast<std::uintptr_t>(b);
  return (a + align - 1) & ~(align - 1);
}

// Maps [h, h + size) (d.lock held); returns its device address.
std::uintptr_t map_range(device& d, frame& f, std::uintptr_t h, std::size_t size, unsigned short kind, bool dynamic) {
  unsigned k = kind & 0xff;
  auto it = lookup(d, h, size);
  if (it != d.table.end()) {
    mapping& m = it->second;
    if (!m.infinite) ++(dynamic ? m.dyn : m.refs);
    std::uintptr_t dev = m.dev + (h - it->first);
    if (always(k) && copies_to(k)) host2dev(d, dev, reinterpret_cast<void*>(h), size);
    f.records.push_back(record{it->first, h, size, k});
    return dev;
  }
  if (k == map_force_present) fatal("offload: map(present: ...) of data that is not present on the device");
  void* block = nullptr;
  std::uintptr_t dev = device_block(d, size, alignment_of(kind), &block);
  d.table[h] = mapping{h + (size ? size : 1), dev, block, dynamic ? 0u : 1u, dynamic ? 1u : 0u, false};
  if (copies_to(k)) host2dev(d, dev, reinterpret_cast<void*>(h), size);
  f.records.push_back(record{h, h, size, k});
  return dev;
}

// GOMP_MAP_POINTER: the pointer at host address `at` (bias `bias`) is mapped, and its device copy
// points at the device copy of what it points to.
void map_pointer_entry(device& d, frame& f, std::uintptr_t at, std::size_t bias, bool dynamic, bool always_store) {
  std::uintptr_t dev_ptr;
  if (!always_store) {
    dev_ptr = map_range(d, f, at, sizeof(void*), (3u << 8) | map_alloc, dynamic);
  } else {
    auto it = lookup(d, at, sizeof(void*));
    if (it == d.table.end()) fatal("offload: GOMP_MAP_ALWAYS_POINTER on a pointer that is not mapped");
    dev_ptr = it->second.dev + (at - it->first);
  }
  std::uintptr_t target;
  std::memcpy(&target, reinterpret_cast<void*>(at), sizeof target);
  std::uintptr_t value = 0;
  if (target) {
    auto it = lookup(d, target + bias, 0);
    if (it == d.table.end()) fatal("offload: the pointer target of an array section was not mapped");
    value = it->second.dev + (target + bias - it->first) - bias;
  }
  host2dev(d, dev_ptr, &value, sizeof value);
}

// Maps a construct's list; returns each entry's device value (what a target region receives).
std::vector<std::uintptr_t> map_list(device& d, frame& f, std::size_t mapnum, void** hostaddrs, std::size_t* sizes,
                                     unsigned short* kinds, const char* construct, bool is_target, bool dynamic) {
  std::vector<std::uintptr_t> values(mapnum, 0);
  for (std::size_t i = 0; i < mapnum; ++i) {
    unsigned short kind = kinds[i];
    unsigned k = kind & 0xff;
    auto h = reinterpret_cast<std::uintptr_t>(hostaddrs[i]);
    // GCC 12 marks implicit maps (OpenMP 5.0's, of variables a region uses without a clause) with
    // GOMP_MAP_IMPLICIT in the special bits: such a map may name a range that only partly
    // overlaps a mapping already there, which is then used as it is.
    bool implicit = (k & map_special_bits) == map_implicit;
    if (implicit) k &= ~map_implicit;
    if (debug_on())
      std::fprintf(stderr, "weft offload: %s [%zu] %s%s %p size %zu\n", construct, i, implicit ? "implicit " : "",
                   kind_name(k), hostaddrs[i], sizes[i]);
    if (implicit && h && sizes[i] && (k == map_to || k == map_from || k == map_tofrom || k == map_alloc)) {
      auto it = lookup_overlap(d, h, sizes[i]);
      if (it != d.table.end() && !(it->first <= h && h + sizes[i] <= it->second.host_end)) {
        mapping& m = it->second;
        if (!m.infinite) ++(dynamic ? m.dyn : m.refs);
        f.records.push_back(record{it->first, h, 0, map_alloc});
        values[i] = m.dev + (h - it->first);  // may lie outside the mapping, as the host address does
        continue;
      }
    }
    switch (k) {
      case map_firstprivate_int:
        values[i] = h;
        break;
      case map_firstprivate: {
        if (!is_target) unsupported(construct, k);
        if (!h) break;
        void* block = nullptr;
        values[i] = device_block(d, sizes[i], alignment_of(kind), &block);
        f.blocks.push_back(block);
        host2dev(d, values[i], hostaddrs[i], sizes[i]);
        break;
      }
      case map_zero_len_array_section: {
        auto it = h ? lookup(d, h, 0) : d.table.end();
        if (it != d.table.end()) {
          mapping& m = it->second;
          if (!m.infinite) ++(dynamic ? m.dyn : m.refs);
          f.records.push_back(record{it->first, h, 0, k});
          values[i] = m.dev + (h - it->first);
        }
        break;
      }
      case map_use_device_ptr:
      case map_use_device_ptr_if_present: {
        if (is_target) unsupported(construct, k);
        auto it = h ? lookup(d, h, 0) : d.table.end();
        if (it != d.table.end()) hostaddrs[i] = reinterpret_cast<void*>(it->second.dev + (h - it->first));
        break;
      }
      case map_pointer:
      case map_always_pointer:
        if (h) map_pointer_entry(d, f, h, sizes[i], dynamic, k == map_always_pointer);
        break;
      case map_attach:
        // GCC 12's enter data map(p[a:n]) and struct pointer members: if the pointer itself is
        // mapped, its device copy is made to point at the device copy of its target; else nothing.
        if (h && lookup(d, h, sizeof(void*)) != d.table.end()) map_pointer_entry(d, f, h, sizes[i], dynamic, true);
        break;
      case map_struct: {
        // The members follow; the struct is mapped as one range from its first member's start to
        // its last member's end (if no part of it is mapped yet), then each member in it.
        std::size_t n = sizes[i];
        if (n == 0 || i + n >= mapnum) fatal("offload: GOMP_MAP_STRUCT with members past the end of the list");
        auto first = reinterpret_cast<std::uintptr_t>(hostaddrs[i + 1]);
        auto last = reinterpret_cast<std::uintptr_t>(hostaddrs[i + n]) + sizes[i + n];
        auto it = lookup(d, first, last - first);
        bool fresh = it == d.table.end();
        std::uintptr_t base = 0;
        if (fresh) {
          void* block = nullptr;
          base = device_block(d, last - first, alignment_of(kind), &block);
          d.table[first] = mapping{last, base, block, 0, 0, false};
        }
        for (std::size_t j = i + 1; j <= i + n; ++j) {
          unsigned mk = kinds[j] & 0xff;
          auto mh = reinterpret_cast<std::uintptr_t>(hostaddrs[j]);
          if (mk == map_pointer || mk == map_always_pointer) {
            map_pointer_entry(d, f, mh, sizes[j], dynamic, mk == map_always_pointer);
            continue;
          }
          auto at = lookup(d, mh, sizes[j]);
          if (at == d.table.end()) fatal("offload: a GOMP_MAP_STRUCT member lies outside its struct's mapping");
          if (copies_to(mk) && (fresh || always(mk)))
            host2dev(d, at->second.dev + (mh - at->first), hostaddrs[j], sizes[j]);
          mapping& m = at->second;
          if (!m.infinite) ++(dynamic ? m.dyn : m.refs);
          f.records.push_back(record{at->first, mh, sizes[j], mk});
          values[j] = m.dev + (mh - at->first);
        }
        values[i] = values[i + 1] - (reinterpret_cast<std::uintptr_t>(hostaddrs[i + 1]) - h);
        // One reference per member was counted; the struct's range holds as many.
        i += n;
        break;
      }
      case map_alloc:
      case map_to:
      case map_from:
      case map_tofrom:
      case map_always_to:
      case map_always_from:
      case map_always_tofrom:
      case map_force_present:
      case map_force_alloc:
      case map_force_to:
      case map_force_from:
      case map_force_tofrom:
        if (!h) break;
        values[i] = map_range(d, f, h, sizes[i], kind, dynamic);
        break;
      default:
        unsupported(construct, k);
    }
  }
  return values;
}

// Drops f's references (structured, or dynamic for exit data), copies back what is copied back,
// frees what is no longer mapped.
void unmap(device& d, frame& f, bool dynamic) {
  std::vector<std::uintptr_t> gone;
  for (const record& r : f.records) {
    auto it = d.table.find(r.key);
    if (it == d.table.end()) continue;
    mapping& m = it->second;
    if (!m.infinite) {
      std::uint64_t& c = dynamic ? m.dyn : m.refs;
      if (c > 0) --c;
    }
  }
  for (const record& r : f.records) {
    auto it = d.table.find(r.key);
    if (it == d.table.end()) continue;
    mapping& m = it->second;
    bool last = !m.infinite && m.refs == 0 && m.dyn == 0;
    if (copies_from(r.kind) && (last || always(r.kind)))
      dev2host(d, reinterpret_cast<void*>(r.host), m.dev + (r.host - r.key), r.size);
    if (last) gone.push_back(r.key);
  }
  for (std::uintptr_t key : gone) {
    auto it = d.table.find(key);
    if (it == d.table.end()) continue;
    if (it->second.block) d.p->free(d.ord, it->second.block);
    d.table.erase(it);
  }
  for (void* b : f.blocks) d.p->free(d.ord, b);
  f.blocks.clear();
  f.records.clear();
}

thread_local std::vector<std::unique_ptr<frame>> data_stack;

// --- target regions -------------------------------------------------------------------------------
void* device_function(device& d, void (*fn)(void*)) {
  if (d.p->caps & cap_native_exec) return reinterpret_cast<void*>(fn);
  std::lock_guard<std::mutex> g(d.lock);
  auto it = d.functions.find(reinterpret_cast<const void*>(fn));
  return it == d.functions.end() ? nullptr : it->second;
}

struct target_job {
  device* d;
  void* fn_addr;
  std::vector<void*> hostaddrs;
  std::vector<std::size_t> sizes;
  std::vector<unsigned short> kinds;
  std::vector<void*> args;
  std::vector<std::unique_ptr<char[]>> copies;  // firstprivate data, copied when the task was created
  weft_event_t* done = nullptr;
  std::atomic<bool> callback_returned{false};  // the completion callback's last access to the job
};

// Maps, runs (asynchronously when the plugin can and `async`), unmaps.
void execute(target_job& j, bool async) {
  device& d = *j.d;
  frame f;
  f.d = &d;
  std::uintptr_t vars = 0;
  std::size_t mapnum = j.hostaddrs.size();
  {
    std::lock_guard<std::mutex> g(d.lock);
    std::vector<std::uintptr_t> values =
        map_list(d, f, mapnum, j.hostaddrs.data(), j.sizes.data(), j.kinds.data(), "target", true, false);
    if (d.p->caps & cap_shared_mem) {
      fatal("offload: shared-memory offload devices are not supported");
    } else if (mapnum) {
      void* block = nullptr;
      vars = device_block(d, mapnum * sizeof(void*), alignof(void*), &block);
      f.blocks.push_back(block);
      host2dev(d, vars, values.data(), mapnum * sizeof(void*));
    }
  }
  void** args = j.args.empty() ? nullptr : j.args.data();
  if (async && d.p->async_run) {
    j.done = weft_event_create(1);
    if (!j.done) fatal("target nowait: out of memory for the completion event");
    d.p->async_run(d.ord, j.fn_addr, reinterpret_cast<void*>(vars), args, &j);
    int waited = weft_event_wait(j.done);  // the worker runs other tasks until the plugin's completion
    // The plugin's thread may still be inside the callback (in weft_event_fulfill's tail, after the
    // wake): the job and the event stay until it has returned, a few instructions later; and if
    // the wait could not suspend (not on a worker), this is the wait.
    while (!j.callback_returned.load(std::memory_order_acquire)) {
      if (waited != WEFT_OK)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      else
        std::this_thread::yield();
    }
    weft_event_destroy(j.done);
    j.done = nullptr;
  } else {
    d.p->run(d.ord, j.fn_addr, reinterpret_cast<void*>(vars), args);
  }
  std::lock_guard<std::mutex> g(d.lock);
  unmap(d, f, false);
}

void target_task(void* data) {
  target_job* j;
  std::memcpy(&j, data, sizeof j);
  execute(*j, true);
  delete j;
}

std::vector<void*> copy_args(void** args) {
  std::vector<void*> out;
  if (!args) return out;
  for (void** a = args; *a; ++a) {
    out.push_back(*a);
    if (reinterpret_cast<std::uintptr_t>(*a) & (1u << 7)) out.push_back(*++a);  // the value follows
  }
  out.push_back(nullptr);
  return out;
}

}  // namespace

int num_devices() {
  ensure_plugins();
  return static_cast<int>(devices.size());
}

int resolve(int device, const char* construct) {
  ensure_plugins();
  if (device == device_host_fallback) return -1;
  if (device == device_icv) device = omp_get_default_device();
  if (device >= 0 && static_cast<std::size_t>(device) < devices.size()) return device;
  // The number after the last device is the initial device (libgomp's numbering): the host, as
  // asked, even under mandatory (so a process without devices runs its default-device regions).
  if (mandatory && static_cast<std::size_t>(device) != devices.size()) {
    std::fprintf(stderr, "weft: %s: OMP_TARGET_OFFLOAD=mandatory and device %d is not available (%zu device(s))\n",
                 construct, device, devices.size());
    std::exit(EXIT_FAILURE);
  }
  return -1;
}

bool run_target(int number, void (*fn)(void*), std::size_t mapnum, void** hostaddrs, std::size_t* sizes,
                unsigned short* kinds, unsigned flags, void** depend, void** args) {
  device& d = initialised(number);
  void* fn_addr = device_function(d, fn);
  if (!fn_addr || (d.p->can_run && !d.p->can_run(fn_addr))) {
    if (mandatory) {
      std::fprintf(stderr, "weft: target: OMP_TARGET_OFFLOAD=mandatory and the region has no code for device %d\n",
                   number);
      std::exit(EXIT_FAILURE);
    }
    return false;
  }
  auto* j = new target_job;
  j->d = &d;
  j->fn_addr = fn_addr;
  j->hostaddrs.assign(hostaddrs, hostaddrs + mapnum);
  j->sizes.assign(sizes, sizes + mapnum);
  j->kinds.assign(kinds, kinds + mapnum);
  j->args = copy_args(args);
  if (!(flags & target_flag_nowait)) {
    if (depend) GOMP_taskwait_depend(depend);
    execute(*j, false);
    delete j;
    return true;
  }
  // firstprivate data is captured now, as the task is created.
  for (std::size_t i = 0; i < mapnum; ++i) {
    if ((kinds[i] & 0xff) != map_firstprivate || !hostaddrs[i]) continue;
    auto copy = std::make_unique<char[]>(sizes[i] ? sizes[i] : 1);
    std::memcpy(copy.get(), hostaddrs[i], sizes[i]);
    j->hostaddrs[i] = copy.get();
    j->copies.push_back(std::move(copy));
  }
  GOMP_task(target_task, &j, nullptr, sizeof j, alignof(target_job*), true,
            depend ? unsigned{GOMP_TASK_FLAG_DEPEND} : 0u, depend, 0, nullptr);
  return true;
}

void target_data(int number, std::size_t mapnum, void** hostaddrs, std::size_t* sizes, unsigned short* kinds) {
  device& d = initialised(number);
  auto f = std::make_unique<frame>();
  f->d = &d;
  {
    std::lock_guard<std::mutex> g(d.lock);
    map_list(d, *f, mapnum, hostaddrs, sizes, kinds, "target data", false, false);
  }
  data_stack.push_back(std::move(f));
}

void push_host_data() {
  data_stack.push_back(std::make_unique<frame>());
}

void end_target_data() {
  if (data_stack.empty()) return;
  std::unique_ptr<frame> f = std::move(data_stack.back());
  data_stack.pop_back();
  if (!f->d) return;
  std::lock_guard<std::mutex> g(f->d->lock);
  unmap(*f->d, *f, false);
}

void update(int number, std::size_t mapnum, void** hostaddrs, std::size_t* sizes, unsigned short* kinds) {
  device& d = initialised(number);
  std::lock_guard<std::mutex> g(d.lock);
  for (std::size_t i = 0; i < mapnum; ++i) {
    unsigned k = kinds[i] & 0xff;
    auto h = reinterpret_cast<std::uintptr_t>(hostaddrs[i]);
    if (debug_on())
      std::fprintf(stderr, "weft offload: target update [%zu] %s %p size %zu\n", i, kind_name(k), hostaddrs[i],
                   sizes[i]);
    if (!h || !sizes[i]) continue;
    auto it = lookup(d, h, sizes[i]);
    if (it == d.table.end()) continue;  // not present: no effect
    std::uintptr_t dev = it->second.dev + (h - it->first);
    if (k == map_to || k == map_always_to || k == map_force_to) {
      host2dev(d, dev, hostaddrs[i], sizes[i]);
    } else if (k == map_from || k == map_always_from || k == map_force_from) {
      dev2host(d, hostaddrs[i], dev, sizes[i]);
    } else {
      unsupported("target update", k);
    }
  }
}

void enter_exit(int number, std::size_t mapnum, void** hostaddrs, std::size_t* sizes, unsigned short* kinds,
                unsigned flags) {
  device& d = initialised(number);
  std::lock_guard<std::mutex> g(d.lock);
  if (!(flags & target_flag_exit_data)) {
    frame f;
    map_list(d, f, mapnum, hostaddrs, sizes, kinds, "target enter data", false, true);
    return;  // the references stay (dynamic)
  }
  // exit data: release drops one dynamic reference, delete all of them; from copies back when
  // the last reference goes (always: in any case).
  frame f;
  for (std::size_t i = 0; i < mapnum; ++i) {
    unsigned k = kinds[i] & 0xff;
    auto h = reinterpret_cast<std::uintptr_t>(hostaddrs[i]);
    if (debug_on())
      std::fprintf(stderr, "weft offload: target exit data [%zu] %s %p size %zu\n", i, kind_name(k), hostaddrs[i],
                   sizes[i]);
    switch (k) {
      case map_from:
      case map_always_from:
      case map_release:
      case map_delete:
      case map_zero_len_array_section:
      case map_delete_zero_len_array_section:
      case map_pointer:
      case map_force_from: {
        if (!h) break;
        std::size_t size = k == map_pointer ? sizeof(void*) : sizes[i];
        if (k == map_zero_len_array_section || k == map_delete_zero_len_array_section) size = 0;
        auto it = lookup(d, h, size);
        if (it == d.table.end() || it->second.infinite) break;
        if (k == map_delete || k == map_delete_zero_len_array_section) {
          it->second.dyn = 0;
          it->second.refs = 0;
          f.records.push_back(record{it->first, h, size, map_alloc});
        } else {
          // unmap() drops the reference; copies back if this was the last
          f.records.push_back(
              record{it->first, h, size, k == map_release || k == map_pointer ? unsigned{map_alloc} : k});
        }
        break;
      }
      case map_struct:
        break;  // its members follow as entries of their own
      case map_detach:
      case map_force_detach:
        break;  // the pointer's device copy goes with its mapping, or keeps pointing at device data
      default:
        unsupported("target exit data", k);
    }
  }
  // A deleted mapping has no reference left: unmap's decrement leaves it at 0 and frees it.
  unmap(d, f, true);
}

}  // namespace weft::omp::offload

using namespace weft::omp::offload;

// --- the plugins' callbacks (GOMP_PLUGIN_1.0 .. 1.3) -------------------------------------------
extern "C" {

GOMP_API void* GOMP_PLUGIN_malloc(std::size_t size) {
  void* p = std::malloc(size);
  if (!p) weft::omp::fatal("offload plugin: out of memory");
  return p;
}

GOMP_API void* GOMP_PLUGIN_malloc_cleared(std::size_t size) {
  void* p = std::calloc(1, size);
  if (!p) weft::omp::fatal("offload plugin: out of memory");
  return p;
}

GOMP_API void* GOMP_PLUGIN_realloc(void* p, std::size_t size) {
  void* q = std::realloc(p, size);
  if (!q) weft::omp::fatal("offload plugin: out of memory");
  return q;
}

GOMP_API void GOMP_PLUGIN_debug(int, const char* fmt, ...) {
  const char* v = std::getenv("GOMP_DEBUG");
  if (!v || std::atoi(v) <= 0) return;
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
}

GOMP_API void GOMP_PLUGIN_error(const char* fmt, ...) {
  std::fputs("libgomp: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
}

GOMP_API void GOMP_PLUGIN_fatal(const char* fmt, ...) {
  std::fputs("libgomp: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
  std::exit(EXIT_FAILURE);
}

// OpenACC is not implemented: no OpenACC thread state, default dimensions, profiling.
GOMP_API void* GOMP_PLUGIN_acc_thread(void) {
  return nullptr;
}
GOMP_API void* GOMP_PLUGIN_goacc_thread(void) {
  return nullptr;
}
GOMP_API int GOMP_PLUGIN_acc_default_dim(unsigned int) {
  return 0;
}
GOMP_API void GOMP_PLUGIN_goacc_profiling_dispatch(void*, void*, void*) {}
GOMP_API void GOMP_PLUGIN_async_unmap_vars(void*, int) {}

// The plugin's asynchronous run of a target nowait region finished: the task waiting for it resumes.
GOMP_API void GOMP_PLUGIN_target_task_completion(void* data) {
  auto* j = static_cast<target_job*>(data);
  weft_event_fulfill(j->done);
  j->callback_returned.store(true, std::memory_order_release);  // the last access: the job may go
}

}  // extern "C"

namespace weft::omp::offload {

void* target_alloc(std::size_t size, int number) {
  device& d = initialised(number);
  return d.p->alloc(d.ord, size ? size : 1);
}

void target_free(void* p, int number) {
  if (!p) return;
  device& d = initialised(number);
  d.p->free(d.ord, p);
}

bool is_present(const void* p, int number) {
  if (!p) return true;
  device& d = initialised(number);
  std::lock_guard<std::mutex> g(d.lock);
  return lookup(d, reinterpret_cast<std::uintptr_t>(p), 0) != d.table.end();
}

void* mapped_ptr(const void* p, int number) {
  if (!p) return nullptr;
  device& d = initialised(number);
  std::lock_guard<std::mutex> g(d.lock);
  auto h = reinterpret_cast<std::uintptr_t>(p);
  auto it = lookup(d, h, 0);
  if (it == d.table.end() || h == it->second.host_end) return nullptr;  // one past a mapping is not in it
  return reinterpret_cast<void*>(it->second.dev + (h - it->first));
}

int target_memcpy(void* dst, const void* src, std::size_t length, std::size_t dst_offset, std::size_t src_offset,
                  int dst_device, int src_device) {
  char* to = static_cast<char*>(dst) + dst_offset;
  const char* from = static_cast<const char*>(src) + src_offset;
  if (length == 0) return 0;
  if (dst_device < 0 && src_device < 0) {
    std::memmove(to, from, length);
    return 0;
  }
  if (src_device < 0) {
    device& d = initialised(dst_device);
    return d.p->host2dev(d.ord, to, from, length) ? 0 : EINVAL;
  }
  if (dst_device < 0) {
    device& d = initialised(src_device);
    return d.p->dev2host(d.ord, to, from, length) ? 0 : EINVAL;
  }
  device& ds = initialised(src_device);
  device& dd = initialised(dst_device);
  if (&ds == &dd && ds.p->dev2dev) return ds.p->dev2dev(ds.ord, to, from, length) ? 0 : EINVAL;
  std::vector<char> bounce(length);  // between devices (or no dev2dev): through the host
  if (!ds.p->dev2host(ds.ord, bounce.data(), from, length)) return EINVAL;
  return dd.p->host2dev(dd.ord, to, bounce.data(), length) ? 0 : EINVAL;
}

int associate_ptr(const void* host, const void* dev, std::size_t size, std::size_t dev_offset, int number) {
  device& d = initialised(number);
  std::lock_guard<std::mutex> g(d.lock);
  auto h = reinterpret_cast<std::uintptr_t>(host);
  auto dv = reinterpret_cast<std::uintptr_t>(dev) + dev_offset;
  auto it = lookup_overlap(d, h, size ? size : 1);
  if (it != d.table.end()) {
    // Already associated in the same way: nothing to do; anything else is an error.
    return it->first <= h && h + size <= it->second.host_end && it->second.dev + (h - it->first) == dv ? 0 : EINVAL;
  }
  mapping m{h + (size ? size : 1), dv, nullptr, 0, 0, true};
  m.associated = true;
  d.table[h] = m;
  return 0;
}

int disassociate_ptr(const void* host, int number) {
  device& d = initialised(number);
  std::lock_guard<std::mutex> g(d.lock);
  auto it = d.table.find(reinterpret_cast<std::uintptr_t>(host));
  if (it == d.table.end() || !it->second.associated) return EINVAL;
  d.table.erase(it);
  return 0;
}

// Registration of an offload image: loaded into every initialised device of its type now, and into
// the others when they start.
void register_image(unsigned version, const void* host_table, int type, const void* target_data) {
  if ((version >> 16) > gomp_version) fatal("offload: the program's offload data is newer than this library");
  if (debug_on()) {
    auto* const* table = static_cast<void* const*>(host_table);
    std::fprintf(
        stderr, "weft offload: image registered for device type %d (version %u.%u): %td function(s), %td variable(s)\n",
        type, version >> 16, version & 0xffff, static_cast<void**>(table[1]) - static_cast<void**>(table[0]),
        (static_cast<void**>(table[3]) - static_cast<void**>(table[2])) / 2);
  }
  ensure_plugins();
  {
    std::lock_guard<std::mutex> g(images_lock);
    images.push_back(image{version, host_table, type, target_data});
  }
  for (auto& dp : devices) {
    device& d = *dp;
    if (d.p->type != type) continue;
    std::lock_guard<std::mutex> g(d.lock);
    if (d.initialised) load_image(d, image{version, host_table, type, target_data});
  }
}

void unregister_image(unsigned version, const void* host_table, int type, const void* target_data) {
  {
    std::lock_guard<std::mutex> g(
        images_lock);  // not held with a device's lock (initialised() nests them the other way)
    for (auto it = images.begin(); it != images.end(); ++it) {
      if (it->host_table == host_table && it->type == type) {
        images.erase(it);
        break;
      }
    }
  }
  for (auto& dp : devices) {
    device& d = *dp;
    if (d.p->type != type) continue;
    std::lock_guard<std::mutex> g(d.lock);
    if (!d.initialised) continue;
    // Its functions and declare target variables go with it.
    auto* const* table = static_cast<void* const*>(host_table);
    for (auto** f = static_cast<void**>(table[0]); f != static_cast<void**>(table[1]); ++f) d.functions.erase(*f);
    for (auto** v = static_cast<void**>(table[2]); v < static_cast<void**>(table[3]); v += 2) {
      auto it = d.table.find(reinterpret_cast<std::uintptr_t>(*v));
      if (it != d.table.end() && it->second.infinite && !it->second.associated) d.table.erase(it);
    }
    d.p->unload_image(d.ord, version, target_data);
  }
}
}  // namespace weft::omp::offload
