// Random task graphs checked against the OpenMP 5.2 dependence rules.
//
// Each graph is generated from a seed: a few addresses per sibling set, tasks with 0-4 accesses of
// the five types on distinct addresses (now and then one named again, of any kind: the task then
// counts as the stronger kind on it, mixed kinds as inout), random priorities, nested children (depth up to 3) with their
// own address set, taskwaits and taskgroups at random points, now and then an undeferred task.
// Every task stamps its start and end (and its parent the return of each taskwait / taskgroup end)
// from one global sequence counter. After the run, for each sibling set and each address, every pair
// i < j (creation order) touching it must satisfy:
//   both in                                              -> nothing required
//   both inoutset, no other type on that address between -> nothing required (may run together)
//   both mutexinoutset, no other type between            -> must not overlap in time
//   anything else                                        -> end_i < start_j
// plus: every task ran exactly once, a taskwait returned after its children ended, a taskgroup end
// after every descendant of the children created in it, an undeferred task ended before its submit
// returned (that it ran on the submitting thread is checked in undeferred_test.cpp).
//
// Reproduce one graph: WEFT_TEST_SEED=<seed printed> ./random_graphs_test --gtest_filter=<case>.
// WEFT_TEST_GRAPHS=<n> sets the number of graphs per configuration; WEFT_TEST_SCALE scales it.
#include <weft/weft.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "random.h"
#include "weft_test.h"

namespace {
using weft_test::dep_name;
using weft_test::mix;
using weft_test::rng;

// --- deterministic random numbers (same graphs on every platform for a given seed) ---------------
// --- the graph -----------------------------------------------------------------------------------
struct access_spec {
  int slot;  // index into the parent's child address set
  weft_dep_type type;
};

struct node {
  // structure (node 0 is the main program, the implicit root task)
  int parent = -1;
  int depth = 0;
  std::vector<access_spec> accesses;
  int priority = 0;
  bool undeferred = false;
  unsigned spin_before = 0, spin_after = 0;
  std::vector<int> children;
  std::vector<long> child_addresses;     // the addresses the children's accesses name
  int wait_pos = -1;                     // taskwait before creating child wait_pos (k: after the last)
  int group_begin = -1, group_end = -1;  // taskgroup around the creation of children [begin, end)

  // what happened; written by the task, read after the final wait (the runtime must order them)
  std::atomic<int> runs{0};
  uint64_t start = 0, end = 0, after_wait = 0, after_group = 0, after_submit = 0;
  int worker = -1;
};

struct graph {
  uint64_t seed = 0;
  std::vector<std::unique_ptr<node>> nodes;
  std::atomic<uint64_t> seq{1};
  weft_test::error_log errors;

