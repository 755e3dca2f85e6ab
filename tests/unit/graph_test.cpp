// Persistent task graphs (weft_graph_begin / weft_graph_iteration / weft_graph_end, weft::graph).
//
// Every task here does a deterministic, order-sensitive update of the cells it writes
// (cell = cell*K + id + value for out/inout, an atomic add for inoutset, a xor for mutexinoutset) and
// folds the cells it reads into a checksum, so any ordering violation, a lost argument update or a
// task run too often / too rarely changes the final state. Each run is compared with the same loop
// executed sequentially (task bodies called inline in creation order): exact equality.
//
//   GraphRandom        random iterations (10-60 tasks, in/out/inout/inoutset/mutexinoutset on a
//                      few cells), both modes, both policies, unroll 1/2 (pointer swapping),
//                      lookahead 1/4, barrier on/off, 1-16 workers; stats show replay happened.
//   GraphNoBarrier     A_1 waits on an event that B_2 fulfils: finishes only without a barrier
//                      between iterations.
//   GraphLookahead     after weft_graph_iteration() returns for round k, every task (and child) of
//                      rounds <= k-L-1 has completed.
//   GraphChange        structure changes at iteration 5 of 10 (function, address, type, one
//                      access more/less, one task more/less, flags, args size): rerecord keeps the
//                      results exact (2 recordings); error mode fails the detecting call with
//                      WEFT_ERR_GRAPH_CHANGED, names the iteration on stderr, runs the rest right.
//   Graph.*            argument updates seen, exact stats, partial rounds, large argument blocks,
//                      taskiter (fixed count with a partial last round; a data-dependent trip
//                      count whose condition runs between rounds), children of persistent tasks
//                      (with taskwait; left running inside an enclosing taskgroup), tied tasks,
//                      undeferred tasks, graphs owned by concurrent tasks, misuse, the C++ API.
//   GraphEnv           WEFT_GRAPH_POLICY / WEFT_GRAPH_LOOKAHEAD defaults.
//
// Reproduce one random graph: WEFT_TEST_SEED=<seed printed> ./graph_test --gtest_filter=<case>.
// WEFT_TEST_GRAPHS=<n> sets the number of graphs per configuration; WEFT_TEST_SCALE scales it.
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
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

// --- deterministic random numbers ------------------------------------------------------------------
std::string status_name(int s) {
  switch (s) {
    case WEFT_OK:
      return "WEFT_OK";
    case WEFT_ERR_INVALID_ARGUMENT:
      return "WEFT_ERR_INVALID_ARGUMENT";
    case WEFT_ERR_GRAPH_CHANGED:
      return "WEFT_ERR_GRAPH_CHANGED";
    case WEFT_ERR_GRAPH_STATE:
      return "WEFT_ERR_GRAPH_STATE";
    default:
      return "status " + std::to_string(s) + " (" + weft_strerror(s) + ")";
  }
}

// --- the cells and the generic task body -----------------------------------------------------------
constexpr int kCells = 5;  // per array; two arrays (pointer swapping)

struct cells {
  uint64_t c[2][kCells];
  std::atomic<uint64_t> checksum{0};
  void init(uint64_t seed) {
    for (int a = 0; a < 2; ++a)
      for (int i = 0; i < kCells; ++i) c[a][i] = mix(seed, static_cast<uint64_t>(a * 100 + i));
    checksum = 0;
  }
};

// The argument block of every generic task (56 bytes: inside the task descriptor).
struct rargs {
  uint64_t* addr[4];
  uint8_t type[4];
  int16_t n;
  int16_t id;
  int64_t value;  // changes every iteration (re-execute mode)
  std::atomic<uint64_t>* checksum;
};
static_assert(sizeof(rargs) <= WEFT_INLINE_ARGS_SIZE);

// A bigger argument block (over WEFT_INLINE_ARGS_SIZE: the pooled side buffer); starts like rargs.
struct rargs_big {
  rargs a;
  char pad[40];
};
static_assert(sizeof(rargs_big) > WEFT_INLINE_ARGS_SIZE);

// GraphRandom.BlockingTask: the body run numbered `at` (counting every generic body) waits for an
// event, or binds it, and a helper thread fulfils it once it sees `hit`. -1: no body blocks.
struct block_plan {
  std::atomic<long> runs{0};
  long at = -1;
  bool bind = false;
  weft_event_t* event = nullptr;
  std::atomic<bool> hit{false};
};
block_plan blocking;

template <uint64_t K>
void rbody(void* p) {
  if (blocking.at >= 0 && blocking.runs.fetch_add(1, std::memory_order_relaxed) == blocking.at) {
    blocking.hit.store(true, std::memory_order_release);
    if (blocking.bind) {
      weft_event_bind(blocking.event);
    } else {
      weft_event_wait(blocking.event);
    }
  }
  const rargs* a = static_cast<const rargs*>(p);
  const uint64_t h = mix(static_cast<uint64_t>(a->id) * 1000003u + static_cast<uint64_t>(a->value), K);
  uint64_t local = h;
  for (int i = 0; i < a->n; ++i) {
    uint64_t* c = a->addr[i];
    switch (a->type[i]) {
      case WEFT_DEP_IN:
        local += mix(*c, h + static_cast<uint64_t>(i));
        break;
      case WEFT_DEP_OUT:
      case WEFT_DEP_INOUT:
        *c = *c * K + static_cast<uint64_t>(a->id) + static_cast<uint64_t>(a->value);
        break;
      case WEFT_DEP_INOUTSET:  // members may run together: an atomic, commutative update
        std::atomic_ref<uint64_t>(*c).fetch_add(h | 1, std::memory_order_relaxed);
        break;
      case WEFT_DEP_MUTEXINOUTSET: {  // members in any order, never together: a lost update shows.
        // XOR commutes within the set but not with the inoutset adds (sets stay ordered).
        uint64_t v = *c;
        weft_test::spin(40);
        *c = v ^ (mix(h, 0x77) | 1);
        break;
      }
    }
  }
  a->checksum->fetch_add(local, std::memory_order_relaxed);
}
constexpr weft_task_fn fnA = &rbody<31>;
constexpr weft_task_fn fnB = &rbody<37>;

struct acc_spec {
  int sel;  // array (before pointer swapping)
  int cell;
  int type;  // weft_dep_type
};

// One task as the loop creates it in some iteration.
struct tspec {
  weft_task_fn fn = fnA;
  int id = 0;
  std::vector<acc_spec> accs;
  int64_t value = 0;
  int swap = 0;  // 1: array = (sel + swap_parity) % 2
  int parity = 0;
  unsigned flags = 0;
  bool big_args = false;

  uint64_t* address(cells& s, const acc_spec& a) const {
    int arr = swap ? (a.sel + parity) % 2 : a.sel;
    return &s.c[arr][a.cell];
  }
  rargs args(cells& s) const {
    rargs r{};
    r.n = static_cast<int16_t>(accs.size());
    for (size_t i = 0; i < accs.size(); ++i) {
      r.addr[i] = address(s, accs[i]);
      r.type[i] = static_cast<uint8_t>(accs[i].type);
    }
    r.id = static_cast<int16_t>(id);
    r.value = value;
    r.checksum = &s.checksum;
    return r;
  }
  std::string describe() const {
    std::ostringstream o;
    o << "t" << id << "(" << (fn == fnA ? "A" : fn == fnB ? "B" : "?") << ", value " << value;
    for (const auto& a : accs) o << ", " << dep_name(a.type) << " c" << a.sel << "." << a.cell;
    if (flags) o << ", flags " << flags;
    if (big_args) o << ", big args";
    o << ")";
    return o.str();
  }
};

void run_inline(const tspec& t, cells& s) {
  if (t.big_args) {
    rargs_big b{};
    b.a = t.args(s);
    t.fn(&b);
  } else {
    rargs r = t.args(s);
    t.fn(&r);
  }
}

// What the runtime answered when the loop created one task.
struct create_result {
  bool created = false;
  int create_error = WEFT_OK;  // weft_last_error() when create returned NULL
  int depend_rc = WEFT_OK;     // first non-OK depend status
  int submit_rc = WEFT_OK;
  bool ok() const { return created && depend_rc == WEFT_OK && submit_rc == WEFT_OK; }
  std::string describe() const {
    std::ostringstream o;
    if (!created) {
      o << "create returned NULL, weft_last_error " << status_name(create_error);
    } else {
      o << "depend " << status_name(depend_rc) << ", submit " << status_name(submit_rc);
    }
    return o.str();
  }
};

create_result create_task(const tspec& t, cells& s) {
  create_result r;
  weft_task_t* task;
  if (t.big_args) {
    rargs_big b{};
    b.a = t.args(s);
    task = weft_task_create(t.fn, &b, sizeof b, t.flags);
  } else {
    rargs a = t.args(s);
    task = weft_task_create(t.fn, &a, sizeof a, t.flags);
  }
  if (!task) {
    r.create_error = weft_last_error();
    return r;
  }
  r.created = true;
  for (const auto& a : t.accs) {
    int rc = weft_task_depend(task, static_cast<weft_dep_type>(a.type), t.address(s, a), sizeof(uint64_t));
    if (rc != WEFT_OK && r.depend_rc == WEFT_OK) r.depend_rc = rc;
  }
  r.submit_rc = weft_task_submit(task);
  return r;
}

std::string compare_cells(cells& got, cells& want) {
  std::ostringstream o;
  for (int a = 0; a < 2; ++a)
    for (int i = 0; i < kCells; ++i)
      if (got.c[a][i] != want.c[a][i])
        o << "  cell c" << a << "." << i << ": expected " << want.c[a][i] << ", got " << got.c[a][i] << "\n";
  if (got.checksum.load() != want.checksum.load())
    o << "  checksum of the reads: expected " << want.checksum.load() << ", got " << got.checksum.load() << "\n";
  return o.str();
}

weft_graph_options_t default_options() {
  weft_graph_options_t o;
  std::memset(&o, 0, sizeof o);
  return o;
}

std::string describe_options(const weft_graph_options_t& o) {
  std::ostringstream s;
  s << (o.mode == WEFT_GRAPH_TASKITER ? "taskiter" : "reexecute") << " unroll=" << o.unroll
    << " iterations=" << o.iterations << " policy="
    << (o.policy == WEFT_GRAPH_ITERATION_PRIORITY    ? "iteration_priority"
        : o.policy == WEFT_GRAPH_IMMEDIATE_SUCCESSOR ? "immediate_successor"
                                                     : "default")
    << " lookahead=" << o.lookahead << " barrier=" << o.barrier << " on_change=" << o.on_change;
  return s.str();
}

// A test that restarts the runtime with GetParam() workers (plus extra WEFT_* settings).
class workers_fixture : public ::testing::TestWithParam<int> {
 protected:
  virtual weft_test::runtime_config::vars extra() const { return {}; }
  void SetUp() override {
    auto v = extra();
    v.push_back({"WEFT_NUM_THREADS", std::to_string(GetParam())});
    rt_ = std::make_unique<weft_test::runtime_config>(v);
    ASSERT_TRUE(rt_->ok());
    ASSERT_EQ(weft_reset_stats(), WEFT_OK);
  }
  void TearDown() override { rt_.reset(); }
  std::unique_ptr<weft_test::runtime_config> rt_;
};

std::string workers_name(const ::testing::TestParamInfo<int>& info) {
  return "w" + std::to_string(info.param);
}

// =================================================================================================
// 1. Random iterations
// =================================================================================================
using iteration_template = std::vector<tspec>;  // value/parity filled per iteration

std::vector<iteration_template> generate(uint64_t seed, int unroll) {
  rng r(seed);
  std::vector<iteration_template> t(static_cast<size_t>(unroll));
  for (int p = 0; p < unroll; ++p) {
    int n = r.range(10, 60);
    for (int k = 0; k < n; ++k) {
      tspec s;
      s.fn = r.chance(0.5) ? fnA : fnB;
      s.id = p * 100 + k;
      s.swap = unroll == 2 ? 1 : 0;
      int na = r.range(0, 4);
      std::vector<int> slots;
      while (static_cast<int>(slots.size()) < na) {
        int x = r.range(0, 2 * kCells - 1);
        if (std::find(slots.begin(), slots.end(), x) == slots.end()) slots.push_back(x);
      }
      for (int x : slots) {
        int w = r.range(0, 99), type;
        if (w < 30)
          type = WEFT_DEP_IN;
        else if (w < 40)
          type = WEFT_DEP_OUT;
        else if (w < 60)
          type = WEFT_DEP_INOUT;
        else if (w < 80)
          type = WEFT_DEP_INOUTSET;
        else
          type = WEFT_DEP_MUTEXINOUTSET;
        s.accs.push_back({x / kCells, x % kCells, type});
      }
      t[static_cast<size_t>(p)].push_back(s);
    }
  }
  return t;
}

