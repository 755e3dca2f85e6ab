/* Offload images, as a program built with -foffload registers them (no offload compiler here, so
   this program makes the calls gcc's generated code makes): GOMP_offload_register_ver with a host
   table (functions, then "declare target" variables as address/size pairs) and the plugin's image
   data; a target region whose device function is found through the loaded image (not the host
   function: the test plugin runs with OFFLOAD_TEST_IMAGES=1, without GOMP_OFFLOAD_CAP_NATIVE_EXEC),
   a declare target variable that is mapped for good (present: a map clause copies nothing; target
   update does), the image's device-number variable set (the plugin checks it at each run), and
   GOMP_offload_unregister_ver (after which the region falls back to the host). OMPTEST_OFFLOAD=1: offloaded; else the host fallback runs the host
   function (weft without a plugin, libgomp). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "omp_test.h"

void GOMP_offload_register_ver(unsigned, const void *, int, const void *);
void GOMP_offload_unregister_ver(unsigned, const void *, int, const void *);
void GOMP_target_ext(int, void (*)(void *), size_t, void **, size_t *, unsigned short *, unsigned, void **, void **);
void GOMP_target_update_ext(int, size_t, void **, size_t *, unsigned short *, unsigned, void **);

int gv = 5; /* a declare target variable */

static void host_region(void *vars) {
  void **a = vars;
  *(int *)a[0] = 1;
}

static void dev_region(void *vars) {
  void **a = vars;
  *(int *)a[0] = 2 + *(int *)a[1];
  *(int *)a[1] = 40;
}

struct test_image { /* tests/omp/offload_test_plugin.c's */
  int nfuncs;
  void **dev_funcs;
  int nvars;
  const size_t *var_sizes;
  const void *const *var_inits;
  int device_num_var;
};

static void *funcs[] = {(void *)host_region};
static void *vars[] = {&gv, (void *)sizeof gv};
static void *host_table[] = {funcs, funcs + 1, vars, vars + 2};
static void *dev_funcs[] = {(void *)dev_region};
static const size_t var_sizes[] = {sizeof gv};
static const int gv_init = 5;
static const void *const var_inits[] = {&gv_init};
static struct test_image image = {1, dev_funcs, 1, var_sizes, var_inits, 1};

int main(void) {
  const char *env = getenv("OMPTEST_OFFLOAD");
  int offload = env && atoi(env) > 0;
  unsigned version = (1u << 16) | 0u; /* GOMP_VERSION_PACK (1, 0) */
  GOMP_offload_register_ver(version, host_table, 2 /* the test plugin's type */, &image);

  int out = 0;
  void *addrs[] = {&out, &gv};
  size_t sizes[] = {sizeof out, sizeof gv};
  unsigned short kinds[] = {3 | (2 << 8), 3 | (2 << 8)}; /* tofrom, 4-byte aligned */
  GOMP_target_ext(-1, host_region, 2, addrs, sizes, kinds, 0, NULL, NULL);
  if (offload) {
    CHECK(out == 7, "out = %d: the device function reads the device copy of gv (5)", out);
    CHECK(gv == 5, "gv = %d: a declare target variable is not copied back by a map clause", gv);
  } else {
    CHECK(out == 1 && gv == 5, "host fallback: out = %d, gv = %d", out, gv);
  }
  unsigned short from[] = {2 | (2 << 8)};
  GOMP_target_update_ext(-1, 1, addrs + 1, sizes + 1, from, 0, NULL);
  CHECK(gv == (offload ? 40 : 5), "after update from: gv = %d", gv);
  GOMP_offload_unregister_ver(version, host_table, 2, &image);
  /* Unregistered: no device function any more, so the host fallback runs the region. */
  out = 0;
  GOMP_target_ext(-1, host_region, 1, addrs, sizes, kinds, 0, NULL, NULL);
  CHECK(out == 1, "after unregister: out = %d", out);
  PASS();
}