  node& at(int i) { return *nodes[static_cast<size_t>(i)]; }
  uint64_t stamp() { return seq.fetch_add(1); }
};

struct generation_params {
  int max_priority;
};

weft_dep_type random_type(rng& r, bool set_heavy) {
  if (set_heavy) {
    int x = r.range(0, 9);
    if (x < 3) return WEFT_DEP_MUTEXINOUTSET;
    if (x < 6) return WEFT_DEP_INOUTSET;
    if (x < 8) return WEFT_DEP_IN;
    return x == 8 ? WEFT_DEP_OUT : WEFT_DEP_INOUT;
  }
  return static_cast<weft_dep_type>(r.range(1, 5));
}

void choose_sync(rng& r, node& n) {
  int k = static_cast<int>(n.children.size());
  if (r.chance(0.5)) n.wait_pos = r.range(0, k);
  if (k > 0 && r.chance(0.3)) {
    int a = r.range(0, k - 1), b = r.range(a + 1, k);
    n.group_begin = a;
    n.group_end = b;
  }
}

std::unique_ptr<graph> generate(uint64_t seed, generation_params p) {
  auto g = std::make_unique<graph>();
  g->seed = seed;
  rng r(seed);
  const bool set_heavy = r.chance(0.35);
  const bool spinny = r.chance(0.5);
  const int max_nodes = 160;

  g->nodes.push_back(std::make_unique<node>());  // root
  std::vector<int> pending = {0};
  for (size_t q = 0; q < pending.size(); ++q) {
    int parent = pending[q];
    node& pn = g->at(parent);
    int nchildren;
    if (parent == 0) {
      nchildren = r.range(4, 40);
    } else if (pn.depth < 3 && r.chance(0.3)) {
      nchildren = r.range(0, 5);
    } else {
      nchildren = 0;
    }
    nchildren = std::min<int>(nchildren, max_nodes - static_cast<int>(g->nodes.size()));
    if (nchildren <= 0) continue;
    int naddr = r.range(4, 8);
    pn.child_addresses.assign(static_cast<size_t>(naddr), 0);
    for (int c = 0; c < nchildren; ++c) {
      auto child = std::make_unique<node>();
      child->parent = parent;
      child->depth = pn.depth + 1;
      int nacc = r.range(0, 4);
      std::vector<int> slots(static_cast<size_t>(naddr));
      for (int s = 0; s < naddr; ++s) slots[static_cast<size_t>(s)] = s;
      for (int a = 0; a < nacc; ++a) {  // distinct slots: partial Fisher-Yates
        int j = r.range(a, naddr - 1);
        std::swap(slots[static_cast<size_t>(a)], slots[static_cast<size_t>(j)]);
        child->accesses.push_back({slots[static_cast<size_t>(a)], random_type(r, set_heavy)});
      }
      // Now and then one address named twice, of any two kinds (they act as the stronger one).
      if (nacc > 0 && r.chance(0.15))
        child->accesses.push_back({child->accesses[static_cast<size_t>(r.range(0, nacc - 1))].slot,
                                   random_type(r, set_heavy)});
      child->priority = r.chance(0.05) ? p.max_priority + r.range(1, 3) : r.range(0, p.max_priority);
      child->undeferred = r.chance(0.03);
      if (spinny && r.chance(0.6)) {
        child->spin_before = static_cast<unsigned>(r.range(0, 600));
        child->spin_after = static_cast<unsigned>(r.range(0, 600));
      }
      int index = static_cast<int>(g->nodes.size());
      g->nodes.push_back(std::move(child));
      g->at(parent).children.push_back(index);
      pending.push_back(index);
    }
  }
  for (auto& n : g->nodes) choose_sync(r, *n);
  return g;
}

std::string describe(graph& g, bool with_stamps) {
  std::ostringstream o;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    node& n = *g.nodes[i];
    o << "  n" << i;
    if (i > 0) o << " parent=n" << n.parent << " prio=" << n.priority << (n.undeferred ? " UNDEFERRED" : "");
    o << " [";
    for (size_t a = 0; a < n.accesses.size(); ++a)
      o << (a ? ", " : "") << dep_name(n.accesses[a].type) << " s" << n.accesses[a].slot;
    o << "]";
    if (!n.children.empty()) {
      o << " children={";
      for (size_t c = 0; c < n.children.size(); ++c) o << (c ? "," : "") << "n" << n.children[c];
      o << "}";
    }
    if (n.wait_pos >= 0) o << " taskwait@" << n.wait_pos;
    if (n.group_begin >= 0) o << " taskgroup[" << n.group_begin << "," << n.group_end << ")";
    if (with_stamps && i > 0) o << " | runs=" << n.runs.load() << " start=" << n.start << " end=" << n.end;
    if (with_stamps && n.wait_pos >= 0) o << " after_wait=" << n.after_wait;
    if (with_stamps && n.group_begin >= 0) o << " after_group=" << n.after_group;
    o << "\n";
  }
  return o.str();
}

// --- running it ----------------------------------------------------------------------------------
struct task_args {
  graph* g;
  int index;
};

void run_children(graph& g, int index);

void task_body(void* p) {
  task_args a;
  std::memcpy(&a, p, sizeof a);
  graph& g = *a.g;
  node& n = g.at(a.index);
  n.runs.fetch_add(1);
  n.start = g.stamp();
  n.worker = weft_worker_id();
  weft_test::spin(n.spin_before);
  run_children(g, a.index);
  weft_test::spin(n.spin_after);
  n.end = g.stamp();
}

