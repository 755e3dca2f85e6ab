/* The entry points GCC 13's libgomp added (OpenMP 5.1/5.2), which a program built by gcc 13 may
 * reference: omp_in_explicit_task, omp_get_mapped_ptr, omp_target_is_accessible,
 * omp_target_memcpy_async / omp_target_memcpy_rect_async (copies made by tasks that wait for depend
 * objects), and GOMP_taskwait_depend_nowait (what gcc 13 emits for `taskwait depend(...) nowait`).
 * gcc 12 (this machine's) has neither the declarations nor the symbols in its libgomp: they are
 * declared here as weak references, and on a runtime without them (libgomp 12) each phase says it is
 * skipped; on weft (which defines weft_initialized) every one must be there. The taskwait-nowait
 * call uses gcc's depend array (count, out count, addresses). */
#include "omp_test.h"

#include <stdint.h>

extern int omp_in_explicit_task(void) __attribute__((weak));
extern void *omp_get_mapped_ptr(const void *, int) __attribute__((weak));
extern int omp_target_is_accessible(const void *, size_t, int) __attribute__((weak));
extern int omp_target_memcpy_async(void *, const void *, size_t, size_t, size_t, int, int, int,
                                   omp_depend_t *) __attribute__((weak));
extern int omp_target_memcpy_rect_async(void *, const void *, size_t, int, const size_t *, const size_t *,
                                        const size_t *, const size_t *, const size_t *, int, int, int,
                                        omp_depend_t *) __attribute__((weak));
extern void GOMP_taskwait_depend_nowait(void **) __attribute__((weak));
extern int weft_initialized(void) __attribute__((weak));

static int have(const void *entry, const char *name) {
  CHECK(entry || !weft_initialized, "%s: missing on weft", name);
  if (!entry) printf("%s: not provided by this runtime (phase skipped)\n", name);
  return entry != NULL;
}

int main(void) {
  int host = omp_get_initial_device();

  PHASE("omp_in_explicit_task");
  if (have((void *)omp_in_explicit_task, "omp_in_explicit_task")) {
    CHECK(!omp_in_explicit_task(), "the initial implicit task is not explicit");
    int in_task = -1, in_region = -1, in_included = -1;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
      in_region = omp_in_explicit_task();
#pragma omp task shared(in_task)
      in_task = omp_in_explicit_task();
#pragma omp task if (0) shared(in_included)
      in_included = omp_in_explicit_task();
#pragma omp taskwait
    }
    CHECK(in_region == 0 && in_task == 1 && in_included == 1,
          "implicit task %d (expected 0), deferred task %d, undeferred task %d (expected 1)", in_region, in_task,
          in_included);
  }

  PHASE("mapped pointers and accessibility on the host");
  static int buffer[64];
  if (have((void *)omp_get_mapped_ptr, "omp_get_mapped_ptr")) {
    CHECK(omp_get_mapped_ptr(buffer, host) == buffer, "the host's mapped pointer of a host address is itself");
    CHECK(omp_get_mapped_ptr(buffer, -7) == NULL, "no mapped pointer on a device that does not exist");
  }
  if (have((void *)omp_target_is_accessible, "omp_target_is_accessible"))
    CHECK(omp_target_is_accessible(buffer, sizeof buffer, host), "host memory is accessible from the host");

  PHASE("omp_target_memcpy_async after a task that writes the source");
  if (have((void *)omp_target_memcpy_async, "omp_target_memcpy_async")) {
    static int src[256], dst[256];
    for (int rounds = 0; rounds < 20; rounds++) {
      memset(dst, 0, sizeof dst);
#pragma omp parallel num_threads(2)
#pragma omp single
      {
        omp_depend_t written;
#pragma omp depobj(written) depend(in: src)
#pragma omp task depend(out: src)
        {
          for (int i = 0; i < 256; i++) src[i] = i + rounds;
        }
        int rc = omp_target_memcpy_async(dst, src, sizeof src, 0, 0, host, host, 1, &written);
        CHECK(rc == 0, "omp_target_memcpy_async returned %d", rc);
#pragma omp taskwait
#pragma omp depobj(written) destroy
      }
      for (int i = 0; i < 256; i++) CHECK(dst[i] == i + rounds, "round %d: dst[%d] = %d", rounds, i, dst[i]);
    }
    CHECK(omp_target_memcpy_async(dst, src, 4, 0, 0, -7, host, 0, NULL) != 0, "a device that does not exist");
  }

  PHASE("omp_target_memcpy_rect_async");
  if (have((void *)omp_target_memcpy_rect_async, "omp_target_memcpy_rect_async")) {
    static int grid[8][8], block[3][4];
    for (int i = 0; i < 8; i++)
      for (int j = 0; j < 8; j++) grid[i][j] = 10 * i + j;
    size_t volume[2] = {3, 4}, dst_off[2] = {0, 0}, src_off[2] = {2, 1}, dst_dims[2] = {3, 4}, src_dims[2] = {8, 8};
    int rc;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
      rc = omp_target_memcpy_rect_async(block, grid, sizeof(int), 2, volume, dst_off, src_off, dst_dims, src_dims,
                                        host, host, 0, NULL);
      volume[0] = 0;  // the copy keeps its own arguments
#pragma omp taskwait
    }
    CHECK(rc == 0, "omp_target_memcpy_rect_async returned %d", rc);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        CHECK(block[i][j] == 10 * (i + 2) + j + 1, "block[%d][%d] = %d", i, j, block[i][j]);
  }

  PHASE("taskwait depend nowait");
  if (have((void *)GOMP_taskwait_depend_nowait, "GOMP_taskwait_depend_nowait")) {
    for (int rounds = 0; rounds < 50; rounds++) {
      int x = 0, seen = -1;
#pragma omp parallel num_threads(2)
#pragma omp single
      {
#pragma omp task depend(out: x) shared(x)
        {
          for (volatile int spin = 0; spin < 2000; spin++) {
          }
          x = 1;
        }
        /* taskwait depend(inout: x) nowait: a task after it that reads x sees the writer done. */
        void *depend[3] = {(void *)(uintptr_t)1, (void *)(uintptr_t)1, &x};
        GOMP_taskwait_depend_nowait(depend);
#pragma omp task depend(in: x) shared(x, seen)
        seen = x;
#pragma omp taskwait
      }
      CHECK(seen == 1, "round %d: a task ordered after taskwait-nowait saw x = %d", rounds, seen);
    }
  }
  PASS();
}
