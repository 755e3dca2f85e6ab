// Running out of memory: each allocation of a run, in turn, fails (and, in another pass, every one
// from then on), in a helper program that does ordinary work through the C API and through the
// OpenMP door (a gcc -fopenmp program linked with weft). Whatever allocation fails, the run must end one of three ways:
// it finishes with the right result; a call refuses with WEFT_ERR_OUT_OF_MEMORY and says so through weft_last_error; or
// the process aborts with weft's own message saying what it could not allocate. A crash on a null pointer, a bare
// std::bad_alloc termination, a wrong result or a hang fails the test. (Built outside sanitizer builds only: the helper
// replaces malloc, which the sanitizers own.)
#include <gtest/gtest.h>

#include <signal.h>

#include <string>
#include <vector>

#include "child_process.h"

namespace {

using weft_test::child_outcome;

struct helper {
  const char* program;
  std::vector<std::string> env;  // how it runs on weft
};

helper native() {
  return {WEFT_OOM_HELPER, {"WEFT_NUM_THREADS=2"}};
}
helper openmp() {
  return {WEFT_OOM_HELPER_OMP, {"OMP_NUM_THREADS=2"}};
}

bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

// Empty when the run ended in one of the three accepted ways, else what was wrong.
std::string judge(const child_outcome& o) {
  if (o.hung) return "hung";
  if (contains(o.err, "terminate called")) return "a C++ exception left the runtime";
  if (o.exited && o.status == 0) return contains(o.out, "done") ? "" : "exit 0 without its result";
  if (o.exited && o.status == 2) return contains(o.out, "refused: out of memory by") ? "" : "exit 2 without a refusal";
  if (!o.exited && o.status == SIGABRT && contains(o.err, "weft") &&
      (contains(o.err, "out of memory") || contains(o.err, "cannot map") || contains(o.err, "cannot start worker")))
    return "";
  return "ended otherwise";
}

// The number of allocations a run makes once its first region or weft_init is done.
long allocations_of(const helper& h) {
  child_outcome o = weft_test::run_child(h.program, "", h.env, 60);
  EXPECT_TRUE(o.exited && o.status == 0) << weft_test::describe(o);
  auto at = o.out.find("allocations=");
  return at == std::string::npos ? 0 : std::stol(o.out.substr(at + 12));
}

// Fails allocation k for each k up to the run's count (and a few past it: the count varies with
// the timing of the workers), with `extra` set too; every outcome must be an accepted one.
void sweep(const helper& h, std::vector<std::string> extra, long last, int* outcomes) {
  for (long k = 1; k <= last; ++k) {
    std::vector<std::string> env = h.env;
    env.insert(env.end(), extra.begin(), extra.end());
    env.push_back("WEFT_TEST_FAIL_ALLOCATION=" + std::to_string(k));
    child_outcome o = weft_test::run_child(h.program, "", env, 30);
    std::string wrong = judge(o);
    ASSERT_EQ(wrong, "") << "allocation " << k << " failing (" << h.program << "): " << weft_test::describe(o);
    ++outcomes[o.exited ? (o.status == 0 ? 0 : 1) : 2];
  }
}

void sweep_every_allocation(const helper& h) {
  long count = allocations_of(h);
  ASSERT_GT(count, 0);
  int once[3] = {0, 0, 0}, onwards[3] = {0, 0, 0};
  sweep(h, {}, count + 8, once);
  sweep(h, {"WEFT_TEST_FAIL_FROM_THEN_ON=1"}, count + 8, onwards);
  // One failure is often survived (a spare block, a refusal); failing everything from early on
  // can only end in an abort or a refusal.
  EXPECT_GT(once[0], 0);
  EXPECT_GT(onwards[1] + onwards[2], 0);
  std::printf("%ld allocations; one failing: %d finished, %d refused, %d aborted; from then on: %d, %d, %d\n", count,
              once[0], once[1], once[2], onwards[0], onwards[1], onwards[2]);
}

TEST(OutOfMemory, NativeEveryAllocation) {
  sweep_every_allocation(native());
}

TEST(OutOfMemory, OpenMPDoorEveryAllocation) {
  sweep_every_allocation(openmp());
}

// Start-up itself: the runtime's first allocations (workers, stacks, pools, queues).
TEST(OutOfMemory, StartUp) {
  for (const helper& h : {native(), openmp()}) {
    int outcomes[3] = {0, 0, 0};
    sweep(h, {"WEFT_TEST_FAIL_AT_START=1"}, 60, outcomes);
    sweep(h, {"WEFT_TEST_FAIL_AT_START=1", "WEFT_TEST_FAIL_FROM_THEN_ON=1"}, 60, outcomes);
  }
}

}  // namespace