void fail(graph& g, int index, const std::string& what, int status) {
  std::ostringstream o;
  o << "n" << index << ": " << what << " returned " << status << " (" << weft_strerror(status) << ")";
  g.errors.add(o.str());
}

void spawn_child(graph& g, node& parent, int index) {
  node& c = g.at(index);
  task_args args{&g, index};
  unsigned flags = c.undeferred ? WEFT_TASK_UNDEFERRED : WEFT_TASK_DEFAULT;
  weft_task_t* t = weft_task_create(&task_body, &args, sizeof args, flags);
  if (!t) return fail(g, index, "weft_task_create", weft_last_error());
  for (const auto& acc : c.accesses) {
    const long* address = &parent.child_addresses[static_cast<size_t>(acc.slot)];
    if (int s = weft_task_depend(t, acc.type, address, sizeof(long)); s != WEFT_OK)
      fail(g, index, "weft_task_depend", s);
  }
  if (int s = weft_task_set_priority(t, c.priority); s != WEFT_OK) fail(g, index, "weft_task_set_priority", s);
  if (int s = weft_task_submit(t); s != WEFT_OK) fail(g, index, "weft_task_submit", s);
  c.after_submit = g.stamp();
}

void run_children(graph& g, int index) {
  node& n = g.at(index);
  const int k = static_cast<int>(n.children.size());
  for (int pos = 0; pos <= k; ++pos) {
    if (pos == n.group_end) {
      if (int s = weft_taskgroup_end(); s != WEFT_OK) fail(g, index, "weft_taskgroup_end", s);
      n.after_group = g.stamp();
    }
    if (pos == n.wait_pos) {
      if (int s = weft_taskwait(); s != WEFT_OK) fail(g, index, "weft_taskwait", s);
      n.after_wait = g.stamp();
    }
    if (pos == n.group_begin) {
      if (int s = weft_taskgroup_begin(); s != WEFT_OK) fail(g, index, "weft_taskgroup_begin", s);
    }
    if (pos < k) spawn_child(g, n, n.children[static_cast<size_t>(pos)]);
  }
}

// --- checking it ---------------------------------------------------------------------------------
class checker {
 public:
  explicit checker(graph& g) : g_(g) {}

  std::vector<std::string> run() {
    for (size_t i = 1; i < g_.nodes.size(); ++i) {
      node& n = g_.at(static_cast<int>(i));
      int runs = n.runs.load();
      if (runs != 1)
        report() << "n" << i << " ran " << runs << " times (expected exactly once)";
      else if (!(n.start < n.end))
        report() << "n" << i << " start " << n.start << " !< end " << n.end;
      if (runs == 1 && n.parent > 0 && !(g_.at(n.parent).start < n.start))
        report() << "n" << i << " started (" << n.start << ") before its parent n" << n.parent << " ("
                 << g_.at(n.parent).start << ")";
      if (runs == 1 && n.undeferred) {
        if (!(n.end < n.after_submit))
          report() << "undeferred n" << i << " ended at " << n.end << ", after its submit returned at "
                   << n.after_submit;
      }
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) check_parent(static_cast<int>(i));
    return std::move(violations_);
  }

 private:
  struct line {
    std::ostringstream o;
    std::vector<std::string>* out;
    explicit line(std::vector<std::string>* v) : out(v) {}
    ~line() {
      if (out->size() < 25)
        out->push_back(o.str());
      else if (out->size() == 25)
        out->push_back("... (more violations)");
    }
    template <class T>
    line& operator<<(const T& v) {
      o << v;
      return *this;
    }
  };
  line report() { return line(&violations_); }

  bool ran(int i) { return g_.at(i).runs.load() == 1; }

  void subtree_ends(int i, std::vector<int>& out) {
    out.push_back(i);
    for (int c : g_.at(i).children) subtree_ends(c, out);
  }

