// micro_suspend: what task suspension costs on weft's native door (weft.h): events, yields,
// pollers, bound events and deep taskwaits (issue 4). One result line per measurement:
//
//   pattern=<p> runtime=weft threads=<workers> n=<ops> param=<what> ns_per_op=<ns> unit=<op> [extra]
//
// `param` names the measurement within the pattern (a pattern prints several); `unit` says what one
// op is. Lines with derived=1 are computed from the other lines of the same process (differences,
// halves), not timed themselves. Extra fields: suspensions= resumes= fibers= (weft_get_stats
// over the timed region; fibers: stacks made in it), susp_per_op=, rss_kb= (peak of the process).
//
// Patterns (see bench/README.md, "Task suspension"):
//   pingpong       tasks A and B alternately wait on events the other fulfils (A waits e1[i], B
//                  fulfils e1[i] then waits e2[i], A fulfils e2[i] then waits e1[i+1], ...); untied
//                  and WEFT_TASK_TIED; op = one wait that parks and is resumed (time / 2N; events
//                  made before the clock). Also event-cycle (create, fulfil, wait on a fulfilled
//                  event, destroy: no suspension), the same again once the pingpongs freed their
//                  events (event-cycle-after-free), and switch-upper (half an op: a bound on one
//                  context switch from above, event and scheduler work included).
//   yield          K tasks each calling weft_taskyield N times: bare (nothing else ready: weft does
//                  not switch), with-child (each yield preceded by submitting an empty child, so the
//                  yield switches to it), child-taskwait (the same child awaited by taskwait, run on
//                  the task's stack: no switch) and switch-est = (with-child - child-taskwait) / (2
//                  suspensions per iteration).
//   poller         M empty tasks without and with a registered poller whose fn returns 0 (it counts
//                  its calls): ns per task, poller calls per task, and pass = the difference per
//                  task and per call; then N weft_taskyield calls from the main program with no work,
//                  without and with the poller.
//   bind           N tasks each binding an event (weft_event_bind) that the next task fulfils (the
//                  last by an extra task), events created by the producer and released by the task
//                  that binds them: detach-like; vs N plain tasks; bind-extra = the difference per
//                  task. -b B: a taskwait every B tasks (default none).
//   handoff        two chains of tasks (depend inout xa / xb), a[i] bound to ea[i], b[i] to eb[i];
//                  a[i] fulfils eb[i-1], b[i] fulfils ea[i]: completions ping-pong through events and
//                  dependences with no task ever waiting (the OpenMP detach version is in
//                  bench/omp/suspend_omp.c). op = one hand-off (time / 2N). -b B rounds per batch.
//   taskwait_deep  a task at depth d creates one child and taskwaits for it, to depth D: ns per level.
//   fcontext       the floor: Boost.Context jump_fcontext between two bare stacks, no runtime (only
//                  when built with Boost.Context): ns per switch.
#include <weft/weft.h>

#include <atomic>
#include <cinttypes>
#include <cmath>
#include <vector>

#include "common.h"

#if defined(WEFT_BENCH_FCONTEXT)
#include <boost/context/detail/fcontext.hpp>
#endif

