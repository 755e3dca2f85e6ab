// Tasks waiting on events nobody fulfils: weft_finalize must not hang; with WEFT_WATCHDOG=1 it
// reports the waiting tasks and unfulfilled events on stderr and returns WEFT_ERR_STALLED after
// about a second with every worker idle. The watchdog thread reports a long wait that ends later.
// Each case runs tests/support/suspension_helper.cpp in a child process, killed if it hangs.
#include <weft/weft.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "weft_test.h"

extern char** environ;

namespace {

struct outcome {
  bool exited = false;  // normal exit (not a signal, not killed by us)
  int status = -1;      // exit status, or the signal
  bool hung = false;
  double seconds = 0;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A run takes about WEFT_WATCHDOG (1 s) plus start-up; sanitized builds are slower.
double hang_limit() {
  return 10.0 / std::min(1.0, std::max(weft_test::scale(), 0.34));
}

outcome run_helper(const char* mode, int workers, const char* watchdog) {
  outcome o;
  char out_path[] = "/tmp/weft_stall_out_XXXXXX";
  char err_path[] = "/tmp/weft_stall_err_XXXXXX";
  int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
  EXPECT_GE(out_fd, 0);
  EXPECT_GE(err_fd, 0);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "WEFT_", 5) != 0 || std::strncmp(*e, "WEFT_TEST", 9) == 0) env_strings.push_back(*e);
  env_strings.push_back("WEFT_NUM_THREADS=" + std::to_string(workers));
  if (watchdog) env_strings.push_back(std::string("WEFT_WATCHDOG=") + watchdog);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string prog = WEFT_SUSPENSION_HELPER, mode_s = mode;
  char* argv[] = {prog.data(), mode_s.data(), nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  pid_t pid = -1;
  auto t0 = std::chrono::steady_clock::now();
  int rc = posix_spawn(&pid, prog.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_fd);
  close(err_fd);
  EXPECT_EQ(rc, 0) << "posix_spawn " << prog << ": " << std::strerror(rc);
  if (rc == 0) {
    int wstatus = 0;
    auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(hang_limit()));
    for (;;) {
      pid_t r = waitpid(pid, &wstatus, WNOHANG);
      if (r == pid) break;
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &wstatus, 0);
        o.hung = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!o.hung) {
      if (WIFEXITED(wstatus)) {
        o.exited = true;
        o.status = WEXITSTATUS(wstatus);
      } else if (WIFSIGNALED(wstatus)) {
        o.status = WTERMSIG(wstatus);
      }
    }
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  o.out = slurp(out_path);
  o.err = slurp(err_path);
  unlink(out_path);
  unlink(err_path);
  return o;
}

std::string describe(const outcome& o) {
  std::ostringstream s;
  if (o.hung) {
    s << "HUNG (killed after " << hang_limit() << " s)";
  } else {
    s << (o.exited ? "exited " : "killed by signal ") << o.status << " after " << o.seconds << " s";
  }
  s << "\n--- stdout ---\n" << o.out << "--- stderr ---\n" << o.err;
  return s.str();
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
    EXPECT_NE(o.err.find(e), std::string::npos) << "the report does not name the unfulfilled event " << e << ": "
                                                << describe(o);
  EXPECT_NE(o.err.find("fulfil"), std::string::npos) << describe(o);
  EXPECT_NE(o.err.find("weft_finalize"), std::string::npos) << "no report from weft_finalize: " << describe(o);
}

INSTANTIATE_TEST_SUITE_P(Modes, Stall,
                         ::testing::Values(stall_case{"stall-child", 1}, stall_case{"stall-child", 2},
                                           stall_case{"stall-grandchild", 1}, stall_case{"stall-grandchild", 2},
                                           stall_case{"stall-bind", 1}, stall_case{"stall-many", 2}),
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
  EXPECT_NE(o.err.find(events[0]), std::string::npos) << "the watchdog report does not name the event: "
                                                      << describe(o);
}

INSTANTIATE_TEST_SUITE_P(Workers, Watchdog, ::testing::Values(2),
                         [](const ::testing::TestParamInfo<int>& info) { return "w" + std::to_string(info.param); });

}  // namespace
