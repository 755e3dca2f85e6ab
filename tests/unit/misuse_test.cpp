// Misuse of the C API returns a named error; it never crashes or hangs, and the runtime keeps working.
#include <weft/weft.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "weft_test.h"

namespace {

std::atomic<int> g_runs{0};
void count_body(void*) {
  g_runs.fetch_add(1);
}

class Misuse : public ::testing::Test {
 protected:
  // One worker: a submitted task stays queued (alive) until the main thread waits.
  weft_test::runtime_config rt{{{"WEFT_NUM_THREADS", "1"}}};
  void SetUp() override {
    ASSERT_TRUE(rt.ok());
    g_runs = 0;
  }
  // After each misuse, the runtime still runs tasks.
  void expect_still_works() {
    int before = g_runs.load();
    weft_task_t* t = weft_task_create(&count_body, nullptr, 0, 0);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    EXPECT_EQ(g_runs.load(), before + 1);
  }
};

TEST_F(Misuse, StrerrorNamesEveryCode) {
  const int codes[] = {WEFT_OK,
                       WEFT_ERR_INVALID_ARGUMENT,
                       WEFT_ERR_ALREADY_SUBMITTED,
                       WEFT_ERR_NOT_INITIALIZED,
                       WEFT_ERR_NO_TASKGROUP,
                       WEFT_ERR_NOT_A_WORKER,
                       WEFT_ERR_OUT_OF_MEMORY,
                       WEFT_ERR_TASK_FAILED,
                       WEFT_ERR_BUSY,
                       WEFT_ERR_ARGS_TOO_LARGE};
  std::set<std::string> texts;
  for (int c : codes) {
    const char* s = weft_strerror(c);
    ASSERT_NE(s, nullptr) << "code " << c;
    EXPECT_GT(std::strlen(s), 0u) << "code " << c;
    texts.insert(s);
  }
  EXPECT_EQ(texts.size(), sizeof codes / sizeof codes[0]) << "two codes share a message";
  for (int c : {-1, 10, 1000}) {
    const char* s = weft_strerror(c);
    ASSERT_NE(s, nullptr) << "unknown code " << c;
    EXPECT_EQ(texts.count(s), 0u) << "unknown code " << c << " reads like a known one: " << s;
  }
}

TEST_F(Misuse, NullFunction) {
  int args = 0;
  EXPECT_EQ(weft_task_create(nullptr, &args, sizeof args, 0), nullptr);
  EXPECT_EQ(weft_last_error(), WEFT_ERR_INVALID_ARGUMENT);
  expect_still_works();
}

TEST_F(Misuse, NullTask) {
  long x = 0;
  EXPECT_EQ(weft_task_depend(nullptr, WEFT_DEP_IN, &x, sizeof x), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_task_set_priority(nullptr, 1), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_task_submit(nullptr), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_task_discard(nullptr), WEFT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(weft_task_args(nullptr), nullptr);
  EXPECT_EQ(weft_get_stats(nullptr), WEFT_ERR_INVALID_ARGUMENT);
  expect_still_works();
}

TEST_F(Misuse, BadDependenceTypeAndNullAddress) {
  long x = 0;
  weft_task_t* t = weft_task_create(&count_body, nullptr, 0, 0);
  ASSERT_NE(t, nullptr);
  for (int bad : {0, 6, 7, 99, -1})
    EXPECT_EQ(weft_task_depend(t, static_cast<weft_dep_type>(bad), &x, sizeof x), WEFT_ERR_INVALID_ARGUMENT)
        << "type " << bad;
  EXPECT_EQ(weft_task_depend(t, WEFT_DEP_IN, nullptr, 8), WEFT_ERR_INVALID_ARGUMENT);
  // The task is still usable after rejected calls.
  EXPECT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &x, sizeof x), WEFT_OK);
  EXPECT_EQ(weft_task_submit(t), WEFT_OK);
  EXPECT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(g_runs.load(), 1);
}

