/* Memory allocators (OpenMP 5.x), as the spec and libgomp define them:
 * - the allocate clause (GOMP_alloc) with a null_fb allocator that cannot serve behaves as abort_fb,
 *   and so does omp_alloc with an abort_fb allocator: the program ends (checked in a child process,
 *   before the runtime starts its threads);
 * - omp_init_allocator validates its memory space and traits: a bad key or value gives
 *   omp_null_allocator;
 * - omp_alloc(0), omp_aligned_alloc(a, 0), omp_calloc with a zero count or size and
 *   omp_realloc(NULL, 0) return NULL; an omp_calloc whose size overflows fails (NULL here);
 * - pool_size bounds what an allocator holds at once (the runtime's header and padding count, so the
 *   sizes below keep a margin) and omp_free gives the room back, for omp_alloc, omp_aligned_alloc,
 *   omp_calloc, omp_aligned_calloc and omp_realloc (a failed realloc leaves the block as it was; a
 *   null allocator reallocates with the block's own);
 * - when an allocator cannot serve, its fallback decides: null_fb returns NULL, default_mem_fb (the
 *   default fallback) serves from the default memory, allocator_fb retries with fb_data;
 * - the default allocator set before a region is every team thread's default (nested regions too),
 *   a thread's change inside a region ends with it, and the allocate clause honours the alignment
 *   of the default allocator and of an explicit one on every thread. */
#include "omp_test.h"
#include <stdint.h>
#include <sys/wait.h>

static omp_allocator_handle_t make(omp_uintptr_t pool, omp_uintptr_t fallback, omp_uintptr_t fb_data) {
  omp_alloctrait_t t[3] = {{omp_atk_pool_size, pool}, {omp_atk_fallback, fallback}, {omp_atk_fb_data, fb_data}};
  omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, fallback == omp_atv_allocator_fb ? 3 : 2, t);
  CHECK(a != omp_null_allocator, "omp_init_allocator(pool %lu, fallback %lu)", (unsigned long)pool,
        (unsigned long)fallback);
  return a;
}

/* Runs body in a child process; true when the child ended abnormally (killed or a nonzero status). */
static int child_fails(void (*body)(void)) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  CHECK(pid >= 0, "fork failed");
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid, "waitpid failed");
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void abort_fb_child(void) {
  omp_allocator_handle_t a = make(4096, omp_atv_abort_fb, 0);
  void *p = omp_alloc(8192, a); /* must not return */
  (void)p;
}

static void allocate_clause_child(void) {
  omp_allocator_handle_t a = make(4096, omp_atv_null_fb, 0);
  char big[8192];
  big[0] = 1;
  #pragma omp parallel num_threads(1) firstprivate(big) allocate(a : big)
  big[1] = big[0]; /* the private copy cannot be allocated: the program ends */
}

