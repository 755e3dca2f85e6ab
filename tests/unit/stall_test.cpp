// Tasks waiting on events nobody fulfils: weft_finalize must not hang; with WEFT_WATCHDOG=1 it
// reports the waiting tasks and unfulfilled events on stderr and returns WEFT_ERR_STALLED after
// about a second with every worker idle. The watchdog thread reports a long wait that ends later.
// Each case runs tests/support/suspension_helper.cpp in a child process, killed if it hangs.
#include <weft/weft.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "weft_test.h"

namespace {

using outcome = weft_test::child_outcome;
using weft_test::describe;

// A run takes about WEFT_WATCHDOG (1 s) plus start-up; sanitized builds are slower.
double hang_limit() {
  return 10.0 / std::min(1.0, std::max(weft_test::scale(), 0.34));
}

outcome run_helper(const char* mode, int workers, const char* watchdog) {
  std::vector<std::string> env{"WEFT_NUM_THREADS=" + std::to_string(workers)};
  if (watchdog) env.push_back(std::string("WEFT_WATCHDOG=") + watchdog);
  return weft_test::run_child(WEFT_SUSPENSION_HELPER, mode, env, hang_limit());
}

// The "event=0x..." lines of the helper's stdout.
std::vector<std::string> events_of(const std::string& out) {
  std::vector<std::string> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("event=", 0) == 0) v.push_back(line.substr(6));
  return v;
}

struct stall_case {
  const char* mode;
  int workers;
};

void PrintTo(const stall_case& c, std::ostream* os) {
  *os << c.mode << "/w" << c.workers;
}

class Stall : public ::testing::TestWithParam<stall_case> {};

TEST_P(Stall, FinalizeReportsAndReturnsStalled) {
  const stall_case& c = GetParam();
  outcome o = run_helper(c.mode, c.workers, "1");
  ASSERT_FALSE(o.hung) << "weft_finalize hung with tasks waiting on an event nobody fulfils "
                       << "(WEFT_WATCHDOG=1, mode " << c.mode << ", " << c.workers << " workers): " << describe(o);
  EXPECT_TRUE(o.exited && o.status == 0) << describe(o);
  EXPECT_NE(o.out.find("finalize=" + std::to_string(WEFT_ERR_STALLED) + "\n"), std::string::npos)
      << "weft_finalize did not return WEFT_ERR_STALLED: " << describe(o);
  auto events = events_of(o.out);
  ASSERT_FALSE(events.empty()) << describe(o);
  for (const auto& e : events)
    EXPECT_NE(o.err.find(e), std::string::npos)
        << "the report does not name the unfulfilled event " << e << ": " << describe(o);
  // Every event the report names is one of them (not a pool block that was never an event).
  std::istringstream report(o.err);
  std::string line;
  while (std::getline(report, line)) {
    if (line.rfind("  event 0x", 0) != 0) continue;
    std::string address = line.substr(8, line.find(':') - 8);
    EXPECT_NE(std::find(events.begin(), events.end(), address), events.end())
        << "the report names an event the program never made: " << line << "\n"
        << describe(o);
  }
  EXPECT_NE(o.err.find("fulfil"), std::string::npos) << describe(o);
  EXPECT_NE(o.err.find("weft_finalize"), std::string::npos) << "no report from weft_finalize: " << describe(o);
}

INSTANTIATE_TEST_SUITE_P(Modes, Stall,
                         ::testing::Values(stall_case{"stall-child", 1}, stall_case{"stall-child", 2},
                                           stall_case{"stall-grandchild", 1}, stall_case{"stall-grandchild", 2},
                                           stall_case{"stall-bind", 1}, stall_case{"stall-many", 2},
                                           stall_case{"stall-dirty-heap", 1}),
                         [](const ::testing::TestParamInfo<stall_case>& info) {
                           std::string s = std::string(info.param.mode) + "_w" + std::to_string(info.param.workers);
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

// WEFT_WATCHDOG=1: a wait that lasts 1.8 s is reported by the watchdog thread (with the event),
// and the program then finishes normally.
class Watchdog : public ::testing::TestWithParam<int> {};

TEST_P(Watchdog, ReportsALongWaitThatEndsLater) {
  const int workers = GetParam();
  outcome o = run_helper("watchdog-late", workers, "1");
  ASSERT_FALSE(o.hung) << describe(o);
  EXPECT_TRUE(o.exited && o.status == 0) << describe(o);
  EXPECT_NE(o.out.find("taskwait=0\n"), std::string::npos) << describe(o);
  EXPECT_NE(o.out.find("finalize=0\n"), std::string::npos) << describe(o);
  EXPECT_NE(o.err.find("weft: watchdog: no task created or finished and no event fulfilled for 1 s"), std::string::npos)
      << "workers=" << workers << ": " << describe(o);
  auto events = events_of(o.out);
  ASSERT_EQ(events.size(), 1u) << describe(o);
  EXPECT_NE(o.err.find(events[0]), std::string::npos) << "the watchdog report does not name the event: " << describe(o);
}

INSTANTIATE_TEST_SUITE_P(Workers, Watchdog, ::testing::Values(2),
                         [](const ::testing::TestParamInfo<int>& info) { return "w" + std::to_string(info.param); });

}  // namespace