// The tasks of loop iteration `it` as the loop creates them (re-execute mode), or as they run
// (taskiter: the recorded sub-iteration it % unroll, with its recorded arguments).
std::vector<tspec> tasks_of(const std::vector<iteration_template>& t, int it, bool taskiter) {
  const int unroll = static_cast<int>(t.size());
  const int p = it % unroll;
  const int source_it = taskiter ? p : it;  // the iteration whose arguments the task gets
  std::vector<tspec> v = t[static_cast<size_t>(p)];
  for (auto& s : v) {
    s.value = source_it * 7 + 1;
    s.parity = source_it % 2;
  }
  return v;
}

struct random_config {
  int workers;
  int mode;
  int policy;
  int unroll;
  bool general = false;  // WEFT_GRAPH_INLINE=0: one worker runs replayed tasks through the scheduler
};

std::string random_config_name(const random_config& c) {
  return "w" + std::to_string(c.workers) + (c.mode == WEFT_GRAPH_TASKITER ? "_taskiter" : "_reexec") +
         (c.policy == WEFT_GRAPH_ITERATION_PRIORITY ? "_iterprio" : "_immsucc") + "_u" + std::to_string(c.unroll) +
         (c.general ? "_noinline" : "");
}

void PrintTo(const random_config& c, std::ostream* os) {
  *os << random_config_name(c);
}

std::vector<random_config> random_configs() {
  std::vector<random_config> v;
  for (int w : {1, 2, 3, 4, 8, 16})
    for (int mode : {WEFT_GRAPH_REEXECUTE, WEFT_GRAPH_TASKITER})
      for (int policy : {WEFT_GRAPH_IMMEDIATE_SUCCESSOR, WEFT_GRAPH_ITERATION_PRIORITY})
        for (int unroll : {1, 2}) v.push_back({w, mode, policy, unroll});
  for (int mode : {WEFT_GRAPH_REEXECUTE, WEFT_GRAPH_TASKITER})
    for (int policy : {WEFT_GRAPH_IMMEDIATE_SUCCESSOR, WEFT_GRAPH_ITERATION_PRIORITY})
      for (int unroll : {1, 2}) v.push_back({1, mode, policy, unroll, true});
  return v;
}

class GraphRandom : public ::testing::TestWithParam<random_config> {};

// Runs one random graph under the given options; returns "" or the whole story.
std::string run_random(uint64_t seed, weft_graph_options_t o, int total_iterations, uint64_t& tasks_run,
                       weft_test::watchdog* dog = nullptr, const std::string& where = "",
                       const std::function<void()>& before_graph = nullptr) {
  auto step = [&](const std::string& what) {
    if (dog) dog->step(where + ": " + what);
  };
  const bool taskiter = o.mode == WEFT_GRAPH_TASKITER;
  const int unroll = o.unroll < 1 ? 1 : o.unroll;
  std::vector<iteration_template> t = generate(seed, unroll);
  std::ostringstream fail;

  // Sequential reference.
  auto ref = std::make_unique<cells>();
  ref->init(seed);
  for (int it = 0; it < total_iterations; ++it)
    for (const auto& s : tasks_of(t, it, taskiter)) run_inline(s, *ref);

  auto got = std::make_unique<cells>();
  got->init(seed);
  if (before_graph) before_graph();
  if (weft_reset_stats() != WEFT_OK) fail << "weft_reset_stats failed\n";
  if (taskiter) o.iterations = total_iterations;
  int rc = weft_graph_begin_with(&o);
  if (rc != WEFT_OK) return "weft_graph_begin_with: " + status_name(rc) + "\n";
  const int loop_iterations = taskiter ? unroll : total_iterations;
  for (int it = 0; it < loop_iterations; ++it) {
    step("weft_graph_iteration() for iteration " + std::to_string(it));
    rc = weft_graph_iteration();
    if (rc != WEFT_OK) fail << "iteration " << it << ": weft_graph_iteration returned " << status_name(rc) << "\n";
    step("creating the tasks of iteration " + std::to_string(it));
    int k = 0;
    for (const auto& s : tasks_of(t, it, false)) {
      create_result cr = create_task(s, *got);
      if (!cr.ok())
        fail << "iteration " << it << ", task #" << k << " " << s.describe() << ": " << cr.describe() << "\n";
      ++k;
    }
  }
  step("weft_graph_end()");
  rc = weft_graph_end();
  if (rc != WEFT_OK) fail << "weft_graph_end returned " << status_name(rc) << "\n";
  step("checks");
  for (int it = 0; it < total_iterations; ++it) tasks_run += tasks_of(t, it, taskiter).size();

  std::string diff = compare_cells(*got, *ref);
  if (!diff.empty()) fail << "final state differs from the sequential execution:\n" << diff;
  weft_stats_t st{};
  weft_get_stats(&st);
  if (st.graph_recordings != 1)
    fail << "graph_recordings = " << st.graph_recordings << ", expected 1 (nothing changed)\n";
  if (total_iterations > unroll && st.graph_replayed == 0) fail << "graph_replayed = 0: nothing was replayed\n";
  if (fail.str().empty()) return {};
  std::ostringstream o2;
  o2 << "seed=0x" << std::hex << seed << std::dec << " " << describe_options(o) << " iterations=" << total_iterations
     << "\n"
     << fail.str();
  o2 << "iteration templates:\n";
  for (size_t p = 0; p < t.size(); ++p) {
    o2 << " sub-iteration " << p << ":";
    for (const auto& s : t[p]) o2 << " " << s.describe();
    o2 << "\n";
  }
  std::string s = o2.str();
  if (s.size() > 20000) s = s.substr(0, 20000) + "...\n";
  return s;
}

TEST_P(GraphRandom, MatchesSequentialExecution) {
  const random_config& c = GetParam();
  weft_test::runtime_config rt(
      {{"WEFT_NUM_THREADS", std::to_string(c.workers)}, {"WEFT_GRAPH_INLINE", c.general ? "0" : "1"}});
  ASSERT_TRUE(rt.ok());
  ASSERT_EQ(weft_num_workers(), c.workers);

  int count = weft_test::scaled(100);
  if (auto n = weft_test::env_u64("WEFT_TEST_GRAPHS")) count = static_cast<int>(*n);
  std::vector<uint64_t> seeds;
  if (auto s = weft_test::env_u64("WEFT_TEST_SEED")) {
    seeds.push_back(*s);
  } else {
    uint64_t base = std::hash<std::string>{}(random_config_name(c)) ^ 0x9a7e5eedull;
    for (int i = 0; i < count; ++i) seeds.push_back(mix(base, static_cast<uint64_t>(i)));
  }
  weft_test::watchdog dog("GraphRandom " + random_config_name(c), 60);
  uint64_t tasks = 0;
  int runs = 0;
  for (int lookahead : {1, 4})
    for (int barrier : {0, 1})
      for (uint64_t seed : seeds) {
        weft_graph_options_t o = default_options();
        o.mode = c.mode;
        o.policy = c.policy;
        o.unroll = c.unroll;
        o.lookahead = lookahead;
        o.barrier = barrier;
        // Re-execute: a whole number of rounds. Taskiter: 13..18 iterations (a partial last round
        // when odd with unroll 2).
        int iterations = c.mode == WEFT_GRAPH_TASKITER ? rng(seed).range(13, 18) : 16;
        std::ostringstream step;
        step << describe_options(o) << " seed=0x" << std::hex << seed;
        dog.step(step.str());
        std::string failure = run_random(seed, o, iterations, tasks, &dog, step.str());
        ++runs;
        ASSERT_TRUE(failure.empty()) << "config " << random_config_name(c) << "\nreproduce: WEFT_TEST_SEED=0x"
                                     << std::hex << seed << std::dec << " ./graph_test --gtest_filter='*"
                                     << random_config_name(c) << "'\n"
                                     << failure;
      }
  std::printf("[ info     ] %s: %d graph runs, %llu tasks\n", random_config_name(c).c_str(), runs,
              static_cast<unsigned long long>(tasks));
}

INSTANTIATE_TEST_SUITE_P(Configs, GraphRandom, ::testing::ValuesIn(random_configs()),
                         [](const ::testing::TestParamInfo<random_config>& info) {
                           return random_config_name(info.param);
                         });

// One task of a random graph, anywhere in any round, waits for an event (or binds one) that a
// thread outside the runtime fulfils a little later. On one worker in taskiter mode this is where
// the inline rounds stop: whatever ran inline before it must have left exact counts behind.
class GraphRandomBlocking : public ::testing::TestWithParam<random_config> {};

TEST_P(GraphRandomBlocking, MatchesSequentialExecution) {
  const random_config& c = GetParam();
  weft_test::runtime_config rt({{"WEFT_NUM_THREADS", std::to_string(c.workers)}});
  ASSERT_TRUE(rt.ok());
  weft_test::watchdog dog("GraphRandomBlocking " + random_config_name(c), 60);
  uint64_t base = std::hash<std::string>{}(random_config_name(c)) ^ 0xb10c4ull;
  const int count = weft_test::scaled(60);
  for (int i = 0; i < count; ++i) {
    const uint64_t seed = mix(base, static_cast<uint64_t>(i));
    weft_graph_options_t o = default_options();
    o.mode = c.mode;
    o.policy = c.policy;
    o.unroll = c.unroll;
    const int iterations = 12;
    // Where to block: any body run of the whole loop (the sequential reference below counts them).
    std::vector<iteration_template> t = generate(seed, c.unroll);
    long bodies = 0;
    const bool taskiter = c.mode == WEFT_GRAPH_TASKITER;
    for (int it = 0; it < iterations; ++it) bodies += static_cast<long>(tasks_of(t, it, taskiter).size());
    rng pick(seed ^ 0x5eedull);
    blocking.runs.store(0);
    blocking.hit.store(false);
    blocking.at = pick.range(0, static_cast<int>(bodies) - 1);
    blocking.bind = pick.chance(0.5);
    blocking.event = weft_event_create(1);
    ASSERT_NE(blocking.event, nullptr);
    std::atomic<bool> done{false};
    std::thread helper([&] {
      while (!blocking.hit.load(std::memory_order_acquire) && !done.load()) std::this_thread::yield();
      if (!blocking.hit.load(std::memory_order_acquire)) return;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      weft_event_fulfill(blocking.event);
    });
    std::ostringstream where;
    where << random_config_name(c) << " seed=0x" << std::hex << seed << std::dec << " blocking body run " << blocking.at
          << (blocking.bind ? " (binds)" : " (waits)");
    dog.step(where.str());
    uint64_t tasks = 0;
    // The reference runs with no body blocking: run_random computes it before the graph runs.
    const long at = blocking.at;
    blocking.at = -1;
    std::string failure = run_random(seed, o, iterations, tasks, nullptr, "", [&] { blocking.at = at; });
    done.store(true);
    helper.join();
    blocking.at = -1;
    EXPECT_TRUE(blocking.hit.load()) << where.str() << ": the chosen body never ran";
    EXPECT_EQ(weft_event_destroy(blocking.event), WEFT_OK);
    ASSERT_TRUE(failure.empty()) << where.str() << "\n" << failure;
  }
}

std::vector<random_config> blocking_configs() {
  std::vector<random_config> v;
  for (int w : {1, 2})
    for (int mode : {WEFT_GRAPH_REEXECUTE, WEFT_GRAPH_TASKITER})
      for (int unroll : {1, 2}) v.push_back({w, mode, WEFT_GRAPH_IMMEDIATE_SUCCESSOR, unroll});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Configs, GraphRandomBlocking, ::testing::ValuesIn(blocking_configs()),
                         [](const ::testing::TestParamInfo<random_config>& info) {
                           return random_config_name(info.param);
                         });

