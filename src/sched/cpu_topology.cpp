#include "sched/cpu_topology.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace weft::sched {

void cpu_mask::set(std::size_t cpu) {
  std::size_t word = cpu / word_bits;
  if (word >= words_.size()) words_.resize(word + 1, 0);
  words_[word] |= 1ul << (cpu % word_bits);
}

bool cpu_mask::test(std::size_t cpu) const {
  std::size_t word = cpu / word_bits;
  return word < words_.size() && (words_[word] >> (cpu % word_bits) & 1);
}

bool cpu_mask::empty() const {
  for (unsigned long w : words_)
    if (w) return false;
  return true;
}

std::size_t cpu_mask::count() const {
  std::size_t n = 0;
  for (unsigned long w : words_) n += static_cast<std::size_t>(__builtin_popcountl(w));
  return n;
}

std::string cpu_mask::describe() const {
  std::string text;
  std::size_t n = size_bits();
  for (std::size_t c = 0; c < n; ++c) {
    if (!test(c)) continue;
    std::size_t last = c;
    while (last + 1 < n && test(last + 1)) ++last;
    if (!text.empty()) text += ',';
    text += std::to_string(c);
    if (last > c) text += '-' + std::to_string(last);
    c = last;
  }
  return text;
}

bool cpu_mask::of_calling_thread(cpu_mask& out) {
  // The kernel refuses a buffer smaller than its own mask size (EINVAL): grow until it fits.
  for (std::size_t words = 1024 / word_bits; words <= (std::size_t{1} << 20) / word_bits; words *= 2) {
    out.words_.assign(words, 0);
    if (sched_getaffinity(0, out.bytes(), reinterpret_cast<cpu_set_t*>(out.words_.data())) == 0) return true;
    if (errno != EINVAL) break;
  }
  out.words_.clear();
  return false;
}

bool parse_cpu_list(const char* text, cpu_mask& out) {
  const char* p = text;
  bool any = false;
  while (*p && *p != '\n') {
    char* end;
    unsigned long first = std::strtoul(p, &end, 10);
    if (end == p) return false;
    unsigned long last = first;
    p = end;
    if (*p == '-') {
      ++p;
      last = std::strtoul(p, &end, 10);
      if (end == p || last < first) return false;
      p = end;
    }
    for (unsigned long c = first; c <= last; ++c) out.set(c);
    any = true;
    if (*p == ',')
      ++p;
    else if (*p && *p != '\n')
      return false;
  }
  return any;
}

namespace {

// The thread siblings of `cpu` (its core's PUs), or false when sysfs does not say. Plain
// open/read/close: three system calls per core.
bool siblings_of(std::size_t cpu, cpu_mask& out) {
  char path[96];
  std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%zu/topology/thread_siblings_list", cpu);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[4096];
  ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return false;
  text[n] = 0;
  return parse_cpu_list(text, out) && out.test(cpu);
}

}  // namespace

std::vector<cpu_mask> cores_of(const cpu_mask& mask) {
  std::vector<cpu_mask> cores;
  cpu_mask taken;
  const std::size_t n = mask.size_bits();
  // Ascending: a core's first PU in the mask is the first PU found that no earlier core took.
  for (std::size_t cpu = 0; cpu < n; ++cpu) {
    if (!mask.test(cpu) || taken.test(cpu)) continue;
    cpu_mask siblings;
    cpu_mask core;
    if (siblings_of(cpu, siblings)) {
      for (std::size_t s = 0; s < siblings.size_bits(); ++s)
        if (siblings.test(s) && mask.test(s)) core.set(s), taken.set(s);
    } else {
      core.set(cpu);
      taken.set(cpu);
    }
    cores.push_back(std::move(core));
  }
  return cores;
}

bool bind_calling_thread(const cpu_mask& mask) {
  return sched_setaffinity(0, mask.bytes(), static_cast<const cpu_set_t*>(mask.data())) == 0;
}

bool bind_at_start(pthread_attr_t& attr, const cpu_mask& mask) {
  return pthread_attr_setaffinity_np(&attr, mask.bytes(), static_cast<const cpu_set_t*>(mask.data())) == 0;
}

}  // namespace weft::sched
