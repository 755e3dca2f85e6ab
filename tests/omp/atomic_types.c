/* atomic: update/read/write/capture/compare on int, long long, unsigned, float, double, and on
 * types gcc cannot do with hardware atomics (long double, __int128), which go through
 * GOMP_atomic_start/GOMP_atomic_end. Captured values must be unique (a permutation). */
#include "omp_test.h"

#define N 200

static int i_cnt; static long long ll_cnt; static unsigned u_bits; static float f_sum; static double d_sum;
static long double ld_sum; static long double ld_cnt; static __int128 i128_sum; static long double ld_prod = 1.0L;
static int max_v = -1;
static long double ld_captured[8 * N];
static int i_captured[8 * N];

int main(void) {
  int T = omp_test_threads();
  CHECK(T <= 8, "test sized for at most 8 threads, got %d", T);

  PHASE("atomic update forms");
  #pragma omp parallel
  {
    int me = omp_get_thread_num();
    for (int i = 0; i < N; i++) {
      #pragma omp atomic
      i_cnt++;
      #pragma omp atomic update
      ll_cnt += 3;
      #pragma omp atomic
      u_bits |= 1u << (me % 32);
      #pragma omp atomic
      f_sum += 1.0f;
      #pragma omp atomic
      d_sum = d_sum + 0.5;
      #pragma omp atomic
      ld_sum += 0.25L;
      #pragma omp atomic
      i128_sum += (__int128)1 << 70;
      #pragma omp atomic
      --ll_cnt;
    }
    #pragma omp atomic
    ld_prod *= 2.0L;
  }
  CHECK(i_cnt == N * T, "int count %d", i_cnt);
  CHECK(ll_cnt == 2LL * N * T, "long long count %lld", ll_cnt);
  CHECK(u_bits == (T >= 32 ? ~0u : (1u << T) - 1), "bits %x", u_bits);
  CHECK(f_sum == (float)(N * T), "float sum %f", (double)f_sum);
  CHECK(d_sum == 0.5 * N * T, "double sum %f", d_sum);
  CHECK(ld_sum == 0.25L * N * T, "long double sum %Lf", ld_sum);
  CHECK(i128_sum == ((__int128)1 << 70) * N * T, "int128 sum wrong");
  long double p = 1.0L;
  for (int t = 0; t < T; t++) p *= 2.0L;
  CHECK(ld_prod == p, "long double product %Lf", ld_prod);

  PHASE("atomic capture permutation");
  #pragma omp parallel
  {
    for (int i = 0; i < N; i++) {
      int v;
      #pragma omp atomic capture
      v = i_cnt++;
      v -= N * T;
      CHECK(v >= 0 && v < N * T, "captured int %d", v);
      i_captured[v]++;
      long double w;
      #pragma omp atomic capture
      { w = ld_cnt; ld_cnt += 1.0L; }
      int wi = (int)w;
      CHECK(wi >= 0 && wi < N * T && (long double)wi == w, "captured long double %Lf", w);
      ld_captured[wi] += 1.0L;
    }
  }
  for (int i = 0; i < N * T; i++) {
    CHECK(i_captured[i] == 1, "int value %d captured %d times", i, i_captured[i]);
    CHECK(ld_captured[i] == 1.0L, "long double value %d captured %Lf times", i, ld_captured[i]);
  }

  PHASE("atomic read/write");
  {
    long double shared_ld = 0.0L;
    __int128 shared_i128 = 0;
    int bad = 0;
    #pragma omp parallel reduction(+ : bad)
    {
      int me = omp_get_thread_num();
      for (int i = 0; i < N; i++) {
        #pragma omp atomic write
        shared_ld = (long double)me * 1e10L + 7.0L;
        long double r;
        #pragma omp atomic read
        r = shared_ld;
        /* A torn long double would not be of the form t*1e10+7. */
        long double q = (r - 7.0L) / 1e10L;
        if (q != (long double)(long)q || q < 0 || q >= T) bad++;
        #pragma omp atomic write
        shared_i128 = ((__int128)me << 64) | (unsigned)me;
        __int128 ir;
        #pragma omp atomic read
        ir = shared_i128;
        if ((long long)(ir >> 64) != (long long)(unsigned)ir) bad++;
      }
    }
    CHECK(bad == 0, "%d torn atomic reads", bad);
  }

  PHASE("atomic compare");
  #pragma omp parallel
  {
    for (int i = 0; i < N; i++) {
      int cand = (i * 7919 + omp_get_thread_num() * 31) % 1000;
      #pragma omp atomic compare
      if (max_v < cand) { max_v = cand; }
    }
  }
  {
    int expect = -1;
    for (int t = 0; t < T; t++)
      for (int i = 0; i < N; i++) {
        int cand = (i * 7919 + t * 31) % 1000;
        if (cand > expect) expect = cand;
      }
    CHECK(max_v == expect, "atomic compare max %d, expected %d", max_v, expect);
  }

  PHASE("seq_cst / relaxed clauses");
  {
    int x = 0;
    #pragma omp parallel
    {
      #pragma omp atomic seq_cst
      x += 2;
      #pragma omp atomic relaxed
      x -= 1;
    }
    CHECK(x == T, "x %d", x);
  }
  PASS();
}
