// Whom a producer wakes (src/sched/idle.cpp, compiled in): past the cores, with workers bound, a
// looker keeps producers from waking sleepers unless a core has nobody awake; then a sleeper bound
// to that core is woken (a looker bound beside a busy producer looks only when the producer gives
// the core up, and a burst of tasks ran on the producer alone while the other core idled).
#include "sched/idle.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

using weft::sched::idle_park;
using namespace std::chrono_literals;

// Two members asleep on their own words, member 0 bound to core 0 and member 1 to core 1.
struct two_sleepers {
  idle_park park;
  std::atomic<std::uint32_t> word[2] = {};
  std::atomic<std::uint32_t>* words[2] = {&word[0], &word[1]};
  int cores_of[2] = {0, 1};
  std::atomic<int> awake[2] = {};
  std::atomic<bool> woke[2] = {};
  std::thread sleeper[2];
  bool looking = false;

  explicit two_sleepers(bool bound, int awake0, int awake1) {
    idle_park::init();
    awake[0] = awake0;
    awake[1] = awake1;
    park.set_words(words, bound ? cores_of : nullptr, 2, bound ? awake : nullptr, bound ? 2 : 0);
    for (int k = 0; k < 2; ++k)
      sleeper[k] = std::thread([this, k] {
        park.sleep(
            word[k], [] { return false; }, 10'000'000'000);  // 10 s: the test wakes them
        woke[k] = true;
      });
    // Both announced (the word is set first, the count right after; then they sleep).
    while (word[0].load() != 1 || word[1].load() != 1) std::this_thread::yield();
    std::this_thread::sleep_for(20ms);
  }
  bool woken_within(int k, std::chrono::milliseconds limit) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (!woke[k] && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    return woke[k];
  }
  void notify_while_a_worker_looks() {
    park.begin_look();
    looking = true;
    park.notify_work();
  }
  void expect_both_asleep() {
    EXPECT_FALSE(woken_within(0, 100ms));
    EXPECT_FALSE(woken_within(1, 0ms));
  }
  ~two_sleepers() {
    if (looking) park.end_look();
    for (int k = 0; k < 2; ++k) idle_park::wake(word[k]);
    for (auto& t : sleeper) t.join();
  }
};

TEST(IdlePark, LookerOnBusyCoresLeavesSleepersAsleep) {
  two_sleepers s(true, 1, 1);  // somebody awake on each core
  s.notify_while_a_worker_looks();
  s.expect_both_asleep();
}

TEST(IdlePark, SleeperOnAnIdleCoreIsWokenDespiteALooker) {
  two_sleepers s(true, 2, 0);  // core 0: the producer and a looker awake; core 1: nobody
  s.notify_while_a_worker_looks();
  EXPECT_TRUE(s.woken_within(1, 2000ms)) << "the sleeper bound to the idle core stayed asleep";
  EXPECT_FALSE(s.woken_within(0, 0ms)) << "the sleeper bound to the busy core was woken";
}

TEST(IdlePark, UnboundLookerLeavesSleepersAsleep) {
  two_sleepers s(false, 0, 0);  // no binding: cores unknown, the looker is trusted
  s.notify_while_a_worker_looks();
  s.expect_both_asleep();
}

TEST(IdlePark, WithoutLookersOneSleeperIsWoken) {
  two_sleepers s(true, 1, 1);
  s.park.notify_work();
  auto until = std::chrono::steady_clock::now() + 2000ms;
  while (!s.woke[0] && !s.woke[1] && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(s.woke[0] || s.woke[1]);
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(s.woke[0] && s.woke[1]) << "one task woke both sleepers";
}

}  // namespace