namespace {

[[noreturn]] void die(const char* what, int status) {
  fprintf(stderr, "micro_suspend: %s: %s\n", what, weft_strerror(status));
  exit(1);
}

std::atomic<long> task_errors{0};  // failed calls inside task bodies (reported after the wait)

inline void check_in_task(int status) {
  if (status != WEFT_OK) task_errors.fetch_add(1, std::memory_order_relaxed);
}

weft_task_t* create(weft_task_fn fn, const void* args, size_t size, unsigned flags = WEFT_TASK_DEFAULT) {
  weft_task_t* t = weft_task_create(fn, args, size, flags);
  if (!t) die("weft_task_create", weft_last_error());
  return t;
}

inline void submit(weft_task_t* t) {
  int s = weft_task_submit(t);
  if (s != WEFT_OK) die("weft_task_submit", s);
}

inline void spawn(weft_task_fn fn, const void* args, size_t size, unsigned flags = WEFT_TASK_DEFAULT) {
  submit(create(fn, args, size, flags));
}

void taskwait() {
  int s = weft_taskwait();
  if (s != WEFT_OK) die("weft_taskwait", s);
  if (long e = task_errors.exchange(0)) {
    fprintf(stderr, "micro_suspend: %ld weft calls failed inside tasks\n", e);
    exit(1);
  }
}

weft_event_t* new_event() {
  weft_event_t* e = weft_event_create(1);
  if (!e) die("weft_event_create", weft_last_error());
  return e;
}

void empty_fn(void*) {}

// --- options and output ---------------------------------------------------------------------------

struct options {
  const char* pattern = nullptr;
  long n = -1;      // rounds / yields per task / tasks / main yields; -1: the pattern's default
  long m = -1;      // poller: tasks
  int k = 2;        // yield: tasks
  long depth = -1;  // taskwait_deep
  long batch = -1;  // bind, handoff: taskwait every B tasks (bind) / B rounds (handoff); 0: none
  int threads = 0;
};

const char* const pattern_names[] = {"pingpong", "yield", "poller", "bind", "handoff", "taskwait_deep", "fcontext"};

void usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s <pattern> [options]\n"
          "patterns: pingpong | yield | poller | bind | handoff | taskwait_deep | fcontext\n"
          "  -n N   pingpong rounds [100000]; yield: yields per task [100000]; poller: main-program\n"
          "         yields [1000000]; bind: tasks [200000]; handoff: rounds [100000]; fcontext:\n"
          "         round trips [1000000]\n"
          "  -m M   poller: empty tasks per run [200000]\n"
          "  -k K   yield: tasks [2]\n"
          "  -d D   taskwait_deep: depth [100000]\n"
          "  -b B   bind: taskwait every B tasks; handoff: every B rounds [bind 0 = never, handoff 16]\n"
          "  -p P   workers (WEFT_NUM_THREADS; 0 = environment / one per core) [0]\n"
          "Prints one line per measurement: pattern=... runtime=weft threads=... n=... param=...\n"
          "ns_per_op=... unit=... [derived=1] [suspensions=... resumes=... fibers=...] rss_kb=...\n",
          argv0);
}

options parse(int argc, char** argv) {
  options o;
  if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    usage(argv[0]);
    exit(argc < 2 ? 2 : 0);
  }
  for (const char* name : pattern_names)
    if (strcmp(argv[1], name) == 0) o.pattern = name;
  if (!o.pattern) {
    fprintf(stderr, "micro_suspend: unknown pattern '%s'\n", argv[1]);
    usage(argv[0]);
    exit(2);
  }
  for (int i = 2; i < argc; i += 2) {
    const char* a = argv[i];
    if (i + 1 >= argc) {
      fprintf(stderr, "micro_suspend: option %s needs a value\n", a);
      exit(2);
    }
    long v = bench_parse_long(argv[i + 1], a);
    if (strcmp(a, "-n") == 0)
      o.n = v;
    else if (strcmp(a, "-m") == 0)
      o.m = v;
    else if (strcmp(a, "-k") == 0)
      o.k = static_cast<int>(v);
    else if (strcmp(a, "-d") == 0)
      o.depth = v;
    else if (strcmp(a, "-b") == 0)
      o.batch = v;
    else if (strcmp(a, "-p") == 0)
      o.threads = static_cast<int>(v);
    else {
      fprintf(stderr, "micro_suspend: unknown option '%s'\n", a);
      usage(argv[0]);
      exit(2);
    }
  }
  if (o.n == 0 || o.m == 0 || o.k < 1 || o.depth == 0) {
    fprintf(stderr, "micro_suspend: option out of range\n");
    exit(2);
  }
  return o;
}

int workers = 0;

// Counters over one timed region: reset before it, read after (exact: no task runs then).
struct counters {
  std::uint64_t suspensions = 0, resumes = 0, fibers = 0;
};

std::uint64_t fibers_before = 0;  // weft_stats_t::fibers counts since weft_init: not reset

void start_counting() {
  weft_reset_stats();
  weft_stats_t st{};
  weft_get_stats(&st);
  fibers_before = st.fibers;
}

counters stop_counting() {
  weft_stats_t st{};
  weft_get_stats(&st);
  return counters{st.suspensions, st.resumes, st.fibers - fibers_before};
}

