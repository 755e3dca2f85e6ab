// Reads a weft trace file (docs/trace-format.md) for the tests: an independent reading of the
// format, so that a recorder bug and a reader bug do not cancel out.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace weft_test {

struct trace_event {
  std::uint64_t time, a, b;
  std::uint32_t c;
  std::uint16_t type, d;
  std::uint32_t buffer;  // worker, or 0xFFFFFFFF
};

struct trace_file {
  bool ok = false;
  std::string error;
  std::uint32_t version = 0, workers = 0, buffers = 0;
  std::uint64_t end_ns = 0, dropped = 0;
  struct kind {
    std::uint16_t category;
    std::string name;
  };
  std::map<std::uint32_t, kind> kinds;
  std::vector<trace_event> events;  // buffer by buffer, each in its recorded order
  std::vector<std::uint64_t> buffer_dropped;

  std::size_t count(std::uint16_t type) const {
    std::size_t n = 0;
    for (const auto& e : events) n += e.type == type;
    return n;
  }
  std::uint32_t kind_named(const std::string& name) const {
    for (const auto& [id, k] : kinds)
      if (k.name == name) return id;
    return 0;
  }
};

inline trace_file read_trace(const std::string& path) {
  trace_file t;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    t.error = "cannot open " + path;
    return t;
  }
  std::vector<char> d((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::size_t at = 0;
  auto take = [&](void* out, std::size_t n) {
    if (at + n > d.size()) return false;
    std::memcpy(out, d.data() + at, n);
    at += n;
    return true;
  };
  char magic[8];
  std::uint32_t event_size = 0, strings = 0, pid = 0;
  std::uint64_t start = 0, reserved = 0;
  if (!take(magic, 8) || std::memcmp(magic, "WEFTTRC\x01", 8) != 0) {
    t.error = "bad magic";
    return t;
  }
  take(&t.version, 4), take(&event_size, 4), take(&t.workers, 4), take(&t.buffers, 4);
  take(&start, 8), take(&t.end_ns, 8), take(&t.dropped, 8), take(&strings, 4), take(&pid, 4);
  if (!take(&reserved, 8) || event_size != 32) {
    t.error = "bad header";
    return t;
  }
  for (std::uint32_t i = 0; i < strings; ++i) {
    std::uint32_t id;
    std::uint16_t cat, len;
    if (!take(&id, 4) || !take(&cat, 2) || !take(&len, 2) || at + len > d.size()) {
      t.error = "truncated string table";
      return t;
    }
    t.kinds[id] = {cat, std::string(d.data() + at, len)};
    at += len;
  }
  for (std::uint32_t b = 0; b < t.buffers; ++b) {
    std::uint32_t worker, pad;
    std::uint64_t count, dropped;
    if (!take(&worker, 4) || !take(&pad, 4) || !take(&count, 8) || !take(&dropped, 8)) {
      t.error = "truncated buffer header";
      return t;
    }
    t.buffer_dropped.push_back(dropped);
    for (std::uint64_t i = 0; i < count; ++i) {
      trace_event e;
      if (!take(&e.time, 8) || !take(&e.a, 8) || !take(&e.b, 8) || !take(&e.c, 4) || !take(&e.type, 2) ||
          !take(&e.d, 2)) {
        t.error = "truncated events";
        return t;
      }
      e.buffer = worker;
      t.events.push_back(e);
    }
  }
  if (at != d.size()) {
    t.error = "trailing bytes";
    return t;
  }
  t.ok = true;
  return t;
}

}  // namespace weft_test