// The reference is sensitive: the same random graph with two tasks swapped, an argument update
// lost, or one task run twice gives another final state (so the comparison above can fail).
TEST(GraphRandomChecker, ReferenceDetectsReorderingAndLostUpdates) {
  int swapped_detected = 0, swapped_candidates = 0, stale_detected = 0, twice_detected = 0;
  for (uint64_t i = 0; i < 50; ++i) {
    uint64_t seed = mix(0xfeed, i);
    auto t = generate(seed, 1);
    auto run = [&](int variant) {
      auto s = std::make_unique<cells>();
      s->init(seed);
      for (int it = 0; it < 6; ++it) {
        auto v = tasks_of(t, it, false);
        if (variant == 1 && it == 3) {
          // swap the first two tasks that conflict on some cell
          for (size_t a = 0; a + 1 < v.size(); ++a) {
            bool conflict = false;
            for (const auto& x : v[a].accs)
              for (const auto& y : v[a + 1].accs)
                if (x.sel == y.sel && x.cell == y.cell && !(x.type == WEFT_DEP_IN && y.type == WEFT_DEP_IN) &&
                    !(x.type == y.type && (x.type == WEFT_DEP_INOUTSET || x.type == WEFT_DEP_MUTEXINOUTSET)))
                  conflict = true;
            if (conflict) {
              std::swap(v[a], v[a + 1]);
              break;
            }
          }
        }
        if (variant == 2 && it == 3)
          for (auto& x : v) x.value = 2 * 7 + 1;  // arguments of the previous iteration
        for (const auto& x : v) run_inline(x, *s);
        if (variant == 3 && it == 3 && !v.empty()) run_inline(v.back(), *s);
      }
      return s;
    };
    auto base = run(0);
    auto sw = run(1);
    auto stale = run(2);
    auto twice = run(3);
    bool differs = false;
    {
      auto v = tasks_of(t, 3, false);
      for (size_t a = 0; a + 1 < v.size() && !differs; ++a)
        for (const auto& x : v[a].accs)
          for (const auto& y : v[a + 1].accs)
            if (x.sel == y.sel && x.cell == y.cell && !(x.type == WEFT_DEP_IN && y.type == WEFT_DEP_IN) &&
                !(x.type == y.type && (x.type == WEFT_DEP_INOUTSET || x.type == WEFT_DEP_MUTEXINOUTSET)))
              differs = true;
    }
    if (differs) {
      ++swapped_candidates;
      if (!compare_cells(*sw, *base).empty()) ++swapped_detected;
    }
    if (!compare_cells(*stale, *base).empty()) ++stale_detected;
    if (!compare_cells(*twice, *base).empty()) ++twice_detected;
  }
  EXPECT_GT(swapped_candidates, 40);
  EXPECT_GE(swapped_detected, swapped_candidates * 9 / 10);
  EXPECT_EQ(stale_detected, 50);
  EXPECT_EQ(twice_detected, 50);
}

// =================================================================================================
// 2. Fixed small loops: args updates, stats, partial rounds, policies through the environment
// =================================================================================================
class Graph : public workers_fixture {};
INSTANTIATE_TEST_SUITE_P(Workers, Graph, ::testing::Values(1, 2, 4), workers_name);

// A small fixed iteration: 4 tasks on 4 cells (+ a fifth cell for changes).
//   t0 A: inout c0, in c1;  t1 A: inout c1, in c2;  t2 B: inout c2, in c0;  t3 A: inout c3, in c0, in c2
std::vector<tspec> base_iteration(int it) {
  std::vector<tspec> v(4);
  v[0].fn = fnA;
  v[0].accs = {{0, 0, WEFT_DEP_INOUT}, {0, 1, WEFT_DEP_IN}};
  v[1].fn = fnA;
  v[1].accs = {{0, 1, WEFT_DEP_INOUT}, {0, 2, WEFT_DEP_IN}};
  v[2].fn = fnB;
  v[2].accs = {{0, 2, WEFT_DEP_INOUT}, {0, 0, WEFT_DEP_IN}};
  v[3].fn = fnA;
  v[3].accs = {{0, 3, WEFT_DEP_INOUT}, {0, 0, WEFT_DEP_IN}, {0, 2, WEFT_DEP_IN}};
  for (int k = 0; k < 4; ++k) {
    v[static_cast<size_t>(k)].id = k;
    v[static_cast<size_t>(k)].value = it * 10 + 3;
  }
  return v;
}

// Each task appends its argument value to the log of its position; the inout chain orders the
// appends, so the log is exactly the sequence of argument values the tasks saw.
struct log_args {
  std::vector<int64_t>* log;
  int64_t value;
};
void log_body(void* p) {
  auto* a = static_cast<log_args*>(p);
  weft_test::spin(200);
  a->log->push_back(a->value);
}

TEST_P(Graph, ArgumentUpdatesSeenEveryIteration) {
  const int n = 20, positions = 3;
  std::vector<std::vector<int64_t>> logs(positions);
  ASSERT_EQ(weft_graph_begin(), WEFT_OK);
  for (int it = 0; it < n; ++it) {
    ASSERT_EQ(weft_graph_iteration(), WEFT_OK) << "iteration " << it;
    for (int k = 0; k < positions; ++k) {
      log_args a{&logs[static_cast<size_t>(k)], it * 100 + k};
      weft_task_t* t = weft_task_create(&log_body, &a, sizeof a, 0);
      ASSERT_NE(t, nullptr) << "iteration " << it << " task " << k << ": " << status_name(weft_last_error());
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &logs[static_cast<size_t>(k)], 1), WEFT_OK);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK) << "iteration " << it << " task " << k;
    }
  }
  ASSERT_EQ(weft_graph_end(), WEFT_OK);
  for (int k = 0; k < positions; ++k) {
    std::vector<int64_t> want;
    for (int it = 0; it < n; ++it) want.push_back(it * 100 + k);
    EXPECT_EQ(logs[static_cast<size_t>(k)], want)
        << "task position " << k << ": argument values seen, in execution order";
  }
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.graph_recordings, 1u);
  EXPECT_GT(s.graph_replayed, 0u);
}

// Stats: graph_replayed counts the tasks run from the recording (every round but the recorded
// one), graph_recordings the recorded rounds.
TEST_P(Graph, StatsCountReplayedTasksExactly) {
  struct variant {
    int mode, unroll, iterations;
  };
  for (variant v :
       {variant{WEFT_GRAPH_REEXECUTE, 1, 10}, variant{WEFT_GRAPH_REEXECUTE, 2, 10}, variant{WEFT_GRAPH_TASKITER, 1, 10},
        variant{WEFT_GRAPH_TASKITER, 2, 10}, variant{WEFT_GRAPH_TASKITER, 2, 9}}) {
    ASSERT_EQ(weft_reset_stats(), WEFT_OK);
    weft_graph_options_t o = default_options();
    o.mode = v.mode;
    o.unroll = v.unroll;
    if (v.mode == WEFT_GRAPH_TASKITER) o.iterations = v.iterations;
    cells got, ref;
    got.init(1);
    ref.init(1);
    const bool ti = v.mode == WEFT_GRAPH_TASKITER;
    for (int it = 0; it < v.iterations; ++it)
      for (const auto& t : base_iteration(ti ? it % v.unroll : it)) run_inline(t, ref);
    weft_test::watchdog dog("StatsCountReplayedTasksExactly", 30);
    const std::string where = describe_options(o) + " iterations=" + std::to_string(v.iterations) + ": ";
    ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK) << describe_options(o);
    for (int it = 0; it < (ti ? v.unroll : v.iterations); ++it) {
      dog.step(where + "weft_graph_iteration() for iteration " + std::to_string(it));
      ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
      dog.step(where + "creating the tasks of iteration " + std::to_string(it));
      for (const auto& t : base_iteration(it)) ASSERT_TRUE(create_task(t, got).ok());
    }
    dog.step(where + "weft_graph_end()");
    ASSERT_EQ(weft_graph_end(), WEFT_OK);
    EXPECT_EQ(compare_cells(got, ref), "") << describe_options(o);
    weft_stats_t s = weft_test::stats();
    const uint64_t recorded = 4u * static_cast<uint64_t>(v.unroll);
    EXPECT_EQ(s.graph_replayed, 4u * static_cast<uint64_t>(v.iterations) - recorded)
        << describe_options(o) << " iterations=" << v.iterations << ": 4 tasks per iteration, " << recorded
        << " recorded";
    EXPECT_EQ(s.graph_recordings, 1u) << describe_options(o);
  }
}

// Re-execute mode with unroll 2 and an odd number of iterations: the last round is partial. The
// results must be right (whatever the runtime does with the incomplete round).
TEST_P(Graph, ReexecutePartialLastRound) {
  for (int n : {1, 3, 7}) {
    weft_graph_options_t o = default_options();
    o.unroll = 2;
    cells got, ref;
    got.init(2);
    ref.init(2);
    for (int it = 0; it < n; ++it)
      for (auto t : base_iteration(it)) {
        t.swap = 1;
        t.parity = it % 2;
        run_inline(t, ref);
      }
    ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK);
    for (int it = 0; it < n; ++it) {
      ASSERT_EQ(weft_graph_iteration(), WEFT_OK) << "n=" << n << " iteration " << it;
      for (auto t : base_iteration(it)) {
        t.swap = 1;
        t.parity = it % 2;
        create_result r = create_task(t, got);
        EXPECT_TRUE(r.ok()) << "n=" << n << " iteration " << it << " " << t.describe() << ": " << r.describe();
      }
    }
    int rc = weft_graph_end();
    EXPECT_EQ(rc, WEFT_OK) << "n=" << n << ": " << status_name(rc);
    EXPECT_EQ(compare_cells(got, ref), "") << "n=" << n;
  }
}

// Policy, lookahead and on_change from the environment.
class GraphEnv : public workers_fixture {
 protected:
  weft_test::runtime_config::vars extra() const override {
    return {{"WEFT_GRAPH_POLICY", "iteration"}, {"WEFT_GRAPH_LOOKAHEAD", "1"}};
  }
};
INSTANTIATE_TEST_SUITE_P(Workers, GraphEnv, ::testing::Values(1, 3), workers_name);

TEST_P(GraphEnv, DefaultsFromEnvironmentStillCorrect) {
  weft_test::watchdog dog("GraphEnv", 30);
  for (uint64_t seed : {11u, 12u, 13u}) {
    uint64_t tasks = 0;
    std::string f = run_random(seed, default_options(), 12, tasks, &dog, "seed " + std::to_string(seed));
    EXPECT_EQ(f, "");
  }
}

// =================================================================================================
// 3. No barrier between iterations
// =================================================================================================
struct ev_args {
  long* cell;
  weft_event_t* wait_on;
  weft_event_t* fulfil;
  long k;
  weft_test::error_log* errors;
};
void ev_body(void* p) {
  auto* a = static_cast<ev_args*>(p);
  if (a->wait_on) {
    int rc = weft_event_wait(a->wait_on);
    if (rc != WEFT_OK) a->errors->add("weft_event_wait: " + status_name(rc));
  }
  *a->cell = *a->cell * 3 + a->k + 1;
  if (a->fulfil) {
    int rc = weft_event_fulfill(a->fulfil);
    if (rc != WEFT_OK) a->errors->add("weft_event_fulfill: " + status_name(rc));
  }
}

class GraphNoBarrier : public ::testing::TestWithParam<std::tuple<int, int>> {};

// A_k: inout a; B_k: inout b. A_1 waits for an event that B_2 fulfils. With a barrier between
// iterations, iteration 2 would not start before A_1 ends: a deadlock.
TEST_P(GraphNoBarrier, NextIterationStartsBeforePreviousEnds) {
  const auto [workers, policy] = GetParam();
  weft_test::runtime_config rt({{"WEFT_NUM_THREADS", std::to_string(workers)}});
  ASSERT_TRUE(rt.ok());
  weft_test::watchdog dog("GraphNoBarrier", 30);
  for (int lookahead : {0, 1, 3}) {
    dog.step("lookahead " + std::to_string(lookahead) + " (a hang here means a barrier between iterations)");
    ASSERT_EQ(weft_reset_stats(), WEFT_OK);
    const int n = 6;
    long a = 0, b = 0;
    weft_test::error_log errors;
    weft_event_t* ev = weft_event_create(1);
    ASSERT_NE(ev, nullptr);
    weft_graph_options_t o = default_options();
    o.policy = policy;
    o.lookahead = lookahead;
    ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK);
    for (int k = 0; k < n; ++k) {
      ASSERT_EQ(weft_graph_iteration(), WEFT_OK) << "iteration " << k;
      ev_args aa{&a, k == 1 ? ev : nullptr, nullptr, k, &errors};
      ev_args bb{&b, nullptr, k == 2 ? ev : nullptr, k, &errors};
      weft_task_t* t = weft_task_create(&ev_body, &aa, sizeof aa, 0);
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &a, sizeof a), WEFT_OK);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
      t = weft_task_create(&ev_body, &bb, sizeof bb, 0);
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &b, sizeof b), WEFT_OK);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    }
    ASSERT_EQ(weft_graph_end(), WEFT_OK);
    EXPECT_EQ(weft_event_test(ev), 1);
    EXPECT_EQ(weft_event_destroy(ev), WEFT_OK);
    long want = 0;
    for (int k = 0; k < n; ++k) want = want * 3 + k + 1;
    EXPECT_EQ(a, want) << "lookahead " << lookahead;
    EXPECT_EQ(b, want) << "lookahead " << lookahead;
    EXPECT_EQ(errors.count(), 0) << errors.str();
    weft_stats_t s = weft_test::stats();
    EXPECT_GT(s.graph_replayed, 0u) << "lookahead " << lookahead;
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, GraphNoBarrier,
                         ::testing::Combine(::testing::Values(1, 2), ::testing::Values(WEFT_GRAPH_IMMEDIATE_SUCCESSOR,
                                                                                       WEFT_GRAPH_ITERATION_PRIORITY)),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
                           return "w" + std::to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) == WEFT_GRAPH_ITERATION_PRIORITY ? "_iterprio" : "_immsucc");
                         });

