/* The rest of the omp_* API a gcc-12 program can call, plus allocator-related entry points:
 * memory allocators (omp_alloc/aligned_alloc/calloc/realloc/free, default allocator get/set,
 * omp_init_allocator with an alignment trait, omp_destroy_allocator), the allocate clause
 * (GOMP_alloc/GOMP_free), host-device memory routines (omp_target_alloc/memcpy/is_present/free on
 * the initial device), affinity format set/get/capture, pause resource, teams ICV setters,
 * deprecated omp_set_nested/omp_get_nested, the error directive with severity(warning)
 * (GOMP_warning: must not terminate) and severity(fatal) in a child (GOMP_error: libgomp's text and
 * a failure status), the scope construct with private and reduction. */
#include "omp_test.h"
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

int main(void) {
  int T = omp_test_threads();

  PHASE("omp_alloc family");
  {
    int *p = (int *)omp_alloc(100 * sizeof(int), omp_default_mem_alloc);
    CHECK(p != NULL, "omp_alloc returned NULL");
    for (int i = 0; i < 100; i++) p[i] = i;
    p = (int *)omp_realloc(p, 200 * sizeof(int), omp_default_mem_alloc, omp_default_mem_alloc);
    CHECK(p != NULL, "omp_realloc returned NULL");
    for (int i = 0; i < 100; i++) CHECK(p[i] == i, "omp_realloc lost p[%d]", i);
    omp_free(p, omp_default_mem_alloc);
    int *z = (int *)omp_calloc(50, sizeof(int), omp_default_mem_alloc);
    CHECK(z != NULL, "omp_calloc returned NULL");
    for (int i = 0; i < 50; i++) CHECK(z[i] == 0, "omp_calloc not zeroed at %d", i);
    omp_free(z, omp_default_mem_alloc);
    void *al = omp_aligned_alloc(256, 1000, omp_default_mem_alloc);
    CHECK(al != NULL && ((uintptr_t)al % 256) == 0, "omp_aligned_alloc %p", al);
    omp_free(al, omp_default_mem_alloc);
    void *alz = omp_aligned_calloc(128, 10, 10, omp_default_mem_alloc);
    CHECK(alz != NULL && ((uintptr_t)alz % 128) == 0, "omp_aligned_calloc %p", alz);
    omp_free(alz, omp_default_mem_alloc);

    omp_allocator_handle_t def = omp_get_default_allocator();
    omp_set_default_allocator(omp_large_cap_mem_alloc);
    CHECK(omp_get_default_allocator() == omp_large_cap_mem_alloc, "default allocator not set");
    void *q = omp_alloc(64, omp_null_allocator);
    CHECK(q != NULL, "omp_alloc with the default allocator");
    omp_free(q, omp_null_allocator);
    omp_set_default_allocator(def);

    omp_alloctrait_t traits[] = {{omp_atk_alignment, 64}};
    omp_allocator_handle_t a64 = omp_init_allocator(omp_default_mem_space, 1, traits);
    CHECK(a64 != omp_null_allocator, "omp_init_allocator failed");
    for (int i = 0; i < 20; i++) {
      void *r = omp_alloc(1 + i * 13, a64);
      CHECK(r != NULL && ((uintptr_t)r % 64) == 0, "allocator with alignment 64 returned %p", r);
      omp_free(r, a64);
    }
    omp_destroy_allocator(a64);

    int bad = 0;
    #pragma omp parallel reduction(+ : bad)
    {
      for (int i = 0; i < 50; i++) {
        double *d = (double *)omp_alloc(sizeof(double) * (size_t)(i + 1), omp_default_mem_alloc);
        if (!d) { bad++; continue; }
        d[i] = i;
        if (d[i] != i) bad++;
        omp_free(d, omp_default_mem_alloc);
      }
    }
    CHECK(bad == 0, "concurrent omp_alloc failures %d", bad);
  }

  PHASE("allocate clause");
  {
    int x = 0;
    long sum = 0;
    #pragma omp parallel private(x) allocate(omp_default_mem_alloc : x) reduction(+ : sum)
    {
      x = omp_get_thread_num() + 1;
      sum += x;
    }
    CHECK(sum == (long)T * (T + 1) / 2, "allocate clause region sum %ld", sum);
    int arr[8];
    #pragma omp parallel firstprivate(arr) allocate(arr) num_threads(2)
    {
      for (int i = 0; i < 8; i++) arr[i] = i;
      CHECK(arr[7] == 7, "allocated firstprivate array");
    }
  }

  PHASE("host device memory routines");
  {
    int host = omp_get_initial_device();
    int *d = (int *)omp_target_alloc(10 * sizeof(int), host);
    CHECK(d != NULL, "omp_target_alloc on the initial device");
    int src[10], dst[10];
    for (int i = 0; i < 10; i++) src[i] = i * i;
    CHECK(omp_target_memcpy(d, src, sizeof src, 0, 0, host, host) == 0, "omp_target_memcpy to");
    CHECK(omp_target_memcpy(dst, d, sizeof dst, 0, 0, host, host) == 0, "omp_target_memcpy from");
    for (int i = 0; i < 10; i++) CHECK(dst[i] == i * i, "memcpy dst[%d]=%d", i, dst[i]);
    CHECK(omp_target_is_present(src, host), "host memory is present on the host device");
    omp_target_free(d, host);
  }

  PHASE("affinity format");
  {
    omp_set_affinity_format("thread %n of %N");
    char buf[256];
    size_t n = omp_get_affinity_format(buf, sizeof buf);
    CHECK(n == strlen("thread %n of %N") && strcmp(buf, "thread %n of %N") == 0, "affinity format '%s' (%zu)", buf, n);
    int bad = 0;
    #pragma omp parallel num_threads(2) reduction(+ : bad)
    {
      char out[256];
      size_t m = omp_capture_affinity(out, sizeof out, NULL);
      char expect[64];
      snprintf(expect, sizeof expect, "thread %d of %d", omp_get_thread_num(), omp_get_num_threads());
      if (m != strlen(expect) || strcmp(out, expect) != 0) bad++;
    }
    CHECK(bad == 0, "omp_capture_affinity did not expand %%n/%%N");
  }

  PHASE("teams ICV setters");
  omp_set_num_teams(4);
  CHECK(omp_get_max_teams() == 4, "omp_get_max_teams %d", omp_get_max_teams());
  omp_set_teams_thread_limit(3);
  CHECK(omp_get_teams_thread_limit() == 3, "omp_get_teams_thread_limit %d", omp_get_teams_thread_limit());

  PHASE("deprecated nesting API");
  omp_set_nested(1);
  CHECK(omp_get_nested() == 1 && omp_get_max_active_levels() > 1, "omp_set_nested(1): nested %d levels %d", omp_get_nested(), omp_get_max_active_levels());
  omp_set_nested(0);
  CHECK(omp_get_nested() == 0 && omp_get_max_active_levels() == 1, "omp_set_nested(0): nested %d levels %d", omp_get_nested(), omp_get_max_active_levels());

  PHASE("error directive severity(warning)");
  {
    int after = 0;
    /* stderr into a file meanwhile: the message is libgomp's wording (suites match it) */
    fflush(stderr);
    int saved = dup(2);
    FILE *f = tmpfile();
    CHECK(saved >= 0 && f != NULL, "cannot redirect stderr");
    dup2(fileno(f), 2);
    #pragma omp parallel num_threads(2) reduction(+ : after)
    {
      #pragma omp masked
      {
        #pragma omp error at(execution) severity(warning) message("weft test: expected warning")
      }
      after = 1;
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    char text[512];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    CHECK(after == 2, "execution did not continue after a warning (%d)", after);
    /* libgomp's exact text, prefix and newlines included: GCC's own suite matches it */
    CHECK(strstr(text, "\nlibgomp: error directive encountered: weft test: expected warning\n") != NULL,
          "the warning's text: '%s'", text);
  }

  PHASE("error directive severity(fatal)");
  {
    /* In a child (it ends the process): the status is a failure and the text libgomp's. */
    int out[2];
    CHECK(pipe(out) == 0, "pipe");
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    CHECK(child >= 0, "fork");
    if (child == 0) {
      dup2(out[1], 2);
      close(out[0]);
      #pragma omp error at(execution) severity(fatal) message("weft test: expected fatal")
      _exit(0); /* not reached */
    }
    close(out[1]);
    char text[512];
    size_t n = 0;
    ssize_t got;
    while (n < sizeof text - 1 && (got = read(out[0], text + n, sizeof text - 1 - n)) > 0) n += (size_t)got;
    text[n] = 0;
    close(out[0]);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0, "a fatal error directive must end the program with a failure (status %#x)",
          status);
    CHECK(strstr(text, "\nlibgomp: fatal error: error directive encountered: weft test: expected fatal\n") != NULL,
          "the fatal message's text: '%s'", text);
  }

  PHASE("scope construct");
  {
    long s = 0;
    int pv = -1;
    #pragma omp parallel
    {
      #pragma omp scope private(pv) reduction(+ : s)
      {
        pv = omp_get_thread_num();
        s += pv + 1;
      }
    }
    CHECK(s == (long)T * (T + 1) / 2, "scope reduction %ld", s);
    CHECK(pv == -1, "scope private leaked");
  }

  PHASE("pause resource");
  {
    int r = omp_pause_resource_all(omp_pause_soft);
    (void)r; /* 0 or an error are both allowed; the runtime must keep working */
    int count = 0;
    #pragma omp parallel reduction(+ : count)
    count = 1;
    CHECK(count == T, "region after omp_pause_resource_all: %d", count);
    r = omp_pause_resource(omp_pause_soft, omp_get_initial_device());
    count = 0;
    #pragma omp parallel reduction(+ : count)
    count = 1;
    CHECK(count == T, "region after omp_pause_resource: %d", count);
  }
  PASS();
}
