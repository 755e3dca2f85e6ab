/* Reductions: +, *, -, max, min, &&, ||, &, |, ^ on int and double (where valid), on a parallel
 * region, on orphan-free worksharing loops with every schedule kind, nowait + barrier, array
 * sections, a user-defined reduction (declare reduction), and nested regions. Results are
 * checked against the sequential computation (exact: integer-valued doubles). */
#include "omp_test.h"

#define N 3001
static int iv[N];
static double dv[N];

#pragma omp declare reduction(maxabs : int : omp_out = (abs(omp_in) > abs(omp_out) ? omp_in : omp_out)) initializer(omp_priv = 0)

struct pair { long sum; long count; };
#pragma omp declare reduction(pairsum : struct pair : omp_out.sum += omp_in.sum, omp_out.count += omp_in.count) initializer(omp_priv = {0, 0})

int main(void) {
  for (int i = 0; i < N; i++) {
    iv[i] = ((i * 7919) % 211) - 100;
    dv[i] = (double)(((i * 104729) % 401) - 200);
  }
  long s_sum = 0; double s_dsum = 0; int s_max = -1000000, s_min = 1000000;
  double s_dmax = -1e9, s_dmin = 1e9; int s_and = 1, s_or = 0;
  unsigned s_band = ~0u, s_bor = 0, s_bxor = 0; long s_prod = 1; double s_dprod = 1.0;
  for (int i = 0; i < N; i++) {
    s_sum += iv[i]; s_dsum += dv[i];
    if (iv[i] > s_max) s_max = iv[i];
    if (iv[i] < s_min) s_min = iv[i];
    if (dv[i] > s_dmax) s_dmax = dv[i];
    if (dv[i] < s_dmin) s_dmin = dv[i];
    s_and = s_and && (iv[i] != 77);
    s_or = s_or || (iv[i] == 13);
    s_band &= (unsigned)iv[i] | 0x100u;
    s_bor |= (unsigned)(iv[i] & 0xff);
    s_bxor ^= (unsigned)iv[i];
    if (i % 300 == 0) { s_prod *= (i % 600 == 0) ? -2 : 3; s_dprod *= (i % 600 == 0) ? 0.5 : -2.0; }
  }

#define CHECK_ALL(name)                                                                            \
  do {                                                                                             \
    CHECK(sum == s_sum && dsum == s_dsum, "%s: sums %ld %f, expected %ld %f", name, sum, dsum, s_sum, s_dsum); \
    CHECK(mx == s_max && mn == s_min, "%s: max/min %d %d", name, mx, mn);                         \
    CHECK(dmx == s_dmax && dmn == s_dmin, "%s: double max/min %f %f", name, dmx, dmn);            \
    CHECK(land == s_and && lor == s_or, "%s: &&/|| %d %d", name, land, lor);                      \
    CHECK(band == s_band && bor == s_bor && bxor == s_bxor, "%s: bitwise %x %x %x", name, band, bor, bxor); \
    CHECK(prod == s_prod && dprod == s_dprod, "%s: products %ld %f", name, prod, dprod);          \
  } while (0)

#define DECLS                                                                                     \
  long sum = 0; double dsum = 0; int mx = -1000000, mn = 1000000; double dmx = -1e9, dmn = 1e9;   \
  int land = 1, lor = 0; unsigned band = ~0u, bor = 0, bxor = 0; long prod = 1; double dprod = 1.0;

#define BODY(i)                                                                                   \
  sum += iv[i]; dsum += dv[i];                                                                    \
  if (iv[i] > mx) mx = iv[i];                                                                     \
  if (iv[i] < mn) mn = iv[i];                                                                     \
  dmx = dv[i] > dmx ? dv[i] : dmx;                                                                \
  dmn = dv[i] < dmn ? dv[i] : dmn;                                                                \
  land = land && (iv[i] != 77);                                                                   \
  lor = lor || (iv[i] == 13);                                                                     \
  band &= (unsigned)iv[i] | 0x100u;                                                               \
  bor |= (unsigned)(iv[i] & 0xff);                                                                \
  bxor ^= (unsigned)iv[i];                                                                        \
  if (i % 300 == 0) { prod *= (i % 600 == 0) ? -2 : 3; dprod *= (i % 600 == 0) ? 0.5 : -2.0; }

#define CLAUSES reduction(+ : sum, dsum) reduction(max : mx, dmx) reduction(min : mn, dmn) \
  reduction(&& : land) reduction(|| : lor) reduction(& : band) reduction(| : bor) reduction(^ : bxor) \
  reduction(* : prod, dprod)

  PHASE("parallel for static");
  { DECLS
    #pragma omp parallel for schedule(static) CLAUSES
    for (int i = 0; i < N; i++) { BODY(i) }
    CHECK_ALL("parallel for static"); }
  PHASE("parallel for dynamic");
  { DECLS
    #pragma omp parallel for schedule(dynamic, 7) CLAUSES
    for (int i = 0; i < N; i++) { BODY(i) }
    CHECK_ALL("parallel for dynamic"); }
  PHASE("for guided in a region");
  { DECLS
    #pragma omp parallel
    {
      #pragma omp for schedule(guided) CLAUSES
      for (int i = 0; i < N; i++) { BODY(i) }
    }
    CHECK_ALL("for guided"); }
  PHASE("for runtime nowait");
  { DECLS
    omp_set_schedule(omp_sched_dynamic, 3);
    #pragma omp parallel
    {
      #pragma omp for schedule(runtime) nowait CLAUSES
      for (int i = 0; i < N; i++) { BODY(i) }
      #pragma omp barrier
      #pragma omp single
      CHECK_ALL("for runtime nowait");
    }
  }
  PHASE("parallel region reduction");
  { DECLS
    #pragma omp parallel CLAUSES
    {
      int me = omp_get_thread_num(), n = omp_get_num_threads();
      for (int i = me; i < N; i += n) { BODY(i) }
    }
    CHECK_ALL("parallel region"); }

  PHASE("minus reduction");
  {
    long m = 0;
    #pragma omp parallel for reduction(- : m)
    for (int i = 0; i < N; i++) m -= iv[i];
    CHECK(m == -s_sum, "minus reduction %ld", m);
  }

  PHASE("array section reduction");
  {
    long hist[8] = {0};
    long expect[8] = {0};
    for (int i = 0; i < N; i++) expect[(iv[i] + 100) % 8]++;
    #pragma omp parallel for reduction(+ : hist[0:8]) schedule(dynamic, 13)
    for (int i = 0; i < N; i++) hist[(iv[i] + 100) % 8]++;
    for (int k = 0; k < 8; k++) CHECK(hist[k] == expect[k], "histogram bin %d: %ld vs %ld", k, hist[k], expect[k]);
  }

  PHASE("user-defined reductions");
  {
    int ma = 0, ema = 0;
    struct pair p = {0, 0};
    for (int i = 0; i < N; i++) if (abs(iv[i]) > abs(ema)) ema = iv[i];
    #pragma omp parallel for reduction(maxabs : ma) reduction(pairsum : p)
    for (int i = 0; i < N; i++) {
      if (abs(iv[i]) > abs(ma)) ma = iv[i];
      p.sum += iv[i];
      p.count++;
    }
    CHECK(abs(ma) == abs(ema), "maxabs %d vs %d", ma, ema);
    CHECK(p.sum == s_sum && p.count == N, "pairsum %ld %ld", p.sum, p.count);
  }

  PHASE("nested reductions");
  {
    omp_set_max_active_levels(2);
    long total = 0;
    #pragma omp parallel num_threads(2) reduction(+ : total)
    {
      long inner = 0;
      #pragma omp parallel for num_threads(2) reduction(+ : inner)
      for (int i = 0; i < N; i++) inner += iv[i];
      total += inner;
    }
    CHECK(total == 2 * s_sum, "nested total %ld", total);
  }
  PASS();
}
