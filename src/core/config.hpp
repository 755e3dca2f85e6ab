// Settings read from the environment at weft_init.
#pragma once

#include <cstdint>
#include <string>

namespace weft::core {

enum class schedule_policy { depth, fifo, priority };
enum class steal_policy { random, history, hybrid };
enum class wait_policy { active, passive };
// OpenMP parallel regions whose members run as fibers on the existing workers, gang-scheduled
// (ICS'21): none, those opened inside another region (nested), or every region.
enum class gang_policy { off, nested, all };

struct config {
  int num_workers = 0;     // 0: one per core of the affinity mask
  bool bind_cores = true;  // WEFT_BIND=core|none
  schedule_policy schedule = schedule_policy::depth;
  steal_policy steal = steal_policy::hybrid;
  wait_policy wait = wait_policy::passive;
  // WEFT_GANG=off|nested|all. Unset: nested, or off when the program keeps thread-local storage
  // of its own (gang_tls_note then says so): fiber members sharing a worker would share it.
  gang_policy gang = gang_policy::nested;
  const char* gang_tls_note = nullptr;
  int max_priority = 8;
  std::int64_t max_tasks = 0;  // 0: default computed from the worker count
  bool max_tasks_given = false;  // set by WEFT_MAX_TASKS (then also a gang of one's window)
  std::int64_t max_ready = 0;  // per producer; 0: default
  bool display_env = false;
  std::size_t stack_size = 0;  // WEFT_STACKSIZE: worker thread and fiber stacks (bytes; K/M/G suffixes)
  int watchdog_seconds = 0;    // WEFT_WATCHDOG: report when nothing progressed this long (0: off)
  // Persistent graphs' defaults (weft_graph_options_t fields left at 0).
  int graph_lookahead = 0;                // WEFT_GRAPH_LOOKAHEAD: rounds the producer runs ahead, 1..6 (0: per graph)
  bool graph_iteration_priority = false;  // WEFT_GRAPH_POLICY=successor|iteration
  bool graph_rerecord = true;             // WEFT_GRAPH_ON_CHANGE=rerecord|error
  // WEFT_GRAPH_INLINE=auto|1|0: whether a gang of one runs replayed tasks in recorded order (auto:
  // when the recording's tasks were short, see finish_recording).
  enum class inline_mode { never, automatic, always };
  inline_mode graph_inline = inline_mode::automatic;
  // Tracing (docs/trace-format.md): the file, the buffer of each worker, the hardware counters.
  std::string trace_path;                            // WEFT_TRACE: empty when off
  std::size_t trace_buffer = std::size_t{64} << 20;  // WEFT_TRACE_BUFFER (bytes; K/M/G suffixes)
  std::string trace_counters;                        // WEFT_TRACE_COUNTERS: PAPI event names, comma-separated

  // Parses WEFT_* variables. On a malformed value, error names the variable and what it accepts.
  static bool from_environment(config& out, std::string& error);
  std::string describe() const;
};

const char* name(schedule_policy p);
const char* name(steal_policy p);
const char* name(wait_policy p);
const char* name(gang_policy p);

}  // namespace weft::core
