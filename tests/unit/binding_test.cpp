// WEFT_BIND: where the workers run. Each worker's affinity mask is read from inside a task that
// waits until one task runs on every worker, and checked against the cores Linux's sysfs lists
// for the process's mask (read here independently of the runtime).
#include <sched.h>

#include <fstream>
#include <set>

#include "weft_test.h"

namespace {

using mask = std::set<int>;

mask mask_of_calling_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  mask m;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return m;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) m.insert(c);
  return m;
}

// The PUs of the core holding `cpu`, as sysfs lists them (the cpu alone when it does not say).
mask siblings_of(int cpu) {
  std::ifstream f("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list");
  std::string text;
  mask m;
  if (!(f >> text)) return {cpu};
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    auto dash = part.find('-');
    int first = std::stoi(part.substr(0, dash));
    int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
    for (int c = first; c <= last; ++c) m.insert(c);
  }
  return m;
}

// The process mask's cores, each as the PUs of the mask it holds, by first PU.
std::vector<mask> cores_of(const mask& process) {
  std::vector<mask> cores;
  mask taken;
  for (int cpu : process) {
    if (taken.count(cpu)) continue;
    mask core;
    for (int s : siblings_of(cpu))
      if (process.count(s)) core.insert(s), taken.insert(s);
    core.insert(cpu);
    taken.insert(cpu);
    cores.push_back(core);
  }
  return cores;
}

// Each worker's mask, read by one task per worker (each waits until all have started, so no two
// run on the same worker).
std::vector<mask> worker_masks() {
  const int n = weft_num_workers();
  static std::atomic<int> started;
  static std::vector<mask> masks;
  started = 0;
  masks.assign(static_cast<std::size_t>(n), mask{});
  static std::mutex lock;
  for (int i = 0; i < n; ++i) {
    weft::spawn([n] {
      started.fetch_add(1);
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (started.load() < n && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      std::lock_guard<std::mutex> hold(lock);
      masks[static_cast<std::size_t>(weft_worker_id())] = mask_of_calling_thread();
    });
  }
  weft::taskwait();
  EXPECT_EQ(started.load(), n) << "every worker ran one of the tasks";
  return masks;
}

TEST(Binding, EachWorkerOnItsOwnCoreOfTheMaskThenRestored) {
  const mask process = mask_of_calling_thread();
  ASSERT_FALSE(process.empty());
  const std::vector<mask> cores = cores_of(process);
  const int workers = static_cast<int>(cores.size());
  {
    weft_test::runtime_config rt({{"WEFT_BIND", "core"}, {"WEFT_NUM_THREADS", std::to_string(workers)}});
    std::vector<mask> masks = worker_masks();
    for (int i = 0; i < workers; ++i)
      EXPECT_EQ(masks[static_cast<std::size_t>(i)], cores[static_cast<std::size_t>(i)]) << "worker " << i;
  }
  // Finalize gives the thread that called weft_init its mask back.
  EXPECT_EQ(mask_of_calling_thread(), process);
}

TEST(Binding, MoreWorkersThanCoresWrapAround) {
  const std::vector<mask> cores = cores_of(mask_of_calling_thread());
  const int workers = 2 * static_cast<int>(cores.size()) + 1;
  weft_test::runtime_config rt({{"WEFT_BIND", "core"}, {"WEFT_NUM_THREADS", std::to_string(workers)}});
  std::vector<mask> masks = worker_masks();
  for (int i = 0; i < workers; ++i)
    EXPECT_EQ(masks[static_cast<std::size_t>(i)], cores[static_cast<std::size_t>(i) % cores.size()]) << "worker " << i;
}

TEST(Binding, NoneLeavesTheProcessMask) {
  const mask process = mask_of_calling_thread();
  weft_test::runtime_config rt({{"WEFT_BIND", "none"}, {"WEFT_NUM_THREADS", "3"}});
  std::vector<mask> masks = worker_masks();
  for (std::size_t i = 0; i < masks.size(); ++i) EXPECT_EQ(masks[i], process) << "worker " << i;
}

TEST(Binding, LauncherLocalRankStartsFurtherOn) {
  const std::vector<mask> cores = cores_of(mask_of_calling_thread());
  if (cores.size() < 2) GTEST_SKIP() << "one core in the mask: nothing to spread";
  // Rank 1 of 2 sharing the mask starts at core cores/2.
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  {
    weft_test::runtime_config rt({{"WEFT_BIND", "core"}, {"WEFT_NUM_THREADS", "2"}});
    std::vector<mask> masks = worker_masks();
    EXPECT_EQ(masks[0], cores[cores.size() / 2]);
    EXPECT_EQ(masks[1], cores[(cores.size() / 2 + 1) % cores.size()]);
  }
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
}

}  // namespace
