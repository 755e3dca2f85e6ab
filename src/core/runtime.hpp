// The runtime instance: workers, their queues and pools, and the shared scheduling state.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "core/config.hpp"
#include "core/task.hpp"
#include "sched/block_pool.hpp"
#include "sched/idle.hpp"
#include "sched/priority_lane.hpp"
#include "sched/work_deque.hpp"

namespace weft::core {

struct parent_state;

// Counters a single worker writes; summed by weft_get_stats. Relaxed single-writer updates.
struct worker_counters {
  std::atomic<std::uint64_t> tasks_created{0};
  std::atomic<std::uint64_t> tasks_completed{0};
  std::atomic<std::uint64_t> edges_created{0};
  std::atomic<std::uint64_t> edges_elided{0};
  std::atomic<std::uint64_t> edges_pruned{0};
  std::atomic<std::uint64_t> redirect_nodes{0};
  std::atomic<std::uint64_t> steals{0};
  std::atomic<std::uint64_t> throttle_waits{0};
  std::atomic<std::uint64_t> max_live{0};

  static void bump(std::atomic<std::uint64_t>& c, std::uint64_t by = 1) {
    c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
};

// An access declared on a task not yet submitted (kept per worker until submit).
struct pending_access {
  task* owner;
  const void* address;
  weft_dep_type type;
};

struct alignas(64) worker {
  worker(int id, sched::block_depot& tasks, sched::block_depot& blocks, sched::block_depot& groups)
      : id(id), task_cache(tasks), successor_cache(blocks), group_cache(groups) {}

  const int id;
  sched::work_deque<task*> deque;
  task* next = nullptr;           // depth-first: the successor this worker runs next
  task* current = nullptr;        // running task (root when none)
  int nesting = 0;                // tasks run on this stack above the worker's own loop
  std::uint64_t random_state = 0;
  int history[4] = {-1, -1, -1, -1};  // hybrid victim selection (ICS'21 Algorithm 2)
  int history_index = 0;
  int throttle_countdown = 0;
  task* linking = nullptr;         // the task whose incoming edges are being made (reset whenever
                                   // this worker allocates a descriptor, which may reuse its address)
  task* linked[8] = {};            // its predecessors so far (duplicate-edge elision)
  int linked_count = 0;
  task* batch_parent = nullptr;    // parent of the children counted in batch_finished
  std::int64_t batch_finished = 0; // finished children not yet subtracted from its pending

  sched::block_cache task_cache;
  sched::block_cache successor_cache;
  sched::block_cache group_cache;
  std::vector<pending_access> accesses;   // declared on tasks being built
  std::vector<task*> redirect_worklist;   // redirect nodes ready to complete
  std::vector<parent_state*> spare_states;

  worker_counters counters;
  // Live-task accounting for throttling: tasks submitted here minus tasks finished here.
  alignas(64) std::atomic<std::int64_t> submitted{0};
  std::atomic<std::int64_t> finished{0};
  alignas(64) std::atomic<std::uint32_t> sleep_word{0};
  task root;                      // implicit task of this worker's thread
  std::thread thread;
};

struct runtime {
  config cfg;
  int num_workers = 0;
  std::int64_t max_tasks = 0;
  std::int64_t max_ready = 0;
  int throttle_interval = 1;
  sched::block_depot task_depot{task_size, 64};
  sched::block_depot successor_depot{task_size, 64};
  sched::block_depot group_depot{task_size, 16};
  std::vector<std::unique_ptr<worker>> workers;
  std::vector<std::atomic<std::uint32_t>*> sleep_words;
  sched::idle_park park;
  // Ready tasks of priority > 0 (or all tasks under WEFT_SCHEDULE=priority), highest level first.
  std::vector<std::unique_ptr<sched::priority_lane<task*>>> lanes;
  alignas(64) std::atomic<std::int64_t> priority_ready{0};
  alignas(64) std::atomic<bool> stopping{false};
};

// The running instance, or null. Set by weft_init, cleared by weft_finalize.
extern runtime* instance;
// The calling thread's worker, or null on a thread that is not a worker.
extern thread_local worker* current_worker;

}  // namespace weft::core