// =================================================================================================
// 3b. One worker runs taskiter rounds inline, until a task blocks or binds an event
// =================================================================================================
// Six tasks a round: T0 inout a0; T1 in a0, inout a1; T2 inout a2; T3 in a2, inout a3; T4 in a1,
// inout a4; T5 inout a5. In round `special`, T2 waits for (or binds) an event that T5 fulfils, in
// the same round or in the next. T5 does not depend on T2, so a worker running rounds in recorded
// order on the producer's stack would wait forever: the round's later tasks must go to the
// scheduler, with counts that still order T3 after T2 (and T4 after T1, which ran before T2 and
// whose descriptor may already be armed for a later round), and the next rounds must still be
// opened while T2 waits.
constexpr int kIlTasks = 6, kIlBlocker = 2, kIlWaiter = 3, kIlFulfiller = 5;
struct il_state {
  long a[kIlTasks] = {1, 2, 3, 4, 5, 6};
  std::atomic<int> runs[kIlTasks] = {};  // per task: rounds run so far (each follows its own last run)
  weft_event_t* events[16] = {};
  int special = -1;
  bool bind = false;        // T2 binds the event instead of waiting for it
  bool next_round = false;  // T5 of round special + 1 fulfils it (else T5 of round special)
  weft_test::error_log errors;
};
struct il_args {
  il_state* s;
  int id;
};
const int il_reads[kIlTasks] = {-1, 0, -1, 2, 1, -1};  // the cell each task reads besides its own
// Task id's update of the cells.
void il_step(long* a, int id) {
  static const long mul[kIlTasks] = {3, 5, 7, 11, 13, 17};
  a[id] = a[id] * mul[id] + (il_reads[id] >= 0 ? a[il_reads[id]] : id + 1);
}
void il_body(void* p) {
  auto* a = static_cast<il_args*>(p);
  il_state& s = *a->s;
  const int k = s.runs[a->id].load();
  const int fulfils = s.special + (s.next_round ? 1 : 0);  // the round whose T5 fulfils the event
  if (a->id == kIlBlocker && k == s.special) {
    int rc = s.bind ? weft_event_bind(s.events[k]) : weft_event_wait(s.events[k]);
    if (rc != WEFT_OK)
      s.errors.add(std::string(s.bind ? "weft_event_bind" : "weft_event_wait") + ": " + status_name(rc));
  }
  if (a->id == kIlWaiter && k == s.special && s.runs[kIlFulfiller].load() <= fulfils)
    s.errors.add("round " + std::to_string(k) + ": T3 ran before T2 completed (T5 had not fulfilled its event)");
  il_step(s.a, a->id);
  s.runs[a->id].store(k + 1);
  if (a->id == kIlFulfiller && k == fulfils) {
    int rc = weft_event_fulfill(s.events[s.special]);
    if (rc != WEFT_OK) s.errors.add("weft_event_fulfill: " + status_name(rc));
  }
}

class GraphInline : public ::testing::TestWithParam<std::tuple<int, bool, bool>> {};

TEST_P(GraphInline, BlockingTaskHandsItsRoundToTheScheduler) {
  const auto [workers, bind, next_round] = GetParam();
  // Inline whatever the tasks' length (by default a recording whose tasks waited long runs the
  // general way).
  weft_test::runtime_config rt({{"WEFT_NUM_THREADS", std::to_string(workers)}, {"WEFT_GRAPH_INLINE", "1"}});
  ASSERT_TRUE(rt.ok());
  weft_test::watchdog dog("GraphInline", 30);
  const int n = 8;
  // Round 0 is recorded (ordinary tasks), 1 is the first replayed, 5 has inline rounds before it.
  for (int special : {0, 1, 5, n - 1}) {
    // The recorded round is followed through a wait (graph.hpp): nothing of round 1 can help it.
    if (next_round && (special == 0 || special == n - 1)) continue;
    for (int lookahead : {0, 1, 3}) {
      dog.step("special round " + std::to_string(special) + (bind ? ", bound event" : ", event wait") +
               (next_round ? " fulfilled by the next round" : "") + ", lookahead " + std::to_string(lookahead) +
               " (a hang here: the round stayed inline, or no later round was opened)");
      il_state s;
      s.special = special;
      s.bind = bind;
      s.next_round = next_round;
      for (int k = 0; k < n; ++k) ASSERT_NE(s.events[k] = weft_event_create(1), nullptr);
      weft_graph_options_t o = default_options();
      o.mode = WEFT_GRAPH_TASKITER;
      o.iterations = n;
      o.lookahead = lookahead;
      ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK);
      ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
      for (int id = 0; id < kIlTasks; ++id) {
        il_args a{&s, id};
        weft_task_t* t = weft_task_create(&il_body, &a, sizeof a, 0);
        ASSERT_NE(t, nullptr);
        if (il_reads[id] >= 0) {
          ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &s.a[il_reads[id]], sizeof(long)), WEFT_OK);
        }
        ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &s.a[id], sizeof(long)), WEFT_OK);
        ASSERT_EQ(weft_task_submit(t), WEFT_OK);
      }
      ASSERT_EQ(weft_graph_end(), WEFT_OK);
      long want[kIlTasks] = {1, 2, 3, 4, 5, 6};
      for (int k = 0; k < n; ++k)
        for (int id = 0; id < kIlTasks; ++id) il_step(want, id);
      for (int i = 0; i < kIlTasks; ++i) {
        EXPECT_EQ(s.a[i], want[i]) << "a" << i << ", special round " << special << ", lookahead " << lookahead;
        EXPECT_EQ(s.runs[i].load(), n) << "T" << i << ", special round " << special << ", lookahead " << lookahead;
      }
      EXPECT_EQ(s.errors.count(), 0) << s.errors.str();
      for (int k = 0; k < n; ++k) EXPECT_EQ(weft_event_destroy(s.events[k]), WEFT_OK);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, GraphInline,
                         ::testing::Combine(::testing::Values(1, 2), ::testing::Bool(), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<int, bool, bool>>& info) {
                           return "w" + std::to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_bind" : "_wait") +
                                  (std::get<2>(info.param) ? "_next_round" : "_same_round");
                         });

// One worker, two chains of long tasks (A: inout a, B: inout b), taskiter. By default rounds whose
// recorded tasks were long run through the scheduler, which follows each chain into the next
// round depth first (what a chain reads stays in cache), so some A_k runs right before A_k+1. Run
// inline (WEFT_GRAPH_INLINE=1) the rounds go strictly in recorded order: A_k B_k A_k+1 ...
struct chain_log {
  std::vector<int> order;  // 2 * iteration + chain, in the order the bodies ran
  int iteration[2] = {0, 0};
};
struct chain_args {
  chain_log* log;
  int chain;
};
void chain_body(void* p) {
  auto* a = static_cast<chain_args*>(p);
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
  while (std::chrono::steady_clock::now() < until) {
  }
  a->log->order.push_back(2 * a->log->iteration[a->chain]++ + a->chain);
}
bool some_chain_runs_on(const std::vector<int>& order, int from) {
  for (std::size_t i = static_cast<std::size_t>(from) + 1; i < order.size(); ++i)
    if (order[i] == order[i - 1] + 2) return true;  // the same chain's next iteration, right after
  return false;
}

TEST(GraphInlineChoice, LongTasksFollowTheirChainsAcrossRounds) {
  for (const char* mode : {"auto", "1"}) {
    weft_test::runtime_config rt({{"WEFT_NUM_THREADS", "1"}, {"WEFT_GRAPH_INLINE", mode}});
    ASSERT_TRUE(rt.ok());
    chain_log log;
    long cells[2] = {0, 0};
    weft_graph_options_t o = default_options();
    o.mode = WEFT_GRAPH_TASKITER;
    o.iterations = 12;
    ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK);
    ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
    for (int c = 0; c < 2; ++c) {
      chain_args a{&log, c};
      weft_task_t* t = weft_task_create(&chain_body, &a, sizeof a, 0);
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &cells[c], sizeof(long)), WEFT_OK);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    }
    ASSERT_EQ(weft_graph_end(), WEFT_OK);
    ASSERT_EQ(log.order.size(), 24u);
    // Past the recorded round (its two tasks ran as ordinary ones).
    if (std::string(mode) == "auto")
      EXPECT_TRUE(some_chain_runs_on(log.order, 2)) << "replayed long tasks ran round after round, in recorded order";
    else
      EXPECT_FALSE(some_chain_runs_on(log.order, 2)) << "WEFT_GRAPH_INLINE=1 must run rounds in recorded order";
  }
}

// =================================================================================================
// 4. Lookahead bound
// =================================================================================================
constexpr int kLaIterations = 14, kLaTasks = 3;
struct la_state {
  std::atomic<int> done[kLaIterations][kLaTasks];
  std::atomic<int> child_done[kLaIterations][kLaTasks];
  long cell[kLaTasks];
};
struct la_args {
  la_state* st;
  int k, i;
};
void la_child(void* p) {
  auto* a = static_cast<la_args*>(p);
  weft_test::spin(30000);
  a->st->child_done[a->k][a->i].store(1, std::memory_order_release);
}
void la_body(void* p) {
  auto* a = static_cast<la_args*>(p);
  weft_test::spin(30000);
  a->st->cell[a->i] += a->k;
  // A child that outlives the body: the task is complete only when it has finished too.
  la_args c = *a;
  weft_task_t* t = weft_task_create(&la_child, &c, sizeof c, 0);
  if (t) weft_task_submit(t);
  a->st->done[a->k][a->i].store(1, std::memory_order_release);
}

