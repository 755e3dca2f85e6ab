// The cores of the process's affinity mask, read from Linux's sysfs, and thread binding. This is
// all that binding workers needs: a general topology library (hwloc) spent ~0.7 ms of every
// program's start in ~200 system calls for it (docs/decisions.md, "Start-up cost").
#pragma once

#include <pthread.h>

#include <cstddef>
#include <string>
#include <vector>

namespace weft::sched {

// A set of logical CPUs (PUs) in the kernel's affinity-mask layout, of any size.
class cpu_mask {
 public:
  void set(std::size_t cpu);
  bool test(std::size_t cpu) const;
  bool empty() const;
  std::size_t count() const;
  std::size_t size_bits() const { return words_.size() * word_bits; }
  // The mask as the affinity system calls take it: a pointer to whole words and its size in bytes.
  const void* data() const { return words_.data(); }
  std::size_t bytes() const { return words_.size() * sizeof(unsigned long); }
  std::string describe() const;  // "0-3,8" (for messages)

  // The calling thread's mask; false when the kernel refuses it.
  static bool of_calling_thread(cpu_mask& out);

 private:
  static constexpr std::size_t word_bits = 8 * sizeof(unsigned long);
  std::vector<unsigned long> words_;
};

// The cores of `mask`, each as the PUs of `mask` it holds, ordered by their first PU. A core's
// PUs are its thread siblings (sysfs topology/thread_siblings_list); where sysfs does not say,
// each PU counts as a core of its own.
std::vector<cpu_mask> cores_of(const cpu_mask& mask);

// Parses a sysfs CPU list ("0-3,8,10-11") into `out`; false on a malformed list.
bool parse_cpu_list(const char* text, cpu_mask& out);

// Binds the calling thread to `mask`; false when the kernel refuses.
bool bind_calling_thread(const cpu_mask& mask);
// A thread created with these attributes starts on `mask` (pthread_attr_setaffinity_np).
bool bind_at_start(pthread_attr_t& attr, const cpu_mask& mask);

}  // namespace weft::sched
