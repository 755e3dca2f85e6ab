#include "dist/plan.hpp"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace weft::dist {

namespace {

// The ranks holding a region's current value (readerRanks in Figure 8): membership by epoch, so a
// reset costs nothing however many ranks there are.
class rank_set {
 public:
  explicit rank_set(int ranks) : mark_(static_cast<std::size_t>(ranks), 0) {}
  void reset() {
    ++epoch_;
    members_.clear();
  }
  bool contains(int r) const { return mark_[static_cast<std::size_t>(r)] == epoch_; }
  void add(int r) {
    if (contains(r)) return;
    mark_[static_cast<std::size_t>(r)] = epoch_;
    members_.push_back(r);
  }
  const std::vector<int>& members() const { return members_; }

 private:
  std::vector<std::uint64_t> mark_;
  std::uint64_t epoch_ = 1;
  std::vector<int> members_;
};

}  // namespace

namespace {

// Merges runs of transfers (see make_plan) and numbers the tags, per ordered pair, in the order the
// transfers are made: deterministic, so the same on every rank.
void merge_transfers(std::vector<transfer>& transfers, const std::vector<region>& regions,
                     const std::vector<round_task>& tasks) {
  std::vector<std::uint32_t> order(transfers.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const transfer &x = transfers[a], &y = transfers[b];
    return std::tie(x.from, x.to, x.region, x.before) < std::tie(y.from, y.to, y.region, y.before);
  });
  std::vector<transfer> merged;
  merged.reserve(transfers.size());
  std::uint32_t latest_writer = 0, first_reader = 0;
  for (std::uint32_t k : order) {
    const transfer& t = transfers[k];
    if (!merged.empty()) {
      transfer& m = merged.back();
      const std::uint32_t last = m.region + m.regions - 1;
      const std::uint32_t writer = std::max(latest_writer, t.after), reader = std::min(first_reader, t.before);
      if (m.from == t.from && m.to == t.to && t.region == last + 1 && regions[last].contiguous &&
          regions[t.region].contiguous && regions[last].address + regions[last].bytes == regions[t.region].address &&
          writer < reader) {
        ++m.regions;
        latest_writer = writer;
        first_reader = reader;
        m.before = reader;
        m.iteration = reader < tasks.size() ? tasks[reader].iteration : m.iteration;
        continue;
      }
    }
    merged.push_back(t);
    latest_writer = t.after;
    first_reader = t.before;
  }
  transfers.swap(merged);
}

}  // namespace

plan make_plan(const std::vector<region>& regions, const std::vector<round_task>& tasks, const std::vector<use>& uses,
               int ranks, long iterations, int unroll, bool merge) {
  plan p;
  const auto n = static_cast<std::uint32_t>(tasks.size());
  const std::size_t nr = regions.size();

  // Each region's uses in task order (a counting sort: O(R)).
  std::vector<std::uint32_t> start(nr + 1, 0);
  for (const use& u : uses) ++start[u.region + 1];
  for (std::size_t r = 0; r < nr; ++r) start[r + 1] += start[r];
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_region(uses.size());  // (task, use)
  {
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::uint32_t t = 0; t < n; ++t)
      for (std::uint32_t k = tasks[t].first_use; k < tasks[t].first_use + tasks[t].use_count; ++k)
        by_region[fill[uses[k].region]++] = {t, k};
  }

  // A last round cut short runs iterations 0 .. partial-1 only.
  const int partial = static_cast<int>(iterations % unroll);
  const bool full_round = iterations >= unroll;

  auto add_transfer = [&](std::uint32_t region, long writer, int to, std::uint32_t before, int iteration) {
    const int from = tasks[static_cast<std::size_t>(writer)].rank;
    p.transfers.push_back({region, 1, from, to, 0, before, static_cast<std::uint32_t>(writer), iteration});
  };

  rank_set holders(ranks);
  std::vector<int> initial_readers;
  for (std::uint32_t r = 0; r < nr; ++r) {
    holders.reset();
    initial_readers.clear();
    long last_writer = -1;   // task index
    long final_writer = -1;  // the last writer of the loop's last round, cut short or not
    for (std::uint32_t k = start[r]; k < start[r + 1]; ++k) {
      const auto [t, ui] = by_region[k];
      const use& u = uses[ui];
      const int rank = tasks[t].rank;
      if (u.reads && !holders.contains(rank)) {
        // The value is not here yet: from the last writer (lines 9-17), or, before any write of
        // the round, the previous iteration's (line 26 on, below).
        if (last_writer >= 0) add_transfer(r, last_writer, rank, t, tasks[t].iteration);
        holders.add(rank);
      }
      if (u.writes) {
        if (last_writer < 0) initial_readers = holders.members();
        last_writer = t;
        if (partial == 0 || tasks[t].iteration < partial) final_writer = t;
        holders.reset();
        holders.add(rank);
      }
    }
    const int home = regions[r].home;
    if (last_writer < 0) {
      // Never written: every reader reads the value from before the loop.
      for (int reader : holders.members())
        if (reader != home) p.initial.push_back({r, home, reader});
      continue;
    }
    // Cyclic edges: the next iteration's first readers need the last writer's value.
    for (int reader : initial_readers) {
      if (reader != home) p.initial.push_back({r, home, reader});
      if (holders.contains(reader)) continue;
      add_transfer(r, last_writer, reader, n, unroll - 1);
      holders.add(reader);
    }
    if (final_writer < 0 && full_round) final_writer = last_writer;  // the cut round writes nothing here
    if (final_writer >= 0) {
      const int from = tasks[static_cast<std::size_t>(final_writer)].rank;
      if (from != home) p.final.push_back({r, from, home});
    }
  }

  if (merge) merge_transfers(p.transfers, regions, tasks);
  std::unordered_map<std::uint64_t, int> next_tag;  // per ordered pair
  for (transfer& x : p.transfers) {
    int& tag = next_tag[static_cast<std::uint64_t>(x.from) * static_cast<std::uint64_t>(ranks) +
                        static_cast<std::uint64_t>(x.to)];
    x.tag = tag++;
    if (x.tag > p.max_tag) p.max_tag = x.tag;
  }

  // Ordered by the task they precede (stable: by region within one task).
  std::vector<std::uint32_t> slot(static_cast<std::size_t>(n) + 2, 0);
  for (const transfer& x : p.transfers) ++slot[x.before + 1];
  for (std::uint32_t i = 0; i <= n; ++i) slot[i + 1] += slot[i];
  std::vector<transfer> sorted(p.transfers.size());
  for (const transfer& x : p.transfers) sorted[slot[x.before]++] = x;
  p.transfers.swap(sorted);
  return p;
}

}  // namespace weft::dist