class GraphLookahead : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(GraphLookahead, ProducerWaitsForOldRounds) {
  const auto [workers, la] = GetParam();  // la < 0: from WEFT_GRAPH_LOOKAHEAD=-la; 0: chosen per graph
  weft_test::runtime_config::vars vars{{"WEFT_NUM_THREADS", std::to_string(workers)}};
  if (la < 0) vars.push_back({"WEFT_GRAPH_LOOKAHEAD", std::to_string(-la)});
  weft_test::runtime_config rt(vars);
  ASSERT_TRUE(rt.ok());
  // Chosen per graph (docs/api.md): the fewest rounds >= 2 with (L + 1) x tasks per round >= 40 x
  // workers, at most 6. kLaTasks tasks a round never reach 40: 6.
  const int L = la < 0 ? -la : la > 0 ? la : 6;
  weft_test::watchdog dog("GraphLookahead", 30);
  for (int policy : {WEFT_GRAPH_IMMEDIATE_SUCCESSOR, WEFT_GRAPH_ITERATION_PRIORITY}) {
    const std::string where = "policy " + std::to_string(policy) + ": ";
    // Static storage, never reused within a process: should a child outlive the checks below (a
    // bug), it must not write into freed memory (and LeakSanitizer sees no leak).
    static la_state pool[64];
    static int next = 0;
    la_state* st = &pool[next++ % 64];
    for (auto& row : st->done)
      for (auto& x : row) x = 0;
    for (auto& row : st->child_done)
      for (auto& x : row) x = 0;
    for (auto& c : st->cell) c = 0;
    weft_graph_options_t o = default_options();
    o.lookahead = la < 0 ? 0 : la;
    o.policy = policy;
    std::vector<std::string> violations;
    int max_lag = 0;
    ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK);
    for (int k = 0; k < kLaIterations; ++k) {
      dog.step(where + "weft_graph_iteration() for iteration " + std::to_string(k));
      ASSERT_EQ(weft_graph_iteration(), WEFT_OK) << "iteration " << k;
      dog.step(where + "creating the tasks of iteration " + std::to_string(k));
      // Every task of rounds <= k-L-1 has completed (body and children).
      for (int j = 0; j <= k - L - 1; ++j)
        for (int i = 0; i < kLaTasks; ++i) {
          bool d = st->done[j][i].load(std::memory_order_acquire) != 0;
          bool cd = st->child_done[j][i].load(std::memory_order_acquire) != 0;
          if ((!d || !cd) && violations.size() < 10)
            violations.push_back("after weft_graph_iteration() returned for iteration " + std::to_string(k) +
                                 " (lookahead " + std::to_string(L) + "): task " + std::to_string(i) +
                                 " of iteration " + std::to_string(j) +
                                 (d ? " ran, but its child has not finished" : " has not finished"));
        }
      // How far ahead the producer is (information only).
      int oldest_unfinished = k;
      for (int j = 0; j < k; ++j) {
        bool all = true;
        for (int i = 0; i < kLaTasks; ++i) all = all && st->done[j][i].load() && st->child_done[j][i].load();
        if (!all) {
          oldest_unfinished = j;
          break;
        }
      }
      max_lag = std::max(max_lag, k - oldest_unfinished);
      for (int i = 0; i < kLaTasks; ++i) {
        la_args a{st, k, i};
        weft_task_t* t = weft_task_create(&la_body, &a, sizeof a, 0);
        ASSERT_NE(t, nullptr);
        ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &st->cell[i], sizeof(long)), WEFT_OK);
        ASSERT_EQ(weft_task_submit(t), WEFT_OK);
      }
    }
    dog.step(where + "weft_graph_end()");
    ASSERT_EQ(weft_graph_end(), WEFT_OK);
    for (int j = 0; j < kLaIterations; ++j)
      for (int i = 0; i < kLaTasks; ++i)
        EXPECT_EQ(st->done[j][i].load(), 1) << "after weft_graph_end: task " << i << " of iteration " << j;
    // weft_graph_end waits for the graph's tasks like a taskwait, not for their children: let the
    // children of the last rounds finish (scheduling points) before checking them.
    dog.step(where + "waiting for the children of the last rounds (weft_taskyield)");
    auto all_children_done = [&] {
      for (int j = 0; j < kLaIterations; ++j)
        for (int i = 0; i < kLaTasks; ++i)
          if (!st->child_done[j][i].load(std::memory_order_acquire)) return false;
      return true;
    };
    auto t0 = std::chrono::steady_clock::now();
    while (!all_children_done() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20)) weft_taskyield();
    dog.step(where + "checks");
    std::string all;
    for (auto& v : violations) all += "  " + v + "\n";
    EXPECT_TRUE(violations.empty()) << "lookahead bound violated (policy " << policy << "):\n" << all;
    for (int j = 0; j < kLaIterations; ++j)
      for (int i = 0; i < kLaTasks; ++i)
        EXPECT_EQ(st->child_done[j][i].load(), 1)
            << "20 s after weft_graph_end: child of task " << i << " of iteration " << j << " has not finished";
    for (int i = 0; i < kLaTasks; ++i) EXPECT_EQ(st->cell[i], kLaIterations * (kLaIterations - 1) / 2);
    std::printf("[ info     ] workers %d lookahead %d policy %d: producer ran up to %d iterations ahead\n", workers, L,
                policy, max_lag);
    // One worker runs no task while the producer creates rounds 1..L (none of them waits), so it
    // reaches the bound: a lookahead chosen per graph above the fixed default of 2 shows here.
    if (la == 0 && workers == 1) {
      EXPECT_EQ(max_lag, L) << where << "the lookahead chosen for rounds of " << kLaTasks << " tasks";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, GraphLookahead,
                         ::testing::Combine(::testing::Values(1, 2, 4), ::testing::Values(1, 3, -1, 0)),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
                           int la = std::get<1>(info.param);
                           return "w" + std::to_string(std::get<0>(info.param)) +
                                  (la < 0 ? "_env" + std::to_string(-la)
                                   : la   ? "_L" + std::to_string(la)
                                          : std::string("_auto"));
                         });

// =================================================================================================
// 5. Structure changes
// =================================================================================================
enum class change {
  function,      // t2 runs fnA instead of fnB                -> create fails
  address,       // t1 reads c4 instead of c2                 -> submit fails
  type,          // t1 accesses c2 inout instead of in        -> submit fails
  more_access,   // t3 also reads c1                          -> submit fails
  fewer_access,  // t3 does not read c2                       -> submit fails
  more_tasks,    // a fifth task                              -> create fails
  fewer_tasks,   // no t3                                     -> next weft_graph_iteration fails
  fewer_last,    // no t3 in the last iteration               -> weft_graph_end fails
  flags,         // t1 created WEFT_TASK_TIED: not a change (tied is honoured per iteration); unused
  args_size,     // t2 with a bigger argument block           -> create fails
};
const char* change_name(change c) {
  switch (c) {
    case change::function:
      return "function";
    case change::address:
      return "address";
    case change::type:
      return "type";
    case change::more_access:
      return "more_access";
    case change::fewer_access:
      return "fewer_access";
    case change::more_tasks:
      return "more_tasks";
    case change::fewer_tasks:
      return "fewer_tasks";
    case change::fewer_last:
      return "fewer_last";
    case change::flags:
      return "flags";
    case change::args_size:
      return "args_size";
  }
  return "?";
}

constexpr int kChangeIterations = 10;
int change_iteration(change c) {
  return c == change::fewer_last ? kChangeIterations - 1 : 5;
}

// The tasks of iteration `it`, with the change applied at its iteration. `changed` receives the
// index of the changed (or added, or first missing) task in that iteration.
std::vector<tspec> changed_iteration(change c, int it, int* changed = nullptr) {
  std::vector<tspec> v = base_iteration(it);
  if (it != change_iteration(c)) return v;
  int idx = -1;
  switch (c) {
    case change::function:
      v[2].fn = fnA;
      idx = 2;
      break;
    case change::address:
      v[1].accs[1].cell = 4;
      idx = 1;
      break;
    case change::type:
      v[1].accs[1].type = WEFT_DEP_INOUT;
      idx = 1;
      break;
    case change::more_access:
      v[3].accs.push_back({0, 1, WEFT_DEP_IN});
      idx = 3;
      break;
    case change::fewer_access:
      v[3].accs.pop_back();
      idx = 3;
      break;
    case change::more_tasks: {
      tspec t;
      t.fn = fnA;
      t.id = 4;
      t.value = it * 10 + 3;
      t.accs = {{0, 4, WEFT_DEP_INOUT}, {0, 3, WEFT_DEP_IN}};
      v.push_back(t);
      idx = 4;
      break;
    }
    case change::fewer_tasks:
    case change::fewer_last:
      v.pop_back();
      idx = 3;
      break;
    case change::flags:
      v[1].flags = WEFT_TASK_TIED;
      idx = 1;
      break;
    case change::args_size:
      v[2].big_args = true;
      idx = 2;
      break;
  }
  if (changed) *changed = idx;
  return v;
}

enum class fail_point { create, submit, iteration, end };
fail_point expected_fail_point(change c) {
  switch (c) {
    case change::function:
    case change::more_tasks:
    case change::flags:
    case change::args_size:
      return fail_point::create;
    case change::address:
    case change::type:
    case change::more_access:
    case change::fewer_access:
      return fail_point::submit;
    case change::fewer_tasks:
      return fail_point::iteration;
    case change::fewer_last:
      return fail_point::end;
  }
  return fail_point::end;
}

struct change_param {
  change what;
  bool error_mode;  // WEFT_GRAPH_ERROR (else rerecord)
  bool from_env;    // through WEFT_GRAPH_ON_CHANGE instead of the options
  int workers;
};
std::string change_param_name(const change_param& p) {
  return std::string(change_name(p.what)) + (p.error_mode ? "_error" : "_rerecord") + (p.from_env ? "_env" : "") +
         "_w" + std::to_string(p.workers);
}
void PrintTo(const change_param& p, std::ostream* os) {
  *os << change_param_name(p);
}

std::vector<change_param> change_params() {
  std::vector<change_param> v;
  for (change c : {change::function, change::address, change::type, change::more_access, change::fewer_access,
                   change::more_tasks, change::fewer_tasks, change::fewer_last, change::args_size})
    for (bool err : {false, true})
      for (int w : {1, 4}) v.push_back({c, err, false, w});
  v.push_back({change::address, true, true, 2});
  v.push_back({change::more_tasks, true, true, 2});
  v.push_back({change::type, false, true, 2});
  return v;
}

class GraphChange : public ::testing::TestWithParam<change_param> {};

// Captures what the runtime writes on stderr (fd 2) while it lives.
class stderr_capture {
 public:
  stderr_capture() { ::testing::internal::CaptureStderr(); }
  std::string take() {
    if (!taken_) {
      taken_ = true;
      text_ = ::testing::internal::GetCapturedStderr();
    }
    return text_;
  }
  ~stderr_capture() { take(); }

 private:
  bool taken_ = false;
  std::string text_;
};

