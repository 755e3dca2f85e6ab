// The symmetric heap: one address range reserved at the same place on every rank (mmap, no memory
// until a page is touched), handed out by a bump pointer that every rank moves the same way, since
// weft_dist_alloc is collective. Regions registered in it name the data a distributed loop moves.
#include <sys/mman.h>
#include <weft/dist.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "dist/dist.hpp"

namespace weft::dist {

namespace {

std::mutex lock;  // the calls below are rare (set-up), from any thread
communicators the_comms;
std::map<std::uintptr_t, region_entry> the_regions;

struct heap {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  std::size_t used = 0;
  std::map<std::uintptr_t, std::size_t> blocks;  // live allocations
} the_heap;

std::size_t heap_size_wanted() {
  const char* v = std::getenv("WEFT_DIST_HEAP");
  std::size_t size = std::size_t{1} << 40;
  if (!v || !*v) return size;
  char* end = nullptr;
  double x = std::strtod(v, &end);
  double unit = 1;
  switch (end && *end ? *end : ' ') {
    case 'k':
    case 'K':
      unit = 1024.0;
      break;
    case 'm':
    case 'M':
      unit = 1024.0 * 1024;
      break;
    case 'g':
    case 'G':
      unit = 1024.0 * 1024 * 1024;
      break;
    case 't':
    case 'T':
      unit = 1024.0 * 1024 * 1024 * 1024;
      break;
    default:
      break;
  }
  if (x * unit < 1 << 20) {
    std::fprintf(stderr, "weft: WEFT_DIST_HEAP=%s is not a size of at least 1M (e.g. 64G); using 1T\n", v);
    return size;
  }
  return (static_cast<std::size_t>(x * unit) + 4095) & ~std::size_t{4095};
}

// Rank 0 reserves anywhere and says where; the others reserve at the same address, which fails when
// their own mappings lie there: then all try again elsewhere, below the last try.
// Rank 0 takes the size asked for, or half of it while the kernel refuses (a sanitizer's shadow
// memory leaves less address space), and says how much too.
bool reserve_heap() {
  const communicators& c = the_comms;
  const std::size_t wanted = heap_size_wanted();
  std::size_t size = wanted;
  std::uintptr_t hint = 0;
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::uintptr_t at = 0;
    void* mine = MAP_FAILED;
    if (c.rank == 0) {
      for (;;) {
        mine = mmap(reinterpret_cast<void*>(hint), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (mine != MAP_FAILED || size <= std::size_t{1} << 26) break;
        size /= 2;
      }
      at = mine == MAP_FAILED ? 0 : reinterpret_cast<std::uintptr_t>(mine);
    }
    std::uintptr_t where[2] = {at, size};
    PMPI_Bcast(where, sizeof where, MPI_BYTE, 0, c.setup);
    at = where[0];
    size = where[1];
    if (!at) break;
    int ok = 1;
    if (c.rank != 0) {
      mine = mmap(reinterpret_cast<void*>(at), size, PROT_NONE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
      ok = mine != MAP_FAILED && reinterpret_cast<std::uintptr_t>(mine) == at;
      if (!ok && mine != MAP_FAILED) munmap(mine, size);  // an old kernel placed it elsewhere
    }
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c.setup);
    if (all) {
      the_heap.base = at;
      the_heap.size = size;
      if (size < wanted && c.rank == 0)
        std::fprintf(stderr, "weft: the symmetric heap is %zu MiB, not the %zu asked for (address space)\n", size >> 20,
                     wanted >> 20);
      return true;
    }
    if (ok) munmap(reinterpret_cast<void*>(at), size);
    hint = at > 2 * size ? at - 2 * size : 0;
  }
  complain(WEFT_ERR_OUT_OF_MEMORY, "weft_dist_alloc",
           "no address range of %zu bytes is free on every rank (WEFT_DIST_HEAP sets the size)", wanted);
  return false;
}

// Whether two regions share a byte. Same stride: rows and columns (offsets within a row) must both
// meet; otherwise each row of the one with fewer rows against the rows of the other it can meet.
bool overlap(std::uintptr_t a, const region_entry& ra, std::uintptr_t b, const region_entry& rb) {
  if (a >= b + rb.extent() || b >= a + ra.extent()) return false;
  if (ra.rows == 1 && rb.rows == 1) return true;
  if (ra.stride == rb.stride && ra.rows > 1 && rb.rows > 1) {
    // Row i of a starts at (qa + i) s + ca, row k of b at (qb + k) s + cb. They meet when, with
    // d = qa + i - qb - k, cb - ca - la < d s < cb - ca + lb: only d in -1..1 can, and such i, k
    // exist when i - k = d + qb - qa lies in -(rows_b - 1) .. rows_a - 1.
    const long st = static_cast<long>(ra.stride);
    const long qa = static_cast<long>(a / ra.stride), qb = static_cast<long>(b / ra.stride);
    const long ca = static_cast<long>(a % ra.stride), cb = static_cast<long>(b % ra.stride);
    for (long d = -1; d <= 1; ++d) {
      if (!(cb - ca - static_cast<long>(ra.row_bytes) < d * st && d * st < cb - ca + static_cast<long>(rb.row_bytes)))
        continue;
      const long diff = d + qb - qa;
      if (diff >= -(static_cast<long>(rb.rows) - 1) && diff <= static_cast<long>(ra.rows) - 1) return true;
    }
    return false;
  }
  if (ra.rows > rb.rows) return overlap(b, rb, a, ra);
  for (std::size_t i = 0; i < ra.rows; ++i) {
    const std::uintptr_t x = a + i * ra.stride, end = x + ra.row_bytes;  // against b's rows k
    if (end <= b) continue;
    const std::uintptr_t last = (end - 1 - b) / rb.stride;  // rows starting before end
    const std::uintptr_t first = x >= b + rb.row_bytes ? (x - b - rb.row_bytes) / rb.stride + 1 : 0;  // ending after x
    if (first <= last && first < rb.rows) return true;
  }
  return false;
}

std::size_t widest = 0;  // the largest extent registered: how far back an overlapping one can start

int register_region(const char* call, const void* address, std::size_t rows, std::size_t row_bytes, std::size_t stride,
                    int home) {
  std::lock_guard<std::mutex> hold(lock);
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  const int size = weft_dist_size();
  if (size < 1) return complain(WEFT_ERR_NOT_INITIALIZED, call, "MPI is not initialised");
  if (home < 0 || home >= size)
    return complain(WEFT_ERR_INVALID_ARGUMENT, call, "home %d is not a rank (0..%d)", home, size - 1);
  if (rows == 0 || row_bytes == 0 || rows * row_bytes > static_cast<std::size_t>(INT32_MAX))
    return complain(WEFT_ERR_INVALID_ARGUMENT, call, "%zu rows of %zu bytes: not 1 .. 2^31-1 bytes in all", rows,
                    row_bytes);
  if (rows > 1 && stride < row_bytes)
    return complain(WEFT_ERR_INVALID_ARGUMENT, call, "stride_bytes %zu is below row_bytes %zu", stride, row_bytes);
  const region_entry r{rows, row_bytes, rows > 1 ? stride : row_bytes, home};
  auto b = the_heap.blocks.upper_bound(at);
  if (b == the_heap.blocks.begin() || at + r.extent() > std::prev(b)->first + std::prev(b)->second)
    return complain(WEFT_ERR_INVALID_ARGUMENT, call,
                    "[%p, +%zu) is not inside one block of weft_dist_alloc (the symmetric heap)", address, r.extent());
  for (auto it = the_regions.lower_bound(at > widest ? at - widest : 0);
       it != the_regions.end() && it->first < at + r.extent(); ++it)
    if (overlap(at, r, it->first, it->second))
      return complain(WEFT_ERR_INVALID_ARGUMENT, call, "the region at %p overlaps the region at %p", address,
                      reinterpret_cast<void*>(it->first));
  the_regions.emplace(at, r);
  if (r.extent() > widest) widest = r.extent();
  return WEFT_OK;
}

}  // namespace

int complain(int status, const char* call, const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  std::fprintf(stderr, "weft: %s: %s (rank %d)\n", call, text, the_comms.rank);
  return status;
}

bool ensure_communicators(const char* call) {
  if (the_comms.loop != MPI_COMM_NULL) return true;
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!initialized || finalized) {
    complain(WEFT_ERR_NOT_INITIALIZED, call, "MPI is not initialised (call it between MPI_Init and MPI_Finalize)");
    return false;
  }
  PMPI_Comm_dup(MPI_COMM_WORLD, &the_comms.loop);
  PMPI_Comm_dup(MPI_COMM_WORLD, &the_comms.setup);
  PMPI_Comm_rank(MPI_COMM_WORLD, &the_comms.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &the_comms.size);
  return true;
}