static int is_zero(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

int main(void) {
  int T = omp_test_threads();

  PHASE("abort_fb and the allocate clause end the program");
  fprintf(stderr, "(two expected out-of-memory messages from child processes follow)\n");
  CHECK(child_fails(abort_fb_child), "omp_alloc past the pool of an abort_fb allocator returned");
  CHECK(child_fails(allocate_clause_child), "allocate clause with a null_fb allocator that cannot serve went on");

  PHASE("omp_init_allocator validates its traits");
  {
    omp_alloctrait_t bad[][1] = {
        {{omp_atk_alignment, 3}},  {{omp_atk_alignment, 0}},          {{omp_atk_fallback, 99}},
        {{omp_atk_sync_hint, 99}}, {{omp_atk_access, omp_atv_nearest}}, {{omp_atk_partition, omp_atv_all}},
        {{(omp_alloctrait_key_t)99, 1}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
      CHECK(omp_init_allocator(omp_default_mem_space, 1, bad[i]) == omp_null_allocator,
            "trait %d = %lu accepted", (int)bad[i][0].key, (unsigned long)bad[i][0].value);
    omp_alloctrait_t one[] = {{omp_atk_alignment, 64}};
    CHECK(omp_init_allocator((omp_memspace_handle_t)99, 1, one) == omp_null_allocator, "memory space 99 accepted");
    omp_alloctrait_t good[] = {{omp_atk_sync_hint, omp_atv_contended}, {omp_atk_alignment, omp_atv_default},
                               {omp_atk_access, omp_atv_all},          {omp_atk_pool_size, omp_atv_default},
                               {omp_atk_fallback, omp_atv_default},    {omp_atk_partition, omp_atv_environment}};
    omp_allocator_handle_t a = omp_init_allocator(omp_large_cap_mem_space, 6, good);
    CHECK(a != omp_null_allocator, "valid traits refused");
    void *p = omp_alloc(100, a);
    CHECK(p != NULL, "allocation from a valid allocator");
    omp_free(p, a);
    omp_destroy_allocator(a);
  }

  PHASE("zero sizes and overflow");
  {
    omp_allocator_handle_t pool = make(4096, omp_atv_null_fb, 0);
    volatile size_t huge = SIZE_MAX / 2, four = 4;
    omp_allocator_handle_t all[] = {omp_default_mem_alloc, omp_cgroup_mem_alloc, pool, omp_null_allocator};
    for (int i = 0; i < 4; i++) {
      omp_allocator_handle_t a = all[i];
      CHECK(omp_alloc(0, a) == NULL, "omp_alloc(0) with allocator %d", i);
      CHECK(omp_aligned_alloc(64, 0, a) == NULL, "omp_aligned_alloc(64, 0) with allocator %d", i);
      CHECK(omp_calloc(0, 8, a) == NULL && omp_calloc(8, 0, a) == NULL, "omp_calloc of 0 bytes, allocator %d", i);
      CHECK(omp_aligned_calloc(64, 0, 8, a) == NULL, "omp_aligned_calloc of 0 bytes, allocator %d", i);
      CHECK(omp_realloc(NULL, 0, a, a) == NULL, "omp_realloc(NULL, 0) with allocator %d", i);
      CHECK(omp_calloc(huge, four, a) == NULL, "omp_calloc overflow with allocator %d", i);
      CHECK(omp_aligned_calloc(128, huge, four, a) == NULL, "omp_aligned_calloc overflow with allocator %d", i);
    }
    omp_destroy_allocator(pool);
  }

  PHASE("pool_size with null_fb");
  {
    omp_allocator_handle_t a = make(4096, omp_atv_null_fb, 0);
    CHECK(omp_alloc(5000, a) == NULL, "an allocation larger than the pool");
    void *p = omp_alloc(3000, a);
    CHECK(p != NULL, "first 3000 bytes of a 4096-byte pool");
    CHECK(omp_alloc(3000, a) == NULL, "the pool served 6000 bytes");
    CHECK(omp_aligned_alloc(256, 1500, a) == NULL, "aligned: the pool served 4500 bytes");
    CHECK(omp_calloc(150, 10, a) == NULL, "calloc: the pool served 4500 bytes");
    CHECK(omp_aligned_calloc(64, 150, 10, a) == NULL, "aligned calloc: the pool served 4500 bytes");
    omp_free(p, a);
    p = omp_aligned_alloc(256, 3000, a);
    CHECK(p != NULL && (uintptr_t)p % 256 == 0, "aligned allocation after omp_free gave the room back: %p", p);
    omp_free(p, a);
    char *c = (char *)omp_calloc(300, 10, a);
    CHECK(c != NULL && is_zero(c, 3000), "omp_calloc from the pool");
    CHECK(omp_alloc(3000, a) == NULL, "the pool served 6000 bytes after calloc");
    omp_free(c, omp_null_allocator); /* omp_free finds the allocator of the block */
    c = (char *)omp_aligned_calloc(128, 3000, 1, a);
    CHECK(c != NULL && (uintptr_t)c % 128 == 0 && is_zero(c, 3000), "omp_aligned_calloc from the pool");
    omp_free(c, a);

    PHASE("omp_realloc in a pool");
    int *q = (int *)omp_alloc(1000, a);
    CHECK(q != NULL, "omp_alloc(1000)");
    for (int i = 0; i < 250; i++) q[i] = i;
    CHECK(omp_realloc(q, 5000, a, a) == NULL, "omp_realloc past the pool");
    CHECK(omp_realloc(q, 5000, omp_null_allocator, a) == NULL, "omp_realloc with the null allocator uses the block's");
    for (int i = 0; i < 250; i++) CHECK(q[i] == i, "a failed omp_realloc changed q[%d]", i);
    q = (int *)omp_realloc(q, 2500, a, a);
    CHECK(q != NULL, "omp_realloc(1000 -> 2500) within the pool");
    for (int i = 0; i < 250; i++) CHECK(q[i] == i, "omp_realloc lost q[%d]", i);
    CHECK(omp_realloc(q, 0, a, a) == NULL, "omp_realloc(p, 0) returns NULL");
    p = omp_alloc(3800, a);
    CHECK(p != NULL, "omp_realloc(p, 0) did not give the room back");
    omp_free(p, a);
    omp_destroy_allocator(a);
  }

  PHASE("default_mem_fb");
  {
    omp_allocator_handle_t a = make(4096, omp_atv_default_mem_fb, 0);
    void *p = omp_alloc(3000, a), *q = omp_alloc(3000, a), *r = omp_aligned_alloc(512, 100000, a);
    CHECK(p && q && r && (uintptr_t)r % 512 == 0, "default_mem_fb did not serve from the default memory");
    char *z = (char *)omp_calloc(1000, 100, a);
    CHECK(z != NULL && is_zero(z, 100000), "default_mem_fb calloc");
    int *g = (int *)omp_realloc(p, 50000, a, a);
    CHECK(g != NULL, "default_mem_fb realloc");
    omp_free(g, a);
    omp_free(q, a);
    omp_free(r, a);
    omp_free(z, a);
    omp_destroy_allocator(a);
    omp_alloctrait_t only_pool[] = {{omp_atk_pool_size, 1024}};
    a = omp_init_allocator(omp_default_mem_space, 1, only_pool);
    CHECK(a != omp_null_allocator, "pool-only allocator");
    p = omp_alloc(8192, a);
    CHECK(p != NULL, "the default fallback is default_mem_fb");
    omp_free(p, a);
    omp_destroy_allocator(a);
  }

  PHASE("allocator_fb");
  {
    omp_allocator_handle_t b = make(4096, omp_atv_null_fb, 0);
    omp_allocator_handle_t a = make(4096, omp_atv_allocator_fb, b);
    void *a1 = omp_alloc(3000, a), *a2 = omp_alloc(3000, a);
    CHECK(a1 && a2, "allocator_fb did not serve from fb_data");
    CHECK(omp_alloc(3000, b) == NULL, "the fallback's pool served more than its size");
    CHECK(omp_alloc(3000, a) == NULL, "both pools full, the chain ends in null_fb");
    omp_free(a2, a);
    void *a3 = omp_alloc(3000, a);
    CHECK(a3 != NULL, "omp_free gave the fallback's room back");
    omp_free(a3, a);
    omp_free(a1, a);
    omp_destroy_allocator(a);
    omp_destroy_allocator(b);
  }

  PHASE("default allocator inherited by the team");
  {
    omp_alloctrait_t t128[] = {{omp_atk_alignment, 128}};
    omp_allocator_handle_t a128 = omp_init_allocator(omp_default_mem_space, 1, t128);
    omp_alloctrait_t t256[] = {{omp_atk_alignment, 256}};
    omp_allocator_handle_t a256 = omp_init_allocator(omp_default_mem_space, 1, t256);
    CHECK(a128 != omp_null_allocator && a256 != omp_null_allocator, "alignment allocators");
    omp_set_default_allocator(a128);
    for (int round = 0; round < 2; round++) {
      int bad = 0, threads = 0;
      double x = 1.0;
      long y = 2;
      #pragma omp parallel reduction(+ : bad, threads) firstprivate(x) allocate(x) private(y) allocate(a256 : y)
      {
        threads++;
        if (omp_get_default_allocator() != a128) bad++;
        if ((uintptr_t)&x % 128 != 0) bad++; /* the default allocator's alignment, on every thread */
        if ((uintptr_t)&y % 256 != 0) bad++;
        void *p = omp_alloc(24, omp_null_allocator);
        if (!p || (uintptr_t)p % 128 != 0) bad++;
        omp_free(p, omp_null_allocator);
        int z = omp_get_thread_num();
        #pragma omp parallel num_threads(2) firstprivate(z) allocate(z) reduction(+ : bad)
        {
          if (omp_get_default_allocator() != a128) bad++;
          if ((uintptr_t)&z % 128 != 0) bad++;
        }
        omp_set_default_allocator(omp_thread_mem_alloc); /* this thread's, for this region only */
        if (omp_get_default_allocator() != omp_thread_mem_alloc) bad++;
      }
      CHECK(threads == T, "team of %d", threads);
      CHECK(bad == 0, "round %d: %d threads did not inherit the default allocator or its alignment", round, bad);
      CHECK(omp_get_default_allocator() == a128, "a change inside the region outlived it: %lu",
            (unsigned long)omp_get_default_allocator());
    }
    omp_set_default_allocator(omp_default_mem_alloc);
    omp_destroy_allocator(a128);
    omp_destroy_allocator(a256);
  }

  PHASE("pools shared by a team");
  {
    omp_allocator_handle_t a = make(64 * 1024, omp_atv_null_fb, 0);
    int got = 0;
    #pragma omp parallel reduction(+ : got)
    {
      void *mine[64];
      int n = 0;
      for (int i = 0; i < 64; i++)
        if ((mine[n] = omp_alloc(1000, a)) != NULL) n++;
      got = n;
      #pragma omp barrier
      for (int i = 0; i < n; i++) omp_free(mine[i], a);
    }
    CHECK(got >= 50 && got <= 65, "a 64 KiB pool served %d blocks of 1000 bytes to the team", got);
    void *p = omp_alloc(60 * 1024, a);
    CHECK(p != NULL, "the team's frees did not give the pool back");
    omp_free(p, a);
    omp_destroy_allocator(a);
  }
  PASS();
}
