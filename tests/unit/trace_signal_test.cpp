// A traced run ended by SIGINT or SIGTERM leaves its trace, and still ends by that signal; a handler
// of the program's runs after the trace is written, an ignored signal stays ignored, and the
// runtime's handlers exist only while a trace is recorded. Each case runs tests/trace/helper.cpp in
// a child process.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.h"
#include "trace_file.h"
#include "weft_test.h"

namespace {

using outcome = weft_test::child_outcome;
using weft_test::describe;

constexpr std::uint16_t ev_create = 1, ev_end = 5;

std::string trace_path(const std::string& name) {
  return "/tmp/weft_trace_signal_" + std::to_string(getpid()) + "_" + name + ".trace";
}

outcome run_helper(const std::string& mode, const std::string& trace, int workers) {
  std::vector<std::string> env{"WEFT_NUM_THREADS=" + std::to_string(workers)};
  if (!trace.empty()) env.push_back("WEFT_TRACE=" + trace);
  return weft_test::run_child(WEFT_TRACE_HELPER, mode, env, 60.0);
}

// The trace holds the 32 labelled tasks the helper ran before the signal, each created and ended.
void expect_trace_of_the_tasks(const std::string& path, const outcome& o) {
  weft_test::trace_file t = weft_test::read_trace(path);
  ASSERT_TRUE(t.ok) << "no readable trace at " << path << ": " << t.error << "\n" << describe(o);
  std::uint32_t label = t.kind_named("before_the_signal");
  EXPECT_NE(label, 0u) << describe(o);
  EXPECT_GE(t.count(ev_create), 32u);
  EXPECT_GE(t.count(ev_end), 32u);
}

struct signal_case {
  const char* mode;
  int signal;
  int workers;
};

void PrintTo(const signal_case& c, std::ostream* os) {
  *os << c.mode << "/w" << c.workers;
}

class TraceSignal : public ::testing::TestWithParam<signal_case> {};

TEST_P(TraceSignal, WritesTheTraceAndEndsByTheSignal) {
  const signal_case& c = GetParam();
  const std::string path = trace_path(std::string(c.mode) + std::to_string(c.workers));
  std::remove(path.c_str());
  outcome o = run_helper(c.mode, path, c.workers);
  ASSERT_FALSE(o.hung) << describe(o);
  EXPECT_FALSE(o.exited) << "the process must still end by the signal: " << describe(o);
  EXPECT_EQ(o.status, c.signal) << describe(o);
  EXPECT_EQ(o.out.find("after the signal"), std::string::npos) << describe(o);
  expect_trace_of_the_tasks(path, o);
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Modes, TraceSignal,
                         ::testing::Values(signal_case{"sigterm", SIGTERM, 1}, signal_case{"sigterm", SIGTERM, 2},
                                           signal_case{"sigint", SIGINT, 2}, signal_case{"sigterm-in-task", SIGTERM, 1},
                                           signal_case{"sigterm-in-task", SIGTERM, 2}),
                         [](const ::testing::TestParamInfo<signal_case>& info) {
                           std::string s = std::string(info.param.mode) + "_w" + std::to_string(info.param.workers);
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

TEST(TraceSignalHandlers, ProgramHandlerRunsAfterTheTraceIsWritten) {
  const std::string path = trace_path("chained");
  std::remove(path.c_str());
  outcome o = run_helper("chained", path, 2);
  ASSERT_FALSE(o.hung) << describe(o);
  EXPECT_TRUE(o.exited && o.status == 0) << describe(o);
  EXPECT_NE(o.out.find("program handler: trace present\n"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("after the signal"), std::string::npos) << describe(o);
  expect_trace_of_the_tasks(path, o);  // the whole run's, written again at weft_finalize
  std::remove(path.c_str());
}

TEST(TraceSignalHandlers, IgnoredSignalStaysIgnored) {
  const std::string path = trace_path("ignored");
  outcome o = run_helper("ignored", path, 2);
  ASSERT_FALSE(o.hung) << describe(o);
  EXPECT_TRUE(o.exited && o.status == 0) << describe(o);
  EXPECT_NE(o.out.find("after the signal"), std::string::npos) << describe(o);
  std::remove(path.c_str());
}

TEST(TraceSignalHandlers, OnlyWhileTracing) {
  outcome untraced = run_helper("dispositions", "", 2);
  EXPECT_TRUE(untraced.exited && untraced.status == 0) << describe(untraced);
  EXPECT_NE(untraced.out.find("running: SIGINT default, SIGTERM default\n"), std::string::npos) << describe(untraced);
  const std::string path = trace_path("dispositions");
  outcome traced = run_helper("dispositions", path, 2);
  EXPECT_TRUE(traced.exited && traced.status == 0) << describe(traced);
  EXPECT_NE(traced.out.find("running: SIGINT weft, SIGTERM weft\n"), std::string::npos) << describe(traced);
  EXPECT_NE(traced.out.find("finalized: SIGINT default, SIGTERM default\n"), std::string::npos) << describe(traced);
  std::remove(path.c_str());
}

}  // namespace
