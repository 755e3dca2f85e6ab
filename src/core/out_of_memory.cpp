// What the runtime does when the system has no memory left for it (see engine.hpp): refuse the call
// that asked, or end the process with a message that names weft and what it was allocating, as
// libgomp and LLVM's libomp do. Never a crash on a null pointer, never a bare "terminate called
// after throwing an instance of 'std::bad_alloc'" from a C entry point.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <new>

#include "core/engine.hpp"

namespace weft::core {

namespace {
thread_local int recoverable_depth = 0;

void operator_new_failed() {
  if (recoverable_depth > 0) throw std::bad_alloc();
  out_of_memory("the runtime's own records (operator new)", 0);
}

// At load: omp_init_allocator and other entry points allocate before any runtime starts.
[[gnu::constructor]] void install_out_of_memory_handler() {
  // Only where the new-handler is the runtime's alone: libweft.so links its C++ runtime in with
  // every symbol local, so its std::set_new_handler is not the one the process exports. Where the
  // program's libstdc++ serves weft too (libweft.a in a C++ program, sanitizer builds), the
  // handler belongs to the program and is left alone.
  using setter = std::new_handler (*)(std::new_handler) noexcept;
  setter ours = &std::set_new_handler;
  void* exported = dlsym(RTLD_DEFAULT, "_ZSt15set_new_handlerPFvvE");
  if (exported == reinterpret_cast<void*>(ours)) return;
  std::set_new_handler(operator_new_failed);
}
}  // namespace

recoverable_allocation::recoverable_allocation() {
  ++recoverable_depth;
}
recoverable_allocation::~recoverable_allocation() {
  --recoverable_depth;
}

void out_of_memory(const char* what, std::size_t bytes) {
  // stderr is unbuffered: the message needs no memory of its own.
  if (bytes)
    std::fprintf(stderr, "weft: out of memory: cannot allocate %zu bytes for %s\n", bytes, what);
  else
    std::fprintf(stderr, "weft: out of memory: cannot allocate %s\n", what);
  std::abort();
}

}  // namespace weft::core
