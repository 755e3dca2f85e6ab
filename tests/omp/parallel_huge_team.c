/* Teams far larger than the cores: the public V&V suite's taskloop tests open `parallel
 * num_threads(1000)`, and on 2 cores weft took 5-50 s per such region where libgomp takes 0.04 s.
 * Each waiter looked at every queue on each look, and each of the 999 barrier sleepers woke every
 * millisecond, so the threads still on their way to the barrier hardly ran. Ten regions of up to
 * 1,000 threads (OMPTEST_HUGE_TEAM), each with a barrier, a taskloop with lastprivate in a single,
 * a critical section and a reduction, must finish well inside the watchdog (45 s; 0.7 s on weft
 * and 0.26 s on libgomp now, 48.8 s on weft before). A runtime may give fewer threads than asked for (weft: 1,024 at most). */
#include "omp_test.h"

enum { rounds = 10, iterations = 1000 };

int main(void) {
  const char *e = getenv("OMPTEST_HUGE_TEAM");
  const int asked = e && *e ? atoi(e) : 1000;
  static int vals[iterations];
  for (int r = 0; r < rounds; r++) {
    PHASE("a huge team");
    int size = 0, arrived = 0, last = -1, in_critical = 0;
    long sum = 0;
    memset(vals, 0, sizeof vals);
#pragma omp parallel num_threads(asked) reduction(+ : sum)
    {
#pragma omp single
      size = omp_get_num_threads();
#pragma omp atomic
      arrived++;
#pragma omp barrier
      CHECK(arrived == size, "round %d: %d of %d threads arrived before the barrier ended", r, arrived, size);
#pragma omp single
      {
#pragma omp taskloop lastprivate(last)
        for (int i = 0; i < iterations; i++) {
          vals[i] = i + r;
          last = i;
        }
      }
#pragma omp critical
      in_critical++;
      sum += omp_get_thread_num();
    }
    CHECK(size >= 1 && size <= asked, "round %d: a team of %d for num_threads(%d)", r, size, asked);
    CHECK(last == iterations - 1, "round %d: lastprivate gave %d", r, last);
    CHECK(in_critical == size, "round %d: %d of %d threads passed the critical section", r, in_critical, size);
    CHECK(sum == (long)size * (size - 1) / 2, "round %d: the reduction gave %ld", r, sum);
    for (int i = 0; i < iterations; i++) CHECK(vals[i] == i + r, "round %d: vals[%d] = %d", r, i, vals[i]);
  }
  PASS();
}