TEST_F(Misuse, ZeroLengthAccessIsFine) {
  long x = 0;
  weft_task_t* t = weft_task_create(&count_body, nullptr, 0, 0);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(weft_task_depend(t, WEFT_DEP_OUT, &x, 0), WEFT_OK);
  EXPECT_EQ(weft_task_submit(t), WEFT_OK);
  EXPECT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(g_runs.load(), 1);
}

TEST_F(Misuse, ArgumentBlockSizes) {
  static std::vector<unsigned char> big(WEFT_MAX_ARGS_SIZE + 1, 0xab);
  EXPECT_EQ(weft_task_create(&count_body, big.data(), WEFT_MAX_ARGS_SIZE + 1, 0), nullptr);
  EXPECT_EQ(weft_last_error(), WEFT_ERR_ARGS_TOO_LARGE);
  EXPECT_EQ(weft_task_create(&count_body, big.data(), static_cast<size_t>(-1), 0), nullptr);
  EXPECT_EQ(weft_last_error(), WEFT_ERR_ARGS_TOO_LARGE);

  // The largest block is accepted and copied whole; so are the inline-size boundaries.
  static std::atomic<int> bad{0};
  struct checker {
    static void body(void* p) {
      auto* bytes = static_cast<unsigned char*>(p);
      size_t n = 0;
      std::memcpy(&n, bytes, sizeof n);
      for (size_t i = sizeof n; i < n; ++i)
        if (bytes[i] != static_cast<unsigned char>(i * 7)) {
          bad++;
          return;
        }
      g_runs++;
    }
  };
  int expected = 0;
  for (size_t n : {sizeof(size_t), size_t{WEFT_INLINE_ARGS_SIZE - 1}, size_t{WEFT_INLINE_ARGS_SIZE},
                   size_t{WEFT_INLINE_ARGS_SIZE + 1}, size_t{1000}, size_t{WEFT_MAX_ARGS_SIZE}}) {
    std::vector<unsigned char> block(n);
    std::memcpy(block.data(), &n, sizeof n);
    for (size_t i = sizeof n; i < n; ++i) block[i] = static_cast<unsigned char>(i * 7);
    weft_task_t* t = weft_task_create(&checker::body, block.data(), n, 0);
    ASSERT_NE(t, nullptr) << "size " << n << ": " << weft_strerror(weft_last_error());
    std::fill(block.begin(), block.end(), 0);  // the task owns a copy
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    ++expected;
  }
  // NULL args with a size: an uninitialised block filled through weft_task_args.
  {
    const size_t n = 300;
    weft_task_t* t = weft_task_create(&checker::body, nullptr, n, 0);
    ASSERT_NE(t, nullptr);
    auto* bytes = static_cast<unsigned char*>(weft_task_args(t));
    ASSERT_NE(bytes, nullptr);
    std::memcpy(bytes, &n, sizeof n);
    for (size_t i = sizeof n; i < n; ++i) bytes[i] = static_cast<unsigned char>(i * 7);
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    ++expected;
  }
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(g_runs.load(), expected);
}

TEST_F(Misuse, ArgumentBlockIsAligned) {
  static std::atomic<int> misaligned{0};
  for (size_t n : {size_t{1}, size_t{16}, size_t{64}, size_t{65}, size_t{4096}}) {
    weft_task_t* t = weft_task_create([](void*) {}, nullptr, n, 0);
    ASSERT_NE(t, nullptr);
    if (reinterpret_cast<uintptr_t>(weft_task_args(t)) % 16 != 0) misaligned++;
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  }
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(misaligned.load(), 0) << "weft.hpp places closures aligned up to 16 bytes in the block";
}

