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
  static std::atomic<int> ran{0};
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

}  // namespace
