// Runs a test helper program in a child process: its stdout and stderr captured, its environment
// the caller's without WEFT_* settings (WEFT_TEST* kept) plus the given ones, killed when it runs
// past a time limit (a hang is a result, not a stuck test).
#pragma once

#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace weft_test {

struct child_outcome {
  bool exited = false;  // normal exit (not a signal, not killed by us)
  int status = -1;      // exit status, or the signal
  bool hung = false;    // killed after the time limit
  double seconds = 0;
  std::string out, err;
};

// How a child ended and what it printed, for a failed assertion's message.
inline std::string describe(const child_outcome& o) {
  std::ostringstream s;
  if (o.hung)
    s << "HUNG (killed after the time limit, " << o.seconds << " s)";
  else
    s << (o.exited ? "exited " : "killed by signal ") << o.status << " after " << o.seconds << " s";
  s << "\n--- stdout ---\n" << o.out << "--- stderr ---\n" << o.err;
  return s.str();
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline child_outcome run_child(const std::string& program, const std::string& mode,
                               const std::vector<std::string>& extra_env, double limit_seconds) {
  child_outcome o;
  char out_path[] = "/tmp/weft_child_out_XXXXXX";
  char err_path[] = "/tmp/weft_child_err_XXXXXX";
  int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
  EXPECT_GE(out_fd, 0);
  EXPECT_GE(err_fd, 0);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "WEFT_", 5) != 0 || std::strncmp(*e, "WEFT_TEST", 9) == 0) env_strings.push_back(*e);
  env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string prog = program, mode_s = mode;
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
                             std::chrono::duration<double>(limit_seconds));
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
  o.out = read_file(out_path);
  o.err = read_file(err_path);
  unlink(out_path);
  unlink(err_path);
  return o;
}

}  // namespace weft_test