void add_counters(bench_extra* e, const counters& c, long ops) {
  bench_add(e, "suspensions=%" PRIu64 " resumes=%" PRIu64 " fibers=%" PRIu64 " susp_per_op=%.3f", c.suspensions,
            c.resumes, c.fibers, static_cast<double>(c.suspensions) / static_cast<double>(ops));
}

// One result line. ns NaN: not computable here (printed as '-').
void print(const char* pattern, const char* param, long n, double ns, const char* unit, const bench_extra* e) {
  char value[32];
  if (!std::isnan(ns))
    snprintf(value, sizeof value, "%.2f", ns);
  else
    snprintf(value, sizeof value, "-");
  printf("pattern=%s runtime=weft threads=%d n=%ld param=%s ns_per_op=%s unit=%s%s rss_kb=%ld\n", pattern, workers, n,
         param, value, unit, e ? e->text : "", bench_peak_rss_kb());
  fflush(stdout);
}

void print_derived(const char* pattern, const char* param, long n, double ns, const char* unit, const char* how) {
  bench_extra e{};
  bench_add(&e, "derived=1 from=%s", how);
  print(pattern, param, n, ns, unit, &e);
}

// --- pingpong ------------------------------------------------------------------------------------

struct pingpong_state {
  weft_event_t** e1;  // A waits e1[i], B fulfils it
  weft_event_t** e2;  // B waits e2[i], A fulfils it
  long rounds;
};

void pingpong_a(void* a) {
  const pingpong_state* s = *static_cast<pingpong_state* const*>(a);
  for (long i = 0; i < s->rounds; ++i) {
    check_in_task(weft_event_wait(s->e1[i]));
    check_in_task(weft_event_fulfill(s->e2[i]));
  }
}

void pingpong_b(void* a) {
  const pingpong_state* s = *static_cast<pingpong_state* const*>(a);
  for (long i = 0; i < s->rounds; ++i) {
    check_in_task(weft_event_fulfill(s->e1[i]));
    check_in_task(weft_event_wait(s->e2[i]));
  }
}

// Wall ns of n rounds (events made before and destroyed after the clock).
double run_pingpong(long n, unsigned flags, counters* c) {
  std::vector<weft_event_t*> e1(static_cast<size_t>(n)), e2(static_cast<size_t>(n));
  for (long i = 0; i < n; ++i) {
    e1[static_cast<size_t>(i)] = new_event();
    e2[static_cast<size_t>(i)] = new_event();
  }
  pingpong_state s{e1.data(), e2.data(), n};
  pingpong_state* p = &s;
  start_counting();
  double t0 = bench_now_ns();
  spawn(pingpong_a, &p, sizeof p, flags);
  spawn(pingpong_b, &p, sizeof p, flags);
  taskwait();
  double t1 = bench_now_ns();
  if (c) *c = stop_counting();
  for (long i = 0; i < n; ++i) {
    weft_event_destroy(e1[static_cast<size_t>(i)]);
    weft_event_destroy(e2[static_cast<size_t>(i)]);
  }
  return t1 - t0;
}

// One event's life with no suspension, n times: create, fulfil, wait (already fulfilled), destroy.
double run_event_cycle(long n, counters* c) {
  start_counting();
  double t0 = bench_now_ns();
  for (long i = 0; i < n; ++i) {
    weft_event_t* ev = new_event();
    if (weft_event_fulfill(ev) != WEFT_OK || weft_event_wait(ev) != WEFT_OK) die("event cycle", weft_last_error());
    weft_event_destroy(ev);
  }
  double t1 = bench_now_ns();
  if (c) *c = stop_counting();
  return t1 - t0;
}