  void check_parent(int p) {
    node& pn = g_.at(p);
    const int k = static_cast<int>(pn.children.size());
    if (k == 0) return;
    // taskwait: every child created before it has ended
    if (pn.wait_pos >= 0 && (p == 0 || ran(p))) {
      for (int c = 0; c < pn.wait_pos; ++c) {
        int ci = pn.children[static_cast<size_t>(c)];
        if (ran(ci) && !(g_.at(ci).end < pn.after_wait))
          report() << "n" << p << ": taskwait returned at " << pn.after_wait << " before child n" << ci << " ended at "
                   << g_.at(ci).end;
      }
    }
    // taskgroup: every descendant of the children created in it has ended
    if (pn.group_begin >= 0 && (p == 0 || ran(p))) {
      std::vector<int> desc;
      for (int c = pn.group_begin; c < pn.group_end; ++c) subtree_ends(pn.children[static_cast<size_t>(c)], desc);
      for (int d : desc)
        if (ran(d) && !(g_.at(d).end < pn.after_group))
          report() << "n" << p << ": taskgroup end returned at " << pn.after_group << " before descendant n" << d
                   << " ended at " << g_.at(d).end;
    }
    // dependences, address by address
    for (int slot = 0; slot < static_cast<int>(pn.child_addresses.size()); ++slot) {
      std::vector<std::pair<int, weft_dep_type>> users;  // creation order
      for (int ci : pn.children) {
        // One kind per task and address: a repeated kind stays, mixed kinds act as inout.
        bool named = false;
        weft_dep_type kind = WEFT_DEP_IN;
        for (const auto& a : g_.at(ci).accesses) {
          if (a.slot != slot) continue;
          kind = !named || kind == a.type ? a.type : WEFT_DEP_INOUT;
          named = true;
        }
        if (named) users.push_back({ci, kind});
      }
      for (size_t x = 0; x < users.size(); ++x) {
        for (size_t y = x + 1; y < users.size(); ++y) {
          auto [i, ti] = users[x];
          auto [j, tj] = users[y];
          if (!ran(i) || !ran(j)) continue;
          node& ni = g_.at(i);
          node& nj = g_.at(j);
          if (ti == WEFT_DEP_IN && tj == WEFT_DEP_IN) continue;
          bool same_set = false;
          if (ti == tj && (ti == WEFT_DEP_INOUTSET || ti == WEFT_DEP_MUTEXINOUTSET)) {
            same_set = true;
            for (size_t z = x + 1; z < y; ++z)
              if (users[z].second != ti) same_set = false;
          }
          if (same_set && ti == WEFT_DEP_INOUTSET) continue;
          if (same_set) {  // mutexinoutset members: any order, never together
            if (!(ni.end < nj.start || nj.end < ni.start))
              report() << "mutexinoutset n" << i << " [" << ni.start << "," << ni.end << "] and n" << j << " ["
                       << nj.start << "," << nj.end << "] on s" << slot << " of n" << p << " overlapped";
            continue;
          }
          if (!(ni.end < nj.start))
            report() << "n" << j << " (" << dep_name(tj) << " s" << slot << ", started " << nj.start
                     << ") not ordered after earlier sibling n" << i << " (" << dep_name(ti) << " s" << slot
                     << ", ended " << ni.end << ") under parent n" << p;
        }
      }
    }
  }

  graph& g_;
  std::vector<std::string> violations_;
};

// Pairs of tasks that ran at the same time on different workers: evidence that a configuration
// really runs tasks concurrently (reported, not asserted).
uint64_t overlapping_pairs(graph& g) {
  uint64_t n = 0;
  for (size_t i = 1; i < g.nodes.size(); ++i)
    for (size_t j = i + 1; j < g.nodes.size(); ++j) {
      node& a = *g.nodes[i];
      node& b = *g.nodes[j];
      if (a.runs.load() == 1 && b.runs.load() == 1 && a.worker != b.worker && a.start < b.end && b.start < a.end) ++n;
    }
  return n;
}

