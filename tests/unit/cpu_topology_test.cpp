// The sysfs topology reader behind WEFT_BIND (src/sched/cpu_topology.cpp, compiled into this test):
// CPU lists as the kernel writes them, masks beyond the 1024 CPUs of a cpu_set_t, and the cores of
// the calling thread's mask.
#include "sched/cpu_topology.hpp"

#include <gtest/gtest.h>
#include <sched.h>

namespace {

using weft::sched::cpu_mask;

std::string listed(const char* text) {
  cpu_mask m;
  if (!weft::sched::parse_cpu_list(text, m)) return "invalid";
  return m.describe();
}

TEST(CpuTopology, ParsesKernelCpuListsAndRefusesMalformedOnes) {
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"0\n", "0"},       {"0-3", "0-3"},     {"0-1,4-5\n", "0-1,4-5"},
      {"0,64", "0,64"},   {"3,1,2", "1-3"},   {"1023-1025", "1023-1025"},  // past a cpu_set_t
      {"4095", "4095"},   {"", "invalid"},    {"\n", "invalid"},
      {"a", "invalid"},   {"3-1", "invalid"}, {"1-", "invalid"},
      {"1;2", "invalid"},
  };
  for (const auto& c : cases) EXPECT_EQ(listed(c.text), c.expected) << "list '" << c.text << "'";
}

TEST(CpuTopology, MaskGrowsAndCounts) {
  cpu_mask m;
  EXPECT_TRUE(m.empty());
  EXPECT_FALSE(m.test(5000));
  m.set(3);
  m.set(2000);
  EXPECT_TRUE(m.test(3));
  EXPECT_TRUE(m.test(2000));
  EXPECT_FALSE(m.test(4));
  EXPECT_EQ(m.count(), 2u);
  EXPECT_GE(m.size_bits(), 2001u);
  EXPECT_EQ(m.bytes() * 8, m.size_bits());
  EXPECT_EQ(m.describe(), "3,2000");
}

TEST(CpuTopology, CoresPartitionTheThreadMaskInOrder) {
  cpu_mask mask;
  ASSERT_TRUE(cpu_mask::of_calling_thread(mask));
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_EQ(mask.count(), static_cast<std::size_t>(CPU_COUNT(&set)));
  std::vector<cpu_mask> cores = weft::sched::cores_of(mask);
  ASSERT_FALSE(cores.empty());
  std::size_t covered = 0;
  std::size_t previous_first = 0;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    const cpu_mask& core = cores[i];
    ASSERT_FALSE(core.empty()) << "core " << i;
    std::size_t first = 0;
    while (!core.test(first)) ++first;
    if (i > 0) {
      EXPECT_GT(first, previous_first) << "cores in the order of their first PU";
    }
    previous_first = first;
    for (std::size_t c = 0; c < core.size_bits(); ++c) {
      if (!core.test(c)) continue;
      EXPECT_TRUE(mask.test(c)) << "core " << i << " holds CPU " << c << " outside the mask";
      for (std::size_t j = 0; j < i; ++j) {
        EXPECT_FALSE(cores[j].test(c)) << "CPU " << c << " in two cores";
      }
      ++covered;
    }
  }
  EXPECT_EQ(covered, mask.count()) << "every CPU of the mask in one core";
}

TEST(CpuTopology, BindsAndRestoresTheCallingThread) {
  cpu_mask original;
  ASSERT_TRUE(cpu_mask::of_calling_thread(original));
  std::vector<cpu_mask> cores = weft::sched::cores_of(original);
  const cpu_mask& last = cores.back();
  ASSERT_TRUE(weft::sched::bind_calling_thread(last));
  cpu_mask now;
  ASSERT_TRUE(cpu_mask::of_calling_thread(now));
  EXPECT_EQ(now.describe(), last.describe());
  ASSERT_TRUE(weft::sched::bind_calling_thread(original));
  ASSERT_TRUE(cpu_mask::of_calling_thread(now));
  EXPECT_EQ(now.describe(), original.describe());
}

}  // namespace
