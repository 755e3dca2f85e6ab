/* The device routines with offload devices: omp_get_num_devices, omp_get_initial_device,
   omp_target_alloc/free/memcpy (host <-> device), a region using device memory through
   is_device_ptr, omp_target_associate_ptr / omp_target_is_present / omp_target_disassociate_ptr.
   OMPTEST_OFFLOAD=n: n devices expected (0 without a plugin: the same calls on the initial
   device, as libgomp without a device does them). */
#include <stdlib.h>
#include <string.h>

#include "omp_test.h"

#define N 32

int main(void) {
  const char *env = getenv("OMPTEST_OFFLOAD");
  int expect = env ? atoi(env) : 0;
  int nd = omp_get_num_devices();
  CHECK(nd == expect, "omp_get_num_devices() = %d, expected %d", nd, expect);
  int host = omp_get_initial_device();
  CHECK(host == nd, "omp_get_initial_device() = %d with %d devices", host, nd);
  int dev = nd ? 0 : host;

  int h[N], back[N];
  for (int i = 0; i < N; ++i) h[i] = i, back[i] = -1;
  int *dp = omp_target_alloc(N * sizeof(int), dev);
  CHECK(dp != NULL, "%s", "omp_target_alloc");
  CHECK(omp_target_memcpy(dp, h, N * sizeof(int), 0, 0, dev, host) == 0, "%s", "memcpy to");
#pragma omp target is_device_ptr(dp) device(dev)
  for (int i = 0; i < N; ++i) dp[i] *= 2;
  CHECK(omp_target_memcpy(back, dp, N * sizeof(int), 0, 0, host, dev) == 0, "%s", "memcpy from");
  for (int i = 0; i < N; ++i) CHECK(back[i] == 2 * i, "back[%d] = %d", i, back[i]);

  if (nd) {
    int arr[N];
    for (int i = 0; i < N; ++i) arr[i] = 100 + i;
    CHECK(!omp_target_is_present(arr, dev), "%s", "not present before associate");
    CHECK(omp_target_associate_ptr(arr, dp, N * sizeof(int), 0, dev) == 0, "%s", "associate");
    CHECK(omp_target_is_present(arr, dev), "%s", "present after associate");
#pragma omp target map(tofrom : arr) device(dev) /* present: neither copied to nor back */
    arr[0] = arr[1] + 1000;
    CHECK(arr[0] == 100, "arr[0] = %d: an associated range is not copied back", arr[0]);
    int v = -1;
    CHECK(omp_target_memcpy(&v, dp, sizeof v, 0, 0, host, dev) == 0, "%s", "memcpy");
    CHECK(v == 2 + 1000, "device value %d", v);
    CHECK(omp_target_disassociate_ptr(arr, dev) == 0, "%s", "disassociate");
    CHECK(!omp_target_is_present(arr, dev), "%s", "not present after disassociate");
  }
  omp_target_free(dp, dev);
  PASS();
}
