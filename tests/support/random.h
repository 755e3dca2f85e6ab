// Deterministic random numbers for the randomized tests (splitmix64), and names for dependence
// types in their failure reports.
#pragma once

#include <weft/weft.h>

#include <cstdint>

namespace weft_test {

struct rng {
  uint64_t state;
  explicit rng(uint64_t seed) : state(seed) {}
  uint64_t next() {  // splitmix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int range(int lo, int hi) {  // inclusive
    return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }
};

// A seed derived from two others.
inline uint64_t mix(uint64_t a, uint64_t b) {
  rng r(a ^ (b * 0xd1342543de82ef95ull));
  return r.next();
}

inline const char* dep_name(int type) {
  switch (type) {
    case WEFT_DEP_IN:
      return "in";
    case WEFT_DEP_OUT:
      return "out";
    case WEFT_DEP_INOUT:
      return "inout";
    case WEFT_DEP_MUTEXINOUTSET:
      return "mutexinoutset";
    case WEFT_DEP_INOUTSET:
      return "inoutset";
  }
  return "?";
}

}  // namespace weft_test