void pattern_pingpong(const options& o) {
  const long n = o.n > 0 ? o.n : 100000;
  run_event_cycle(1000, nullptr);  // warm-up
  counters ce;
  double cycle = run_event_cycle(n, &ce) / static_cast<double>(n);
  run_pingpong(n < 1000 ? n : 1000, WEFT_TASK_DEFAULT, nullptr);  // warm-up: fibers, event pool
  double untied = 0;
  for (unsigned flags : {unsigned{WEFT_TASK_DEFAULT}, unsigned{WEFT_TASK_TIED}}) {
    counters c;
    double wall = run_pingpong(n, flags, &c);
    double per = wall / (2.0 * static_cast<double>(n));
    if (flags == WEFT_TASK_DEFAULT) untied = per;
    bench_extra e{};
    bench_add(&e, "ns_per_round=%.2f", wall / static_cast<double>(n));
    add_counters(&e, c, 2 * n);
    print("pingpong", flags == WEFT_TASK_TIED ? "tied" : "untied", 2 * n, per, "suspend+resume", &e);
  }
  bench_extra e{};
  add_counters(&e, ce, n);
  print("pingpong", "event-cycle", n, cycle, "create+fulfil+wait+destroy", &e);
  // The same once the pingpongs have freed their 4n events on this worker (more than the event
  // depot's 256 batches of 64 hold, from n = 4096): what a program that waited on many events pays.
  counters ca;
  double after = run_event_cycle(n, &ca) / static_cast<double>(n);
  bench_extra ea{};
  add_counters(&ea, ca, n);
  print("pingpong", "event-cycle-after-free", n, after, "create+fulfil+wait+destroy", &ea);
  // A suspend+resume is two switches (task -> loop fiber, loop fiber -> the other task): half of it
  // bounds one switch from above (the event and scheduler work are in it); fcontext is the floor.
  print_derived("pingpong", "switch-upper", 2 * n, untied / 2, "context-switch", "untied/2");
}

// --- yield ---------------------------------------------------------------------------------------

enum yield_mode { yield_bare, yield_with_child, yield_child_taskwait };
struct yield_args {
  long n;
  int mode;
};

void yield_fn(void* a) {
  const yield_args p = *static_cast<const yield_args*>(a);
  for (long i = 0; i < p.n; ++i) {
    if (p.mode != yield_bare) spawn(empty_fn, nullptr, 0);
    if (p.mode == yield_child_taskwait)
      check_in_task(weft_taskwait());
    else
      check_in_task(weft_taskyield());
  }
  if (p.mode == yield_with_child) check_in_task(weft_taskwait());  // children still queued
}

double run_yield(int k, long n, int mode, counters* c) {
  yield_args a{n, mode};
  start_counting();
  double t0 = bench_now_ns();
  for (int i = 0; i < k; ++i) spawn(yield_fn, &a, sizeof a);
  taskwait();
  double t1 = bench_now_ns();
  if (c) *c = stop_counting();
  return t1 - t0;
}

void pattern_yield(const options& o) {
  const long n = o.n > 0 ? o.n : 100000;
  const long ops = n * o.k;
  static const char* const names[] = {"bare", "with-child", "child-taskwait"};
  static const char* const units[] = {"yield", "child+yield", "child+taskwait"};
  double per[3] = {0, 0, 0};
  double susp_per_iter = 0;
  for (int mode : {yield_bare, yield_with_child, yield_child_taskwait}) {
    run_yield(o.k, n < 1000 ? n : 1000, mode, nullptr);  // warm-up
    counters c;
    double wall = run_yield(o.k, n, mode, &c);
    per[mode] = wall / static_cast<double>(ops);
    if (mode == yield_with_child) susp_per_iter = static_cast<double>(c.suspensions) / static_cast<double>(ops);
    bench_extra e{};
    bench_add(&e, "k=%d", o.k);
    add_counters(&e, c, ops);
    print("yield", names[mode], ops, per[mode], units[mode], &e);
  }
  // Each with-child iteration suspends once (out to the loop fiber that runs the child, back in):
  // two switches, when susp_per_op is ~1; otherwise the difference is not a switch cost.
  double est = susp_per_iter > 0.5 ? (per[yield_with_child] - per[yield_child_taskwait]) / (2 * susp_per_iter) : NAN;
  print_derived("yield", "switch-est", ops, est, "context-switch", "(with-child-child-taskwait)/(2*susp_per_op)");
}

// --- poller --------------------------------------------------------------------------------------

long poll_calls = 0;  // the runtime never runs one poller twice at once: plain read-modify-write

