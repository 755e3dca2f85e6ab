// A small program the shutdown tests start in a child process: it leaves the runtime in a given
// state and ends in a given way, so that the test can look at its exit status and stderr.
//   shutdown_helper MODE
// MODE: exit-pending     submit tasks that have not run (1 worker) and call exit(0)
//       return-pending   the same, returning from main
//       exit-clean       run tasks, wait for them, call exit(0) without weft_finalize
//       finalize-pending submit tasks, call weft_finalize (waits for them), exit(0)
//       exit-in-task     a task calls exit(0) while other tasks are queued
// On stdout, after weft's own exit handler: "ran=N submitted=M".
#include <weft/weft.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
std::atomic<int> ran{0};
std::atomic<int> submitted{0};
long chain = 0;

void count(void*) {
  ran.fetch_add(1);
}
void report() {
  std::printf("ran=%d submitted=%d\n", ran.load(), submitted.load());
  std::fflush(stdout);
}

void submit_some(int n, bool chained) {
  for (int i = 0; i < n; ++i) {
    weft_task_t* t = weft_task_create(&count, nullptr, 0, 0);
    if (!t) {
      std::fprintf(stderr, "helper: weft_task_create: %s\n", weft_strerror(weft_last_error()));
      std::exit(3);
    }
    if (chained) weft_task_depend(t, WEFT_DEP_INOUT, &chain, sizeof chain);
    weft_task_submit(t);
    ++submitted;
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* mode = argv[1];
  std::atexit(&report);  // registered before weft's handler, so it runs after it
  if (weft_init() != WEFT_OK) return 4;
  if (std::strcmp(mode, "exit-pending") == 0) {
    submit_some(10, false);
    submit_some(10, true);
    std::exit(0);
  }
  if (std::strcmp(mode, "return-pending") == 0) {
    submit_some(10, false);
    submit_some(10, true);
    return 0;
  }
  if (std::strcmp(mode, "exit-clean") == 0) {
    submit_some(20, true);
    if (weft_taskwait() != WEFT_OK) return 5;
    std::exit(0);
  }
  if (std::strcmp(mode, "finalize-pending") == 0) {
    submit_some(20, true);
    if (weft_finalize() != WEFT_OK) return 6;
    if (ran.load() != submitted.load()) return 7;
    std::exit(0);
  }
  if (std::strcmp(mode, "exit-in-task") == 0) {
    submit_some(5, true);
    weft_task_t* t = weft_task_create([](void*) { std::exit(0); }, nullptr, 0, 0);
    if (!t) return 3;
    weft_task_depend(t, WEFT_DEP_INOUT, &chain, sizeof chain);
    weft_task_submit(t);
    submit_some(5, true);
    weft_taskwait();
    return 8;  // not reached: the task exits
  }
  return 2;
}
