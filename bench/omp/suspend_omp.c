/* suspend_omp: the task-suspension patterns of micro_suspend (bench/micro/suspend_weft.cpp) written
 * with OpenMP only: taskyield, detach(ev) + omp_fulfill_event, taskwait. Plain C, gcc -O2 -fopenmp:
 * the same binary runs on GCC libgomp (as linked), LLVM libomp (LD_PRELOAD=libomp.so.5) and weft's
 * OpenMP door (LD_PRELOAD=libweft.so). LLVM libomp 14's GOMP layer ignores detach(): the same
 * source built by clang (target suspend_omp_clang, file suspend_omp_kmpc: LLVM's __kmpc ABI) gives
 * libomp's detach rows, as llvm-omp-kmpc. One result line per measurement, as micro_suspend's:
 *
 *   pattern=<p> runtime=<gomp|llvm-omp|weft-omp|llvm-omp-kmpc> threads=<team> n=<ops> param=<what>
 *   ns_per_op=<ns> unit=<op> [derived=1] [suspensions= susp_per_op= (weft-omp)] rss_kb=<peak>
 *   [libs=mixed:...]
 *
 * Every pattern terminates on all three runtimes, whatever taskyield does there (libgomp: nothing;
 * libomp: may run another task nested in the yielding one; weft: switches the task out when another
 * task is ready), and whether a task can suspend or not:
 *   yield          K tasks each doing N taskyields: bare (nothing else to run), with-child (an empty
 *                  child task created before each yield), child-taskwait (the child awaited by
 *                  taskwait instead); on weft-omp only, switch-est = (with-child - child-taskwait)
 *                  / (2 x susp_per_op), derived, blank unless the yields suspended (a yield with a
 *                  child ready is two switches there; elsewhere it is no switch at all: libgomp
 *                  does nothing, libomp runs the child nested).
 *   detach         N tasks with detach(ev), each fulfilling the previous task's event (the last of a
 *                  batch fulfilled by an extra task), in batches of B tasks closed by a taskwait; vs
 *                  the same N plain tasks; detach-extra = the difference. Batches: libgomp runs a
 *                  task undeferred once 64 x threads are queued, and an undeferred detached task
 *                  waits for its event on the spot: only a task created later fulfils it.
 *   handoff        two chains, a[i] depend(inout: xa) detach(ea[i]) fulfilling eb[i-1], b[i]
 *                  depend(inout: xb) detach(eb[i]) fulfilling ea[i]: completions ping-pong through
 *                  events and dependences (no task ever waits); op = one hand-off, B rounds a batch.
 *   taskwait_deep  a task at depth d creates one child and taskwaits for it, to depth D (libgomp and
 *                  libomp run the child on the waiting task's stack: D is bounded by the stack).
 *   pingpong       not expressible: OpenMP has no task-level wait on an event (a task suspended
 *                  until another, already running, task fulfils it). Prints status=unsupported.
 * The timed region of each runs in one parallel region, from the first task creation to the end of
 * the producer's (single's) last taskwait. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>

#include "../micro/common.h"

#if defined(__has_include)
#if __has_include(<weft/weft.h>)
#include <weft/weft.h> /* weft_stats_t only: weft_get_stats is looked up, never linked */
#define SUSP_HAVE_WEFT_H 1
#endif
#endif

/* --- which library answers ---------------------------------------------------------------------- */

/* gcc builds call the GOMP ABI, which all three answer; a clang build (target suspend_omp_clang)
 * calls LLVM's own __kmpc ABI, which only libomp answers: its rows are llvm-omp-kmpc. */
static const char* runtime_name(void) {
  if (dlsym(RTLD_DEFAULT, "weft_init")) return "weft-omp";
#if defined(__clang__)
  if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call")) return "llvm-omp-kmpc";
#else
  if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call")) return "llvm-omp";
#endif
  return "gomp";
}

/* The addresses the program calls through (its GOT), named by asm labels so no prototype clashes
 * with gcc's built-in ones (as bench/omp/epcc.c does). */
#define SUSP_ENTRY(NAME) extern void susp_sym_##NAME(void) __asm__(#NAME);
#if defined(__clang__) /* clang -fopenmp: LLVM's own entry points */
#define SUSP_ENTRIES(X) \
  X(__kmpc_fork_call) X(__kmpc_single) X(__kmpc_omp_task) X(__kmpc_omp_taskwait) X(__kmpc_omp_taskyield)
