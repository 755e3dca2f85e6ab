// Fiber stacks (mmap with a guard page) and the switch between contexts (Boost.Context's fcontext),
// with the annotations AddressSanitizer and ThreadSanitizer need to follow a stack switch.
#include "fiber/context.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <boost/context/detail/fcontext.hpp>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define WEFT_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define WEFT_TSAN 1
#endif

namespace weft::fiber {

namespace bc = boost::context::detail;

const char* describe(wait_kind k) {
  switch (k) {
    case wait_kind::none:
      return "nothing";
    case wait_kind::children:
      return "its children (taskwait)";
    case wait_kind::taskgroup:
      return "the tasks of a taskgroup";
    case wait_kind::event:
      return "an event";
    case wait_kind::predecessors:
      return "its predecessors (undeferred task)";
    case wait_kind::yield:
      return "nothing (it yielded)";
    case wait_kind::throttle:
      return "fewer live tasks (throttled producer)";
    case wait_kind::barrier:
      return "a barrier";
    case wait_kind::graph:
      return "an earlier round of its persistent graph (lookahead)";
  }
  return "?";
}

namespace {

std::mutex registry_lock;
context* registry = nullptr;  // every fiber made, through registered_next
std::atomic<std::int64_t> made{0};
std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

// Hand-off from the context being left to the one arriving (lives on the leaver's stack, which
// stays untouched until `after` has run).
struct handoff {
  context* from;
  context* to;
  void (*after)(context*, void*);
  void* arg;
  void (*entry)();  // a fresh fiber's body
};

void arrive(bc::transfer_t t) {
  auto* h = static_cast<handoff*>(t.data);
  context* from = h->from;
  context* to = h->to;
  void (*after)(context*, void*) = h->after;
  void* arg = h->arg;
  from->resume_at = t.fctx;
#if WEFT_ASAN
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(to->asan_fake_stack, &bottom, &size);
  if (from->thread_stack && !from->asan_bottom) {
    from->asan_bottom = bottom;
    from->asan_size = size;
  }
#else
  (void)to;
#endif
  if (after) after(from, arg);
}

void fiber_main(bc::transfer_t t) {
  auto* h = static_cast<handoff*>(t.data);
  void (*entry)() = h->entry;
  arrive(t);
  entry();
  std::fprintf(stderr, "weft: internal error: a fiber's body returned\n");
  std::abort();
}

}  // namespace

std::size_t fiber_stack_size(std::size_t requested) {
  std::size_t size = requested;
  if (!size) {
    struct rlimit r;
    size = 8u << 20;
    if (getrlimit(RLIMIT_STACK, &r) == 0 && r.rlim_cur != RLIM_INFINITY) size = static_cast<std::size_t>(r.rlim_cur);
  }
  std::size_t p = page_size();
  if (size < (64u << 10)) size = 64u << 10;
  if (size > (std::size_t{1} << 30)) size = std::size_t{1} << 30;
  return (size + p - 1) / p * p;
}

context* make_fiber(std::size_t stack_size, void (*entry)()) {
  std::size_t p = page_size();
  // [guard page][stack ............][context record]: the record sits above the stack's top.
  std::size_t record = (sizeof(context) + p - 1) / p * p;
  std::size_t total = p + stack_size + record;
  void* mem =
      mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (mem == MAP_FAILED) {
    std::fprintf(stderr, "weft: cannot map a %zu-byte fiber stack (%lld fibers exist; see WEFT_STACKSIZE)\n", total,
                 static_cast<long long>(made.load()));
    std::abort();
  }
  if (mprotect(mem, p, PROT_NONE) != 0) {
    std::fprintf(stderr, "weft: cannot protect a fiber's guard page (%lld fibers exist; vm.max_map_count?)\n",
                 static_cast<long long>(made.load()));
    std::abort();
  }
  char* low = static_cast<char*>(mem) + p;
  auto* ctx = new (low + stack_size) context();
  ctx->set_stack(low, stack_size);
  // The first switch-in starts fiber_main, which reads the entry from the hand-off.
  ctx->resume_at = bc::make_fcontext(low + stack_size, stack_size, fiber_main);
  ctx->asan_bottom = low;
  ctx->asan_size = stack_size;
#if WEFT_TSAN
  ctx->tsan_fiber = __tsan_create_fiber(0);
#endif
  ctx->entry = entry;
  {
    std::lock_guard<std::mutex> g(registry_lock);
    ctx->registered_next = registry;
    registry = ctx;
  }
  made.fetch_add(1, std::memory_order_relaxed);
  return ctx;
}

void trim_stack(context* ctx) {
  // Keep the top page (frames of the loop the fiber parked in); drop the rest.
  std::size_t p = page_size();
  if (ctx->stack_size > p) madvise(ctx->stack_low, ctx->stack_size - p, MADV_DONTNEED);
}

void release_all_fibers() {
  std::lock_guard<std::mutex> g(registry_lock);
  std::size_t p = page_size();
  for (context* c = registry; c;) {
    context* next = c->registered_next;
#if WEFT_TSAN
    __tsan_destroy_fiber(c->tsan_fiber);
#endif
    std::size_t record = (sizeof(context) + p - 1) / p * p;
    char* mem = c->stack_low - p;
    std::size_t total = p + c->stack_size + record;
    c->~context();
#if WEFT_ASAN
    // Frames left on a stack that is not unwound keep their redzones poisoned: a later mapping at
    // this address (a trace buffer, a new stack) would inherit them.
    __asan_unpoison_memory_region(mem, total);
#endif
    munmap(mem, total);
    c = next;
  }
  registry = nullptr;
  made.store(0, std::memory_order_relaxed);
}

std::int64_t fibers_made() {
  return made.load(std::memory_order_relaxed);
}

void for_each_fiber(void (*fn)(context*, void*), void* arg) {
  std::lock_guard<std::mutex> g(registry_lock);
  for (context* c = registry; c; c = c->registered_next) fn(c, arg);
}

void init_thread_context(context* ctx) {
  ctx->thread_stack = true;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    std::size_t size = 0;
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    ctx->set_stack(static_cast<char*>(addr), size);
  }
#if WEFT_TSAN
  ctx->tsan_fiber = __tsan_get_current_fiber();
#endif
}

void switch_to(context* from, context* to, void (*after)(context*, void*), void* arg) {
  handoff h{from, to, after, arg, to->entry};  // entry: read by a fresh fiber's first start only
#if WEFT_ASAN
  __sanitizer_start_switch_fiber(&from->asan_fake_stack, to->asan_bottom, to->asan_size);
#endif
#if WEFT_TSAN
  __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
  bc::transfer_t t = bc::jump_fcontext(to->resume_at, &h);
  arrive(t);
}

}  // namespace weft::fiber