// Runs one graph; returns an empty string when it is right, else the whole story.
std::string run_graph(uint64_t seed, const generation_params& params, uint64_t& tasks, uint64_t& overlaps) {
  std::unique_ptr<graph> g = generate(seed, params);
  tasks += g->nodes.size() - 1;
  {
    // The main program is the implicit root task; an outer taskgroup collects every descendant (a
    // taskwait would only wait for the root-level tasks).
    int s = weft_taskgroup_begin();
    if (s != WEFT_OK) fail(*g, 0, "outer weft_taskgroup_begin", s);
    run_children(*g, 0);
    s = weft_taskwait();
    if (s != WEFT_OK) fail(*g, 0, "final weft_taskwait", s);
    s = weft_taskgroup_end();
    if (s != WEFT_OK) fail(*g, 0, "outer weft_taskgroup_end", s);
  }
  std::vector<std::string> violations = checker(*g).run();
  overlaps += overlapping_pairs(*g);
  if (violations.empty() && g->errors.count() == 0) return {};
  std::ostringstream o;
  o << "graph seed=0x" << std::hex << seed << std::dec << " (" << g->nodes.size() - 1 << " tasks, max priority "
    << params.max_priority << ")\n";
  if (g->errors.count()) o << "API errors:\n" << g->errors.str();
  for (const auto& v : violations) o << "  VIOLATION " << v << "\n";
  std::string d = describe(*g, true);
  if (d.size() > 20000) d = d.substr(0, 20000) + "  ... (graph truncated)\n";
  o << "graph:\n" << d;
  return o.str();
}

// --- configurations ------------------------------------------------------------------------------
struct config {
  int workers;
  const char* schedule;
  const char* steal;
  const char* wait_policy;  // nullptr: default
  const char* bind;         // nullptr: default
  int graphs;               // before scaling
};

std::string config_name(const config& c) {
  std::string s = "w" + std::to_string(c.workers) + "_" + c.schedule + "_" + c.steal;
  if (c.wait_policy) s += std::string("_") + c.wait_policy;
  if (c.bind) s += std::string("_bind") + c.bind;
  return s;
}

void PrintTo(const config& c, std::ostream* os) {
  *os << config_name(c);
}

std::vector<config> all_configs() {
  std::vector<config> v;
  for (int w : {1, 2, 3, 4, 8, 16})
    for (const char* sched : {"depth", "fifo", "priority"})
      for (const char* steal : {"random", "history", "hybrid"}) v.push_back({w, sched, steal, nullptr, nullptr, 1000});
  for (int w : {1, 2})
    for (const char* wp : {"active", "passive"}) v.push_back({w, "depth", "hybrid", wp, nullptr, 1000});
  v.push_back({4, "depth", "hybrid", "passive", nullptr, 1000});
  v.push_back({2, "depth", "hybrid", nullptr, "none", 1000});
  v.push_back({4, "priority", "random", nullptr, "none", 1000});
  v.push_back({16, "fifo", "history", nullptr, "none", 1000});
  return v;
}

class RandomGraphs : public ::testing::TestWithParam<config> {};