// With one worker the submitted task is still queued, so the handle is alive: later calls on it
// must be refused by name, and the task must run once.
TEST_F(Misuse, CallsAfterSubmit) {
  long x = 0;
  weft_task_t* t = weft_task_create(&count_body, nullptr, 0, 0);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  ASSERT_EQ(g_runs.load(), 0) << "1 worker: nothing runs before the wait";
  EXPECT_EQ(weft_task_depend(t, WEFT_DEP_IN, &x, sizeof x), WEFT_ERR_ALREADY_SUBMITTED);
  EXPECT_EQ(weft_task_set_priority(t, 1), WEFT_ERR_ALREADY_SUBMITTED);
  EXPECT_EQ(weft_task_submit(t), WEFT_ERR_ALREADY_SUBMITTED);
  EXPECT_EQ(weft_task_discard(t), WEFT_ERR_ALREADY_SUBMITTED);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(g_runs.load(), 1);
}

TEST_F(Misuse, DiscardNeverRuns) {
  long x = 0;
  for (int i = 0; i < 100; ++i) {
    weft_task_t* t = weft_task_create(&count_body, &i, sizeof i, 0);
    ASSERT_NE(t, nullptr);
    if (i % 2) {
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &x, sizeof x), WEFT_OK);
    }
    if (i % 3 == 0) {
      ASSERT_EQ(weft_task_set_priority(t, 1), WEFT_OK);
    }
    ASSERT_EQ(weft_task_discard(t), WEFT_OK);
  }
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(g_runs.load(), 0);
  expect_still_works();
}

TEST_F(Misuse, NegativePriorityIsRefusedOrClamped) {
  weft_task_t* t = weft_task_create(&count_body, nullptr, 0, 0);
  ASSERT_NE(t, nullptr);
  int s = weft_task_set_priority(t, -5);
  EXPECT_TRUE(s == WEFT_OK || s == WEFT_ERR_INVALID_ARGUMENT) << s;
  EXPECT_EQ(weft_task_set_priority(t, 1 << 30), WEFT_OK) << "larger values are clamped";
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(g_runs.load(), 1);
}

TEST_F(Misuse, UnknownFlagsRefusedOrIgnored) {
  weft_task_t* t = weft_task_create(&count_body, nullptr, 0, 0x80000000u);
  if (t == nullptr) {
    EXPECT_EQ(weft_last_error(), WEFT_ERR_INVALID_ARGUMENT);
  } else {
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    EXPECT_EQ(g_runs.load(), 1);
  }
}

TEST_F(Misuse, TaskgroupEndWithoutBegin) {
  EXPECT_EQ(weft_taskgroup_end(), WEFT_ERR_NO_TASKGROUP);
  EXPECT_EQ(weft_taskgroup_begin(), WEFT_OK);
  EXPECT_EQ(weft_taskgroup_end(), WEFT_OK);
  EXPECT_EQ(weft_taskgroup_end(), WEFT_ERR_NO_TASKGROUP);
  // Inside a task: the task has no group of its own; main's open group must stay open.
  static std::atomic<int> inner{-1};
  EXPECT_EQ(weft_taskgroup_begin(), WEFT_OK);
  weft_task_t* t = weft_task_create([](void*) { inner = weft_taskgroup_end(); }, nullptr, 0, 0);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  EXPECT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(inner.load(), WEFT_ERR_NO_TASKGROUP);
  EXPECT_EQ(weft_taskgroup_end(), WEFT_OK) << "main's group was closed by a task";
  expect_still_works();
}

TEST_F(Misuse, FinalizeInsideTaskIsBusy) {
  static std::atomic<int> status{-1};
  weft_task_t* t = weft_task_create([](void*) { status = weft_finalize(); }, nullptr, 0, 0);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(status.load(), WEFT_ERR_BUSY);
  EXPECT_TRUE(weft_initialized());
  expect_still_works();
}

// weft_last_error names the refusal too (it said "success" after WEFT_ERR_BUSY).
TEST_F(Misuse, FinalizeInsideTaskSetsLastError) {
  static std::atomic<int> last{-1};
  weft_task_t* t = weft_task_create(
      [](void*) {
        weft_finalize();
        last = weft_last_error();
      },
      nullptr, 0, 0);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(last.load(), WEFT_ERR_BUSY);
}

