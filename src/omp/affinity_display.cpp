// Affinity display (OpenMP 5.0): affinity-format-var, omp_capture_affinity, omp_display_affinity
// and the lines OMP_DISPLAY_AFFINITY prints, in libgomp's format. A field is
// %[0.|.][size]type, type being one of t T L n N a H P i A or its long name in braces
// (%{thread_num}); "0." fills a number with zeros up to size, "." justifies right, a size alone
// justifies left; %% is a percent sign. %i is the thread's pthread_t in hex and %A the CPUs of its
// affinity mask, as libgomp prints them. A malformed format is a fatal error naming the call, as
// in libgomp.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "omp/gomp_abi.h"
#include "omp/omp_internal.hpp"

namespace weft::omp {

namespace {

std::mutex format_lock;  // config().affinity_format: any thread may set it while others read it

struct field_name {
  std::string_view name;
  char type;
};
constexpr field_name long_names[] = {{"team_num", 't'},       {"num_teams", 'T'},   {"nesting_level", 'L'},
                                     {"thread_num", 'n'},     {"num_threads", 'N'}, {"ancestor_tnum", 'a'},
                                     {"host", 'H'},           {"process_id", 'P'},  {"native_thread_id", 'i'},
                                     {"thread_affinity", 'A'}};
// A width beyond this is refused rather than allocated.
constexpr std::size_t max_width = 1 << 20;

// What the numeric fields show for the calling thread.
struct thread_view {
  int team_num, num_teams, level, thread_num, num_threads, ancestor;
  bool operator==(const thread_view&) const = default;
};
thread_view view_of(const member* m) {
  if (!m) return {0, 1, 0, 0, 1, -1};
  return {m->team_num,   m->num_teams,  m->level,
          m->thread_num, m->crew->size, m->level ? m->crew->parent->thread_num : -1};
}

std::string host_name() {
  char host[HOST_NAME_MAX + 1] = "";
  if (gethostname(host, sizeof host) != 0) return "node";
  host[HOST_NAME_MAX] = 0;
  return host;
}

// The calling thread's CPUs as ranges ("0-3,6").
std::string cpu_ranges() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 1 ? "0-" + std::to_string(n - 1) : "0";
  }
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set) || (c > 0 && CPU_ISSET(c - 1, &set))) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    if (!out.empty()) out += ',';
    out += std::to_string(c);
    if (last > c) out += '-' + std::to_string(last);
  }
  return out;
}

// Appends text in a field of `width` columns (0: as it is). zero: a number filled with zeros after
// its sign or 0x; right: justified right with spaces.
void put(std::string& out, std::string_view text, bool zero, bool right, std::size_t width) {
  if (text.size() >= width) {
    out += text;
    return;
  }
  std::size_t fill = width - text.size();
  if (zero) {
    std::size_t lead = text.starts_with('-') ? 1 : text.starts_with("0x") ? 2 : 0;
    out += text.substr(0, lead);
    out.append(fill, '0');
    out += text.substr(lead);
  } else if (right) {
    out.append(fill, ' ');
    out += text;
  } else {
    out += text;
    out.append(fill, ' ');
  }
}

[[noreturn]] void bad_format(const char* caller, std::string_view format, const std::string& why) {
  std::string what = std::string(caller) + ": affinity format \"" + std::string(format) + "\": " + why;
  fatal(what.c_str());
}