int count_poll(void*) {
  __atomic_store_n(&poll_calls, __atomic_load_n(&poll_calls, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
  return 0;
}

double run_empty_tasks(long m) {
  double t0 = bench_now_ns();
  for (long i = 0; i < m; ++i) spawn(empty_fn, nullptr, 0);
  taskwait();
  return bench_now_ns() - t0;
}

double run_main_yields(long n) {
  double t0 = bench_now_ns();
  for (long i = 0; i < n; ++i)
    if (weft_taskyield() != WEFT_OK) die("weft_taskyield", weft_last_error());
  return bench_now_ns() - t0;
}

void pattern_poller(const options& o) {
  const long m = o.m > 0 ? o.m : 200000;
  const long n = o.n > 0 ? o.n : 1000000;
  // Tasks: without and with the poller, alternated 3 times; the best of each (a slow spell of a
  // shared machine then hits both alike, and the minimum is the cost without interference).
  run_empty_tasks(m < 10000 ? m : 10000);  // warm-up
  double best_none = 1e300, best_poll = 1e300;
  long calls_of_best = 0;
  for (int round = 0; round < 3; ++round) {
    double none = run_empty_tasks(m);
    if (none < best_none) best_none = none;
    weft_poller_t* p = weft_poller_register(count_poll, nullptr);
    if (!p) die("weft_poller_register", WEFT_ERR_INVALID_ARGUMENT);
    __atomic_store_n(&poll_calls, 0, __ATOMIC_RELAXED);
    double with = run_empty_tasks(m);
    long calls = __atomic_load_n(&poll_calls, __ATOMIC_RELAXED);
    if (weft_poller_unregister(p) != WEFT_OK) die("weft_poller_unregister", WEFT_ERR_INVALID_ARGUMENT);
    if (with < best_poll) {
      best_poll = with;
      calls_of_best = calls;
    }
  }
  const double mm = static_cast<double>(m);
  {
    bench_extra e{};
    bench_add(&e, "best_of=3");
    print("poller", "tasks-no-poller", m, best_none / mm, "task", &e);
  }
  {
    bench_extra e{};
    bench_add(&e, "best_of=3 poll_calls=%ld calls_per_task=%.3f", calls_of_best,
              static_cast<double>(calls_of_best) / mm);
    print("poller", "tasks-poller", m, best_poll / mm, "task", &e);
  }
  print_derived("poller", "pass-per-task", m, (best_poll - best_none) / mm, "task", "tasks-poller-tasks-no-poller");
  print_derived("poller", "pass-per-call", calls_of_best,
                calls_of_best > 0 ? (best_poll - best_none) / static_cast<double>(calls_of_best) : NAN, "poller-call",
                "(tasks-poller-tasks-no-poller)*m/poll_calls");
  // The main program yielding with nothing to run: taskyield's early return, without and with a
  // poller registered (poll_calls says whether taskyield calls pollers).
  run_main_yields(n < 10000 ? n : 10000);
  for (int with = 0; with < 2; ++with) {
    weft_poller_t* p = nullptr;
    if (with) {
      p = weft_poller_register(count_poll, nullptr);
      if (!p) die("weft_poller_register", WEFT_ERR_INVALID_ARGUMENT);
    }
    __atomic_store_n(&poll_calls, 0, __ATOMIC_RELAXED);
    start_counting();
    double wall = run_main_yields(n);
    counters c = stop_counting();
    long calls = __atomic_load_n(&poll_calls, __ATOMIC_RELAXED);
    if (p && weft_poller_unregister(p) != WEFT_OK) die("weft_poller_unregister", WEFT_ERR_INVALID_ARGUMENT);
    bench_extra e{};
    if (with) bench_add(&e, "poll_calls=%ld calls_per_yield=%.3f", calls, static_cast<double>(calls) / n);
    add_counters(&e, c, n);
    print("poller", with ? "main-yield-poller" : "main-yield-no-poller", n, wall / static_cast<double>(n), "taskyield",
          &e);
  }
}

// --- bind ----------------------------------------------------------------------------------------

struct bind_args {
  weft_event_t* mine;  // bound to this task
  weft_event_t* prev;  // the previous task's, fulfilled here (null for the first of a batch)
};

// The task takes over the creator's reference (weft_event_destroy): the event is freed once it is
// fulfilled, as OpenMP frees a detach event. Safe in either order: a fulfilment before the bind
// finds the creator's reference still held; a bind after it is a no-op.
void bind_fn(void* a) {
  const bind_args p = *static_cast<const bind_args*>(a);
  check_in_task(weft_event_bind(p.mine));
  check_in_task(weft_event_destroy(p.mine));
  if (p.prev) check_in_task(weft_event_fulfill(p.prev));
}

void fulfil_fn(void* a) {
  check_in_task(weft_event_fulfill(*static_cast<weft_event_t* const*>(a)));
}

// n tasks each bound to its own event, fulfilled by the next task (the last of a batch by an extra
// task); events are created by the producer in the loop (as detach(ev) does).
double run_bind(long n, long batch, counters* c) {
  start_counting();
  double t0 = bench_now_ns();
  weft_event_t* prev = nullptr;
  for (long i = 0; i < n; ++i) {
    weft_event_t* e = new_event();
    bind_args a{e, prev};
    spawn(bind_fn, &a, sizeof a);
    prev = e;
    if ((batch > 0 && (i + 1) % batch == 0) || i + 1 == n) {
      spawn(fulfil_fn, &prev, sizeof prev);
      prev = nullptr;
      taskwait();
    }
  }
  double t1 = bench_now_ns();
  if (c) *c = stop_counting();
  return t1 - t0;
}

double run_plain(long n, long batch, counters* c) {
  start_counting();
  double t0 = bench_now_ns();
  for (long i = 0; i < n; ++i) {
    spawn(empty_fn, nullptr, 0);
    if (batch > 0 && (i + 1) % batch == 0) taskwait();
  }
  taskwait();
  double t1 = bench_now_ns();
  if (c) *c = stop_counting();
  return t1 - t0;
}

void pattern_bind(const options& o) {
  const long n = o.n > 0 ? o.n : 200000;
  const long batch = o.batch > 0 ? o.batch : 0;
  run_bind(n < 1000 ? n : 1000, batch, nullptr);  // warm-up
  run_plain(n < 1000 ? n : 1000, batch, nullptr);
  counters c, cp;
  double bind = run_bind(n, batch, &c) / static_cast<double>(n);
  double plain = run_plain(n, batch, &cp) / static_cast<double>(n);
  bench_extra e{};
  bench_add(&e, "batch=%ld", batch);
  add_counters(&e, c, n);
  print("bind", "bind", n, bind, "task", &e);
  bench_extra ep{};
  bench_add(&ep, "batch=%ld", batch);
  add_counters(&ep, cp, n);
  print("bind", "plain", n, plain, "task", &ep);
  print_derived("bind", "bind-extra", n, bind - plain, "task", "bind-plain");
}

// --- handoff -------------------------------------------------------------------------------------

char chain_a, chain_b;  // the two dependence objects

struct handoff_args {
  weft_event_t* mine;     // bound to this task
  weft_event_t* fulfils;  // the other chain's (null: none)
};

void handoff_fn(void* a) {  // the creator's reference taken over, as in bind_fn
  const handoff_args p = *static_cast<const handoff_args*>(a);
  check_in_task(weft_event_bind(p.mine));
  check_in_task(weft_event_destroy(p.mine));
  if (p.fulfils) check_in_task(weft_event_fulfill(p.fulfils));
}

void spawn_handoff(weft_event_t* mine, weft_event_t* fulfils, const char* chain) {
  handoff_args a{mine, fulfils};
  weft_task_t* t = create(handoff_fn, &a, sizeof a);
  int s = weft_task_depend(t, WEFT_DEP_INOUT, chain, 1);
  if (s != WEFT_OK) die("weft_task_depend", s);
  submit(t);
}

// Rounds of: a[i] (inout xa, bound to ea[i], fulfils eb[i-1]), b[i] (inout xb, bound to eb[i],
// fulfils ea[i]); a batch ends with a task fulfilling its last eb, then a taskwait.
double run_handoff(long n, long batch, counters* c) {
  start_counting();
  double t0 = bench_now_ns();
  weft_event_t* last_b = nullptr;
  for (long i = 0; i < n; ++i) {
    weft_event_t* ea = new_event();
    weft_event_t* eb = new_event();
    spawn_handoff(ea, last_b, &chain_a);
    spawn_handoff(eb, ea, &chain_b);
    last_b = eb;
    if ((batch > 0 && (i + 1) % batch == 0) || i + 1 == n) {
      spawn(fulfil_fn, &last_b, sizeof last_b);
      last_b = nullptr;
      taskwait();
    }
  }
  double t1 = bench_now_ns();
  if (c) *c = stop_counting();
  return t1 - t0;
}

void pattern_handoff(const options& o) {
  const long n = o.n > 0 ? o.n : 100000;
  const long batch = o.batch >= 0 ? o.batch : 16;
  run_handoff(n < 1000 ? n : 1000, batch, nullptr);  // warm-up
  counters c;
  double wall = run_handoff(n, batch, &c);
  bench_extra e{};
  bench_add(&e, "batch=%ld", batch);
  add_counters(&e, c, 2 * n);
  print("handoff", "bind-chain", 2 * n, wall / (2.0 * static_cast<double>(n)), "handoff", &e);
}

// --- taskwait_deep -------------------------------------------------------------------------------

void deep_fn(void* a) {
  long d = *static_cast<const long*>(a);
  if (d > 1) {
    long child = d - 1;
    spawn(deep_fn, &child, sizeof child);
    check_in_task(weft_taskwait());
  }
}

double run_deep(long depth, counters* c) {
  start_counting();
  double t0 = bench_now_ns();
  spawn(deep_fn, &depth, sizeof depth);
  taskwait();
  double t1 = bench_now_ns();
  if (c) *c = stop_counting();
  return t1 - t0;
}

void pattern_taskwait_deep(const options& o) {
  const long depth = o.depth > 0 ? o.depth : 100000;
  // Warm-up at full depth: the first descent faults in every stack page (main thread's and fibers');
  // the timed one reuses them.
  run_deep(depth, nullptr);
  counters c;
  double wall = run_deep(depth, &c);
  char param[32];
  snprintf(param, sizeof param, "depth=%ld", depth);
  bench_extra e{};
  add_counters(&e, c, depth);
  print("taskwait_deep", param, depth, wall / static_cast<double>(depth), "level", &e);
}

// --- fcontext: the floor -------------------------------------------------------------------------

#if defined(WEFT_BENCH_FCONTEXT)
namespace bc = boost::context::detail;

void bounce(bc::transfer_t t) {
  for (;;) t = bc::jump_fcontext(t.fctx, nullptr);  // back to the caller, every time
}

void pattern_fcontext(const options& o) {
  const long n = o.n > 0 ? o.n : 1000000;
  const size_t size = 64 * 1024;
  char* stack = static_cast<char*>(malloc(size));
  if (!stack) die("malloc", WEFT_ERR_OUT_OF_MEMORY);
  bc::fcontext_t other = bc::make_fcontext(stack + size, size, bounce);
  for (int i = 0; i < 1000; ++i) other = bc::jump_fcontext(other, nullptr).fctx;  // warm-up
  double t0 = bench_now_ns();
  for (long i = 0; i < n; ++i) other = bc::jump_fcontext(other, nullptr).fctx;
  double wall = bench_now_ns() - t0;
  print("fcontext", "jump_fcontext", 2 * n, wall / (2.0 * static_cast<double>(n)), "context-switch", nullptr);
  // the bouncing stack is left as it is (never resumed again)
}
#else
void pattern_fcontext(const options&) {
  printf(
      "pattern=fcontext runtime=weft threads=%d n=0 param=jump_fcontext status=unsupported "
      "reason=built-without-Boost.Context\n",
      workers);
  fflush(stdout);
  exit(3);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  options o = parse(argc, argv);
  if (o.threads > 0) {
    char value[16];
    snprintf(value, sizeof value, "%d", o.threads);
    setenv("WEFT_NUM_THREADS", value, 1);
  }
  int s = weft_init();
  if (s != WEFT_OK) die("weft_init", s);
  workers = weft_num_workers();
  const char* p = o.pattern;
  if (strcmp(p, "pingpong") == 0)
    pattern_pingpong(o);
  else if (strcmp(p, "yield") == 0)
    pattern_yield(o);
  else if (strcmp(p, "poller") == 0)
    pattern_poller(o);
  else if (strcmp(p, "bind") == 0)
    pattern_bind(o);
  else if (strcmp(p, "handoff") == 0)
    pattern_handoff(o);
  else if (strcmp(p, "taskwait_deep") == 0)
    pattern_taskwait_deep(o);
  else
    pattern_fcontext(o);
  s = weft_finalize();
  if (s != WEFT_OK) die("weft_finalize", s);
  return 0;
}
