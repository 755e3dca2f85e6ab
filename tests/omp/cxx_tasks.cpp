// C++ tasks: firstprivate class objects (copy constructor run through GOMP_task's cpyfn, every
// copy destroyed exactly once, also when their taskgroup is cancelled: run with and without
// OMP_CANCELLATION=true), std::vector/std::string captures, lambdas called from tasks,
// exceptions thrown and caught inside a task, task depend on vector elements, taskloop over
// random-access iterators, std::atomic counters, a taskgroup task_reduction on a class with a
// user-defined reduction.
#include "omp_test.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

static std::atomic<long> live{0}, copies{0};

struct Tracked {
  int value;
  std::vector<int> payload;
  explicit Tracked(int v) : value(v), payload(16, v) { live++; }
  Tracked(const Tracked &o) : value(o.value), payload(o.payload) {
    live++;
    copies++;
  }
  ~Tracked() { live--; }
  Tracked &operator=(const Tracked &) = default;
};

struct Acc {
  long sum = 0;
  long count = 0;
};
#pragma omp declare reduction(accplus : Acc : omp_out.sum += omp_in.sum, omp_out.count += omp_in.count) initializer(omp_priv = Acc())

int main() {
  PHASE("firstprivate class objects");
  {
    std::vector<int> results(100, -1);
    #pragma omp parallel
    #pragma omp single
    {
      for (int i = 0; i < 100; i++) {
        Tracked t(i);
        std::string s = "task" + std::to_string(i);
        #pragma omp task firstprivate(t, s) shared(results)
        {
          omp_test_spin(i % 7 * 30);
          int sum = std::accumulate(t.payload.begin(), t.payload.end(), 0);
          results[i] = (s == "task" + std::to_string(t.value)) ? sum : -2;
        }
        t.value = -1;  // the task owns its copy
        std::fill(t.payload.begin(), t.payload.end(), -1);
      }
      #pragma omp taskwait
    }
    for (int i = 0; i < 100; i++) CHECK(results[i] == 16 * i, "task %d result %d", i, results[i]);
    CHECK(live.load() == 0, "%ld Tracked objects leaked or destroyed twice", live.load());
    CHECK(copies.load() >= 100, "only %ld copies made for 100 firstprivate objects", copies.load());
  }

  PHASE("firstprivate class objects of tasks in a cancelled taskgroup");
  {
    // With OMP_CANCELLATION=true the first task cancels its taskgroup; the tasks whose copies a
    // copy constructor made still run (and destroy them), as on libgomp.
    int entered = 0;
    #pragma omp parallel
    #pragma omp single
    #pragma omp taskgroup
    {
      for (int i = 0; i < 50; i++) {
        Tracked t(i);
        #pragma omp task firstprivate(t) shared(entered)
        {
          #pragma omp atomic
          entered++;
          #pragma omp cancel taskgroup
        }
      }
    }
    CHECK(live.load() == 0, "%ld firstprivate copies never destroyed (%d task bodies entered)", live.load(), entered);
  }

  PHASE("lambdas and exceptions inside tasks");
  {
    std::atomic<int> caught{0}, ran{0};
    auto work = [&](int i) {
      if (i % 3 == 0) throw std::runtime_error("boom " + std::to_string(i));
      ran++;
    };
    #pragma omp parallel
    {
      #pragma omp for schedule(dynamic)
      for (int i = 0; i < 90; i++) {
        #pragma omp task firstprivate(i) shared(work, caught)
        {
          try {
            work(i);
          } catch (const std::runtime_error &e) {
            if (std::string(e.what()) == "boom " + std::to_string(i)) caught++;
          }
        }
      }
    }
    CHECK(caught.load() == 30 && ran.load() == 60, "caught %d ran %d", caught.load(), ran.load());
  }

  PHASE("depend on vector elements");
  {
    std::vector<long> v(8, 0);
    long *vp = v.data();
    #pragma omp parallel
    #pragma omp single
    {
      for (int round = 0; round < 20; round++)
        for (int k = 0; k < 8; k++) {
          int prev = (k + 7) % 8;
          #pragma omp task depend(inout : vp[k]) depend(in : vp[prev]) firstprivate(k, prev, round, vp)
          vp[k] = vp[k] * 3 + vp[prev] % 7 + round;
        }
      #pragma omp taskwait
    }
    std::vector<long> r(8, 0);
    for (int round = 0; round < 20; round++)
      for (int k = 0; k < 8; k++) r[k] = r[k] * 3 + r[(k + 7) % 8] % 7 + round;
    for (int k = 0; k < 8; k++) CHECK(v[k] == r[k], "v[%d]=%ld expected %ld", k, v[k], r[k]);
  }

  PHASE("taskloop over iterators");
  {
    std::vector<int> data(3000);
    std::iota(data.begin(), data.end(), 0);
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp taskloop grainsize(100)
      for (std::vector<int>::iterator it = data.begin(); it < data.end(); ++it) *it *= 2;
    }
    for (int i = 0; i < 3000; i++) CHECK(data[i] == 2 * i, "data[%d]=%d", i, data[i]);
  }

  PHASE("user-defined task reduction on a class");
  {
    Acc acc;
    #pragma omp parallel
    #pragma omp single
    {
      #pragma omp taskgroup task_reduction(accplus : acc)
      {
        for (int i = 0; i < 200; i++) {
          #pragma omp task in_reduction(accplus : acc) firstprivate(i)
          {
            acc.sum += i;
            acc.count += 1;
          }
        }
      }
    }
    CHECK(acc.sum == 199 * 200 / 2 && acc.count == 200, "Acc %ld %ld", acc.sum, acc.count);
  }
  PASS();
}