#else
#define SUSP_ENTRIES(X) X(GOMP_parallel) X(GOMP_single_start) X(GOMP_task) X(GOMP_taskwait) X(GOMP_taskyield)
#endif
SUSP_ENTRIES(SUSP_ENTRY)
#define SUSP_ENTRY_ADDR(NAME) {#NAME, (void*)susp_sym_##NAME},
static const struct {
  const char* name;
  void* addr;
} entries[] = {SUSP_ENTRIES(SUSP_ENTRY_ADDR)};

static const char* library_of(void* addr) {
  Dl_info info;
  if (!addr || !dladdr(addr, &info) || !info.dli_fname) return "?";
  const char* slash = strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

/* " libs=mixed:NAME@lib,..." when an entry point resolves outside the library of GOMP_parallel (a
 * door missing a symbol falls through to libgomp, which the binary links), else "". */
static char libs_note[512];
static int mixed;

/* omp_fulfill_event is called through the runtime's default definition, found with dlsym: gcc binds
 * omp_fulfill_event@OMP_5.0.1, a version LLVM libomp 14 does not define (it exports the symbol at
 * its own VERSION node), so the bound call would reach libgomp's with a libomp handle (a crash). A
 * program built against libomp calls libomp's; so does this one. */
typedef void (*fulfill_fn)(omp_event_handle_t);
static fulfill_fn fulfill_event = omp_fulfill_event;

static void note_mixed(const char* name, const char* lib, size_t* used) {
  int k = snprintf(libs_note + *used, sizeof libs_note - *used, "%s%s@%s", mixed ? "," : " libs=mixed:", name, lib);
  if (k > 0 && (size_t)k < sizeof libs_note - *used) *used += (size_t)k;
  mixed = 1;
}

static void check_libraries(int uses_fulfill) {
  char door[128];
  size_t used = 0;
  void* f = dlsym(RTLD_DEFAULT, "omp_fulfill_event");
  if (f) fulfill_event = (fulfill_fn)f;
  snprintf(door, sizeof door, "%s", library_of(entries[0].addr));
  for (size_t i = 1; i < sizeof entries / sizeof entries[0]; ++i) {
    const char* lib = library_of(entries[i].addr);
    if (strcmp(lib, door) != 0) note_mixed(entries[i].name, lib, &used);
  }
  const char* flib = library_of((void*)fulfill_event);
  if (uses_fulfill && strcmp(flib, door) != 0) note_mixed("omp_fulfill_event", flib, &used);
  fprintf(stderr, "# suspend_omp: runtime=%s %s from %s, omp_fulfill_event from %s%s\n", runtime_name(),
          entries[0].name, door, flib, libs_note);
}

/* --- options and output ------------------------------------------------------------------------- */

static const char* pattern;
static long opt_n = -1, opt_depth = -1, opt_batch = -1;
static int opt_k = 2;
static int team_size;

static void usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s <pattern> [options]\n"
          "patterns: yield | detach | handoff | taskwait_deep | pingpong (unsupported: no event wait)\n"
          "  -n N   yield: taskyields per task [100000]; detach: tasks [200000]; handoff: rounds [100000]\n"
          "  -k K   yield: tasks [2]\n"
          "  -d D   taskwait_deep: depth [10000]\n"
          "  -b B   detach: tasks per batch [32]; handoff: rounds per batch [16] (see the source)\n"
          "Threads: OMP_NUM_THREADS. Prints one line per measurement: pattern=... runtime=... threads=...\n"
          "n=... param=... ns_per_op=... unit=... [derived=1] rss_kb=...\n",
          argv0);
}

static void parse(int argc, char** argv) {
  static const char* const names[] = {"yield", "detach", "handoff", "taskwait_deep", "pingpong"};
  if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    usage(argv[0]);
    exit(argc < 2 ? 2 : 0);
  }
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (strcmp(argv[1], names[i]) == 0) pattern = names[i];
  if (!pattern) {
    fprintf(stderr, "suspend_omp: unknown pattern '%s'\n", argv[1]);
    usage(argv[0]);
    exit(2);
  }
  for (int i = 2; i < argc; i += 2) {
    const char* a = argv[i];
    if (i + 1 >= argc) {
      fprintf(stderr, "suspend_omp: option %s needs a value\n", a);
      exit(2);
    }
    long v = bench_parse_long(argv[i + 1], a);
    if (strcmp(a, "-n") == 0)
      opt_n = v;
    else if (strcmp(a, "-k") == 0)
      opt_k = (int)v;
    else if (strcmp(a, "-d") == 0)
      opt_depth = v;
    else if (strcmp(a, "-b") == 0)
      opt_batch = v;
    else {
      fprintf(stderr, "suspend_omp: unknown option '%s'\n", a);
      usage(argv[0]);
      exit(2);
    }
  }
  if (opt_n == 0 || opt_k < 1 || opt_depth == 0 || opt_batch == 0) {
    fprintf(stderr, "suspend_omp: option out of range\n");
    exit(2);
  }
}

static void print(const char* param, long n, double ns, const char* unit, const char* extra) {
  char value[32];
  if (!isnan(ns))
    snprintf(value, sizeof value, "%.2f", ns);
  else
    snprintf(value, sizeof value, "-");
  printf("pattern=%s runtime=%s threads=%d n=%ld param=%s ns_per_op=%s unit=%s%s rss_kb=%ld%s\n", pattern,
         runtime_name(), team_size, n, param, value, unit, extra ? extra : "", bench_peak_rss_kb(), libs_note);
  fflush(stdout);
}

/* --- weft's counters, when weft answers ------------------------------------------------------- */

/* On weft-omp the result lines carry suspensions= (weft_get_stats, found with dlsym, over the timed
 * run: counts are exact once no task runs, i.e. after the region) and susp_per_op=. */
#if defined(SUSP_HAVE_WEFT_H)
typedef int (*get_stats_fn)(weft_stats_t*);
static unsigned long long suspensions_now(void) {
  static get_stats_fn get;
  static int looked;
  weft_stats_t st;
  if (!looked) {
    get = (get_stats_fn)dlsym(RTLD_DEFAULT, "weft_get_stats");
    looked = 1;
  }
  if (!get || get(&st) != 0) return ~0ull;
  return (unsigned long long)st.suspensions;
}
#else
static unsigned long long suspensions_now(void) {
  return ~0ull;
}
#endif

static unsigned long long susp_mark;
static void mark_suspensions(void) {
  susp_mark = suspensions_now();
}
/* Suspensions since the mark per op, appended to extra (size bytes); NaN when not on weft. */
static double add_suspensions(char* extra, size_t size, long ops) {
  unsigned long long now = suspensions_now();
  if (now == ~0ull || susp_mark == ~0ull) return NAN;
  size_t used = strlen(extra);
  double per = (double)(now - susp_mark) / (double)ops;
  snprintf(extra + used, size - used, " suspensions=%llu susp_per_op=%.3f", now - susp_mark, per);
  return per;
}

/* --- yield -------------------------------------------------------------------------------------- */

enum { YIELD_BARE, YIELD_WITH_CHILD, YIELD_CHILD_TASKWAIT };

static void empty_body(void) {
  __asm__ __volatile__("" ::: "memory");
}

static double run_yield(int k, long n, int mode) {
  double t0 = 0, t1 = 0;
#pragma omp parallel
#pragma omp single
  {
    team_size = omp_get_num_threads();
    t0 = bench_now_ns();
    for (int j = 0; j < k; ++j) {
#pragma omp task firstprivate(n, mode)
      {
        for (long i = 0; i < n; ++i) {
          if (mode != YIELD_BARE) {
#pragma omp task
            empty_body();
          }
          if (mode == YIELD_CHILD_TASKWAIT) {
#pragma omp taskwait
          } else {
#pragma omp taskyield
          }
        }
        if (mode == YIELD_WITH_CHILD) {
#pragma omp taskwait
        }
      }
    }
#pragma omp taskwait
    t1 = bench_now_ns();
  }
  return t1 - t0;
}

static void pattern_yield(void) {
  const long n = opt_n > 0 ? opt_n : 100000;
  const long ops = n * opt_k;
  static const char* const names[] = {"bare", "with-child", "child-taskwait"};
  static const char* const units[] = {"yield", "child+yield", "child+taskwait"};
  double per[3], susp = NAN;
  for (int mode = YIELD_BARE; mode <= YIELD_CHILD_TASKWAIT; ++mode) {
    char extra[128];
    snprintf(extra, sizeof extra, " k=%d", opt_k);
    run_yield(opt_k, n < 1000 ? n : 1000, mode); /* warm-up */
    mark_suspensions();
    per[mode] = run_yield(opt_k, n, mode) / (double)ops;
    double s = add_suspensions(extra, sizeof extra, ops);
    if (mode == YIELD_WITH_CHILD) susp = s;
    print(names[mode], ops, per[mode], units[mode], extra);
  }
  /* Only weft switches the yielding task out (to run the child, then back): elsewhere the yield runs
   * the child nested in it or does nothing, and the difference is no switch cost. On weft it is one
   * only when the yields did suspend (susp_per_op ~ 1; not when a team of one ran the child at once). */
  if (strcmp(runtime_name(), "weft-omp") == 0)
    print("switch-est", ops, susp > 0.5 ? (per[YIELD_WITH_CHILD] - per[YIELD_CHILD_TASKWAIT]) / (2 * susp) : NAN,
          "context-switch", " derived=1 from=(with-child-child-taskwait)/(2*susp_per_op)");
}

/* --- detach ------------------------------------------------------------------------------------- */

/* Whether the runtime hands out detach events: LLVM libomp 14's GOMP layer ignores the detach
 * argument of GOMP_task (the handle stays 0 and the task completes at the end of its body). */
static int detach_supported(void) {
  int ok = 0;
#pragma omp parallel
#pragma omp single
  {
    omp_event_handle_t ev = (omp_event_handle_t)0;
#pragma omp task detach(ev)
    empty_body();
    if (ev != (omp_event_handle_t)0) {
      ok = 1;
      fulfill_event(ev);
    }
#pragma omp taskwait
  }
  return ok;
}

static int unsupported_detach(void) {
  printf(
      "pattern=%s runtime=%s threads=%d n=0 param=- status=unsupported reason=detach-ignored(event-handle-not-set)%s\n",
      pattern, runtime_name(), team_size, libs_note);
  fflush(stdout);
  return 3;
}

/* n detached tasks, each fulfilling the previous one's event; every `batch` tasks an extra task
 * fulfils the last event and the producer waits. */
static double run_detach(long n, long batch) {
  double t0 = 0, t1 = 0;
#pragma omp parallel
#pragma omp single
  {
    team_size = omp_get_num_threads();
    t0 = bench_now_ns();
    omp_event_handle_t prev = (omp_event_handle_t)0;
    int have_prev = 0;
    for (long i = 0; i < n; ++i) {
      omp_event_handle_t ev;
#pragma omp task detach(ev) firstprivate(prev, have_prev)
      {
        if (have_prev) fulfill_event(prev);
      }
      prev = ev;
      have_prev = 1;
      if ((i + 1) % batch == 0 || i + 1 == n) {
#pragma omp task firstprivate(prev)
        fulfill_event(prev);
        have_prev = 0;
#pragma omp taskwait
      }
    }
    t1 = bench_now_ns();
  }
  return t1 - t0;
}

static double run_plain(long n, long batch) {
  double t0 = 0, t1 = 0;
#pragma omp parallel
#pragma omp single
  {
    team_size = omp_get_num_threads();
    t0 = bench_now_ns();
    for (long i = 0; i < n; ++i) {
#pragma omp task
      empty_body();
      if ((i + 1) % batch == 0 || i + 1 == n) {
#pragma omp taskwait
      }
    }
    t1 = bench_now_ns();
  }
  return t1 - t0;
}

static void pattern_detach(void) {
  const long n = opt_n > 0 ? opt_n : 200000;
  const long batch = opt_batch > 0 ? opt_batch : 32;
  char extra[128];
  snprintf(extra, sizeof extra, " batch=%ld", batch);
  run_detach(n < 1000 ? n : 1000, batch); /* warm-up */
  run_plain(n < 1000 ? n : 1000, batch);
  char extra_plain[128];
  snprintf(extra_plain, sizeof extra_plain, "%s", extra);
  mark_suspensions();
  double detach = run_detach(n, batch) / (double)n;
  add_suspensions(extra, sizeof extra, n);
  mark_suspensions();
  double plain = run_plain(n, batch) / (double)n;
  add_suspensions(extra_plain, sizeof extra_plain, n);
  print("detach", n, detach, "task", extra);
  print("plain", n, plain, "task", extra_plain);
  print("detach-extra", n, detach - plain, "task", " derived=1 from=detach-plain");
}

/* --- handoff ------------------------------------------------------------------------------------ */

static double run_handoff(long n, long batch) {
  double t0 = 0, t1 = 0;
  char xa = 0, xb = 0; /* the two chains' dependence objects */
  (void)xa;
  (void)xb;
#pragma omp parallel
#pragma omp single
  {
    team_size = omp_get_num_threads();
    t0 = bench_now_ns();
    omp_event_handle_t last_b = (omp_event_handle_t)0;
    int have_b = 0;
    for (long i = 0; i < n; ++i) {
      omp_event_handle_t ea, eb;
#pragma omp task depend(inout : xa) detach(ea) firstprivate(last_b, have_b)
      {
        if (have_b) fulfill_event(last_b);
      }
#pragma omp task depend(inout : xb) detach(eb) firstprivate(ea)
      fulfill_event(ea);
      last_b = eb;
      have_b = 1;
      if ((i + 1) % batch == 0 || i + 1 == n) {
#pragma omp task firstprivate(last_b)
        fulfill_event(last_b);
        have_b = 0;
#pragma omp taskwait
      }
    }
    t1 = bench_now_ns();
  }
  return t1 - t0;
}

static void pattern_handoff(void) {
  const long n = opt_n > 0 ? opt_n : 100000;
  const long batch = opt_batch > 0 ? opt_batch : 16;
  char extra[128];
  snprintf(extra, sizeof extra, " batch=%ld", batch);
  run_handoff(n < 1000 ? n : 1000, batch); /* warm-up */
  mark_suspensions();
  double wall = run_handoff(n, batch);
  add_suspensions(extra, sizeof extra, 2 * n);
  print("detach-chain", 2 * n, wall / (2.0 * (double)n), "handoff", extra);
}

/* --- taskwait_deep ------------------------------------------------------------------------------ */

static void deep(long d) {
  if (d > 1) {
#pragma omp task firstprivate(d)
    deep(d - 1);
#pragma omp taskwait
  }
}

static void pattern_taskwait_deep(void) {
  const long depth = opt_depth > 0 ? opt_depth : 10000;
  double t0 = 0, t1 = 0;
  char extra[128] = "";
  for (int run = 0; run < 2; ++run) { /* the first, at full depth, faults the stack pages in */
    long d = depth;
    if (run) mark_suspensions();
#pragma omp parallel
#pragma omp single
    {
      team_size = omp_get_num_threads();
      t0 = bench_now_ns();
#pragma omp task firstprivate(d)
      deep(d);
#pragma omp taskwait
      t1 = bench_now_ns();
    }
  }
  char param[32];
  snprintf(param, sizeof param, "depth=%ld", depth);
  add_suspensions(extra, sizeof extra, depth);
  print(param, depth, (t1 - t0) / (double)depth, "level", extra);
}

int main(int argc, char** argv) {
  parse(argc, argv);
  check_libraries(strcmp(pattern, "detach") == 0 || strcmp(pattern, "handoff") == 0);
#pragma omp parallel
#pragma omp single
  team_size = omp_get_num_threads(); /* starts the team before any clock */
  if (strcmp(pattern, "pingpong") == 0) {
    printf(
        "pattern=pingpong runtime=%s threads=%d n=0 param=- status=unsupported "
        "reason=no-task-level-event-wait-in-OpenMP\n",
        runtime_name(), team_size);
    return 3;
  }
  if ((strcmp(pattern, "detach") == 0 || strcmp(pattern, "handoff") == 0) && !detach_supported())
    return unsupported_detach();
  if (strcmp(pattern, "yield") == 0)
    pattern_yield();
  else if (strcmp(pattern, "detach") == 0)
    pattern_detach();
  else if (strcmp(pattern, "handoff") == 0)
    pattern_handoff();
  else
    pattern_taskwait_deep();
  return mixed ? 3 : 0;
}
