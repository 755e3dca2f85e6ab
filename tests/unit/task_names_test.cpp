// The runtime's reports name tasks as a person would: the watchdog names a waiting task by its label
// (kept in the trace, so when tracing) or else its function's symbol, and a persistent graph that
// changed names the recorded function. The functions are local symbols (dladdr cannot see them),
// in tests/trace/helper.cpp, run in a child process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.h"
#include "weft_test.h"

namespace {

using outcome = weft_test::child_outcome;
using weft_test::describe;

outcome run_helper(const char* mode, std::vector<std::string> env) {
  return weft_test::run_child(WEFT_TRACE_HELPER, mode, env, 60.0);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TaskNames, WatchdogNamesTasksByTheirFunctions) {
  outcome o = run_helper("watchdog", {"WEFT_NUM_THREADS=2", "WEFT_WATCHDOG=1"});
  ASSERT_TRUE(o.exited && o.status == 0) << describe(o);
  ASSERT_TRUE(has(o.err, "weft: watchdog:")) << describe(o);
  EXPECT_TRUE(has(o.err, "(anonymous namespace)::waiter_with_label(void*)) on worker")) << describe(o);
  EXPECT_TRUE(has(o.err, "(anonymous namespace)::waiter_without_label(void*)) on worker")) << describe(o);
  // The unfulfilled event's line names the task bound to it the same way (it printed "?" before).
  EXPECT_TRUE(has(o.err, "((anonymous namespace)::bound_to_event(void*)) cannot complete until then")) << describe(o);
  EXPECT_FALSE(has(o.err, "(?)")) << describe(o);
}

TEST(TaskNames, WatchdogNamesTasksByTheirLabelsWhenTracing) {
  const std::string path = "/tmp/weft_task_names_" + std::to_string(getpid()) + ".trace";
  outcome o = run_helper("watchdog", {"WEFT_NUM_THREADS=2", "WEFT_WATCHDOG=1", "WEFT_TRACE=" + path});
  std::remove(path.c_str());
  ASSERT_TRUE(o.exited && o.status == 0) << describe(o);
  ASSERT_TRUE(has(o.err, "weft: watchdog:")) << describe(o);
  EXPECT_TRUE(has(o.err, "(late_event_waiter) on worker")) << describe(o);
  EXPECT_TRUE(has(o.err, "(anonymous namespace)::waiter_without_label(void*)) on worker")) << describe(o);
  EXPECT_FALSE(has(o.err, "(?)")) << describe(o);
}

TEST(TaskNames, GraphChangeNamesTheRecordedFunction) {
  outcome o = run_helper("graph-change", {"WEFT_NUM_THREADS=2", "WEFT_GRAPH_ON_CHANGE=error"});
  ASSERT_TRUE(o.exited && o.status == 0) << describe(o);
  EXPECT_TRUE(has(o.out, "changed=" + std::to_string(WEFT_ERR_GRAPH_CHANGED))) << describe(o);
  EXPECT_TRUE(has(o.err,
                  "differs from its recording at task 0 (recorded function "
                  "(anonymous namespace)::recorded_step(void*))"))
      << describe(o);
}

}  // namespace
