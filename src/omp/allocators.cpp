// OpenMP memory allocators: omp_alloc and its variants, omp_init_allocator's traits, the default
// allocator (def-allocator-var), the allocate clause's GOMP_alloc/GOMP_free, and the registry of
// Fortran allocatables that gcc 14 places with an allocator (GOMP_add_alloc/GOMP_is_alloc).
//
// Every memory space of the host is malloc's memory. A predefined allocator is malloc with a header;
// an allocator made by omp_init_allocator adds an alignment, a pool size and a fallback. A block
// carries a header just before it: what malloc returned, the bytes it holds in its allocator's
// pool, the allocator that served it (after any fallback; omp_free and omp_realloc find it there)
// and the size asked for. Pools are counters updated with a compare-and-swap: no lock, and
// predefined allocators (the common case) touch no shared state at all.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <string>
#include <unordered_set>

#include "omp/gomp_abi.h"
#include "omp/omp_internal.hpp"

namespace weft::omp {

namespace {

// gcc's omp.h numbering.
constexpr std::uintptr_t null_allocator = 0, default_mem_alloc = 1, last_predefined = 8;  // omp_thread_mem_alloc
constexpr std::uintptr_t last_memspace = 4;                                               // omp_low_lat_mem_space
enum trait_key : int {
  atk_sync_hint = 1,
  atk_alignment,
  atk_access,
  atk_pool_size,
  atk_fallback,
  atk_fb_data,
  atk_pinned,
  atk_partition,
};
enum trait_value : std::uintptr_t {
  atv_false = 0,
  atv_true = 1,
  atv_contended = 3,
  atv_uncontended,
  atv_serialized,
  atv_private,
  atv_all,
  atv_thread,
  atv_pteam,
  atv_cgroup,
  atv_default_mem_fb,
  atv_null_fb,
  atv_abort_fb,
  atv_allocator_fb,
  atv_environment,
  atv_nearest,
  atv_blocked,
  atv_interleaved,
  atv_default = ~std::uintptr_t{0},
};
constexpr std::size_t unbounded = ~std::size_t{0};

struct allocator_record {
  std::size_t alignment = 1;
  std::size_t pool_size = unbounded;
  std::uintptr_t fallback = atv_default_mem_fb;
  std::uintptr_t fb_data = null_allocator;
  std::atomic<std::size_t> used{0};  // bytes held in the pool, headers and padding included
};

struct block_header {
  void* raw;                 // what malloc returned
  std::size_t reserved;      // bytes this block holds in its allocator's pool
  std::uintptr_t allocator;  // the allocator that served it
  std::size_t size;          // bytes asked for
};
static_assert(sizeof(block_header) % alignof(std::max_align_t) == 0);

allocator_record* record_of(std::uintptr_t a) {
  return a > last_predefined ? reinterpret_cast<allocator_record*>(a) : nullptr;
}
allocator_record* pool_of(std::uintptr_t a) {
  allocator_record* r = record_of(a);
  return r && r->pool_size != unbounded ? r : nullptr;
}
block_header& header_of(void* p) {
  return static_cast<block_header*>(p)[-1];
}

std::uintptr_t default_allocator() {
  std::uintptr_t a = me ? me->icv.def_allocator : config().initial.def_allocator;
  return a ? a : default_mem_alloc;
}

// Takes `take` bytes in r's pool while giving back `give` (a block omp_realloc replaces).
// Relaxed: the counter orders nothing but itself.
bool reserve(allocator_record& r, std::size_t take, std::size_t give) {
  std::size_t used = r.used.load(std::memory_order_relaxed);
  for (;;) {
    std::size_t next;
    if (take <= give)
      next = used - (give - take);
    else if (__builtin_add_overflow(used, take - give, &next) || next > r.pool_size)
      return false;
    if (r.used.compare_exchange_weak(used, next, std::memory_order_relaxed)) return true;
  }
}

// One try of allocator a (its own memory and pool, no fallback). `replacing`: the block omp_realloc
// replaces, whose share of a's pool, if it is in it, counts as free.
void* try_allocator(std::uintptr_t a, std::size_t alignment, std::size_t size, bool zero,
                    const block_header* replacing) {
  allocator_record* r = record_of(a);
  if (r && r->alignment > alignment) alignment = r->alignment;
  // malloc's blocks are aligned to max_align_t, and so is the address after the header.
  std::size_t pad = alignment > alignof(std::max_align_t) ? alignment - alignof(std::max_align_t) : 0;
  std::size_t total;
  if (__builtin_add_overflow(size, sizeof(block_header) + pad, &total)) return nullptr;
  allocator_record* pool = pool_of(a);
  std::size_t give = replacing && pool && replacing->allocator == a ? replacing->reserved : 0;
  if (pool && !reserve(*pool, total, give)) return nullptr;
  void* raw = zero ? std::calloc(1, total) : std::malloc(total);
  if (!raw) {
    if (pool) reserve(*pool, give, total);
    return nullptr;
  }
  std::uintptr_t p = (reinterpret_cast<std::uintptr_t>(raw) + sizeof(block_header) + alignment - 1) & ~(alignment - 1);
  header_of(reinterpret_cast<void*>(p)) = {raw, pool ? total : 0, a, size};
  return reinterpret_cast<void*>(p);
}

[[noreturn]] void out_of_memory(const char* caller, std::size_t size, const char* why) {
  std::string what =
      std::string(caller) + ": out of memory allocating " +
      (size == unbounded ? std::string("a count times a size that overflows") : std::to_string(size) + " bytes") +
      " (" + why + ")";
  fatal(what.c_str());
}

// Allocator a, then its fallbacks, until one serves or a fallback says NULL or abort.
void* allocate(const char* caller, std::size_t alignment, std::size_t size, std::uintptr_t a, bool zero,
               const block_header* replacing = nullptr) {
  if ((alignment & (alignment - 1)) != 0 || alignment == 0) {
    std::fprintf(stderr, "weft: %s: alignment %zu is not a power of two (NULL returned)\n", caller, alignment);
    return nullptr;
  }
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  for (;;) {
    if (a == null_allocator) a = default_allocator();
    if (void* p = try_allocator(a, alignment, size, zero, replacing)) return p;
    allocator_record* r = record_of(a);
    if (!r) return nullptr;  // a predefined allocator: malloc failed
    switch (r->fallback) {
      case atv_null_fb:
        return nullptr;
      case atv_abort_fb:
        out_of_memory(caller, size, "the allocator's fallback is abort_fb");
      case atv_allocator_fb:
        a = r->fb_data;
        break;
      default:  // default_mem_fb: the default memory space with default traits
        a = default_mem_alloc;
    }
  }
}

// omp_calloc's byte count; an overflow asks for more than any allocator has (its fallback decides).
std::size_t bytes(std::size_t n, std::size_t size) {
  std::size_t total;
  return __builtin_mul_overflow(n, size, &total) ? unbounded : total;
}

void release(void* p) {
  if (!p) return;
  block_header& h = header_of(p);
  if (allocator_record* pool = pool_of(h.allocator)) reserve(*pool, 0, h.reserved);
  std::free(h.raw);
}

const char* const key_names[] = {"?",
                                 "omp_atk_sync_hint",
                                 "omp_atk_alignment",
                                 "omp_atk_access",
                                 "omp_atk_pool_size",
                                 "omp_atk_fallback",
                                 "omp_atk_fb_data",
                                 "omp_atk_pinned",
                                 "omp_atk_partition"};

bool one_of(std::uintptr_t v, std::initializer_list<std::uintptr_t> allowed) {
  for (std::uintptr_t a : allowed)
    if (v == a) return true;
  return false;
}

}  // namespace

std::uintptr_t make_allocator(std::uintptr_t memspace, int ntraits, const alloc_trait* traits, std::string& why) {
  if (memspace > last_memspace) {
    why = "memory space " + std::to_string(memspace) + " does not exist";
    return null_allocator;
  }
  auto* r = new allocator_record;
  for (int i = 0; i < ntraits; ++i) {
    int key = traits[i].key;
    std::uintptr_t v = traits[i].value;
    bool ok = true;
    const char* problem = "is not one of its values";
    switch (key) {
      case atk_sync_hint:
        ok = one_of(v, {atv_default, atv_contended, atv_uncontended, atv_serialized, atv_private});
        break;
      case atk_alignment:
        problem = "is not a power of two";
        if (v != atv_default) ok = v && !(v & (v - 1));
        r->alignment = v == atv_default ? 1 : v;
        break;
      case atk_access:
        ok = one_of(v, {atv_default, atv_all, atv_cgroup, atv_pteam, atv_thread});
        break;
      case atk_pool_size:
        r->pool_size = v == atv_default ? unbounded : v;
        break;
      case atk_fallback:
        ok = one_of(v, {atv_default, atv_default_mem_fb, atv_null_fb, atv_abort_fb, atv_allocator_fb});
        r->fallback = v == atv_default ? atv_default_mem_fb : v;
        break;
      case atk_fb_data:
        r->fb_data = v;
        break;
      case atk_pinned:
        ok = one_of(v, {atv_default, atv_false});
        if (v == atv_true) problem = "asks for pinned memory, which weft does not provide";
        break;
      case atk_partition:
        ok = one_of(v, {atv_default, atv_environment, atv_nearest, atv_blocked, atv_interleaved});
        break;
      default:
        why = "trait key " + std::to_string(key) + " does not exist";
        delete r;
        return null_allocator;
    }
    if (!ok) {
      why = std::string("trait ") + key_names[key] + " = " + std::to_string(v) + " " + problem;
      delete r;
      return null_allocator;
    }
  }
  return reinterpret_cast<std::uintptr_t>(r);
}

}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