TEST_P(GraphChange, DetectedAndHandled) {
  const change_param& p = GetParam();
  weft_test::runtime_config::vars vars{{"WEFT_NUM_THREADS", std::to_string(p.workers)}};
  if (p.from_env) vars.push_back({"WEFT_GRAPH_ON_CHANGE", p.error_mode ? "error" : "rerecord"});
  weft_test::runtime_config rt(vars);
  ASSERT_TRUE(rt.ok());
  ASSERT_EQ(weft_reset_stats(), WEFT_OK);
  const int at = change_iteration(p.what);
  int changed_task = -1;
  changed_iteration(p.what, at, &changed_task);

  // The loop on the runtime; every call's answer kept.
  cells got;
  got.init(7);
  std::vector<std::string> unexpected;  // calls that failed where nothing should
  int iteration_rc[kChangeIterations] = {};
  int end_rc = -1;
  create_result changed_result;
  std::string err_text;
  {
    stderr_capture cap;
    weft_graph_options_t o = default_options();
    if (!p.from_env) o.on_change = p.error_mode ? WEFT_GRAPH_ERROR : WEFT_GRAPH_RERECORD;
    int rc = weft_graph_begin_with(&o);
    if (rc != WEFT_OK) unexpected.push_back("weft_graph_begin_with: " + status_name(rc));
    for (int it = 0; it < kChangeIterations && rc == WEFT_OK; ++it) {
      iteration_rc[it] = weft_graph_iteration();
      std::vector<tspec> tasks = changed_iteration(p.what, it);
      for (size_t k = 0; k < tasks.size(); ++k) {
        create_result r = create_task(tasks[k], got);
        if (it == at && static_cast<int>(k) == changed_task) {
          changed_result = r;
          continue;
        }
        if (!r.ok())
          unexpected.push_back("iteration " + std::to_string(it) + " task " + std::to_string(k) + " " +
                               tasks[k].describe() + ": " + r.describe());
      }
    }
    end_rc = weft_graph_end();
    err_text = cap.take();
  }

  // Sequential references: the whole changed program, and the same without the changed task
  // (for a task whose submit failed: the runtime may or may not run it).
  auto reference = [&](bool without_changed) {
    auto s = std::make_unique<cells>();
    s->init(7);
    for (int it = 0; it < kChangeIterations; ++it) {
      std::vector<tspec> tasks = changed_iteration(p.what, it);
      for (size_t k = 0; k < tasks.size(); ++k) {
        if (without_changed && it == at && static_cast<int>(k) == changed_task) continue;
        run_inline(tasks[k], *s);
      }
    }
    return s;
  };
  auto ref_all = reference(false);
  auto ref_without = reference(true);
  weft_stats_t st = weft_test::stats();
  const std::string ctx = std::string("change '") + change_name(p.what) + "' at iteration " + std::to_string(at) +
                          ", task " + std::to_string(changed_task) + ", " +
                          (p.error_mode ? "on_change=error" : "on_change=rerecord") + (p.from_env ? " (env)" : "") +
                          ", " + std::to_string(p.workers) + " workers";

  std::ostringstream rcs;
  rcs << "weft_graph_iteration results:";
  for (int it = 0; it < kChangeIterations; ++it) rcs << " " << it << ":" << iteration_rc[it];
  rcs << "; weft_graph_end: " << status_name(end_rc) << "; changed task: " << changed_result.describe()
      << "\n--- stderr ---\n"
      << err_text;

  EXPECT_TRUE(unexpected.empty()) << ctx << ": calls failed:\n  " << [&] {
    std::string s;
    for (auto& u : unexpected) s += u + "\n  ";
    return s;
  }() << rcs.str();
  EXPECT_GT(st.graph_replayed, 0u) << ctx << ": iterations 1.." << at - 1 << " should have been replayed";

  if (!p.error_mode) {
    for (int it = 0; it < kChangeIterations; ++it)
      EXPECT_EQ(iteration_rc[it], WEFT_OK) << ctx << ": weft_graph_iteration at iteration " << it << "\n" << rcs.str();
    if (expected_fail_point(p.what) == fail_point::create || expected_fail_point(p.what) == fail_point::submit) {
      EXPECT_TRUE(changed_result.ok()) << ctx << ": the changed task: " << changed_result.describe();
    }
    EXPECT_EQ(end_rc, WEFT_OK) << ctx << ": " << status_name(end_rc);
    EXPECT_EQ(compare_cells(got, *ref_all), "") << ctx << ": results differ from the sequential execution\n"
                                                << rcs.str();
    if (p.what != change::fewer_last) {
      EXPECT_EQ(st.graph_recordings, 2u) << ctx << ": one recording, then one more after the change";
    } else {
      EXPECT_EQ(st.graph_recordings, 1u) << ctx
                                         << ": the change is seen by weft_graph_end: no iteration to record again";
    }
    return;
  }

  // Error mode.
  const fail_point fp = expected_fail_point(p.what);
  bool changed_task_submitted_ambiguous = false;
  switch (fp) {
    case fail_point::create:
      EXPECT_FALSE(changed_result.created)
          << ctx << ": weft_task_create of the changed task should return NULL (" << changed_result.describe() << ")";
      if (!changed_result.created) {
        EXPECT_EQ(changed_result.create_error, WEFT_ERR_GRAPH_CHANGED) << ctx << ": weft_last_error()";
      }
      break;
    case fail_point::submit:
      EXPECT_TRUE(changed_result.created) << ctx << ": " << changed_result.describe();
      EXPECT_EQ(changed_result.depend_rc, WEFT_OK) << ctx << ": weft_task_depend (the change is reported by submit)";
      EXPECT_EQ(changed_result.submit_rc, WEFT_ERR_GRAPH_CHANGED) << ctx << ": weft_task_submit of the changed task";
      changed_task_submitted_ambiguous = true;
      break;
    case fail_point::iteration:
      EXPECT_EQ(iteration_rc[at + 1], WEFT_ERR_GRAPH_CHANGED)
          << ctx << ": weft_graph_iteration after the iteration with fewer tasks\n"
          << rcs.str();
      break;
    case fail_point::end:
      break;
  }
  for (int it = 0; it <= at; ++it)
    EXPECT_EQ(iteration_rc[it], WEFT_OK) << ctx << ": weft_graph_iteration at iteration " << it
                                         << " (before the change)";
  for (int it = at + (fp == fail_point::iteration ? 2 : 1); it < kChangeIterations; ++it)
    EXPECT_TRUE(iteration_rc[it] == WEFT_OK || iteration_rc[it] == WEFT_ERR_GRAPH_CHANGED)
        << ctx << ": weft_graph_iteration at iteration " << it << " returned " << status_name(iteration_rc[it]);
  EXPECT_EQ(end_rc, WEFT_ERR_GRAPH_CHANGED) << ctx << ": weft_graph_end after a change in error mode\n" << rcs.str();

  // The tasks that were created and submitted ran, in the right order.
  if (fp == fail_point::create && changed_result.ok()) {
    // The change went unnoticed: then at least the results must be those of the whole program.
    EXPECT_EQ(compare_cells(got, *ref_all), "") << ctx << ": results differ from the sequential execution\n"
                                                << rcs.str();
  } else if (fp == fail_point::create) {
    EXPECT_EQ(compare_cells(got, *ref_without), "")
        << ctx << ": results differ from the sequential execution without the task whose create failed\n"
        << rcs.str();
  } else if (changed_task_submitted_ambiguous) {
    std::string d_all = compare_cells(got, *ref_all), d_without = compare_cells(got, *ref_without);
    EXPECT_TRUE(d_all.empty() || d_without.empty())
        << ctx << ": results match neither the sequential execution with the changed task (whose submit failed)"
        << " nor the one without it\nwith it:\n"
        << d_all << "without it:\n"
        << d_without << rcs.str();
    std::printf("[ info     ] %s: the task whose submit returned %s %s\n", ctx.c_str(),
                status_name(changed_result.submit_rc).c_str(),
                d_all.empty() && d_without.empty() ? "(no way to tell)"
                : d_all.empty()                    ? "ran"
                                                   : "did not run");
  } else {
    EXPECT_EQ(compare_cells(got, *ref_all), "") << ctx << ": results differ from the sequential execution\n"
                                                << rcs.str();
  }
  EXPECT_EQ(st.graph_recordings, 1u) << ctx << ": error mode does not record again";

  // The message names the iteration (the loop index, counted from 0) and the task. (Only checked
  // when some call reported the change: an undetected change has failed above already.)
  const bool reported =
      end_rc == WEFT_ERR_GRAPH_CHANGED || changed_result.create_error == WEFT_ERR_GRAPH_CHANGED ||
      changed_result.submit_rc == WEFT_ERR_GRAPH_CHANGED ||
      std::find(std::begin(iteration_rc), std::end(iteration_rc), WEFT_ERR_GRAPH_CHANGED) != std::end(iteration_rc);
  if (!reported) return;
  // The number as a word of its own (not a digit of another number).
  auto names_number = [](const std::string& text, int n) {
    const std::string digits = std::to_string(n);
    for (std::size_t at_pos = text.find(digits); at_pos != std::string::npos; at_pos = text.find(digits, at_pos + 1)) {
      bool before = at_pos == 0 || !std::isdigit(static_cast<unsigned char>(text[at_pos - 1]));
      std::size_t end = at_pos + digits.size();
      bool after = end == text.size() || !std::isdigit(static_cast<unsigned char>(text[end]));
      if (before && after) return true;
    }
    return false;
  };
  std::string lower = err_text;
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  EXPECT_NE(lower.find("iteration"), std::string::npos) << ctx << ": stderr does not mention the iteration:\n"
                                                        << err_text;
  EXPECT_TRUE(names_number(err_text, at)) << ctx << ": stderr does not name iteration " << at << ":\n" << err_text;
  EXPECT_NE(lower.find("task"), std::string::npos) << ctx << ": stderr does not mention the task:\n" << err_text;
}

INSTANTIATE_TEST_SUITE_P(Changes, GraphChange, ::testing::ValuesIn(change_params()),
                         [](const ::testing::TestParamInfo<change_param>& info) {
                           return change_param_name(info.param);
                         });

// Undeferred tasks inside a graph iteration: the graph stops replaying, results stay right.
// Two tasks built at once, the later one submitted first, and a taskwait before the earlier one is
// submitted. Dependences follow the order of submission (the recording too), so a replay that
// gave each task the recorded slot of its creation would run them in the wrong order: weft must
// see the other order, and the earlier task must not run, nor be counted, before its submit.
struct iv_args {
  long* cell;
  long k;
};
void iv_body(void* p) {
  auto* a = static_cast<iv_args*>(p);
  *a->cell = *a->cell * 3 + a->k;
}
TEST_P(Graph, TasksSubmittedInAnotherOrderThanCreated) {
  for (bool swap_every_iteration : {true, false}) {
    long x = 1, want = 1;
    const int n = 12;
    ASSERT_EQ(weft_graph_begin(), WEFT_OK);
    for (int it = 0; it < n; ++it) {
      ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
      // Swapped in every iteration, or only in iteration 7 (the others replay the recording).
      const bool swap = swap_every_iteration || it == 7;
      iv_args first{&x, it}, second{&x, 100 + it};
      weft_task_t* a = weft_task_create(&iv_body, &first, sizeof first, 0);
      weft_task_t* b = weft_task_create(&iv_body, &second, sizeof second, 0);
      ASSERT_NE(a, nullptr);
      ASSERT_NE(b, nullptr);
      ASSERT_EQ(weft_task_depend(a, WEFT_DEP_INOUT, &x, sizeof x), WEFT_OK);
      ASSERT_EQ(weft_task_depend(b, WEFT_DEP_INOUT, &x, sizeof x), WEFT_OK);
      ASSERT_EQ(weft_task_submit(swap ? b : a), WEFT_OK);
      ASSERT_EQ(weft_taskwait(), WEFT_OK);
      const long after_one = want * 3 + (swap ? 100 + it : it);
      EXPECT_EQ(x, after_one) << "iteration " << it << ": the task not yet submitted ran, or the submitted one did not";
      ASSERT_EQ(weft_task_submit(swap ? a : b), WEFT_OK);
      want = after_one * 3 + (swap ? it : 100 + it);
    }
    ASSERT_EQ(weft_graph_end(), WEFT_OK);
    EXPECT_EQ(x, want) << (swap_every_iteration ? "swapped every iteration" : "swapped once");
  }
}

TEST_P(Graph, UndeferredTaskInsideIteration) {
  for (int at : {0, 1, 5}) {
    cells got, ref;
    got.init(3);
    ref.init(3);
    auto iteration = [&](int it) {
      auto v = base_iteration(it);
      if (it == at) v[1].flags = WEFT_TASK_UNDEFERRED;
      return v;
    };
    for (int it = 0; it < 10; ++it)
      for (const auto& t : iteration(it)) run_inline(t, ref);
    ASSERT_EQ(weft_graph_begin(), WEFT_OK);
    for (int it = 0; it < 10; ++it) {
      int rc = weft_graph_iteration();
      EXPECT_EQ(rc, WEFT_OK) << "undeferred at " << at << ", iteration " << it << ": " << status_name(rc);
      for (const auto& t : iteration(it)) {
        create_result r = create_task(t, got);
        EXPECT_TRUE(r.ok()) << "undeferred at " << at << ", iteration " << it << " " << t.describe() << ": "
                            << r.describe();
      }
    }
    int rc = weft_graph_end();
    EXPECT_EQ(rc, WEFT_OK) << "undeferred at " << at << ": " << status_name(rc);
    EXPECT_EQ(compare_cells(got, ref), "") << "undeferred task at iteration " << at;
  }
}

// Argument blocks over WEFT_INLINE_ARGS_SIZE (kept in a side buffer) in both modes.
TEST_P(Graph, LargeArgumentBlocks) {
  for (int mode : {WEFT_GRAPH_REEXECUTE, WEFT_GRAPH_TASKITER})
    for (int unroll : {1, 2}) {
      const int n = 9;
      const bool ti = mode == WEFT_GRAPH_TASKITER;
      auto iteration = [&](int it) {
        auto v = base_iteration(it);
        v[0].big_args = true;
        v[2].big_args = true;
        return v;
      };
      cells got, ref;
      got.init(8);
      ref.init(8);
      for (int it = 0; it < n; ++it)
        for (const auto& t : iteration(ti ? it % unroll : it)) run_inline(t, ref);
      weft_graph_options_t o = default_options();
      o.mode = mode;
      o.unroll = unroll;
      if (ti) o.iterations = n;
      weft_test::watchdog dog("LargeArgumentBlocks " + describe_options(o), 30);
      ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK);
      for (int it = 0; it < (ti ? unroll : n); ++it) {
        ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
        for (const auto& t : iteration(it)) {
          create_result r = create_task(t, got);
          EXPECT_TRUE(r.ok()) << describe_options(o) << " iteration " << it << " " << t.describe() << ": "
                              << r.describe();
        }
      }
      ASSERT_EQ(weft_graph_end(), WEFT_OK) << describe_options(o);
      EXPECT_EQ(compare_cells(got, ref), "")
          << describe_options(o) << ", tasks t0 and t2 with " << sizeof(rargs_big) << "-byte argument blocks";
    }
}

// A taskgroup around the whole graph waits for every descendant: the children that persistent
// tasks leave running (no taskwait in the task) included.
struct tg_args {
  std::atomic<int>* child_done;
  long* cell;
  int64_t value;
};
void tg_child(void* p) {
  auto* a = static_cast<tg_args*>(p);
  weft_test::spin(20000);
  a->child_done->fetch_add(1, std::memory_order_release);
}
void tg_body(void* p) {
  auto* a = static_cast<tg_args*>(p);
  *a->cell += a->value;
  tg_args c = *a;
  weft_task_t* t = weft_task_create(&tg_child, &c, sizeof c, 0);
  if (t) weft_task_submit(t);
}

TEST_P(Graph, TaskgroupAroundGraphWaitsForChildrenOfPersistentTasks) {
  for (int mode : {WEFT_GRAPH_REEXECUTE, WEFT_GRAPH_TASKITER}) {
    const int n = 10, m = 3;
    const bool ti = mode == WEFT_GRAPH_TASKITER;
    // Static storage, never reused within a process: a child that outlives the taskgroup (the bug
    // checked here) must not write into freed memory.
    static std::atomic<int> pool[64];
    static int next = 0;
    std::atomic<int>* child_done = &pool[next++ % 64];
    child_done->store(0);
    long cell[m] = {0, 0, 0};
    weft_graph_options_t o = default_options();
    o.mode = mode;
    if (ti) o.iterations = n;
    weft_test::watchdog dog(std::string("TaskgroupAroundGraph ") + (ti ? "taskiter" : "reexecute"), 30);
    ASSERT_EQ(weft_taskgroup_begin(), WEFT_OK);
    ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK);
    for (int it = 0; it < (ti ? 1 : n); ++it) {
      ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
      for (int i = 0; i < m; ++i) {
        tg_args a{child_done, &cell[i], it + 1};
        weft_task_t* t = weft_task_create(&tg_body, &a, sizeof a, 0);
        ASSERT_NE(t, nullptr);
        ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &cell[i], sizeof(long)), WEFT_OK);
        ASSERT_EQ(weft_task_submit(t), WEFT_OK);
      }
    }
    ASSERT_EQ(weft_graph_end(), WEFT_OK);
    ASSERT_EQ(weft_taskgroup_end(), WEFT_OK);
    EXPECT_EQ(child_done->load(std::memory_order_acquire), n * m)
        << (ti ? "taskiter" : "reexecute") << ": children of persistent tasks finished when the enclosing "
        << "taskgroup ended (every descendant must have)";
    for (int i = 0; i < m; ++i) EXPECT_EQ(cell[i], ti ? n : n * (n + 1) / 2) << "cell " << i;
    // Let stragglers finish before the next round reuses the stack.
    auto t0 = std::chrono::steady_clock::now();
    while (child_done->load() < n * m && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
      weft_taskyield();
  }
}

