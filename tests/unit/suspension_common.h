// Helpers shared by the suspension tests (suspension_test, events_test, pollers_test): a fixture
// parameterised by the worker count that also clears the suspension variables, spawning with task
// flags (WEFT_TASK_TIED), and a global sequence for ordering checks.
#ifndef WEFT_TESTS_UNIT_SUSPENSION_COMMON_H
#define WEFT_TESTS_UNIT_SUSPENSION_COMMON_H

#include <weft/weft.h>
#include <weft/weft.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <utility>

#include "weft_test.h"

namespace susp {

// Variables the suspension feature reads that weft_test::runtime_variables() does not list.
inline void clear_suspension_variables() {
  unsetenv("WEFT_WATCHDOG");
  unsetenv("WEFT_STACKSIZE");
}

// The runtime restarted with GetParam() workers, statistics reset. Worker counts above the core
// count (8 on a 2-core machine) are the stress variants.
class workers_fixture : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    clear_suspension_variables();
    rt_ = std::make_unique<weft_test::runtime_config>(
        weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", std::to_string(GetParam())}});
    ASSERT_TRUE(rt_->ok());
    ASSERT_EQ(weft_num_workers(), GetParam());
    ASSERT_EQ(weft_reset_stats(), WEFT_OK);
  }
  void TearDown() override { rt_.reset(); }
  int workers() const { return GetParam(); }
  std::unique_ptr<weft_test::runtime_config> rt_;
};

inline std::string worker_name(const ::testing::TestParamInfo<int>& info) {
  return "w" + std::to_string(info.param);
}

template <class Closure>
void trampoline(void* args) {
  Closure* c = static_cast<Closure*>(args);
  (*c)();
  c->~Closure();
}

// weft::spawn with task flags (WEFT_TASK_TIED, WEFT_TASK_UNDEFERRED) and accesses.
template <class F, class... Accesses>
void spawn_flags(unsigned flags, F&& f, Accesses... accesses) {
  using Closure = std::decay_t<F>;
  weft_task_t* t = weft_task_create(&trampoline<Closure>, nullptr, sizeof(Closure), flags);
  if (!t) throw weft::error(weft_last_error(), "spawn_flags");
  new (weft_task_args(t)) Closure(std::forward<F>(f));
  (void)std::initializer_list<int>{
      (weft::detail::check(weft_task_depend(t, accesses.type, accesses.address, accesses.length), "depend"), 0)...};
  weft::detail::check(weft_task_submit(t), "spawn_flags");
}

// A global clock for "happened before" checks: every stamp is unique and increasing.
inline std::atomic<std::uint64_t>& clock_counter() {
  static std::atomic<std::uint64_t> c{1};
  return c;
}
inline std::uint64_t stamp() { return clock_counter().fetch_add(1, std::memory_order_seq_cst); }

inline std::string stats_text(const weft_stats_t& s) {
  std::ostringstream o;
  o << weft_test::format_stats(s) << " suspensions=" << s.suspensions << " resumes=" << s.resumes
    << " fibers=" << s.fibers;
  return o.str();
}

// After waits that parked: every context set aside was resumed, and fibers were made.
inline void expect_parked_and_resumed(const char* what) {
  weft_stats_t s = weft_test::stats();
  EXPECT_GT(s.suspensions, 0u) << what << ": " << stats_text(s);
  EXPECT_GT(s.resumes, 0u) << what << ": " << stats_text(s);
  EXPECT_GT(s.fibers, 0u) << what << ": " << stats_text(s);
  EXPECT_EQ(s.resumes, s.suspensions) << what << ": with no task running, every context set aside was resumed: "
                                      << stats_text(s);
  EXPECT_EQ(s.tasks_completed, s.tasks_created) << what << ": " << stats_text(s);
}

// Waits (sleeping) until pred() holds or `seconds` pass; returns pred().
template <class Pred>
bool eventually(Pred&& pred, double seconds = 10) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return pred();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

}  // namespace susp

#endif  // WEFT_TESTS_UNIT_SUSPENSION_COMMON_H