TEST_P(RandomGraphs, FollowOpenMPDependenceRules) {
  const config& c = GetParam();
  weft_test::runtime_config::vars vars = {
      {"WEFT_NUM_THREADS", std::to_string(c.workers)}, {"WEFT_SCHEDULE", c.schedule}, {"WEFT_STEAL", c.steal}};
  if (std::string(c.schedule) == "priority") vars.push_back({"WEFT_MAX_PRIORITY", "8"});
  if (c.wait_policy) vars.push_back({"WEFT_WAIT_POLICY", c.wait_policy});
  if (c.bind) vars.push_back({"WEFT_BIND", c.bind});
  weft_test::runtime_config rt(vars);
  ASSERT_TRUE(rt.ok());
  ASSERT_EQ(weft_num_workers(), c.workers);
  ASSERT_EQ(weft_worker_id(), 0) << "the thread that initialises weft is worker 0";

  generation_params params{weft_max_priority()};
  ASSERT_GE(params.max_priority, 0);

  int count = weft_test::scaled(c.graphs);
  if (auto n = weft_test::env_u64("WEFT_TEST_GRAPHS")) count = static_cast<int>(*n);
  std::vector<uint64_t> seeds;
  if (auto s = weft_test::env_u64("WEFT_TEST_SEED")) {
    seeds.push_back(*s);
  } else {
    uint64_t base = std::hash<std::string>{}(config_name(c)) ^ 0x5eed0f3e1f7ull;
    for (int i = 0; i < count; ++i) seeds.push_back(mix(base, static_cast<uint64_t>(i)));
  }

  const std::string where = config_name(c) + " (" + weft_test::runtime_config::describe(vars) + ")";
  ASSERT_EQ(weft_reset_stats(), WEFT_OK);
  uint64_t tasks = 0, overlaps = 0;
  weft_test::watchdog dog("RandomGraphs " + where, 60);  // per graph
  for (uint64_t seed : seeds) {
    std::ostringstream step;
    step << "graph seed=0x" << std::hex << seed << " -- reproduce with WEFT_TEST_SEED=0x" << seed;
    dog.step(step.str());
    std::string failure = run_graph(seed, params, tasks, overlaps);
    ASSERT_TRUE(failure.empty()) << "config " << where << "\nreproduce: WEFT_TEST_SEED=0x" << std::hex << seed
                                 << std::dec << " ./random_graphs_test --gtest_filter='*" << config_name(c) << "*'\n"
                                 << failure;
  }
  std::printf("[ info     ] %s: %zu graphs, %llu tasks, %llu overlapping task pairs\n", config_name(c).c_str(),
              seeds.size(), static_cast<unsigned long long>(tasks), static_cast<unsigned long long>(overlaps));
  // No task runs now, so the counters are exact.
  weft_stats_t s = weft_test::stats();
  EXPECT_GE(s.tasks_created, tasks) << weft_test::format_stats(s);
  EXPECT_EQ(s.tasks_completed, s.tasks_created) << weft_test::format_stats(s);
}

INSTANTIATE_TEST_SUITE_P(Configs, RandomGraphs, ::testing::ValuesIn(all_configs()),
                         [](const ::testing::TestParamInfo<config>& info) { return config_name(info.param); });

// The checker itself: a sequential depth-first execution (every task run where it is created)
// satisfies every rule; reversing the root-level order, or making two conflicting siblings overlap,
// must be reported.
void simulate_sequential(graph& g, int index, uint64_t& clock, bool reverse_root) {
  node& n = g.at(index);
  if (index != 0) {
    n.runs = 1;
    n.start = clock++;
  }
  std::vector<int> order = n.children;
  if (index == 0 && reverse_root) std::reverse(order.begin(), order.end());
  const int k = static_cast<int>(n.children.size());
  for (int pos = 0; pos <= k; ++pos) {
    if (pos == n.group_end) n.after_group = clock++;
    if (pos == n.wait_pos) n.after_wait = clock++;
    if (pos < k) {
      int child = order[static_cast<size_t>(pos)];
      simulate_sequential(g, child, clock, reverse_root);
      g.at(child).after_submit = clock++;
    }
  }
  if (index != 0) n.end = clock++;
}