// Tasks created WEFT_TASK_TIED resume on the worker they started on after a wait, replayed too.
struct tied_args {
  std::atomic<int>* moved;
  std::atomic<int>* waits;
  long* cell;
  int64_t value;
};
void tied_child(void*) {
  weft_test::spin(5000);
}
void tied_body(void* p) {
  auto* a = static_cast<tied_args*>(p);
  const int before = weft_worker_id();
  for (int c = 0; c < 2; ++c) {
    weft_task_t* t = weft_task_create(&tied_child, nullptr, 0, 0);
    if (t) weft_task_submit(t);
  }
  weft_taskwait();
  a->waits->fetch_add(1);
  if (weft_worker_id() != before) a->moved->fetch_add(1);
  *a->cell += a->value;
}

TEST_P(Graph, TiedTasksStayTiedWhenReplayed) {
  for (int mode : {WEFT_GRAPH_REEXECUTE, WEFT_GRAPH_TASKITER}) {
    const bool ti = mode == WEFT_GRAPH_TASKITER;
    const int n = 30, m = 6;
    std::atomic<int> moved{0}, waits{0};
    long cell[m] = {};
    weft_graph_options_t o = default_options();
    o.mode = mode;
    if (ti) o.iterations = n;
    weft_test::watchdog dog("TiedTasksStayTiedWhenReplayed", 30);
    const std::string where = describe_options(o) + ": ";
    ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK);
    for (int it = 0; it < (ti ? 1 : n); ++it) {
      dog.step(where + "weft_graph_iteration() for iteration " + std::to_string(it));
      ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
      dog.step(where + "creating the tasks of iteration " + std::to_string(it));
      for (int i = 0; i < m; ++i) {
        tied_args a{&moved, &waits, &cell[i], 1};
        weft_task_t* t = weft_task_create(&tied_body, &a, sizeof a, WEFT_TASK_TIED);
        ASSERT_NE(t, nullptr);
        ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &cell[i], sizeof(long)), WEFT_OK);
        ASSERT_EQ(weft_task_submit(t), WEFT_OK);
      }
    }
    dog.step(where + "weft_graph_end()");
    ASSERT_EQ(weft_graph_end(), WEFT_OK);
    EXPECT_EQ(waits.load(), n * m);
    EXPECT_EQ(moved.load(), 0) << (ti ? "taskiter" : "reexecute") << ": " << moved.load() << " of " << n * m
                               << " WEFT_TASK_TIED tasks resumed on another worker after their taskwait";
    for (int i = 0; i < m; ++i) EXPECT_EQ(cell[i], n);
  }
  // For comparison (information only): the same tasks untied and without a graph.
  std::atomic<int> moved{0}, waits{0};
  long cell[6] = {};
  for (int it = 0; it < 30; ++it)
    for (int i = 0; i < 6; ++i) {
      tied_args a{&moved, &waits, &cell[i], 1};
      weft_task_t* t = weft_task_create(&tied_body, &a, sizeof a, 0);
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &cell[i], sizeof(long)), WEFT_OK);
      ASSERT_EQ(weft_task_submit(t), WEFT_OK);
    }
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  std::printf("[ info     ] untied tasks outside a graph: %d of %d resumed on another worker\n", moved.load(),
              waits.load());
}

// =================================================================================================
// 6. Taskiter
// =================================================================================================
struct ti_args {
  uint64_t* x;
  std::vector<int>* order;
  std::atomic<int>* count;
  int64_t value;
};
void ti_body(void* p) {
  auto* a = static_cast<ti_args*>(p);
  weft_test::spin(100);
  *a->x = *a->x * 31 + static_cast<uint64_t>(a->value);
  a->order->push_back(static_cast<int>(a->value));
  a->count->fetch_add(1);
}

// Fixed count with unroll 2 and an odd total: the last round runs only sub-iteration 0.
TEST_P(Graph, TaskiterFixedCountPartialLastRound) {
  for (int total : {2, 3, 7, 8}) {
    uint64_t x = 5, y = 9;
    std::vector<int> order_x, order_y;
    std::atomic<int> count0{0}, count1{0};
    weft_graph_options_t o = default_options();
    o.mode = WEFT_GRAPH_TASKITER;
    o.unroll = 2;
    o.iterations = total;
    ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK) << describe_options(o);
    for (int sub = 0; sub < 2; ++sub) {
      ASSERT_EQ(weft_graph_iteration(), WEFT_OK) << "recorded iteration " << sub;
      // sub-iteration 0: value 1 on x, 10 on y; sub-iteration 1: value 2 on x, 20 on y
      ti_args ax{&x, &order_x, sub == 0 ? &count0 : &count1, sub + 1};
      ti_args ay{&y, &order_y, sub == 0 ? &count0 : &count1, 10 * (sub + 1)};
      for (ti_args* a : {&ax, &ay}) {
        weft_task_t* t = weft_task_create(&ti_body, a, sizeof *a, 0);
        ASSERT_NE(t, nullptr);
        ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, a->x, sizeof(uint64_t)), WEFT_OK);
        ASSERT_EQ(weft_task_submit(t), WEFT_OK);
      }
    }
    int rc = weft_graph_end();
    ASSERT_EQ(rc, WEFT_OK) << "total " << total << ": " << status_name(rc);
    uint64_t wx = 5, wy = 9;
    std::vector<int> want_x, want_y;
    for (int it = 0; it < total; ++it) {
      int v = it % 2 + 1;
      wx = wx * 31 + static_cast<uint64_t>(v);
      wy = wy * 31 + static_cast<uint64_t>(10 * v);
      want_x.push_back(v);
      want_y.push_back(10 * v);
    }
    EXPECT_EQ(order_x, want_x) << "total " << total << ": sub-iterations run on x, in order";
    EXPECT_EQ(order_y, want_y) << "total " << total << ": sub-iterations run on y, in order";
    EXPECT_EQ(x, wx) << "total " << total;
    EXPECT_EQ(y, wy) << "total " << total;
    EXPECT_EQ(count0.load(), 2 * ((total + 1) / 2)) << "total " << total << ": runs of sub-iteration 0's tasks";
    EXPECT_EQ(count1.load(), 2 * (total / 2)) << "total " << total << ": runs of sub-iteration 1's tasks";
  }
}

// Dynamic trip count: the condition reads a value the round's tasks wrote.
struct dyn_state {
  uint64_t x = 0;
  long steps = 0;
  uint64_t y[3] = {1, 2, 3};
  std::atomic<long> runs{0};
  long cond_calls = 0;
  int tasks_per_round = 0;
  weft_test::error_log errors;
};
struct dyn_args {
  dyn_state* s;
  int role;  // 0: x = f(x); 1: steps++ (after x); 2..4: y[role-2] update
  int sub;
};
uint64_t dyn_f(uint64_t x, int sub) {
  return x * 6364136223846793005ull + 1442695040888963407ull + static_cast<uint64_t>(sub);
}
bool dyn_continue(uint64_t x) {
  return (x >> 20) % 23 != 0;
}
void dyn_body(void* p) {
  auto* a = static_cast<dyn_args*>(p);
  weft_test::spin(50);
  switch (a->role) {
    case 0:
      a->s->x = dyn_f(a->s->x, a->sub);
      break;
    case 1:
      a->s->steps += 1;
      break;
    default:
      a->s->y[a->role - 2] = a->s->y[a->role - 2] * 7 + static_cast<uint64_t>(a->sub);
  }
  a->s->runs.fetch_add(1);
}
int dyn_condition(void* arg) {
  auto* s = static_cast<dyn_state*>(arg);
  s->cond_calls += 1;
  long runs = s->runs.load();
  if (runs != s->cond_calls * s->tasks_per_round)
    s->errors.add("condition call " + std::to_string(s->cond_calls) + ": " + std::to_string(runs) +
                  " task runs so far, expected " + std::to_string(s->cond_calls * s->tasks_per_round) +
                  " (all tasks of the finished rounds, none of the next)");
  return dyn_continue(s->x) ? 1 : 0;
}

TEST_P(Graph, TaskiterDataDependentTripCount) {
  for (int unroll : {1, 2})
    for (uint64_t start : {1ull, 77ull, 12345ull}) {
      // Sequential: rounds until the condition fails.
      uint64_t x = start;
      long rounds = 0;
      long steps = 0;
      uint64_t y[3] = {1, 2, 3};
      do {
        for (int sub = 0; sub < unroll; ++sub) {
          x = dyn_f(x, sub);
          ++steps;
          for (int j = 0; j < 3; ++j) y[j] = y[j] * 7 + static_cast<uint64_t>(sub);
        }
        ++rounds;
      } while (dyn_continue(x) && rounds < 100000);
      ASSERT_LT(rounds, 100000);

      auto s = std::make_unique<dyn_state>();
      s->x = start;
      s->tasks_per_round = 5 * unroll;
      weft_graph_options_t o = default_options();
      o.mode = WEFT_GRAPH_TASKITER;
      o.unroll = unroll;
      o.iterations = -1;
      o.condition = &dyn_condition;
      o.condition_arg = s.get();
      ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK) << describe_options(o);
      for (int sub = 0; sub < unroll; ++sub) {
        ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
        for (int role = 0; role < 5; ++role) {
          dyn_args a{s.get(), role, sub};
          weft_task_t* t = weft_task_create(&dyn_body, &a, sizeof a, 0);
          ASSERT_NE(t, nullptr);
          if (role == 0) {
            ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &s->x, sizeof s->x), WEFT_OK);
          } else if (role == 1) {
            ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &s->x, sizeof s->x), WEFT_OK);
            ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &s->steps, sizeof s->steps), WEFT_OK);
          } else {
            ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &s->y[role - 2], sizeof(uint64_t)), WEFT_OK);
          }
          ASSERT_EQ(weft_task_submit(t), WEFT_OK);
        }
      }
      int rc = weft_graph_end();
      const std::string ctx = "unroll " + std::to_string(unroll) + ", start " + std::to_string(start) +
                              ", expected rounds " + std::to_string(rounds);
      ASSERT_EQ(rc, WEFT_OK) << ctx << ": " << status_name(rc);
      EXPECT_EQ(s->errors.count(), 0) << ctx << ":\n" << s->errors.str();
      EXPECT_EQ(s->cond_calls, rounds) << ctx << ": condition calls (one after each round)";
      EXPECT_EQ(s->runs.load(), rounds * 5 * unroll)
          << ctx << ": task runs (tasks of a round after the false condition ran?)";
      EXPECT_EQ(s->steps, steps) << ctx;
      EXPECT_EQ(s->x, x) << ctx;
      for (int j = 0; j < 3; ++j) EXPECT_EQ(s->y[j], y[j]) << ctx << " y[" << j << "]";
    }
}

// =================================================================================================
// 7. Children inside persistent tasks
// =================================================================================================
struct child_args {
  uint64_t* in;
  uint64_t* out;
  int64_t add;
};
void child_body(void* p) {
  auto* a = static_cast<child_args*>(p);
  weft_test::spin(100);
  *a->out = *a->out * 5 + *a->in + static_cast<uint64_t>(a->add);
}
struct parent_args {
  uint64_t* own;
  uint64_t* other;  // read
  int64_t value;
  weft_test::error_log* errors;
};
void parent_body(void* p) {
  auto* a = static_cast<parent_args*>(p);
  uint64_t t1 = *a->own, t2 = 3;
  // child 1: t1 = t1*5 + other + value;  child 2 (after child 1): t2 = t2*5 + t1 + 1
  child_args c1{a->other, &t1, a->value};
  child_args c2{&t1, &t2, 1};
  weft_task_t* t = weft_task_create(&child_body, &c1, sizeof c1, 0);
  if (!t) {
    a->errors->add("child create: " + status_name(weft_last_error()));
    return;
  }
  weft_task_depend(t, WEFT_DEP_INOUT, &t1, sizeof t1);
  weft_task_submit(t);
  t = weft_task_create(&child_body, &c2, sizeof c2, 0);
  if (!t) {
    a->errors->add("child create: " + status_name(weft_last_error()));
    weft_taskwait();
    return;
  }
  weft_task_depend(t, WEFT_DEP_IN, &t1, sizeof t1);
  weft_task_depend(t, WEFT_DEP_INOUT, &t2, sizeof t2);
  weft_task_submit(t);
  int rc = weft_taskwait();
  if (rc != WEFT_OK) a->errors->add("taskwait in a persistent task: " + status_name(rc));
  *a->own = t2;
}
void parent_inline(uint64_t* own, uint64_t* other, int64_t value) {
  uint64_t t1 = *own, t2 = 3;
  t1 = t1 * 5 + *other + static_cast<uint64_t>(value);
  t2 = t2 * 5 + t1 + 1;
  *own = t2;
}