GOMP_API std::uintptr_t omp_init_allocator(std::uintptr_t memspace, int ntraits, const alloc_trait* traits) {
  std::string why;
  std::uintptr_t a = make_allocator(memspace, ntraits, traits, why);
  if (!a) std::fprintf(stderr, "weft: omp_init_allocator: %s (omp_null_allocator returned)\n", why.c_str());
  return a;
}
GOMP_API void omp_destroy_allocator(std::uintptr_t a) {
  delete record_of(a);
}
GOMP_API void omp_set_default_allocator(std::uintptr_t a) {
  writable_icvs().def_allocator = a ? a : default_mem_alloc;
}
GOMP_API std::uintptr_t omp_get_default_allocator(void) {
  return default_allocator();
}

GOMP_API void* omp_alloc(std::size_t size, std::uintptr_t a) {
  return size ? allocate("omp_alloc", 1, size, a, false) : nullptr;
}
GOMP_API void* omp_aligned_alloc(std::size_t alignment, std::size_t size, std::uintptr_t a) {
  return size ? allocate("omp_aligned_alloc", alignment, size, a, false) : nullptr;
}
GOMP_API void* omp_calloc(std::size_t n, std::size_t size, std::uintptr_t a) {
  return n && size ? allocate("omp_calloc", 1, bytes(n, size), a, true) : nullptr;
}
GOMP_API void* omp_aligned_calloc(std::size_t alignment, std::size_t n, std::size_t size, std::uintptr_t a) {
  return n && size ? allocate("omp_aligned_calloc", alignment, bytes(n, size), a, true) : nullptr;
}
GOMP_API void omp_free(void* p, std::uintptr_t) {
  release(p);
}
// A null allocator reallocates with the block's own. A block that cannot be replaced stays as it
// was (NULL returned, or the fallback's abort).
GOMP_API void* omp_realloc(void* p, std::size_t size, std::uintptr_t a, std::uintptr_t) {
  if (!p) return size ? allocate("omp_realloc", 1, size, a, false) : nullptr;
  if (!size) {
    release(p);
    return nullptr;
  }
  block_header old = header_of(p);
  void* q = allocate("omp_realloc", 1, size, a ? a : old.allocator, false, &old);
  if (!q) return nullptr;
  std::memcpy(q, p, old.size < size ? old.size : size);
  // The new block took over the old one's share of the pool when both are the same allocator's.
  if (header_of(q).allocator == old.allocator && old.reserved) {
    std::free(old.raw);
  } else {
    release(p);
  }
  return q;
}

// The allocate clause: as omp_aligned_alloc, except that a null_fb allocator that cannot serve
// aborts as abort_fb would (the spec's rule for allocations that arise from clauses).
GOMP_API void* GOMP_alloc(std::size_t alignment, std::size_t size, std::uintptr_t a) {
  if (!size) return nullptr;
  void* p = allocate("GOMP_alloc (allocate clause)", alignment, size, a, false);
  if (!p) out_of_memory("GOMP_alloc (allocate clause)", size, "the allocator could not serve");
  return p;
}
GOMP_API void GOMP_free(void* p, std::uintptr_t) {
  release(p);
}

// gcc 14 (GOMP_5.1.2): an allocatable that `!$omp allocators` / `allocate` placed with GOMP_alloc is
// registered here, and DEALLOCATE or a reallocation asks whether a block is one of those (then it
// goes to GOMP_free or omp_realloc instead of free or realloc). Asking forgets the block, as in
// libgomp: each such call is followed by freeing or replacing it. Not a hot path: one lock.
namespace {
std::mutex placed_lock;
std::unordered_set<void*>& placed_allocatables() {
  static auto* set = new std::unordered_set<void*>;  // never destroyed: atexit code may still ask
  return *set;
}
}  // namespace
GOMP_API void GOMP_add_alloc(void* p) {
  if (!p) return;
  std::lock_guard<std::mutex> g(placed_lock);
  placed_allocatables().insert(p);
}
GOMP_API bool GOMP_is_alloc(void* p) {
  if (!p) return false;
  std::lock_guard<std::mutex> g(placed_lock);
  return placed_allocatables().erase(p) != 0;
}

}  // extern "C"