const communicators& comms() {
  return the_comms;
}
const std::map<std::uintptr_t, region_entry>& regions() {
  return the_regions;
}

}  // namespace weft::dist

using namespace weft::dist;

extern "C" {

WEFT_API int weft_dist_rank(void) {
  int initialized = 0;
  PMPI_Initialized(&initialized);
  if (!initialized) return -1;
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

WEFT_API int weft_dist_size(void) {
  int initialized = 0;
  PMPI_Initialized(&initialized);
  if (!initialized) return -1;
  int size = -1;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

WEFT_API void* weft_dist_alloc(size_t bytes) {
  std::lock_guard<std::mutex> hold(lock);
  if (!ensure_communicators("weft_dist_alloc")) return nullptr;
  const communicators& c = the_comms;
  // Every rank must ask for the same: compare before anything moves.
  unsigned long long asked[2] = {bytes, ~static_cast<unsigned long long>(bytes)}, agreed[2] = {0, 0};
  PMPI_Allreduce(asked, agreed, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, c.setup);
  if (agreed[0] != bytes || ~agreed[1] != bytes) {
    complain(WEFT_ERR_INVALID_ARGUMENT, "weft_dist_alloc",
             "ranks asked for different sizes (here %zu bytes, another rank %llu): the call is collective", bytes,
             agreed[0] != bytes ? agreed[0] : ~agreed[1]);
    return nullptr;
  }
  if (bytes == 0) {
    complain(WEFT_ERR_INVALID_ARGUMENT, "weft_dist_alloc", "bytes is 0");
    return nullptr;
  }
  if (!the_heap.base && !reserve_heap()) return nullptr;
  const std::size_t rounded = (bytes + 4095) & ~std::size_t{4095};  // whole pages: free gives them back
  if (rounded > the_heap.size - the_heap.used) {
    complain(WEFT_ERR_OUT_OF_MEMORY, "weft_dist_alloc",
             "%zu bytes do not fit in the symmetric heap (%zu of %zu used; WEFT_DIST_HEAP sets its size)", bytes,
             the_heap.used, the_heap.size);
    return nullptr;
  }
  const std::uintptr_t at = the_heap.base + the_heap.used;
  if (mprotect(reinterpret_cast<void*>(at), rounded, PROT_READ | PROT_WRITE) != 0) {
    complain(WEFT_ERR_OUT_OF_MEMORY, "weft_dist_alloc", "mprotect: %s", std::strerror(errno));
    return nullptr;
  }
  the_heap.used += rounded;
  the_heap.blocks[at] = rounded;
  return reinterpret_cast<void*>(at);
}

WEFT_API int weft_dist_free(void* address) {
  std::lock_guard<std::mutex> hold(lock);
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  auto b = the_heap.blocks.find(at);
  if (b == the_heap.blocks.end())
    return complain(WEFT_ERR_INVALID_ARGUMENT, "weft_dist_free", "%p is not a block from weft_dist_alloc", address);
  const std::size_t size = b->second;
  the_regions.erase(the_regions.lower_bound(at), the_regions.lower_bound(at + size));
  // Fresh zero pages on the next use, and no memory meanwhile; the range itself is reused only
  // when it is the last one (every rank frees the same blocks, so the heaps stay alike).
  mmap(address, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  the_heap.blocks.erase(b);
  if (at + size == the_heap.base + the_heap.used) the_heap.used -= size;
  return WEFT_OK;
}

WEFT_API int weft_dist_region(const void* address, size_t bytes, int home) {
  return register_region("weft_dist_region", address, 1, bytes, bytes, home);
}

WEFT_API int weft_dist_region_2d(const void* address, size_t rows, size_t row_bytes, size_t stride_bytes, int home) {
  return register_region("weft_dist_region_2d", address, rows, row_bytes, stride_bytes, home);
}

WEFT_API int weft_dist_home(const void* address) {
  std::lock_guard<std::mutex> hold(lock);
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  for (auto r = the_regions.upper_bound(at); r != the_regions.begin();) {
    --r;
    if (r->first + widest <= at) break;
    const std::uintptr_t offset = at - r->first;
    if (offset < r->second.extent() && offset % r->second.stride < r->second.row_bytes) return r->second.home;
  }
  return -1;
}

WEFT_API int weft_dist_block_cyclic(long index, long block) {
  const int size = weft_dist_size();
  if (size < 1) return complain(-1, "weft_dist_block_cyclic", "MPI is not initialised");
  if (index < 0 || block < 1)
    return complain(-1, "weft_dist_block_cyclic", "index %ld, block %ld: expected index >= 0 and block >= 1", index, block);
  return static_cast<int>((index / block) % size);
}

}  // extern "C"
