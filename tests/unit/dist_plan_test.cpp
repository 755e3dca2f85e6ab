// The distributed taskiter's plan (src/dist/plan.cpp, paper 003 Figure 8) on random rounds, without
// MPI: the loop is played in round order, each rank holding a version of each region, and every
// read must see the latest version (the sequential program's), every send must carry it, and each
// home must hold the last one at the end. Tags: unique per ordered pair of ranks in a round.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "dist/plan.hpp"

namespace {

using namespace weft::dist;

struct random_round {
  int ranks, unroll;
  long iterations;
  std::vector<region> regions;
  std::vector<round_task> tasks;
  std::vector<use> uses;
};

random_round make_round(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  random_round r;
  r.ranks = pick(1, 5);
  r.unroll = pick(1, 3);
  r.iterations = pick(1, 8);
  const int nregions = pick(1, 10);
  for (int i = 0; i < nregions; ++i)
    r.regions.push_back({static_cast<std::uintptr_t>(0x10000 + 64 * i), 64, pick(0, r.ranks - 1), pick(0, 3) != 0});
  const int per_iteration = pick(1, 14);
  for (int it = 0; it < r.unroll; ++it)
    for (int k = 0; k < per_iteration; ++k) {
      round_task t{};
      t.rank = pick(0, r.ranks - 1);
      t.iteration = it;
      t.first_use = static_cast<std::uint32_t>(r.uses.size());
      std::set<int> taken;
      const int count = pick(0, 3);
      for (int a = 0; a < count; ++a) {
        int g = pick(0, nregions - 1);
        if (!taken.insert(g).second) continue;
        int kind = pick(0, 2);  // in, out, inout
        r.uses.push_back({static_cast<std::uint32_t>(g), kind != 1, kind != 0});
      }
      t.use_count = static_cast<std::uint32_t>(r.uses.size()) - t.first_use;
      r.tasks.push_back(t);
    }
  return r;
}

// Plays the loop in round order; returns the first violation, or "".
std::string play(const random_round& r, const plan& p) {
  const std::size_t nr = r.regions.size();
  std::vector<long> latest(nr, 0);  // version 0: the value before the loop, at the home
  std::vector<std::vector<long>> held(static_cast<std::size_t>(r.ranks), std::vector<long>(nr, -1));
  for (std::size_t g = 0; g < nr; ++g) held[static_cast<std::size_t>(r.regions[g].home)][g] = 0;
  for (const region_copy& c : p.initial) {
    if (held[static_cast<std::size_t>(c.from)][c.region] != 0)
      return "an initial copy sends from a rank without the value";
    held[static_cast<std::size_t>(c.to)][c.region] = 0;
  }
  long next_version = 1;
  const long rounds = (r.iterations + r.unroll - 1) / r.unroll;
  const std::uint32_t n = static_cast<std::uint32_t>(r.tasks.size());
  for (long round = 0; round < rounds; ++round) {
    const long left = r.iterations - round * r.unroll;
    const int limit = left >= r.unroll ? r.unroll : static_cast<int>(left);  // a last round cut short
    std::size_t x = 0;
    for (std::uint32_t i = 0; i <= n; ++i) {
      for (; x < p.transfers.size() && p.transfers[x].before == i; ++x) {
        const transfer& t = p.transfers[x];
        if (t.iteration >= limit) continue;
        for (std::uint32_t g = t.region; g < t.region + t.regions; ++g) {
          long v = held[static_cast<std::size_t>(t.from)][g];
          if (v != latest[g])
            return "round " + std::to_string(round) + ": transfer before task " + std::to_string(i) + " sends region " +
                   std::to_string(g) + " version " + std::to_string(v) + ", latest is " + std::to_string(latest[g]);
          held[static_cast<std::size_t>(t.to)][g] = v;
        }
      }
      if (i == n || r.tasks[i].iteration >= limit) continue;
      const round_task& t = r.tasks[i];
      for (std::uint32_t k = t.first_use; k < t.first_use + t.use_count; ++k) {
        const use& u = r.uses[k];
        if (u.reads && held[static_cast<std::size_t>(t.rank)][u.region] != latest[u.region])
          return "round " + std::to_string(round) + ": task " + std::to_string(i) + " on rank " +
                 std::to_string(t.rank) + " reads region " + std::to_string(u.region) + " version " +
                 std::to_string(held[static_cast<std::size_t>(t.rank)][u.region]) + ", latest is " +
                 std::to_string(latest[u.region]);
      }
      for (std::uint32_t k = t.first_use; k < t.first_use + t.use_count; ++k) {
        const use& u = r.uses[k];
        if (!u.writes) continue;
        latest[u.region] = next_version++;
        held[static_cast<std::size_t>(t.rank)][u.region] = latest[u.region];
      }
    }
  }
  for (const region_copy& c : p.final)
    held[static_cast<std::size_t>(c.to)][c.region] = held[static_cast<std::size_t>(c.from)][c.region];
  for (std::size_t g = 0; g < nr; ++g)
    if (held[static_cast<std::size_t>(r.regions[g].home)][g] != latest[g])
      return "region " + std::to_string(g) + ": home holds version " +
             std::to_string(held[static_cast<std::size_t>(r.regions[g].home)][g]) + " after the loop, latest is " +
             std::to_string(latest[g]);
  return "";
}

TEST(DistPlan, RandomRoundsFollowTheSequentialProgram) {
  long merged = 0;
  for (std::uint64_t seed = 1; seed <= 3000; ++seed) {
    random_round r = make_round(seed);
    for (bool merge : {false, true}) {
      plan p = make_plan(r.regions, r.tasks, r.uses, r.ranks, r.iterations, r.unroll, merge);
      for (const transfer& t : p.transfers) merged += t.regions - 1;
      std::string failure = play(r, p);
      ASSERT_EQ(failure, "") << "seed " << seed << (merge ? " merged" : "") << " (" << r.ranks << " ranks, unroll "
                             << r.unroll << ", " << r.iterations << " iterations, " << r.tasks.size() << " tasks)";
    }
  }
  EXPECT_GT(merged, 300) << "the random rounds hardly exercise merging";
}

TEST(DistPlan, TagsAreUniquePerPairAndSidesAgree) {
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    random_round r = make_round(seed);
    plan p = make_plan(r.regions, r.tasks, r.uses, r.ranks, r.iterations, r.unroll, seed % 2 == 0);
    std::set<std::tuple<int, int, int>> seen;
    for (const transfer& t : p.transfers) {
      ASSERT_NE(t.from, t.to) << "seed " << seed;
      ASSERT_TRUE(seen.insert({t.from, t.to, t.tag}).second)
          << "seed " << seed << ": tag " << t.tag << " twice from " << t.from << " to " << t.to;
      ASSERT_LE(t.tag, p.max_tag);
    }
    // The plan is a function of the round: computed again (another rank), the same transfers.
    plan q = make_plan(r.regions, r.tasks, r.uses, r.ranks, r.iterations, r.unroll, seed % 2 == 0);
    ASSERT_EQ(p.transfers.size(), q.transfers.size());
    for (std::size_t i = 0; i < p.transfers.size(); ++i) {
      ASSERT_EQ(std::tie(p.transfers[i].region, p.transfers[i].from, p.transfers[i].to, p.transfers[i].tag,
                         p.transfers[i].before),
                std::tie(q.transfers[i].region, q.transfers[i].from, q.transfers[i].to, q.transfers[i].tag,
                         q.transfers[i].before));
    }
  }
}

