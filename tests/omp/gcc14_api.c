/* The entry points GCC 14's libgomp added (version node GOMP_5.1.2), which a program built by gcc 14
 * may reference: GOMP_add_alloc / GOMP_is_alloc (Fortran allocatables placed by an `allocators` or
 * `allocate` directive: DEALLOCATE asks whether a block is one of them before choosing GOMP_free or
 * free) and GOMP_target_map_indirect_ptr (a `declare target indirect` function's device address).
 * gcc 12 (this machine's) has no declarations and its libgomp no symbols: they are weak references
 * here, and a runtime without them (libgomp 12) skips each phase; on weft (which defines
 * weft_initialized) every one must be there, under the version gcc 14's binaries ask for. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>

#include "omp_test.h"

extern void GOMP_add_alloc(void *) __attribute__((weak));
extern bool GOMP_is_alloc(void *) __attribute__((weak));
extern void *GOMP_target_map_indirect_ptr(void *) __attribute__((weak));
extern void *GOMP_alloc(size_t, size_t, uintptr_t) __attribute__((weak));
extern void GOMP_free(void *, uintptr_t) __attribute__((weak));
extern int weft_initialized(void) __attribute__((weak));

static int have(const void *entry, const char *name) {
  CHECK(entry || !weft_initialized, "%s: missing on weft", name);
  if (!entry) {
    printf("%s: not provided by this runtime (phase skipped)\n", name);
    return 0;
  }
  /* A gcc 14 binary binds these names at version GOMP_5.1.2: the node must exist. */
  if (weft_initialized)
    CHECK(dlvsym(RTLD_DEFAULT, name, "GOMP_5.1.2") == entry, "%s is not exported as %s@GOMP_5.1.2", name, name);
  return 1;
}

static int indirect_target(int x) { return 3 * x; }

int main(void) {
  PHASE("an allocatable placed with an allocator is recognised once");
  if (have((void *)GOMP_add_alloc, "GOMP_add_alloc") && have((void *)GOMP_is_alloc, "GOMP_is_alloc")) {
    GOMP_add_alloc(NULL); /* a failed allocation is not recorded */
    CHECK(!GOMP_is_alloc(NULL), "a null pointer is never an allocator's block");
    void *placed = GOMP_alloc(64, 1000, (uintptr_t)omp_default_mem_alloc);
    CHECK(placed && ((uintptr_t)placed & 63) == 0, "GOMP_alloc(64, 1000) gave %p", placed);
    void *plain = malloc(1000);
    GOMP_add_alloc(placed);
    CHECK(!GOMP_is_alloc(plain), "a malloc'd block taken for an allocator's");
    CHECK(GOMP_is_alloc(placed), "the registered block was not recognised");
    /* Asking forgets it (DEALLOCATE frees it next): a block malloc later reuses is not taken for one. */
    CHECK(!GOMP_is_alloc(placed), "the block was still registered after the first question");
    GOMP_free(placed, 0);
    free(plain);

    PHASE("registrations from every thread of a team");
    enum { per_thread = 2000 };
    int wrong = 0;
#pragma omp parallel reduction(+ : wrong)
    {
      void **mine = malloc(per_thread * sizeof *mine);
      for (int i = 0; i < per_thread; i++) {
        mine[i] = omp_alloc(16, omp_default_mem_alloc);
        GOMP_add_alloc(mine[i]);
      }
      for (int i = 0; i < per_thread; i++) {
        wrong += !GOMP_is_alloc(mine[i]);
        omp_free(mine[i], omp_default_mem_alloc);
      }
      free(mine);
    }
    CHECK(wrong == 0, "%d registered blocks were not recognised", wrong);
  }

  PHASE("indirect function pointers on the host");
  if (have((void *)GOMP_target_map_indirect_ptr, "GOMP_target_map_indirect_ptr")) {
    int (*f)(int) = (int (*)(int))GOMP_target_map_indirect_ptr((void *)indirect_target);
    CHECK(f == indirect_target && f(7) == 21, "the host's address of a function is its own");
    CHECK(GOMP_target_map_indirect_ptr(NULL) == NULL, "a null function pointer stays null");
  }
  PASS();
}