// A handle kept past its task's end, once the descriptor serves a new task, is refused instead of
// changing the new task (issue 23).
TEST_F(Misuse, StaleHandleIsRefused) {
  std::set<void*> seen;
  int x = 0, y = 0;
  for (int round = 0; round < 64; ++round) {
    weft_task_t* old = weft_task_create(&count_body, nullptr, 0, 0);
    ASSERT_NE(old, nullptr);
    ASSERT_EQ(weft_task_submit(old), WEFT_OK);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);  // old ran and its descriptor went back to the pool
    weft_task_t* fresh = weft_task_create(&count_body, nullptr, 0, 0);
    ASSERT_NE(fresh, nullptr);
    bool same_descriptor = (reinterpret_cast<std::uintptr_t>(fresh) & 0xffffffffffffull) ==
                           (reinterpret_cast<std::uintptr_t>(old) & 0xffffffffffffull);
    if (same_descriptor) {
      seen.insert(fresh);
      EXPECT_EQ(weft_task_depend(old, WEFT_DEP_OUT, &x, sizeof x), WEFT_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(weft_last_error(), WEFT_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(weft_task_set_priority(old, 1), WEFT_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(weft_task_set_label(old, "stale"), WEFT_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(weft_task_args(old), nullptr);
      EXPECT_EQ(weft_task_discard(old), WEFT_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(weft_task_submit(old), WEFT_ERR_INVALID_ARGUMENT);
    }
    // The new task's own handle works, and was not touched through the stale one.
    EXPECT_EQ(weft_task_depend(fresh, WEFT_DEP_IN, &y, sizeof y), WEFT_OK);
    EXPECT_EQ(weft_task_get_priority(fresh), 0);
    ASSERT_EQ(weft_task_submit(fresh), WEFT_OK);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
  }
  EXPECT_FALSE(seen.empty()) << "no descriptor was reused in 64 rounds: the test checked nothing";
  expect_still_works();
}

TEST_F(Misuse, InitTwiceIsOk) {
  EXPECT_EQ(weft_init(), WEFT_OK);
  EXPECT_EQ(weft_init(), WEFT_OK);
  EXPECT_TRUE(weft_initialized());
  EXPECT_EQ(weft_num_workers(), 1);
  expect_still_works();
}

// A thread that is not a weft worker may not wait or open groups; queries answer -1.
TEST_F(Misuse, ForeignThread) {
  int id = 0, wait = 0, group_begin = 0, group_end = 0;
  std::thread th([&] {
    id = weft_worker_id();
    wait = weft_taskwait();
    group_begin = weft_taskgroup_begin();
    group_end = weft_taskgroup_end();
  });
  th.join();
  EXPECT_EQ(id, -1);
  EXPECT_EQ(wait, WEFT_ERR_NOT_A_WORKER);
  EXPECT_EQ(group_begin, WEFT_ERR_NOT_A_WORKER);
  EXPECT_NE(group_end, WEFT_OK);
  expect_still_works();
}

TEST_F(Misuse, ReportErrorOutsideTask) {
  // From the main program (the implicit root task) there is no parent to report to.
  static std::atomic<int> released{0};
  int s = weft_report_error(&released, [](void*) { released++; });
  EXPECT_NE(s, WEFT_OK) << "weft_report_error outside any task has no parent to report to";
  EXPECT_LE(released.load(), 1);
  EXPECT_EQ(weft_take_error(nullptr), nullptr);
  expect_still_works();
}

// The C error channel: the first report per wait reaches weft_take_error, later ones are released.
TEST_F(Misuse, ReportErrorAndTakeError) {
  static std::atomic<int> released{0};
  static int payloads[5];
  struct body {
    static void run(void* p) {
      int i = *static_cast<int*>(p);
      weft_report_error(&payloads[i], [](void*) { released++; });
    }
  };
  for (int i = 0; i < 5; ++i) {
    weft_task_t* t = weft_task_create(&body::run, &i, sizeof i, 0);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  }
  EXPECT_EQ(weft_taskwait(), WEFT_ERR_TASK_FAILED);
  void* p = weft_take_error(nullptr);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p >= &payloads[0] && p <= &payloads[4]);
  EXPECT_EQ(released.load(), 4);
  EXPECT_EQ(weft_take_error(nullptr), nullptr) << "claimed once";
  EXPECT_EQ(weft_taskwait(), WEFT_OK) << "the failure was reported once";
  expect_still_works();
}

// Calls on a runtime that has been finalized: named errors or an implicit init, never a crash.
TEST(MisuseLifetime, CallsAfterFinalize) {
  {
    weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
    ASSERT_TRUE(rt.ok());
  }
  ASSERT_FALSE(weft_initialized());
  int f = weft_finalize();
  EXPECT_TRUE(f == WEFT_OK || f == WEFT_ERR_NOT_INITIALIZED) << "finalize when not running: " << f;
  int s = weft_taskgroup_end();
  EXPECT_NE(s, WEFT_OK);
  weft_stats_t st;
  s = weft_get_stats(&st);
  EXPECT_TRUE(s == WEFT_OK || s == WEFT_ERR_NOT_INITIALIZED) << s;
  // Implicit init on first task call.
  static std::atomic<int> ran{0};
  weft_task_t* t = weft_task_create([](void*) { ran++; }, nullptr, 0, 0);
  if (t) {
    EXPECT_TRUE(weft_initialized());
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    ASSERT_EQ(weft_taskwait(), WEFT_OK);
    EXPECT_EQ(ran.load(), 1);
  } else {
    EXPECT_EQ(weft_last_error(), WEFT_ERR_NOT_INITIALIZED);
  }
  EXPECT_EQ(weft_finalize(), WEFT_OK);
}

// An error a task reported (a C++ exception, through weft.hpp) that nothing collected is reported
// by weft_finalize, on stderr and in its status, instead of vanishing (issue 23).
TEST(MisuseLifetime, UncollectedErrorReportedAtFinalize) {
  static std::atomic<int> released{0};
  released = 0;
  weft_test::runtime_config rt(weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", "2"}});
  ASSERT_TRUE(rt.ok());
  weft_task_t* t = weft_task_create(
      [](void*) { weft_report_error(&released, [](void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); }); },
      nullptr, 0, 0);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  testing::internal::CaptureStderr();
  int status = weft_finalize();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, WEFT_ERR_TASK_FAILED);
  EXPECT_EQ(weft_last_error(), WEFT_ERR_TASK_FAILED);
  EXPECT_NE(err.find("no taskwait, taskgroup or weft_take_error collected"), std::string::npos) << err;
  EXPECT_EQ(released.load(), 1) << "the payload was not released";
  EXPECT_FALSE(weft_initialized()) << "the runtime must still stop";
}

// A malformed environment variable makes weft_init fail with a named error, not start with junk.
TEST(MisuseLifetime, MalformedEnvironment) {
  if (weft_initialized()) {
    ASSERT_EQ(weft_finalize(), WEFT_OK);
  }
  for (auto [name, value] : std::vector<std::pair<const char*, const char*>>{{"WEFT_NUM_THREADS", "zero"},
                                                                             {"WEFT_SCHEDULE", "lifo"},
                                                                             {"WEFT_STEAL", "nobody"},
                                                                             {"WEFT_MAX_TASKS", "-3"},
                                                                             {"WEFT_WAIT_POLICY", "sometimes"}}) {
    setenv(name, value, 1);
    int s = weft_init();
    EXPECT_NE(s, WEFT_OK) << name << "=" << value;
    EXPECT_FALSE(weft_initialized()) << name << "=" << value;
    if (weft_initialized()) weft_finalize();
    unsetenv(name);
  }
  EXPECT_EQ(weft_init(), WEFT_OK);
  EXPECT_EQ(weft_finalize(), WEFT_OK);
}

}  // namespace
