// Helpers shared by weft's unit tests: runtime (re)configuration through the environment, the test
// scale factor, a hang watchdog, a busy-wait and a thread-safe error log for checks made inside
// task bodies (where a failed gtest ASSERT could not stop the test).
#ifndef WEFT_TEST_SUPPORT_WEFT_TEST_H
#define WEFT_TEST_SUPPORT_WEFT_TEST_H

#include <weft/weft.h>

#include <gtest/gtest.h>
#include <weft/weft.hpp>

#include <memory>
#include <string>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace weft_test {

// Every WEFT_* variable the runtime reads. A runtime_config clears all of them, so that a test is
// not influenced by the environment it was started from (CI sets none of these; a developer might).
inline const std::vector<std::string>& runtime_variables() {
  static const std::vector<std::string> names = {"WEFT_NUM_THREADS",  "WEFT_MAX_TASKS", "WEFT_MAX_READY",
                                                 "WEFT_SCHEDULE",     "WEFT_STEAL",     "WEFT_WAIT_POLICY",
                                                 "WEFT_MAX_PRIORITY", "WEFT_BIND",      "WEFT_DISPLAY_ENV",
                                                 "WEFT_GRAPH_LOOKAHEAD", "WEFT_GRAPH_ON_CHANGE", "WEFT_GRAPH_POLICY",
                                                 "WEFT_TRACE", "WEFT_TRACE_BUFFER", "WEFT_TRACE_COUNTERS"};
  return names;
}

// Multiplies the amount of work of the heavy tests (random graphs, throttling, stress). CI sets
// WEFT_TEST_SCALE=0.1 or so for the sanitizer builds, which run about 10x slower.
inline double scale() {
  const char* s = std::getenv("WEFT_TEST_SCALE");
  if (!s || !*s) return 1.0;
  char* end = nullptr;
  double v = std::strtod(s, &end);
  return (end != s && v > 0) ? v : 1.0;
}
inline int scaled(int base, int minimum = 1) {
  double v = base * scale();
  int n = static_cast<int>(v + 0.5);
  return n < minimum ? minimum : n;
}

inline std::optional<unsigned long long> env_u64(const char* name) {
  const char* s = std::getenv(name);
  if (!s || !*s) return std::nullopt;
  return std::strtoull(s, nullptr, 0);
}

// Stops the runtime if it runs, sets the given WEFT_* variables (clearing all the others), starts it
// again with weft_init, and on destruction stops it and clears the variables. The environment is only
// touched while no worker runs.
class runtime_config {
 public:
  using vars = std::vector<std::pair<std::string, std::string>>;
  explicit runtime_config(const vars& settings) {
    if (weft_initialized()) {
      EXPECT_EQ(weft_finalize(), WEFT_OK) << "weft_finalize before reconfiguring";
    }
    for (const auto& n : runtime_variables()) unsetenv(n.c_str());
    for (const auto& [k, v] : settings) setenv(k.c_str(), v.c_str(), 1);
    status_ = weft_init();
    EXPECT_EQ(status_, WEFT_OK) << "weft_init with " << describe(settings);
  }
  runtime_config(const runtime_config&) = delete;
  runtime_config& operator=(const runtime_config&) = delete;
  ~runtime_config() {
    if (weft_initialized()) {
      EXPECT_EQ(weft_finalize(), WEFT_OK) << "weft_finalize at test end";
    }
    for (const auto& n : runtime_variables()) unsetenv(n.c_str());
  }
  bool ok() const { return status_ == WEFT_OK; }

  static std::string describe(const vars& settings) {
    std::ostringstream o;
    for (const auto& [k, v] : settings) o << k << "=" << v << " ";
    return o.str();
  }

 private:
  int status_ = -1;
};

// Seconds after which a test is taken as hung: below ctest's TIMEOUT (300 s) so the watchdog speaks
// first. WEFT_TEST_HANG_SECONDS overrides it.
inline double default_hang_seconds() {
  if (auto s = env_u64("WEFT_TEST_HANG_SECONDS")) return static_cast<double>(*s);
  return 240;
}

// Ends the process with a message when a section runs far longer than it ever should (a hang), so
// that ctest reports which case (and which seed) hung instead of a bare timeout. The limit is
// generous and is not a performance assertion. Every test has one (see test_main.cpp); a test may
// add a tighter one that names its current step.
class watchdog {
 public:
  explicit watchdog(std::string what, double seconds)
      : what_(std::move(what)), seconds_(seconds), deadline_(from_now(seconds)) {
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!done_) {
        if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && !done_ &&
            std::chrono::steady_clock::now() >= deadline_) {
          std::fprintf(stderr, "\nweft test watchdog: HANG (%.0f s) in %s\n", seconds_,
                       context_.empty() ? what_.c_str() : (what_ + " / " + context_).c_str());
          std::fflush(stderr);
          std::_Exit(99);
        }
      }
    });
  }
  // Names the step now running (a seed, say), printed if it hangs, and restarts the clock.
  void step(std::string context) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      context_ = std::move(context);
      deadline_ = from_now(seconds_);
    }
    cv_.notify_all();
  }
  ~watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  static std::chrono::steady_clock::time_point from_now(double seconds) {
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  }
  std::string what_, context_;
  double seconds_;
  std::chrono::steady_clock::time_point deadline_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// A busy wait the optimiser keeps, so that tasks last long enough to overlap.
inline void spin(unsigned iterations) {
  for (unsigned i = 0; i < iterations; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
  }
}

// Collects failures seen inside task bodies; the test thread checks it after the wait.
class error_log {
 public:
  void add(const std::string& message) {
    count_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex_);
    if (messages_.size() < 20) messages_.push_back(message);
  }
  int count() const { return count_.load(); }
  std::string str() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::ostringstream o;
    for (const auto& m : messages_) o << "  " << m << "\n";
    if (count_.load() > static_cast<int>(messages_.size())) o << "  ... " << count_.load() << " in all\n";
    return o.str();
  }

 private:
  std::atomic<int> count_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
};

inline weft_stats_t stats() {
  weft_stats_t s{};
  EXPECT_EQ(weft_get_stats(&s), WEFT_OK);
  return s;
}

inline std::string format_stats(const weft_stats_t& s) {
  std::ostringstream o;
  o << "created=" << s.tasks_created << " completed=" << s.tasks_completed << " edges=" << s.edges_created
    << " elided=" << s.edges_elided << " pruned=" << s.edges_pruned << " redirect=" << s.redirect_nodes
    << " steals=" << s.steals << " throttle_waits=" << s.throttle_waits << " max_live=" << s.max_live_tasks
    << " task_bytes=" << s.task_bytes;
  return o.str();
}

// Recursive Fibonacci with two child tasks and a taskwait in every task: deep nesting of waits.
inline long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  weft::spawn([&a, n] { a = fib(n - 1); });
  weft::spawn([&b, n] { b = fib(n - 2); });
  weft::taskwait();
  return a + b;
}

// A test parameterised by the worker count: the runtime is restarted with that many workers for
// each case and stopped after it.
class workers_test : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    rt_ = std::make_unique<runtime_config>(runtime_config::vars{{"WEFT_NUM_THREADS", std::to_string(GetParam())}});
    ASSERT_TRUE(rt_->ok());
  }
  void TearDown() override { rt_.reset(); }
  std::unique_ptr<runtime_config> rt_;
};

}  // namespace weft_test

#endif  // WEFT_TEST_SUPPORT_WEFT_TEST_H
