// An idle runtime uses no CPU: workers spin briefly, then sleep until work arrives.
#include <sys/resource.h>
#include <unistd.h>

#include "weft_test.h"

namespace {

double cpu_seconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

class Idle : public weft_test::workers_test {};

TEST_P(Idle, SleepingRuntimeUsesNoCpu) {
  static std::atomic<int> ran;
  ran = 0;  // each instantiation counts its own (one process may run several)
  for (int i = 0; i < 1000; ++i) {
    weft_task_t* t = weft_task_create([](void*) { ran++; }, nullptr, 0, 0);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  }
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(ran.load(), 1000);
  // Let the workers pass their spinning phase, then measure a quiet second.
  usleep(200 * 1000);
  double before = cpu_seconds();
  sleep(1);
  double used = cpu_seconds() - before;
  // A spinning worker would burn about one second per worker; sleeping ones next to nothing.
  EXPECT_LT(used, 0.1) << GetParam() << " workers used " << used << " s of CPU in 1 s of idleness";
  // And they still wake up for new work.
  weft_task_t* t = weft_task_create([](void*) { ran++; }, nullptr, 0, 0);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(ran.load(), 1001);
}

INSTANTIATE_TEST_SUITE_P(Workers, Idle, ::testing::Values(2, 4),
                         [](const ::testing::TestParamInfo<int>& info) { return "w" + std::to_string(info.param); });

// Past the cores a producer wakes no sleeper while an idle worker yields between looks. A burst of
// tasks that each wait until all of them run at once (legal only with that many threads, but
// programs do it) must still reach every worker: right after a round of short tasks, when workers
// are looking, the waiting tasks take up to 5 s each round if one of them is left queued.
TEST(IdleOversubscribed, BurstReachesEveryWorker) {
  const int workers = 3 * static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)) + 2;
  weft_test::runtime_config rt({{"WEFT_NUM_THREADS", std::to_string(workers)}});
  static std::atomic<int> started, late;
  late = 0;
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 4 * workers; ++i) weft::spawn([] {});
    weft::taskwait();
    started = 0;
    for (int i = 0; i < workers; ++i) {
      weft::spawn([workers] {
        started.fetch_add(1);
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (started.load() < workers)
          if (std::chrono::steady_clock::now() > deadline) {
            late.fetch_add(1);
            return;
          } else {
            std::this_thread::yield();
          }
      });
    }
    weft::taskwait();
    ASSERT_EQ(late.load(), 0) << "round " << round << ": " << late.load() << " of " << workers
                              << " tasks waited 5 s for the others to start (some sat queued)";
  }
}

}  // namespace
