/* target offload's data environment: map clauses (to, from, tofrom, alloc, always), array sections
   of arrays and of pointers, struct members, firstprivate, target data + update, enter/exit data
   with reference counts (release, delete), pointers used in a region without a map clause.
   The checks hold on any conforming implementation: with a device whose memory is separate
   (weft with tests/omp's test plugin: OMPTEST_OFFLOAD=1, checked) and with the host fallback
   (weft or libgomp without a plugin: the region shares the host's memory, checked too). What
   differs between the two is checked only where it must: a device write is not seen on the host
   before a copy back, a host write after mapping is not seen on the device before a copy to. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "omp_test.h"

#define N 64

struct pair {
  int n;
  double pad[3];
  double x;
};

int main(void) {
  const char *env = getenv("OMPTEST_OFFLOAD");
  int expect_offload = env && atoi(env) > 0;

  /* Are we offloaded? A mapped variable's address on the device differs from the host's. */
  int probe = 0;
  uintptr_t host_probe = (uintptr_t)&probe;
  int offloaded = -1;
#pragma omp target map(tofrom : probe) map(from : offloaded)
  offloaded = (uintptr_t)&probe != host_probe;
  CHECK(offloaded == expect_offload, "%s", "");
  int sep = offloaded; /* separate memory */

  /* tofrom of an array section; to/from. */
  int a[N], b[N];
  for (int i = 0; i < N; ++i) a[i] = i, b[i] = -1;
#pragma omp target map(tofrom : a[0:N]) map(from : b[0:N])
  for (int i = 0; i < N; ++i) {
    a[i] += 1;
    b[i] = 2 * a[i];
  }
  for (int i = 0; i < N; ++i) CHECK(a[i] == i + 1 && b[i] == 2 * (i + 1), "%s", "");

  /* map(to:) : a device write is not copied back. */
  int x = 5, seen = 0;
#pragma omp target map(to : x) map(from : seen)
  {
    seen = x;
    x = 99;
  }
  CHECK(seen == 5, "%s", "");
  CHECK(sep ? x == 5 : x == 99, "%s", "");

  /* A pointer's array section (GOMP_MAP_POINTER / firstprivate pointer). */
  int *p = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i) p[i] = i;
#pragma omp target map(tofrom : p[8:16])
  for (int i = 8; i < 24; ++i) p[i] *= 3;
  for (int i = 0; i < N; ++i) CHECK(p[i] == ((i >= 8 && i < 24) ? 3 * i : i), "%s", "");

  /* firstprivate: the region's copy is its own. */
  int fp = 7, fpout = 0;
#pragma omp target firstprivate(fp) map(from : fpout)
  {
    fp += 1;
    fpout = fp;
  }
  CHECK(fpout == 8 && fp == 7, "%s", "");

  /* Struct members. */
  struct pair s = {3, {0, 0, 0}, 1.5};
#pragma omp target map(tofrom : s.n, s.x)
  {
    s.n += 10;
    s.x *= 2;
  }
  CHECK(s.n == 13 && s.x == 3.0, "%s", "");

  /* target data + update: the device copy lives across regions. */
  int c[N];
  for (int i = 0; i < N; ++i) c[i] = i;
#pragma omp target data map(tofrom : c[0:N])
  {
#pragma omp target
    for (int i = 0; i < N; ++i) c[i] = 100 + i;
    if (sep) CHECK(c[0] == 0, "%s", ""); /* not copied back yet */
#pragma omp target update from(c[0:N])
    CHECK(c[0] == 100 && c[N - 1] == 100 + N - 1, "%s", "");
    c[0] = -5;
    c[1] = -6; /* host only */
#pragma omp target update to(c[0:1])
#pragma omp target
    c[2] = c[0] + c[1]; /* the device sees c[0] updated, c[1] still 101 */
    c[1] = 101;
  }
  CHECK(c[2] == (sep ? -5 + 101 : -5 - 6), "%s", "");
  CHECK(c[0] == -5 && c[1] == 101, "%s", "");

  /* enter/exit data with reference counts. */
  int d[N];
  for (int i = 0; i < N; ++i) d[i] = 1;
#pragma omp target enter data map(to : d[0:N])
#pragma omp target enter data map(to : d[0:N]) /* present: count 2, no copy */
  d[0] = 50;                                    /* host only */
#pragma omp target map(alloc : d[0:N])
  d[1] = d[0] + 1; /* device: 1 + 1 */
  CHECK(sep ? d[1] == 1 : d[1] == 51, "%s", "");
#pragma omp target exit data map(release : d[0:N]) /* count 1: still present, nothing copied */
  CHECK(sep ? d[1] == 1 : d[1] == 51, "%s", "");
#pragma omp target map(to : d[0:N]) /* present: no copy to */
  d[3] = d[0];
#pragma omp target exit data map(from : d[0:N]) /* count 0: copied back */
  CHECK(d[1] == (sep ? 2 : 51) && d[3] == (sep ? 1 : 50) && d[0] == (sep ? 1 : 50), "%s", "");

  /* always: copies even when present. */
  int e = 1, eout = 0;
#pragma omp target enter data map(to : e)
  e = 2;
#pragma omp target map(always, to : e) map(from : eout)
  eout = e;
  CHECK(eout == 2, "%s", "");
#pragma omp target map(always, from : e)
  e = 3;
  CHECK(e == 3, "%s", "");
#pragma omp target map(tofrom : e)
  e = 4; /* present: no copy back until the last reference goes */
  CHECK(sep ? e == 3 : e == 4, "%s", "");
#pragma omp target exit data map(delete : e) /* deleted: no copy back */
  CHECK(sep ? e == 3 : e == 4, "%s", "");

  /* A pointer used in a region without a map clause finds the data an enter data mapped. */
  int *q = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i) q[i] = i;
#pragma omp target enter data map(to : q[0:N])
#pragma omp target
  for (int i = 0; i < N; ++i) q[i] = -q[i];
  if (sep) CHECK(q[5] == 5, "%s", "");
#pragma omp target exit data map(from : q[0:N])
  for (int i = 0; i < N; ++i) CHECK(q[i] == -i, "%s", "");

  free(p);
  free(q);
  PASS();
}
