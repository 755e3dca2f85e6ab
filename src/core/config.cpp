#include "core/config.hpp"

#include <dlfcn.h>
#include <link.h>
#include <strings.h>
#include <weft/weft.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace weft::core {

namespace {

// Whether the program (the executable, or a shared object of its own: one outside the system's
// library directories and not weft's) has a thread-local storage segment: gcc's `threadprivate`,
// C11 `_Thread_local`, C++ `thread_local`. Its copies belong to the kernel thread, so members of a
// gang-scheduled region that share a worker, or run on the worker of a thread of an enclosing
// team, would share them.
bool program_keeps_thread_locals() {
  struct scan {
    const void* weft_base;
    bool found;
  } s{nullptr, false};
  Dl_info self{};
  if (dladdr(reinterpret_cast<const void*>(&program_keeps_thread_locals), &self)) s.weft_base = self.dli_fbase;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& s = *static_cast<scan*>(data);
        const char* name = info->dlpi_name ? info->dlpi_name : "";
        bool executable = name[0] == '\0';  // the first object reported has no name
        if (!executable) {
          static const char* const system_dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"};
          if (!std::strchr(name, '/') || std::strstr(name, "libweft")) return 0;  // the vDSO, weft's own
          for (const char* dir : system_dirs)
            if (std::strncmp(name, dir, std::strlen(dir)) == 0) return 0;
          if (reinterpret_cast<const void*>(info->dlpi_addr) == s.weft_base) return 0;  // weft as libgomp.so.1
        }
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_TLS && info->dlpi_phdr[i].p_memsz > 0) s.found = true;
        return s.found ? 1 : 0;
      },
      &s);
  return s.found;
}

bool parse_int(const char* var, std::int64_t min, std::int64_t max, std::int64_t& out, std::string& error) {
  const char* text = std::getenv(var);
  if (!text || !*text) return true;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  while (end && (*end == ' ' || *end == '\t')) ++end;
  if (errno || !end || *end || v < min || v > max) {
    error = std::string(var) + "='" + text + "' is not an integer in [" + std::to_string(min) + ", " +
            std::to_string(max) + "]";
    return false;
  }
  out = v;
  return true;
}

template <class E, std::size_t N>
bool parse_choice(const char* var, const char* const (&names)[N], const E (&values)[N], E& out, std::string& error) {
  const char* text = std::getenv(var);
  if (!text || !*text) return true;
  for (std::size_t i = 0; i < N; ++i)
    if (strcasecmp(text, names[i]) == 0) {
      out = values[i];
      return true;
    }
  error = std::string(var) + "='" + text + "' is not one of ";
  for (std::size_t i = 0; i < N; ++i) (error += i ? "|" : "") += names[i];
  return false;
}

}  // namespace

const char* name(schedule_policy p) {
  switch (p) {
    case schedule_policy::depth:
      return "depth";
    case schedule_policy::fifo:
      return "fifo";
    case schedule_policy::priority:
      return "priority";
  }
  return "?";
}
const char* name(steal_policy p) {
  switch (p) {
    case steal_policy::random:
      return "random";
    case steal_policy::history:
      return "history";
    case steal_policy::hybrid:
      return "hybrid";
  }
  return "?";
}
const char* name(wait_policy p) {
  return p == wait_policy::active ? "active" : "passive";
}
const char* name(gang_policy p) {
  return p == gang_policy::off ? "off" : p == gang_policy::nested ? "nested" : "all";
}

namespace {
// A byte count with an optional K, M or G suffix; out keeps its value when the variable is unset.
bool parse_size(const char* variable, std::size_t& out, std::string& error) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return true;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(text, &end, 10);
  unsigned long long unit = 1;
  if (end && (*end == 'k' || *end == 'K'))
    unit = 1024, ++end;
  else if (end && (*end == 'm' || *end == 'M'))
    unit = 1024 * 1024, ++end;
  else if (end && (*end == 'g' || *end == 'G'))
    unit = 1024ull * 1024 * 1024, ++end;
  if (errno || end == text || *end || n == 0 || n > (~0ull >> 2) / unit) {
    error = std::string(variable) + "='" + text + "' is not a size (bytes, or a number with K, M or G)";
    return false;
  }
  out = static_cast<std::size_t>(n * unit);
  return true;
}
}  // namespace

