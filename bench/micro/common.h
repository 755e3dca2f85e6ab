/* Shared by every micro-benchmark variant: command line, clocks, memory readings, the calibrated
 * busy loop, the METG sweep, the optional checks done by task bodies, and the result line.
 *
 * Written in the common subset of C11 and C++20: micro_omp.c (gcc -fopenmp), micro_starpu.c and the
 * C++ variants (micro_weft.cpp, micro_tbb.cpp) include it. Everything is static: each executable
 * includes it once. Shared flags use the GCC __atomic builtins, which both languages accept on
 * plain integers. */
#ifndef WEFT_BENCH_MICRO_COMMON_H
#define WEFT_BENCH_MICRO_COMMON_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
#define BENCH_THREAD_LOCAL thread_local
#else
#define BENCH_THREAD_LOCAL _Thread_local
#endif

#if defined(__GNUC__)
#define BENCH_UNUSED __attribute__((unused))
#define BENCH_NOINLINE __attribute__((noinline))
#else
#define BENCH_UNUSED
#define BENCH_NOINLINE
#endif

/* --- patterns and options ------------------------------------------------------------------- */

enum bench_pattern {
  BENCH_INDEP,    /* n independent empty tasks */
  BENCH_CHAIN,    /* n tasks, each inout on one variable */
  BENCH_STENCIL,  /* stencil_1d, two fields, width w: (s,c) out f[s%2][c], in f[(s+1)%2][c-1..c+1] */
  BENCH_INOUTSET, /* r rounds of: m tasks inoutset(x), k tasks in(x), one task out(x) */
  BENCH_METG,     /* stencil_1d of width w, t steps, busy bodies, swept durations -> METG(50%) */
  BENCH_PENDING   /* gate task out(g), then n tasks in(g)+out(own cell) held pending: bytes/task */
};

typedef struct bench_options {
  enum bench_pattern pattern;
  const char *pattern_name;
  long n;         /* tasks (indep, chain, stencil, pending) */
  int width;      /* stencil and metg width; metg: 0 = number of workers */
  long rounds;    /* inoutset rounds */
  int members;    /* inoutset: tasks in the inoutset per round */
  int readers;    /* inoutset: readers per round */
  long steps;     /* metg timesteps per point */
  double max_ns;  /* metg: longest task duration swept */
  double min_ns;  /* metg: shortest task duration swept */
  double factor;  /* metg: ratio between two consecutive durations */
  int threads;    /* 0 = the runtime's default */
  int gate_ms;    /* pending: the gate gives up after this long, so no run can hang on it */
  int verify;     /* task bodies check the order they run in; the result line says ok or FAIL */
} bench_options;

#define BENCH_MAX_WIDTH 4096

static BENCH_UNUSED void bench_usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s <pattern> [options]\n"
          "patterns: indep | chain | stencil | inoutset | metg | pending\n"
          "  -n N          tasks (indep, chain, stencil, pending)       [1000000]\n"
          "  -w W          stencil/metg width (metg: 0 = workers)       [8 / 0]\n"
          "  -r R          inoutset rounds                              [10000]\n"
          "  -m M          inoutset members per round                   [8]\n"
          "  -k K          inoutset readers per round                   [8]\n"
          "  -t T          metg timesteps per duration                  [1000]\n"
          "  --max-ns D    metg longest task duration in ns             [102400]\n"
          "  --min-ns D    metg shortest task duration in ns            [100]\n"
          "  --factor F    metg ratio between durations                 [2]\n"
          "  -p P          workers (0 = runtime default / env)          [0]\n"
          "  --gate-ms MS  pending: longest time the gate holds         [3000]\n"
          "  --verify      task bodies check the dependence order\n"
          "Prints one line: pattern=... runtime=... threads=... n=... param=... ns_per_task=... "
          "rss_kb=...\n",
          argv0);
}

static BENCH_UNUSED long bench_parse_long(const char *s, const char *what) {
  char *end = NULL;
  double v = strtod(s, &end); /* accepts 1e6 */
  if (end == s || *end != '\0' || v < 0 || v > 9e18) {
    fprintf(stderr, "bench: bad value '%s' for %s\n", s, what);
    exit(2);
  }
  return (long)v;
}

static BENCH_UNUSED double bench_parse_double(const char *s, const char *what) {
  char *end = NULL;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || !(v >= 0)) {
    fprintf(stderr, "bench: bad value '%s' for %s\n", s, what);
    exit(2);
  }
  return v;
}

/* Parses argv into o; exits with status 2 and the usage on error. */
static BENCH_UNUSED void bench_parse(int argc, char **argv, bench_options *o) {
  static const char *const names[] = {"indep", "chain", "stencil", "inoutset", "metg", "pending"};
  int i, found = 0;
  memset(o, 0, sizeof *o);
  o->n = 1000000;
  o->width = -1;
  o->rounds = 10000;
  o->members = 8;
  o->readers = 8;
  o->steps = 1000;
  o->max_ns = 102400; /* 100 ns x 2^10: the sweep ends on 100 ns */
  o->min_ns = 100;
  o->factor = 2;
  o->gate_ms = 3000;
  if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    bench_usage(argv[0]);
    exit(argc < 2 ? 2 : 0);
  }
  for (i = 0; i < (int)(sizeof names / sizeof names[0]); ++i) {
    if (strcmp(argv[1], names[i]) == 0) {
      o->pattern = (enum bench_pattern)i;
      o->pattern_name = names[i];
      found = 1;
    }
  }
  if (!found) {
    fprintf(stderr, "bench: unknown pattern '%s'\n", argv[1]);
    bench_usage(argv[0]);
    exit(2);
  }
  for (i = 2; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--verify") == 0) {
      o->verify = 1;
      continue;
    }
    if (!v) {
      fprintf(stderr, "bench: option %s needs a value\n", a);
      exit(2);
    }
    if (strcmp(a, "-n") == 0) o->n = bench_parse_long(v, a);
    else if (strcmp(a, "-w") == 0) o->width = (int)bench_parse_long(v, a);
    else if (strcmp(a, "-r") == 0) o->rounds = bench_parse_long(v, a);
    else if (strcmp(a, "-m") == 0) o->members = (int)bench_parse_long(v, a);
    else if (strcmp(a, "-k") == 0) o->readers = (int)bench_parse_long(v, a);
    else if (strcmp(a, "-t") == 0) o->steps = bench_parse_long(v, a);
    else if (strcmp(a, "--max-ns") == 0) o->max_ns = bench_parse_double(v, a);
    else if (strcmp(a, "--min-ns") == 0) o->min_ns = bench_parse_double(v, a);
    else if (strcmp(a, "--factor") == 0) o->factor = bench_parse_double(v, a);
    else if (strcmp(a, "-p") == 0) o->threads = (int)bench_parse_long(v, a);
    else if (strcmp(a, "--gate-ms") == 0) o->gate_ms = (int)bench_parse_long(v, a);
    else {
      fprintf(stderr, "bench: unknown option '%s'\n", a);
      bench_usage(argv[0]);
      exit(2);
    }
    ++i;
  }
  if (o->width < 0) o->width = o->pattern == BENCH_METG ? 0 : 8;
  if (o->n < 1 || o->width > BENCH_MAX_WIDTH || (o->pattern == BENCH_STENCIL && o->width < 1) ||
      o->rounds < 1 || o->members < 1 || o->readers < 0 || o->steps < 1 || o->factor <= 1.0 ||
      o->min_ns <= 0 || o->max_ns < o->min_ns) {
    fprintf(stderr, "bench: option out of range\n");
    exit(2);
  }
}

/* --- clocks and memory ------------------------------------------------------------------------ */

static inline double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Resident set now, in bytes (/proc/self/statm, second field, in pages). */
static BENCH_UNUSED long bench_rss_bytes(void) {
  long size = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* Peak resident set of the process, in KiB. */
static BENCH_UNUSED long bench_peak_rss_kb(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
  return ru.ru_maxrss;
}

/* --- busy loop -------------------------------------------------------------------------------- */

/* A loop the compiler cannot shorten: the empty asm claims to read and change the counter. No
 * clock, no memory traffic: the task body of the METG pattern. */
static inline void bench_spin(unsigned long iterations) {
  unsigned long i;
  for (i = 0; i < iterations; ++i) __asm__ __volatile__("" : "+r"(i));
}

/* Busy-loop iterations per nanosecond: the best of several timed runs of at least 10 ms each, so a
 * preemption during calibration cannot make the loop look slower than it is. */
static BENCH_UNUSED double bench_calibrate(void) {
  unsigned long iters = 1ul << 16;
  double best = 0, t0, t1;
  int trial;
  for (;;) { /* grow until one run lasts 10 ms */
    t0 = bench_now_ns();
    bench_spin(iters);
    t1 = bench_now_ns();
    if (t1 - t0 >= 1e7) break;
    iters *= 2;
  }
  for (trial = 0; trial < 5; ++trial) {
    double rate;
    t0 = bench_now_ns();
    bench_spin(iters);
    t1 = bench_now_ns();
    rate = (double)iters / (t1 - t0);
    if (rate > best) best = rate;
  }
  return best;
}

/* --- task bodies shared by all variants (they do nothing unless --verify) ---------------------- */

static int bench_verify;             /* set once before any task exists */
static long bench_errors;            /* checks that failed (atomic) */
static long bench_ran;               /* bodies that ran, counted when verifying (atomic) */
static long *bench_field[2];         /* stencil fields: step stamps, see bench_stencil_body */
static long bench_chain_cell;        /* chain: the one variable */
static long bench_set_stamp;         /* inoutset: rounds closed so far */
static long bench_set_members_done;  /* inoutset: members of the current round done */
static long bench_set_readers_done;  /* inoutset: readers of the current round done */
static int bench_set_members, bench_set_readers;

#define BENCH_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define BENCH_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define BENCH_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

static inline void bench_check(int ok) {
  if (!ok) BENCH_ADD(&bench_errors, 1);
}

static inline void bench_indep_body(void) {
  if (bench_verify) BENCH_ADD(&bench_ran, 1);
}

static inline void bench_chain_body(long i) {
  if (bench_verify) {
    bench_check(BENCH_LOAD(&bench_chain_cell) == i);
    BENCH_STORE(&bench_chain_cell, i + 1);
    BENCH_ADD(&bench_ran, 1);
  }
}

/* Prepares the stencil fields for width w: field 1 holds the stamp of "step -1" (read by step 0),
 * field 0 that of "step -2" (overwritten by step 0). Returns 0 when out of memory. */
static BENCH_UNUSED int bench_stencil_setup(int w) {
  int c;
  free(bench_field[0]);
  free(bench_field[1]);
  bench_field[0] = (long *)malloc(sizeof(long) * (size_t)w);
  bench_field[1] = (long *)malloc(sizeof(long) * (size_t)w);
  if (!bench_field[0] || !bench_field[1]) return 0;
  for (c = 0; c < w; ++c) {
    bench_field[0][c] = -2;
    bench_field[1][c] = -1;
  }
  return 1;
}

static inline int bench_left(int c) { return c > 0 ? c - 1 : c; }
static inline int bench_right(int c, int w) { return c + 1 < w ? c + 1 : c; }

/* Task (s, c): its inputs must hold step s-1 (no read before the write: RAW) and its output cell
 * step s-2 (the previous writer ran: WAW). A reader of step s-1 that finds s in a cell it reads
 * catches a write that ran before it (WAR). */
static inline void bench_stencil_body(long s, int c, int w) {
  if (bench_verify) {
    const long *in = bench_field[(s + 1) & 1];
    long *out = bench_field[s & 1];
    bench_check(BENCH_LOAD(&in[bench_left(c)]) == s - 1);
    bench_check(BENCH_LOAD(&in[c]) == s - 1);
    bench_check(BENCH_LOAD(&in[bench_right(c, w)]) == s - 1);
    bench_check(BENCH_LOAD(&out[c]) == s - 2);
    BENCH_STORE(&out[c], s);
    BENCH_ADD(&bench_ran, 1);
  }
}

static BENCH_UNUSED void bench_inoutset_setup(int members, int readers) {
  bench_set_stamp = 0;
  bench_set_members_done = 0;
  bench_set_readers_done = 0;
  bench_set_members = members;
  bench_set_readers = readers;
}

/* Round r: members run after the previous round's out task, readers after every member, the out
 * task after every reader (and so after every member). */
static inline void bench_member_body(long r) {
  if (bench_verify) {
    bench_check(BENCH_LOAD(&bench_set_stamp) == r);
    bench_check(BENCH_LOAD(&bench_set_readers_done) == 0);
    BENCH_ADD(&bench_set_members_done, 1);
    BENCH_ADD(&bench_ran, 1);
  }
}

static inline void bench_reader_body(long r) {
  if (bench_verify) {
    bench_check(BENCH_LOAD(&bench_set_stamp) == r);
    bench_check(BENCH_LOAD(&bench_set_members_done) == bench_set_members);
    BENCH_ADD(&bench_set_readers_done, 1);
    BENCH_ADD(&bench_ran, 1);
  }
}

static inline void bench_close_body(long r) {
  if (bench_verify) {
    bench_check(BENCH_LOAD(&bench_set_stamp) == r);
    bench_check(BENCH_LOAD(&bench_set_members_done) == bench_set_members);
    bench_check(BENCH_LOAD(&bench_set_readers_done) == bench_set_readers);
    BENCH_STORE(&bench_set_members_done, 0);
    BENCH_STORE(&bench_set_readers_done, 0);
    BENCH_STORE(&bench_set_stamp, r + 1);
    BENCH_ADD(&bench_ran, 1);
  }
}

/* --- pending: the gate ------------------------------------------------------------------------ */

/* The producer marks itself: a gate that a runtime runs on the producer thread (inline, or while
 * the producer waits) cannot wait for the producer, so it opens at once and says so. */
static BENCH_THREAD_LOCAL int bench_is_producer;
static int bench_gate_release;   /* set by the producer once every task is created */
static int bench_gate_state;     /* 0 not run, 1 holding, 2 opened normally, 3 ran on producer, 4 timed out */
static int bench_gate_ms = 3000;

enum { BENCH_GATE_IDLE, BENCH_GATE_HOLDING, BENCH_GATE_OPENED, BENCH_GATE_EARLY, BENCH_GATE_TIMEOUT };

static BENCH_UNUSED void bench_gate_body(void) {
  int state;
  if (__atomic_load_n(&bench_gate_release, __ATOMIC_ACQUIRE)) {
    state = BENCH_GATE_OPENED;
  } else if (bench_is_producer) {
    state = BENCH_GATE_EARLY;
  } else {
    double deadline = bench_now_ns() + 1e6 * bench_gate_ms;
    __atomic_store_n(&bench_gate_state, BENCH_GATE_HOLDING, __ATOMIC_RELEASE);
    state = BENCH_GATE_OPENED;
    while (!__atomic_load_n(&bench_gate_release, __ATOMIC_ACQUIRE)) {
      if (bench_now_ns() > deadline) {
        state = BENCH_GATE_TIMEOUT;
        break;
      }
      bench_spin(1000);
    }
  }
  __atomic_store_n(&bench_gate_state, state, __ATOMIC_RELEASE);
}

/* A task behind the gate: the gate must have finished. */
static inline void bench_pending_body(void) {
  if (bench_verify) {
    int s = __atomic_load_n(&bench_gate_state, __ATOMIC_ACQUIRE);
    bench_check(s == BENCH_GATE_OPENED || s == BENCH_GATE_EARLY || s == BENCH_GATE_TIMEOUT);
    BENCH_ADD(&bench_ran, 1);
  }
}

static BENCH_UNUSED const char *bench_gate_name(int state) {
  switch (state) {
    case BENCH_GATE_IDLE: return "not-run";
    case BENCH_GATE_HOLDING: return "holding";
    case BENCH_GATE_OPENED: return "opened";
    case BENCH_GATE_EARLY: return "ran-on-producer";
    default: return "timed-out";
  }
}

/* Arms the gate before the producer starts. */
static BENCH_UNUSED void bench_gate_setup(int gate_ms) {
  bench_gate_ms = gate_ms;
  __atomic_store_n(&bench_gate_release, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&bench_gate_state, BENCH_GATE_IDLE, __ATOMIC_RELAXED);
}

/* Opens the gate; returns 1 when it was still holding every task back (not finished) until now. */
static BENCH_UNUSED int bench_gate_open(void) {
  int s = __atomic_load_n(&bench_gate_state, __ATOMIC_ACQUIRE);
  __atomic_store_n(&bench_gate_release, 1, __ATOMIC_RELEASE);
  return s == BENCH_GATE_IDLE || s == BENCH_GATE_HOLDING;
}

/* --- result line ------------------------------------------------------------------------------ */

/* A growing buffer for the extra key=value fields of the result line. */
typedef struct bench_extra {
  char text[2048];
  size_t used;
} bench_extra;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static BENCH_UNUSED void
bench_add(bench_extra *e, const char *fmt, ...) {
  va_list ap;
  int k;
  if (e->used >= sizeof e->text - 1) return;
  e->text[e->used++] = ' ';
  va_start(ap, fmt);
  k = vsnprintf(e->text + e->used, sizeof e->text - e->used, fmt, ap);
  va_end(ap);
  if (k > 0) e->used += (size_t)k;
  if (e->used >= sizeof e->text) e->used = sizeof e->text - 1;
}

/* Adds verified=ok|FAIL when checking; returns the process exit status. expected < 0: no count. */
static BENCH_UNUSED int bench_verify_result(bench_extra *e, long expected) {
  long errors = BENCH_LOAD(&bench_errors), ran = BENCH_LOAD(&bench_ran);
  if (!bench_verify) return 0;
  if (expected >= 0 && ran != expected) ++errors;
  if (errors == 0) {
    bench_add(e, "verified=ok");
    return 0;
  }
  bench_add(e, "verified=FAIL errors=%ld ran=%ld expected=%ld", errors, ran, expected);
  return 1;
}

/* Prints the one result line. param: the pattern's shape ("-" when none). */
static BENCH_UNUSED void bench_print(const bench_options *o, const char *runtime, int threads, long n,
                                     const char *param, double ns_per_task, const bench_extra *e) {
  printf("pattern=%s runtime=%s threads=%d n=%ld param=%s ns_per_task=%.1f rss_kb=%ld%s\n",
         o->pattern_name, runtime, threads, n, param, ns_per_task, bench_peak_rss_kb(),
         e ? e->text : "");
  fflush(stdout);
}

/* A pattern a variant cannot express: one line saying so, exit status 3. */
static BENCH_UNUSED int bench_unsupported(const bench_options *o, const char *runtime, int threads,
                                          const char *reason) {
  printf("pattern=%s runtime=%s threads=%d n=0 param=- status=unsupported reason=%s\n",
         o->pattern_name, runtime, threads, reason);
  fflush(stdout);
  return 3;
}

/* --- METG ------------------------------------------------------------------------------------- */

/* Runs stencil_1d of width w, steps t, every body spinning `iterations`; returns wall ns. */
/* The result of the pending pattern: bytes per pending task from the RSS growth, whether the gate
   held every task back, and the RSS before and after. */
static BENCH_UNUSED void bench_report_pending(bench_extra *e, long n, long before, long after, int held) {
  bench_add(e, "bytes_per_task=%.1f held=%d gate=%s rss_before_kb=%ld rss_after_kb=%ld",
            (double)(after - before) / (double)n, held,
            bench_gate_name(__atomic_load_n(&bench_gate_state, __ATOMIC_ACQUIRE)), before / 1024, after / 1024);
}

typedef double (*bench_stencil_runner)(void *ctx, int width, long steps, unsigned long iterations);

/* Sweeps task durations from max_ns down by `factor` to min_ns. Efficiency of one point = (tasks x
 * duration / workers) / wall: the serial time of the same busy work spread perfectly over the
 * workers, over the time taken. METG(50%) = the smallest duration whose efficiency is >= 0.5.
 * Prints the result line: ns_per_task = wall per task with empty bodies (duration 0). */
static BENCH_UNUSED void bench_metg(const bench_options *o, const char *runtime, int threads,
                                    bench_stencil_runner run, void *ctx, bench_extra *e) {
  int width = o->width > 0 ? o->width : threads;
  long tasks = (long)width * o->steps;
  double per_ns = bench_calibrate();
  double d, metg = -1, overhead;
  bench_extra curve;
  char param[32];
  curve.used = 0;
  curve.text[0] = '\0';
  overhead = run(ctx, width, o->steps, 0) / (double)tasks;
  for (d = o->max_ns; d >= o->min_ns * 0.999; d /= o->factor) {
    unsigned long iterations = (unsigned long)(d * per_ns + 0.5);
    double wall = run(ctx, width, o->steps, iterations);
    double eff = ((double)tasks * d / threads) / wall;
    if (eff >= 0.5 && (metg < 0 || d < metg)) metg = d;
    bench_add(&curve, "%.0f:%.3f", d, eff);
  }
  /* curve entries are joined with '/' so the line stays one field per key */
  {
    size_t i;
    for (i = 1; i < curve.used; ++i)
      if (curve.text[i] == ' ') curve.text[i] = '/';
  }
  if (metg > 0) bench_add(e, "metg_ns=%.0f", metg);
  else bench_add(e, "metg_ns=none");
  bench_add(e, "spin_per_ns=%.3f eff=%s", per_ns, curve.used > 1 ? curve.text + 1 : "-");
  snprintf(param, sizeof param, "%d", width);
  bench_print(o, runtime, threads, tasks, param, overhead, e);
}

/* How a variant runs each pattern. inoutset may be NULL (unsupported there: the variant reports
   it). pending sets *held to whether the gate kept every task back while they were created. */
typedef struct bench_runners {
  double (*indep)(long n);
  double (*chain)(long n);
  double (*stencil)(int w, long steps, unsigned long iterations);
  double (*inoutset)(long rounds, int members, int readers);
  double (*pending)(long n, long *rss_before, long *rss_after, int *held);
} bench_runners;

static BENCH_UNUSED double bench_stencil_of(void *runners, int w, long steps, unsigned long iterations) {
  return ((const bench_runners *)runners)->stencil(w, steps, iterations);
}

/* Runs o's pattern with the variant's runners, setting *n, *wall and param. Returns 1 when the
   caller should check and print the result, 2 when the pattern printed its own lines (metg), 0 when
   the variant must handle it (an unsupported inoutset), -1 when setting up failed (out of memory). */
static BENCH_UNUSED int bench_run(const bench_options *o, const bench_runners *r, const char *runtime, int threads,
                                  bench_extra *e, long *n, double *wall, char *param, size_t param_size) {
  switch (o->pattern) {
    case BENCH_INDEP:
      *n = o->n;
      *wall = r->indep(*n);
      return 1;
    case BENCH_CHAIN:
      *n = o->n;
      *wall = r->chain(*n);
      snprintf(param, param_size, "1");
      return 1;
    case BENCH_STENCIL: {
      long steps = (o->n + o->width - 1) / o->width;
      *n = steps * o->width;
      if (!bench_stencil_setup(o->width)) return -1;
      *wall = r->stencil(o->width, steps, 0);
      snprintf(param, param_size, "%d", o->width);
      return 1;
    }
    case BENCH_INOUTSET:
      if (!r->inoutset) return 0;
      *n = o->rounds * (o->members + o->readers + 1);
      bench_inoutset_setup(o->members, o->readers);
      *wall = r->inoutset(o->rounds, o->members, o->readers);
      snprintf(param, param_size, "%dx%d", o->members, o->readers);
      return 1;
    case BENCH_METG: {
      int width = o->width > 0 ? o->width : threads;
      bench_verify = 0;
      if (!bench_stencil_setup(width)) return -1;
      bench_metg(o, runtime, threads, bench_stencil_of, (void *)r, e);
      return 2;
    }
    case BENCH_PENDING: {
      long before = 0, after = 0;
      int held = 0;
      *n = o->n;
      bench_gate_setup(o->gate_ms);
      *wall = r->pending(*n, &before, &after, &held);
      bench_report_pending(e, *n, before, after, held);
      return 1;
    }
    default:
      return 0;
  }
}

#endif /* WEFT_BENCH_MICRO_COMMON_H */