TEST_P(Graph, ChildrenOfPersistentTasks) {
  for (int mode : {WEFT_GRAPH_REEXECUTE, WEFT_GRAPH_TASKITER}) {
    const int n = 20, m = 4;
    uint64_t cell[m], ref[m];
    for (int i = 0; i < m; ++i) cell[i] = ref[i] = static_cast<uint64_t>(i + 1);
    weft_test::error_log errors;
    for (int it = 0; it < n; ++it)
      for (int i = 0; i < m; ++i)
        parent_inline(&ref[i], &ref[(i + 1) % m], mode == WEFT_GRAPH_TASKITER ? i : it * m + i);
    weft_graph_options_t o = default_options();
    o.mode = mode;
    if (mode == WEFT_GRAPH_TASKITER) o.iterations = n;
    ASSERT_EQ(weft_graph_begin_with(&o), WEFT_OK);
    for (int it = 0; it < (mode == WEFT_GRAPH_TASKITER ? 1 : n); ++it) {
      ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
      for (int i = 0; i < m; ++i) {
        parent_args a{&cell[i], &cell[(i + 1) % m], it * m + i, &errors};
        weft_task_t* t = weft_task_create(&parent_body, &a, sizeof a, 0);
        ASSERT_NE(t, nullptr);
        ASSERT_EQ(weft_task_depend(t, WEFT_DEP_INOUT, &cell[i], sizeof(uint64_t)), WEFT_OK);
        ASSERT_EQ(weft_task_depend(t, WEFT_DEP_IN, &cell[(i + 1) % m], sizeof(uint64_t)), WEFT_OK);
        ASSERT_EQ(weft_task_submit(t), WEFT_OK);
      }
    }
    ASSERT_EQ(weft_graph_end(), WEFT_OK);
    EXPECT_EQ(errors.count(), 0) << errors.str();
    for (int i = 0; i < m; ++i) EXPECT_EQ(cell[i], ref[i]) << (mode ? "taskiter" : "reexecute") << " cell " << i;
  }
}

// Two tasks, each the owner of its own graph, at the same time (graphs belong to the calling task).
struct owner_args {
  cells* s;
  int sel;
  weft_test::error_log* errors;
};
void owner_body(void* p) {
  auto* a = static_cast<owner_args*>(p);
  int rc = weft_graph_begin();
  if (rc != WEFT_OK) a->errors->add("task-owned weft_graph_begin: " + status_name(rc));
  for (int it = 0; it < 12; ++it) {
    rc = weft_graph_iteration();
    if (rc != WEFT_OK) a->errors->add("task-owned weft_graph_iteration: " + status_name(rc));
    for (auto t : base_iteration(it)) {
      for (auto& x : t.accs) x.sel = a->sel;
      create_result r = create_task(t, *a->s);
      if (!r.ok()) a->errors->add("task-owned graph, iteration " + std::to_string(it) + ": " + r.describe());
    }
  }
  rc = weft_graph_end();
  if (rc != WEFT_OK) a->errors->add("task-owned weft_graph_end: " + status_name(rc));
}

TEST_P(Graph, GraphsOwnedByConcurrentTasks) {
  cells got, ref;
  got.init(4);
  ref.init(4);
  for (int sel = 0; sel < 2; ++sel)
    for (int it = 0; it < 12; ++it)
      for (auto t : base_iteration(it)) {
        for (auto& x : t.accs) x.sel = sel;
        run_inline(t, ref);
      }
  weft_test::error_log errors;
  for (int sel = 0; sel < 2; ++sel) {
    owner_args a{&got, sel, &errors};
    weft_task_t* t = weft_task_create(&owner_body, &a, sizeof a, 0);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(weft_task_submit(t), WEFT_OK);
  }
  ASSERT_EQ(weft_taskwait(), WEFT_OK);
  EXPECT_EQ(errors.count(), 0) << errors.str();
  // The checksum is shared by both graphs: a sum, the same in any interleaving.
  EXPECT_EQ(compare_cells(got, ref), "");
  weft_stats_t s = weft_test::stats();
  EXPECT_EQ(s.graph_recordings, 2u);
  EXPECT_GT(s.graph_replayed, 0u);
}

// =================================================================================================
// 8. Misuse
// =================================================================================================
std::atomic<int> g_runs{0};
void count_body(void*) {
  g_runs.fetch_add(1);
}
void expect_runtime_works(const std::string& after) {
  int before = g_runs.load();
  weft_task_t* t = weft_task_create(&count_body, nullptr, 0, 0);
  ASSERT_NE(t, nullptr) << after;
  ASSERT_EQ(weft_task_submit(t), WEFT_OK) << after;
  ASSERT_EQ(weft_taskwait(), WEFT_OK) << after;
  EXPECT_EQ(g_runs.load(), before + 1) << after;
}

TEST_P(Graph, MisuseWithoutBegin) {
  EXPECT_EQ(weft_graph_iteration(), WEFT_ERR_GRAPH_STATE);
  EXPECT_EQ(weft_graph_end(), WEFT_ERR_GRAPH_STATE);
  expect_runtime_works("after iteration/end without begin");
  // After a graph was closed, again no graph is open.
  ASSERT_EQ(weft_graph_begin(), WEFT_OK);
  ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
  ASSERT_EQ(weft_graph_end(), WEFT_OK);
  EXPECT_EQ(weft_graph_end(), WEFT_ERR_GRAPH_STATE) << "weft_graph_end twice";
  EXPECT_EQ(weft_graph_iteration(), WEFT_ERR_GRAPH_STATE) << "weft_graph_iteration after weft_graph_end";
  expect_runtime_works("after end twice");
}

TEST_P(Graph, MisuseBeginTwice) {
  cells got, ref;
  got.init(5);
  ref.init(5);
  ASSERT_EQ(weft_graph_begin(), WEFT_OK);
  EXPECT_EQ(weft_graph_begin(), WEFT_ERR_GRAPH_STATE);
  weft_graph_options_t o = default_options();
  EXPECT_EQ(weft_graph_begin_with(&o), WEFT_ERR_GRAPH_STATE);
  // The open graph is unharmed.
  for (int it = 0; it < 6; ++it) {
    ASSERT_EQ(weft_graph_iteration(), WEFT_OK);
    for (const auto& t : base_iteration(it)) {
      ASSERT_TRUE(create_task(t, got).ok());
      run_inline(t, ref);
    }
    if (it == 3) {
      EXPECT_EQ(weft_graph_begin(), WEFT_ERR_GRAPH_STATE) << "begin inside an open graph's loop";
    }
  }
  EXPECT_EQ(weft_graph_end(), WEFT_OK);
  EXPECT_EQ(compare_cells(got, ref), "");
  // The C++ wrapper reports the same.
  {
    weft::graph g;
    try {
      weft::graph g2;
      ADD_FAILURE() << "a second weft::graph on the same task did not throw";
    } catch (const weft::error& e) {
      EXPECT_EQ(e.status(), WEFT_ERR_GRAPH_STATE) << e.what();
    }
    g.end();
  }
  expect_runtime_works("after begin twice");
}

TEST_P(Graph, MisuseInvalidOptions) {
  struct bad {
    const char* what;
    const char* field;  // the field the message on stderr should name
    std::function<void(weft_graph_options_t&)> set;
  };
  std::vector<bad> cases = {
      {"unroll -1", "unroll", [](weft_graph_options_t& o) { o.unroll = -1; }},
      {"lookahead 7", "lookahead", [](weft_graph_options_t& o) { o.lookahead = 7; }},
      {"lookahead -1", "lookahead", [](weft_graph_options_t& o) { o.lookahead = -1; }},
      {"taskiter, iterations 0, no condition", "iterations",
       [](weft_graph_options_t& o) {
         o.mode = WEFT_GRAPH_TASKITER;
         o.iterations = 0;
       }},
      {"taskiter, iterations -1, no condition", "condition",
       [](weft_graph_options_t& o) {
         o.mode = WEFT_GRAPH_TASKITER;
         o.iterations = -1;
       }},
      {"mode 5", "mode", [](weft_graph_options_t& o) { o.mode = 5; }},
      {"policy 9", "policy", [](weft_graph_options_t& o) { o.policy = 9; }},
      {"on_change 9", "on_change", [](weft_graph_options_t& o) { o.on_change = 9; }},
  };
  for (const auto& c : cases) {
    weft_graph_options_t o = default_options();
    c.set(o);
    int rc;
    std::string err;
    {
      stderr_capture cap;
      rc = weft_graph_begin_with(&o);
      err = cap.take();
    }
    EXPECT_EQ(rc, WEFT_ERR_INVALID_ARGUMENT) << c.what << ": " << status_name(rc);
    if (rc == WEFT_OK) {
      weft_graph_end();
      continue;
    }
    EXPECT_NE(err.find(c.field), std::string::npos)
        << c.what << ": the message on stderr should name the field '" << c.field << "':\n"
        << err;
    // No graph was opened.
    EXPECT_EQ(weft_graph_iteration(), WEFT_ERR_GRAPH_STATE) << c.what;
    EXPECT_EQ(weft_graph_end(), WEFT_ERR_GRAPH_STATE) << c.what;
  }
  // Boundaries that are valid.
  for (int la : {0, 1, 6}) {
    weft_graph_options_t o = default_options();
    o.lookahead = la;
    EXPECT_EQ(weft_graph_begin_with(&o), WEFT_OK) << "lookahead " << la;
    EXPECT_EQ(weft_graph_end(), WEFT_OK) << "lookahead " << la;
  }
  EXPECT_EQ(weft_graph_begin_with(nullptr), WEFT_OK) << "NULL options: the defaults";
  EXPECT_EQ(weft_graph_end(), WEFT_OK);
  expect_runtime_works("after invalid options");
}

// =================================================================================================
// 9. C++ API
// =================================================================================================
TEST_P(Graph, CppGraphReexecute) {
  long a = 1, b = 2, c = 3;
  long ra = 1, rb = 2, rc = 3;
  const int n = 20;
  for (int it = 0; it < n; ++it) {
    ra = ra * 3 + it;
    rb = rb * 5 + ra + it;
    rc = rc * 7 + ra + it;
  }
  {
    weft::graph g;
    for (int it = 0; it < n; ++it)
      g.iteration([&] {
        weft::spawn([&a, it] { a = a * 3 + it; }, weft::inout(a));
        weft::spawn([&a, &b, it] { b = b * 5 + a + it; }, weft::in(a), weft::inout(b));
        weft::spawn([&a, &c, it] { c = c * 7 + a + it; }, weft::in(a), weft::inout(c));
      });
    g.end();
  }
  EXPECT_EQ(a, ra);
  EXPECT_EQ(b, rb);
  EXPECT_EQ(c, rc);
  weft_stats_t s = weft_test::stats();
  EXPECT_GT(s.graph_replayed, 0u);
  EXPECT_EQ(s.graph_recordings, 1u);
}

TEST_P(Graph, CppGraphTaskiter) {
  long a = 1, b = 2;
  weft_graph_options_t o = default_options();
  o.mode = WEFT_GRAPH_TASKITER;
  o.iterations = 15;
  {
    weft::graph g(o);
    const int it = 4;  // recorded value
    g.iteration([&] {
      weft::spawn([&a, it] { a = a * 3 + it; }, weft::inout(a));
      weft::spawn([&a, &b] { b = b * 5 + a; }, weft::in(a), weft::inout(b));
    });
    g.end();
  }
  long ra = 1, rb = 2;
  for (int k = 0; k < 15; ++k) {
    ra = ra * 3 + 4;
    rb = rb * 5 + ra;
  }
  EXPECT_EQ(a, ra);
  EXPECT_EQ(b, rb);
  // The destructor ends a graph that was not ended.
  long x = 0;
  {
    weft::graph g;
    for (int it = 0; it < 5; ++it) g.iteration([&] { weft::spawn([&x] { x += 1; }, weft::inout(x)); });
  }
  EXPECT_EQ(x, 5);
}

}  // namespace