bool config::from_environment(config& c, std::string& error) {
  c = config{};
  std::int64_t v = 0;
  if (!parse_int("WEFT_NUM_THREADS", 1, 4096, v, error)) return false;
  c.num_workers = static_cast<int>(v);
  {
    static const char* const names[] = {"core", "none"};
    static const bool values[] = {true, false};
    if (!parse_choice("WEFT_BIND", names, values, c.bind_cores, error)) return false;
  }
  {
    static const char* const names[] = {"depth", "fifo", "priority"};
    static const schedule_policy values[] = {schedule_policy::depth, schedule_policy::fifo, schedule_policy::priority};
    if (!parse_choice("WEFT_SCHEDULE", names, values, c.schedule, error)) return false;
  }
  {
    static const char* const names[] = {"random", "history", "hybrid"};
    static const steal_policy values[] = {steal_policy::random, steal_policy::history, steal_policy::hybrid};
    if (!parse_choice("WEFT_STEAL", names, values, c.steal, error)) return false;
  }
  {
    static const char* const names[] = {"off", "nested", "all"};
    static const gang_policy values[] = {gang_policy::off, gang_policy::nested, gang_policy::all};
    if (!parse_choice("WEFT_GANG", names, values, c.gang, error)) return false;
    const char* text = std::getenv("WEFT_GANG");
    if ((!text || !*text) && program_keeps_thread_locals()) {
      c.gang = gang_policy::off;
      c.gang_tls_note = " (the program has thread-local storage, e.g. threadprivate: nested regions get threads)";
    }
  }
  {
    static const char* const names[] = {"active", "passive"};
    static const wait_policy values[] = {wait_policy::active, wait_policy::passive};
    if (!parse_choice("WEFT_WAIT_POLICY", names, values, c.wait, error)) return false;
  }
  v = c.max_priority;
  if (!parse_int("WEFT_MAX_PRIORITY", 0, 63, v, error)) return false;
  c.max_priority = static_cast<int>(v);
  v = 0;
  if (!parse_int("WEFT_MAX_TASKS", 1, std::int64_t{1} << 36, v, error)) return false;
  c.max_tasks = v;
  c.max_tasks_given = v != 0;
  v = 0;
  if (!parse_int("WEFT_MAX_READY", 1, std::int64_t{1} << 36, v, error)) return false;
  c.max_ready = v;
  if (!parse_size("WEFT_STACKSIZE", c.stack_size, error)) return false;
  if (const char* text = std::getenv("WEFT_TRACE"); text && *text) c.trace_path = text;
  if (!parse_size("WEFT_TRACE_BUFFER", c.trace_buffer, error)) return false;
  if (const char* text = std::getenv("WEFT_TRACE_COUNTERS"); text && *text) c.trace_counters = text;
  v = 0;
  if (!parse_int("WEFT_WATCHDOG", 0, 86400, v, error)) return false;
  c.watchdog_seconds = static_cast<int>(v);
  v = c.graph_lookahead;
  if (!parse_int("WEFT_GRAPH_LOOKAHEAD", 1, 6, v, error)) return false;
  c.graph_lookahead = static_cast<int>(v);
  {
    static const char* const names[] = {"successor", "iteration"};
    static const bool values[] = {false, true};
    if (!parse_choice("WEFT_GRAPH_POLICY", names, values, c.graph_iteration_priority, error)) return false;
  }
  {
    static const char* const names[] = {"rerecord", "error"};
    static const bool values[] = {true, false};
    if (!parse_choice("WEFT_GRAPH_ON_CHANGE", names, values, c.graph_rerecord, error)) return false;
  }
  {
    static const char* const names[] = {"auto", "1", "0"};
    static const config::inline_mode values[] = {config::inline_mode::automatic, config::inline_mode::always,
                                                 config::inline_mode::never};
    if (!parse_choice("WEFT_GRAPH_INLINE", names, values, c.graph_inline, error)) return false;
  }
  v = 0;
  if (!parse_int("WEFT_DISPLAY_ENV", 0, 1, v, error)) return false;
  c.display_env = v != 0;
  return true;
}

std::string config::describe() const {
  using std::to_string;
  std::string out = "weft " + to_string(WEFT_VERSION_MAJOR) + "." + to_string(WEFT_VERSION_MINOR) + " settings:\n";
  auto line = [&out](const char* variable, const std::string& value, const char* note = "") {
    out.append("  ").append(variable).append("=").append(value).append(note).append("\n");
  };
  line("WEFT_NUM_THREADS", to_string(num_workers));
  line("WEFT_BIND", bind_cores ? "core" : "none");
  line("WEFT_SCHEDULE", name(schedule));
  line("WEFT_STEAL", name(steal));
  line("WEFT_WAIT_POLICY", name(wait));
  line("WEFT_GANG", name(gang), gang_tls_note ? gang_tls_note : " (OpenMP regions run as fibers on the workers)");
  line("WEFT_MAX_PRIORITY", to_string(max_priority));
  line("WEFT_MAX_TASKS", to_string(max_tasks),
       max_tasks_given ? " (also the window of a gang of one)" : " (a gang of one: 64 of its producer's children)");
  line("WEFT_MAX_READY", to_string(max_ready));
  line("WEFT_STACKSIZE", to_string(stack_size),
       stack_size ? " (threads and the fibers tasks run on)"
                  : " (system default) (threads and the fibers tasks run on)");
  line("WEFT_WATCHDOG", to_string(watchdog_seconds), watchdog_seconds ? " s" : " (off)");
  line("WEFT_GRAPH_LOOKAHEAD", graph_lookahead ? to_string(graph_lookahead) : "auto (per graph)");
  line("WEFT_GRAPH_POLICY", graph_iteration_priority ? "iteration" : "successor");
  line("WEFT_GRAPH_ON_CHANGE", graph_rerecord ? "rerecord" : "error");
  line("WEFT_GRAPH_INLINE", graph_inline == inline_mode::automatic ? "auto"
                            : graph_inline == inline_mode::always  ? "1"
                                                                   : "0");
  line("WEFT_TRACE", trace_path.empty() ? "(off)" : trace_path);
  line("WEFT_TRACE_BUFFER", to_string(trace_buffer), " bytes per worker");
  line("WEFT_TRACE_COUNTERS", trace_counters.empty() ? "(none)" : trace_counters);
  return out;
}

}  // namespace weft::core