// Figure 9a's example (paper 003): tasks 1, 3 on rank 0 and 2, 4 on rank 1 over a, b, x, y.
TEST(DistPlan, PaperExample) {
  enum { a, b, x, y };
  std::vector<region> regions;
  for (int g = 0; g < 4; ++g) regions.push_back({static_cast<std::uintptr_t>(0x1000 + 64 * g), 64, 0, true});
  std::vector<use> uses = {
      {x, true, false}, {y, true, false}, {a, false, true},  // task 1: in x, y; out a
      {a, true, false}, {y, true, false}, {b, false, true},  // task 2: in a, y; out b
      {a, true, false}, {b, true, false}, {x, false, true},  // task 3: in a, b; out x
      {x, true, false}, {b, true, false}, {y, false, true},  // task 4: in x, b; out y
  };
  std::vector<round_task> tasks = {{0, 0, 0, 3}, {1, 0, 3, 3}, {0, 0, 6, 3}, {1, 0, 9, 3}};
  plan p = make_plan(regions, tasks, uses, 2, 10, 1, false);
  // a: 0 -> 1 before task 2; b: 1 -> 0 before task 3; x: 0 -> 1 before task 4; y: 1 -> 0 at the
  // end, for task 1 of the next iteration (task 2 reads y on rank 1, where task 4 writes it).
  std::set<std::tuple<int, int, int, std::uint32_t>> got;
  for (const transfer& t : p.transfers) got.insert({static_cast<int>(t.region), t.from, t.to, t.before});
  std::set<std::tuple<int, int, int, std::uint32_t>> want = {{a, 0, 1, 1}, {b, 1, 0, 2}, {x, 0, 1, 3}, {y, 1, 0, 4}};
  EXPECT_EQ(got, want);
  random_round r{2, 1, 10, regions, tasks, uses};
  EXPECT_EQ(play(r, p), "");
}

}  // namespace