// The calling thread's line for format; caller names the entry point in errors.
std::string expand(std::string_view f, const char* caller) {
  thread_view v = view_of(me);
  std::string out;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out += f[i];
      continue;
    }
    if (++i == f.size()) bad_format(caller, f, "a '%' ends it (write %% for a percent sign)");
    if (f[i] == '%') {
      out += '%';
      continue;
    }
    bool zero = false, right = false;
    std::size_t width = 0;
    if (f[i] == '0') {
      zero = true;
      if (++i == f.size() || f[i] != '.') bad_format(caller, f, "a leading 0 must be followed by '.' (%0.4n)");
    }
    if (i < f.size() && f[i] == '.') {
      right = true;
      ++i;
    }
    if (i < f.size() && f[i] >= '1' && f[i] <= '9') {
      while (i < f.size() && f[i] >= '0' && f[i] <= '9') {
        width = width * 10 + static_cast<std::size_t>(f[i++] - '0');
        if (width > max_width) bad_format(caller, f, "a field size above " + std::to_string(max_width));
      }
    } else if (zero || right) {
      bad_format(caller, f, "'0.' and '.' need a field size after them (%.4n)");
    }
    if (i == f.size()) bad_format(caller, f, "a field type is missing at its end");
    char type = f[i];
    if (type == '{') {
      std::size_t close = f.find('}', i);
      if (close == std::string_view::npos) bad_format(caller, f, "a long field name has no closing '}'");
      std::string_view name = f.substr(i + 1, close - i - 1);
      for (const field_name& n : long_names)
        if (n.name == name) type = n.type;
      if (type == '{') bad_format(caller, f, "unknown field name '" + std::string(name) + "'");
      i = close;
    }
    switch (type) {
      case 't':
        put(out, std::to_string(v.team_num), zero, right, width);
        break;
      case 'T':
        put(out, std::to_string(v.num_teams), zero, right, width);
        break;
      case 'L':
        put(out, std::to_string(v.level), zero, right, width);
        break;
      case 'n':
        put(out, std::to_string(v.thread_num), zero, right, width);
        break;
      case 'N':
        put(out, std::to_string(v.num_threads), zero, right, width);
        break;
      case 'a':
        put(out, std::to_string(v.ancestor), zero, right, width);
        break;
      case 'P':
        put(out, std::to_string(getpid()), zero, right, width);
        break;
      case 'H':
        put(out, host_name(), false, right, width);
        break;
      case 'A':
        put(out, cpu_ranges(), false, right, width);
        break;
      case 'i': {
        char id[2 + 2 * sizeof(unsigned long) + 1];
        std::snprintf(id, sizeof id, "0x%lx", static_cast<unsigned long>(pthread_self()));
        put(out, id, zero, right, width);
        break;
      }
      case '-':
        bad_format(caller, f, "'-' is no modifier (a size alone justifies left: %10H)");
      default:
        bad_format(caller, f, std::string("unknown field type '") + type + "'");
    }
  }
  return out;
}

// The format a call names, or affinity-format-var for a null or empty one.
std::string format_for(const char* format) {
  if (format && *format) return format;
  std::lock_guard<std::mutex> lock(format_lock);
  return config().affinity_format;
}

void print_line(std::string line) {
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);  // one call: lines of several threads do not mix
}

std::size_t copy_out(const std::string& text, char* buffer, std::size_t size) {
  if (buffer && size) {
    std::size_t n = text.size() < size ? text.size() : size - 1;
    std::memcpy(buffer, text.data(), n);
    buffer[n] = 0;
  }
  return text.size();
}

}  // namespace

void display_affinity_on_entry(const member& m) {
  if (m.crew->size < 2) return;  // as libgomp, which shows teams of one only when places are bound
  thread_local std::optional<thread_view> shown;
  thread_view v = view_of(&m);
  if (shown == v) return;
  shown = v;
  print_line(expand(format_for(nullptr), "OMP_DISPLAY_AFFINITY"));
}

std::string current_affinity_format() {
  return format_for(nullptr);
}

}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

GOMP_API void omp_set_affinity_format(const char* format) {
  if (!format) {
    std::fprintf(stderr, "weft: omp_set_affinity_format: the format is a null pointer (ignored)\n");
    return;
  }
  std::lock_guard<std::mutex> lock(format_lock);
  config().affinity_format = format;
}
GOMP_API std::size_t omp_get_affinity_format(char* buffer, std::size_t size) {
  return copy_out(format_for(nullptr), buffer, size);
}
GOMP_API std::size_t omp_capture_affinity(char* buffer, std::size_t size, const char* format) {
  return copy_out(expand(format_for(format), "omp_capture_affinity"), buffer, size);
}
GOMP_API void omp_display_affinity(const char* format) {
  print_line(expand(format_for(format), "omp_display_affinity"));
}

}  // extern "C"
