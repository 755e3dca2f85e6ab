// A tracing session: started by the runtime when WEFT_TRACE is set, written to the file at the end.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/recorder.hpp"

namespace weft::trace {

struct kind {
  std::string name;  // empty for a function: named from its symbol when the file is written
  const void* fn;
  category cat;
  std::uint32_t id;
};
std::vector<kind> snapshot_kinds();

// Loads PAPI and checks the counter names of WEFT_TRACE_COUNTERS (comma-separated); false, after a
// message saying why, when no counter can be recorded.
bool begin_counters(const std::string& spec);

// Maps the shared buffer and turns the trace points on. Worker buffers are allocated by the
// runtime as it makes workers, in the order of their ids (allocate). While the session lasts, a
// SIGINT or SIGTERM that would end the process writes the trace first (recorder.cpp).
void begin_session(std::size_t bytes_per_buffer);
// The shared buffer as it stands (the writer's view).
buffer foreign_events();
// Turns the trace points off and gives SIGINT and SIGTERM back to their previous handlers; unmaps
// the shared buffer when nothing can write to it any more.
void end_session(bool unmap);

// Writes the file of docs/trace-format.md. workers[i] is worker i's buffer; end_ns is relative to
// the session's origin. Returns false (after printing why) when the file cannot be written.
// The process's place in a distributed run (weft_trace_set_rank): recorded in the header, and
// WEFT_TRACE's %r.
extern std::atomic<int> process_rank;
extern std::atomic<int> process_ranks;
bool write_file(const std::string& path, const std::vector<const buffer*>& workers, std::uint64_t end_ns);
// The same, for a caller that holds the session's lock (recorder.cpp: the end of the session and the
// write on a signal take turns).
bool write_file_locked(const std::string& path, const std::vector<const buffer*>& workers, std::uint64_t end_ns);

}  // namespace weft::trace
