// C++ worksharing: parallel for over random-access iterators (std::vector), user-defined
// reductions on std::vector (declare reduction with initializer), lastprivate / firstprivate /
// copyprivate of class types (std::string, std::vector), private class objects constructed and
// destroyed once per thread, threadprivate-free static locals initialised once under concurrency,
// critical sections around std::map updates.
#include "omp_test.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#pragma omp declare reduction(vec_plus : std::vector<long> : \
    std::transform(omp_out.begin(), omp_out.end(), omp_in.begin(), omp_out.begin(), std::plus<long>())) \
    initializer(omp_priv = std::vector<long>(omp_orig.size(), 0))

static std::atomic<int> ctor_count{0}, dtor_count{0};
struct Counted {
  int v = 0;
  Counted() { ctor_count++; }
  Counted(const Counted &o) : v(o.v) { ctor_count++; }
  ~Counted() { dtor_count++; }
};

static int init_calls;
static int expensive_init() {
  __atomic_fetch_add(&init_calls, 1, __ATOMIC_RELAXED);
  omp_test_spin(1000);
  return 42;
}

int main() {
  int T = omp_test_threads();

  PHASE("parallel for over iterators");
  {
    std::vector<double> v(5000);
    std::iota(v.begin(), v.end(), 0.0);
    #pragma omp parallel for schedule(dynamic, 64)
    for (auto it = v.begin(); it < v.end(); ++it) *it = *it * 0.5;
    for (int i = 0; i < 5000; i++) CHECK(v[i] == i * 0.5, "v[%d]=%f", i, v[i]);
    std::vector<int> w(777, 1);
    #pragma omp parallel for schedule(static, 5)
    for (auto it = w.end() - 1; it >= w.begin() + 1; --it) *it += 1;
    CHECK(w[0] == 1, "w[0]=%d", w[0]);
    for (int i = 1; i < 777; i++) CHECK(w[i] == 2, "w[%d]=%d", i, w[i]);
  }

  PHASE("vector reduction");
  {
    std::vector<long> hist(10, 0);
    #pragma omp parallel for reduction(vec_plus : hist) schedule(guided)
    for (int i = 0; i < 10000; i++) hist[(i * 7) % 10] += 1;
    for (int k = 0; k < 10; k++) CHECK(hist[k] == 1000, "hist[%d]=%ld", k, hist[k]);
  }

  PHASE("class types in data-sharing clauses");
  {
    std::string last;
    std::vector<int> fp(3, 7);
    #pragma omp parallel for lastprivate(last) firstprivate(fp) schedule(dynamic)
    for (int i = 0; i < 100; i++) {
      CHECK(fp.size() == 3 && fp[0] >= 7, "firstprivate vector");
      fp[0]++;
      last = "iteration " + std::to_string(i);
    }
    CHECK(last == "iteration 99", "lastprivate string '%s'", last.c_str());
    int bad = 0;
    #pragma omp parallel reduction(+ : bad)
    {
      std::string s;
      std::vector<int> vv;
      #pragma omp single copyprivate(s, vv)
      {
        s = "from the single thread";
        vv.assign(50, 3);
      }
      if (s != "from the single thread" || vv.size() != 50 || vv[49] != 3) bad++;
    }
    CHECK(bad == 0, "copyprivate of class types: %d bad", bad);
  }

  PHASE("private class objects constructed once per thread");
  {
    ctor_count = 0;
    dtor_count = 0;
    Counted c;
    #pragma omp parallel private(c)
    {
      c.v = omp_get_thread_num();
    }
    CHECK(ctor_count.load() - 1 == dtor_count.load(), "ctor %d dtor %d", ctor_count.load(), dtor_count.load());
    CHECK(dtor_count.load() == T, "private copies destroyed %d, expected %d", dtor_count.load(), T);
  }

  PHASE("static local initialisation under concurrency");
  {
    int bad = 0;
    #pragma omp parallel reduction(+ : bad)
    {
      static int once = expensive_init();
      if (once != 42) bad++;
    }
    CHECK(bad == 0 && init_calls == 1, "static init ran %d times", init_calls);
  }

  PHASE("critical around std::map");
  {
    std::map<int, int> m;
    #pragma omp parallel for schedule(dynamic, 3)
    for (int i = 0; i < 600; i++) {
      #pragma omp critical(map_update)
      m[i % 37] += 1;
    }
    int total = 0;
    for (auto &kv : m) total += kv.second;
    CHECK(m.size() == 37 && total == 600, "map size %zu total %d", m.size(), total);
  }
  PASS();
}