TEST(RandomGraphsChecker, AcceptsSequentialRejectsReordered) {
  int rejected_reversed = 0, rejected_overlap = 0, candidates = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    uint64_t seed = mix(0xc0ffee, i);
    {
      auto g = generate(seed, {8});
      uint64_t clock = 1;
      simulate_sequential(*g, 0, clock, false);
      auto v = checker(*g).run();
      ASSERT_TRUE(v.empty()) << "seed 0x" << std::hex << seed << ": " << v.front() << "\n" << describe(*g, true);
    }
    {
      auto g = generate(seed, {8});
      uint64_t clock = 1;
      simulate_sequential(*g, 0, clock, true);
      // Reversed root order is wrong as soon as two root tasks conflict on an address.
      bool conflict = false;
      node& root = g->at(0);
      for (size_t a = 0; a < root.children.size() && !conflict; ++a)
        for (size_t b = a + 1; b < root.children.size() && !conflict; ++b)
          for (const auto& x : g->at(root.children[a]).accesses)
            for (const auto& y : g->at(root.children[b]).accesses)
              if (x.slot == y.slot && !(x.type == WEFT_DEP_IN && y.type == WEFT_DEP_IN) &&
                  !(x.type == y.type && (x.type == WEFT_DEP_INOUTSET || x.type == WEFT_DEP_MUTEXINOUTSET)))
                conflict = true;
      if (conflict) {
        ++candidates;
        if (!checker(*g).run().empty()) ++rejected_reversed;
      }
    }
    {
      // Two root siblings, both mutexinoutset on one slot with nothing between: overlap them.
      auto g = generate(seed, {8});
      uint64_t clock = 1;
      simulate_sequential(*g, 0, clock, false);
      node& root = g->at(0);
      for (size_t a = 0; a + 1 < root.children.size(); ++a) {
        node& x = g->at(root.children[a]);
        node& y = g->at(root.children[a + 1]);
        bool both_mutex = false;
        for (const auto& ax : x.accesses)
          for (const auto& ay : y.accesses)
            if (ax.slot == ay.slot && ax.type == WEFT_DEP_MUTEXINOUTSET && ay.type == WEFT_DEP_MUTEXINOUTSET)
              both_mutex = true;
        if (both_mutex && x.children.empty() && y.children.empty()) {
          y.start = x.end - 1;  // inside x
          if (checker(*g).run().empty()) {
            ADD_FAILURE() << "overlapping mutexinoutset siblings not reported, seed 0x" << std::hex << seed;
          } else {
            ++rejected_overlap;
          }
          break;
        }
      }
    }
  }
  EXPECT_GT(candidates, 100);
  EXPECT_EQ(rejected_reversed, candidates);
  EXPECT_GT(rejected_overlap, 0);
}

// Duplicate accesses to one address within a task merge into the strongest: in+out acts as inout,
// so a later reader is ordered after it, and in+in acts as in.
TEST(RandomGraphsExtra, DuplicateAccessesMerge) {
  for (int workers : {1, 2, 4}) {
    weft_test::runtime_config rt({{"WEFT_NUM_THREADS", std::to_string(workers)}});
    ASSERT_TRUE(rt.ok());
    const int rounds = weft_test::scaled(200, 10);
    for (int r = 0; r < rounds; ++r) {
      long x = 0;
      std::atomic<uint64_t> seq{1};
      struct rec {
        std::atomic<uint64_t>* seq;
        uint64_t start = 0, end = 0;
        unsigned spin;
      };
      auto body = [](void* p) {
        rec* rp = *static_cast<rec**>(p);
        rp->start = rp->seq->fetch_add(1);
        weft_test::spin(rp->spin);
        rp->end = rp->seq->fetch_add(1);
      };
      rec writer{&seq, 0, 0, 400}, reader1{&seq, 0, 0, 0}, reader2{&seq, 0, 0, 0};
      rec* pw = &writer;
      rec* pr1 = &reader1;
      rec* pr2 = &reader2;
      // writer: in(x) + out(x) -> inout
      weft_task_t* t = weft_task_create(body, &pw, sizeof pw, 0);
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &x, sizeof x), WEFT_OK);
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_OUT, &x, sizeof x), WEFT_OK);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
      // reader 1: in(x) twice -> in
      t = weft_task_create(body, &pr1, sizeof pr1, 0);
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &x, sizeof x), WEFT_OK);
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &x, sizeof x), WEFT_OK);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
      // reader 2: in(x) -> after the writer, unordered with reader 1
      t = weft_task_create(body, &pr2, sizeof pr2, 0);
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &x, sizeof x), WEFT_OK);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
      ASSERT_EQ(weft_taskwait(), WEFT_OK);
      EXPECT_LT(writer.end, reader1.start) << "workers=" << workers << " round " << r;
      EXPECT_LT(writer.end, reader2.start) << "workers=" << workers << " round " << r;
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace
