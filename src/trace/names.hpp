// Names of task functions and task labels for people: the trace file's string table and the
// runtime's reports (the watchdog, a persistent graph that changed) give a task the same name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace weft::trace {

// Names a function by its symbol, demangled (a weft::spawn closure by its type). Program functions
// are mostly local symbols, which dladdr cannot see: the full symbol table (.symtab) of the object
// that holds the function is read from its file, once per object and symbolizer. Not for the hot
// path: a trace is written once, a report is rare.
class symbolizer {
 public:
  // The symbol, or an empty string when no symbol covers fn.
  std::string symbol_of(const void* fn);
  // The symbol, or else the address ("0x55d0c3a1b2c0").
  std::string name_of(const void* fn);

  struct symbol {
    std::uint64_t start;
    std::uint64_t size;
    std::string name;
  };

 private:
  std::map<std::string, std::vector<symbol>> tables_;
};

// The labels of the given tasks (trace ids: descriptor addresses) in the trace being recorded: the
// name given with weft_task_set_label, or the function the OpenMP door's task runs. The runtime keeps
// labels only in the trace, so without tracing the map is empty, as it is for tasks without labels.
// Reads every worker's buffer once: for reports, which are rare.
std::unordered_map<std::uint64_t, std::string> labels_of(const std::vector<std::uint64_t>& tasks, symbolizer& names);

}  // namespace weft::trace
