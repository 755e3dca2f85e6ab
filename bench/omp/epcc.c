/* epcc: OpenMP synchronisation and scheduling overheads, measured the EPCC way.
 *
 * Plain C11, built by gcc -O2 -fopenmp: the same binary runs on GCC libgomp (as linked), on LLVM
 * libomp (LD_PRELOAD=libomp.so.5) and on weft's OpenMP door (LD_PRELOAD=libweft.so).
 *
 * Method (the one published with the EPCC OpenMP micro-benchmarks; this code is written from
 * scratch): a busy delay of D ns is calibrated at start. For each construct, a timed block runs
 * `inner` instances of the construct, each doing the delay where a program would do its work, and a
 * reference block runs, on one thread and with no OpenMP at all, the delays that the block's
 * critical path would contain under a runtime that cost nothing. The two blocks alternate `outer`
 * times;
 *
 *     overhead_ns = (t_block - t_reference) / inner        (median over the outer repetitions)
 *
 * i.e. the wall-clock time the team loses per instance of the construct. The delay is calibrated
 * with omp_get_wtime; blocks are timed with clock_gettime(CLOCK_MONOTONIC), one clock for every
 * runtime. What one instance is and which delays the reference runs, per construct (T = team size,
 * P = --iters-per-thread):
 *
 *   parallel     a parallel region; every thread delays once                 ref: 1 delay
 *   for-static   in one region: a `for` of P*T iterations, schedule(static),
 *   for-dynamic  schedule(dynamic,1) or schedule(guided), each iteration a
 *   for-guided   delay, with the loop's closing barrier                      ref: P delays
 *   barrier      in one region: every thread delays, then a barrier          ref: 1 delay
 *   single       in one region: a single whose body is the delay (+ barrier) ref: 1 delay
 *   critical     in one region, the team shares the instances (inner/T each):
 *                a critical section around the delay (serialised)            ref: 1 delay
 *   lock         as critical, with omp_set_lock / omp_unset_lock             ref: 1 delay
 *   atomic       the team shares the instances: delay, then `omp atomic` +=1
 *                on one shared counter                           ref: 1/T of (delay + plain +=1)
 *   reduction    a `parallel for reduction(+)` of T iterations, each a delay ref: 1 delay
 *   ordered      one iteration of a `parallel for ordered schedule(static,1)`
 *                whose ordered block is the delay (serialised)               ref: 1 delay
 *   task         one task whose body is the delay, created by the single
 *                thread of a parallel region; then taskwait                  ref: 1/T delay
 *
 * A block that spans one parallel region (every construct but parallel and reduction) pays for that
 * region once: it is amortised over `inner`, which by default grows until a block takes at least
 * --target-us. Each block checks what it ran (iteration counts, the ordered sequence, the reduction
 * value, every thread taking part); a wrong result ends the run with exit status 1.
 *
 * Output (stdout): one line per construct, `construct,threads,overhead_ns`; threads is the team size
 * the runtime gave (omp_get_num_threads in a region). On stderr, `#` lines: the calibration, the
 * library each OpenMP entry point resolved to, and per construct inner, outer, the spread, and the
 * voluntary / involuntary context switches of the process while timing (csw, icsw: icsw well above
 * 0 means the threads were preempted, i.e. the machine was busy). A
 * construct whose entry points do not all come from the library that runs parallel regions (a door
 * missing a GOMP symbol falls through to libgomp, still linked) is run anyway and reported on stderr
 * as `mixed-runtime`; the exit status is then 3. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define EPCC_MAX_THREADS 1024

/* --- options ------------------------------------------------------------------------------------ */

static double opt_delay_ns = 100.0; /* busy delay per instance */
static long opt_inner = 0;          /* 0 = grow until a block takes opt_target_us */
static int opt_outer = 20;
static double opt_target_us = 1000.0;
static double opt_warmup_ms = 20.0;
static long opt_iters_per_thread = 8;
static int opt_threads = 0; /* 0 = the runtime's default (OMP_NUM_THREADS) */
static int opt_header = 0;

/* --- the delay ---------------------------------------------------------------------------------- */

static unsigned long delay_iters; /* iterations of busy() that take opt_delay_ns */

/* A loop the compiler cannot remove or shorten: the empty asm makes x opaque at every iteration. No
 * memory is written, so threads delaying side by side do not disturb one another. */
__attribute__((noinline, noclone)) static void busy(unsigned long n) {
  unsigned long x = 0;
  for (unsigned long i = 0; i < n; ++i) {
    x += i;
    __asm__ volatile("" : "+r"(x));
  }
}

static inline void delay(void) { busy(delay_iters); }

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ns per busy() iteration with omp_get_wtime: grow n until one run takes >= 2 ms, then the best of 5
 * runs (preemption can only make a run slower). The blocks themselves are timed on CLOCK_MONOTONIC,
 * the same clock whichever runtime answers (LLVM libomp's omp_get_wtime moves in steps of
 * microseconds); a runtime whose omp_get_wtime disagrees with it gets a warning. */
static double calibrate(double *clock_ratio) {
  unsigned long n = 1UL << 12;
  double t = 0;
  for (;;) {
    double t0 = omp_get_wtime();
    busy(n);
    t = omp_get_wtime() - t0;
    if (t >= 2e-3 || n >= (1UL << 40)) break;
    n *= 2;
  }
  double best = INFINITY, ratio = 1.0;
  for (int i = 0; i < 5; ++i) {
    double m0 = mono_now(), t0 = omp_get_wtime();
    busy(n);
    double t1 = omp_get_wtime(), m1 = mono_now();
    if (t1 - t0 < best) {
      best = t1 - t0;
      ratio = (m1 - m0) > 0 ? (t1 - t0) / (m1 - m0) : 1.0;
    }
  }
  *clock_ratio = ratio;
  return best * 1e9 / (double)n;
}

/* --- what each block checks ------------------------------------------------------------------- */

typedef struct {
  _Alignas(64) long n;
  char pad[64 - sizeof(long)];
} slot;

static slot hits[EPCC_MAX_THREADS]; /* per-thread counters: each thread writes only its own */
static int team;                    /* team size, from the first region */
static int wrong;                   /* a block ran something other than what it should */
static char wrong_text[256];

static void fail(const char *fmt, long a, long b) {
  if (!wrong) snprintf(wrong_text, sizeof wrong_text, fmt, a, b);
  wrong = 1;
}

static inline void hit(void) {
  int me = omp_get_thread_num();
  if (me >= 0 && me < EPCC_MAX_THREADS) hits[me].n++;
}

static void clear_hits(void) {
  for (int i = 0; i < EPCC_MAX_THREADS; ++i) hits[i].n = 0;
}

/* Every thread of the team must have counted `each` (each < 0: only the total is checked). */
static void check_hits(long total, long each) {
  long sum = 0;
  for (int i = 0; i < EPCC_MAX_THREADS; ++i) {
    sum += hits[i].n;
    if (each >= 0 && i < team && hits[i].n != each) fail("thread %ld ran %ld instances", i, hits[i].n);
    if (i >= team && hits[i].n) fail("thread %ld is outside a team of %ld", i, team);
  }
  if (sum != total) fail("%ld instances ran, %ld expected", sum, total);
}

/* --- constructs: each runs a block of `inner` instances and returns its seconds -------------- */

static double t_parallel(long inner) {
  clear_hits();
  double t0 = mono_now();
  for (long j = 0; j < inner; ++j) {
#pragma omp parallel
    {
      delay();
      hit();
    }
  }
  double t = mono_now() - t0;
  check_hits(inner * team, inner);
  return t;
}

#define EPCC_FOR(NAME, SCHEDULE)                                                                  \
  static double NAME(long inner) {                                                              \
    long n = opt_iters_per_thread * team;                                                        \
    clear_hits();                                                                                \
    double t0 = mono_now();                                                                 \
    _Pragma("omp parallel") {                                                                    \
      for (long j = 0; j < inner; ++j) {                                                         \
        _Pragma(SCHEDULE) for (long i = 0; i < n; ++i) {                                         \
          delay();                                                                               \
          hit();                                                                                 \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
    double t = mono_now() - t0;                                                             \
    check_hits(inner * n, -1);                                                                   \
    return t;                                                                                    \
  }

EPCC_FOR(t_for_static, "omp for schedule(static)")
EPCC_FOR(t_for_dynamic, "omp for schedule(dynamic, 1)")
EPCC_FOR(t_for_guided, "omp for schedule(guided)")

static double t_barrier(long inner) {
  clear_hits();
  double t0 = mono_now();
#pragma omp parallel
  {
    for (long j = 0; j < inner; ++j) {
      delay();
      hit();
#pragma omp barrier
    }
  }
  double t = mono_now() - t0;
  check_hits(inner * team, inner);
  return t;
}

static double t_single(long inner) {
  long count = 0;
  double t0 = mono_now();
#pragma omp parallel shared(count)
  {
    for (long j = 0; j < inner; ++j) {
#pragma omp single
      {
        delay();
        count++; /* one thread at a time: the single's barrier orders them */
      }
    }
  }
  double t = mono_now() - t0;
  if (count != inner) fail("%ld singles ran, %ld expected", count, inner);
  return t;
}

static double t_critical(long inner) {
  long count = 0;
  clear_hits();
  double t0 = mono_now();
#pragma omp parallel shared(count)
  {
    long mine = inner / omp_get_num_threads();
    for (long j = 0; j < mine; ++j) {
#pragma omp critical
      {
        delay();
        count++;
      }
      hit();
    }
  }
  double t = mono_now() - t0;
  if (count != inner) fail("%ld critical sections ran, %ld expected", count, inner);
  check_hits(inner, inner / team);
  return t;
}

static omp_lock_t lock;

static double t_lock(long inner) {
  long count = 0;
  clear_hits();
  double t0 = mono_now();
#pragma omp parallel shared(count)
  {
    long mine = inner / omp_get_num_threads();
    for (long j = 0; j < mine; ++j) {
      omp_set_lock(&lock);
      delay();
      count++;
      omp_unset_lock(&lock);
      hit();
    }
  }
  double t = mono_now() - t0;
  if (count != inner) fail("%ld locked sections ran, %ld expected", count, inner);
  check_hits(inner, inner / team);
  return t;
}

static long atomic_counter;

static double t_atomic(long inner) {
  atomic_counter = 0;
  double t0 = mono_now();
#pragma omp parallel
  {
    long mine = inner / omp_get_num_threads();
    for (long j = 0; j < mine; ++j) {
      delay();
#pragma omp atomic
      atomic_counter += 1;
    }
  }
  double t = mono_now() - t0;
  if (atomic_counter != inner) fail("atomic counter reached %ld, %ld expected", atomic_counter, inner);
  return t;
}

static double t_reduction(long inner) {
  long n = team, bad = 0;
  double t0 = mono_now();
  for (long j = 0; j < inner; ++j) {
    long sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (long i = 0; i < n; ++i) {
      delay();
      sum += i + 1;
    }
    bad += sum != n * (n + 1) / 2;
  }
  double t = mono_now() - t0;
  if (bad) fail("%ld of %ld reductions were wrong", bad, inner);
  return t;
}

static double t_ordered(long inner) {
  long next = 0, bad = 0;
  double t0 = mono_now();
#pragma omp parallel for ordered schedule(static, 1) shared(next, bad)
  for (long i = 0; i < inner; ++i) {
#pragma omp ordered
    {
      delay();
      bad += next != i;
      next = i + 1;
    }
  }
  double t = mono_now() - t0;
  if (bad || next != inner) fail("ordered blocks ran out of order (%ld wrong, last %ld)", bad, next);
  return t;
}

static double t_task(long inner) {
  clear_hits();
  double t0 = mono_now();
#pragma omp parallel
  {
#pragma omp single
    {
      for (long j = 0; j < inner; ++j) {
#pragma omp task
        {
          delay();
          hit();
        }
      }
#pragma omp taskwait
    }
  }
  double t = mono_now() - t0;
  check_hits(inner, -1);
  return t;
}

/* --- references: the same delays on one thread, no OpenMP ------------------------------------ */

static double r_delays(double count) {
  long n = (long)llround(count);
  double t0 = mono_now();
  for (long j = 0; j < n; ++j) delay();
  return mono_now() - t0;
}

static volatile long plain_counter;

static double r_delay_add(double count) {
  long n = (long)llround(count);
  double t0 = mono_now();
  for (long j = 0; j < n; ++j) {
    delay();
    plain_counter += 1;
  }
  return mono_now() - t0;
}

/* --- OpenMP entry points: which library answers each one ------------------------------------- */

/* The addresses the program itself uses (its GOT, filled by the dynamic linker with the same lookup
 * as its calls), named through asm labels so no prototype clashes with gcc's built-in ones. */
#define EPCC_ENTRY(NAME) extern void epcc_sym_##NAME(void) __asm__(#NAME);
#define EPCC_ENTRIES(X)                                                                          \
  X(GOMP_parallel) X(GOMP_barrier) X(GOMP_single_start) X(GOMP_critical_start)                   \
  X(GOMP_critical_end) X(GOMP_loop_nonmonotonic_dynamic_start)                                   \
  X(GOMP_loop_nonmonotonic_dynamic_next) X(GOMP_loop_nonmonotonic_guided_start)                  \
  X(GOMP_loop_nonmonotonic_guided_next) X(GOMP_loop_end) X(GOMP_loop_end_nowait)                 \
  X(GOMP_loop_ordered_static_start) X(GOMP_loop_ordered_static_next) X(GOMP_ordered_start)       \
  X(GOMP_ordered_end) X(GOMP_task) X(GOMP_taskwait)         \
  X(omp_get_num_threads) X(omp_get_thread_num) X(omp_get_wtime) X(omp_init_lock)                 \
  X(omp_set_lock) X(omp_unset_lock) X(omp_destroy_lock) X(omp_set_num_threads)
EPCC_ENTRIES(EPCC_ENTRY)
#define EPCC_ENTRY_ADDR(NAME) {#NAME, (void *)epcc_sym_##NAME},
static const struct {
  const char *name;
  void *addr;
} entries[] = {EPCC_ENTRIES(EPCC_ENTRY_ADDR)};

static const char *library_of(const char *name) {
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
    if (strcmp(entries[i].name, name)) continue;
    Dl_info info;
    if (!entries[i].addr || !dladdr(entries[i].addr, &info) || !info.dli_fname) return "?";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
  }
  return "?";
}

/* --- the table of constructs ------------------------------------------------------------------ */

typedef struct {
  const char *name;
  double (*block)(long inner);
  double (*reference)(double count);
  int ref_kind;      /* reference delays per instance: 0 = 1, 1 = P, 2 = 1/T */
  int split;         /* the team shares the instances: inner is a multiple of T */
  const char *calls; /* entry points its code calls (gcc 12), space-separated */
} construct;

static const construct constructs[] = {
    {"parallel", t_parallel, r_delays, 0, 0, "GOMP_parallel omp_get_thread_num"},
    {"for-static", t_for_static, r_delays, 1, 0,
     "GOMP_parallel GOMP_barrier omp_get_num_threads omp_get_thread_num"},
    {"for-dynamic", t_for_dynamic, r_delays, 1, 0,
     "GOMP_parallel GOMP_loop_nonmonotonic_dynamic_start GOMP_loop_nonmonotonic_dynamic_next "
     "GOMP_loop_end omp_get_thread_num"},
    {"for-guided", t_for_guided, r_delays, 1, 0,
     "GOMP_parallel GOMP_loop_nonmonotonic_guided_start GOMP_loop_nonmonotonic_guided_next "
     "GOMP_loop_end omp_get_thread_num"},
    {"barrier", t_barrier, r_delays, 0, 0, "GOMP_parallel GOMP_barrier omp_get_thread_num"},
    {"single", t_single, r_delays, 0, 0, "GOMP_parallel GOMP_single_start GOMP_barrier"},
    {"critical", t_critical, r_delays, 0, 1,
     "GOMP_parallel GOMP_critical_start GOMP_critical_end omp_get_num_threads omp_get_thread_num"},
    {"lock", t_lock, r_delays, 0, 1,
     "GOMP_parallel omp_set_lock omp_unset_lock omp_init_lock omp_destroy_lock omp_get_num_threads "
     "omp_get_thread_num"},
    {"atomic", t_atomic, r_delay_add, 2, 1, "GOMP_parallel omp_get_num_threads"},
    {"reduction", t_reduction, r_delays, 0, 0,
     "GOMP_parallel omp_get_num_threads omp_get_thread_num"},
    {"ordered", t_ordered, r_delays, 0, 0,
     "GOMP_parallel GOMP_loop_ordered_static_start GOMP_loop_ordered_static_next "
     "GOMP_ordered_start GOMP_ordered_end GOMP_loop_end_nowait"},
    {"task", t_task, r_delays, 2, 0,
     "GOMP_parallel GOMP_single_start GOMP_task GOMP_taskwait omp_get_thread_num"},
};
#define EPCC_NCONSTRUCTS (sizeof constructs / sizeof constructs[0])

static double ref_count(const construct *c, long inner) {
  switch (c->ref_kind) {
  case 1: return (double)inner * (double)opt_iters_per_thread;
  case 2: return (double)inner / (double)team;
  default: return (double)inner;
  }
}

static long round_inner(const construct *c, long inner) {
  if (inner < 1) inner = 1;
  if (c->split && inner % team) inner += team - inner % team;
  return inner;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Returns 0, or 3 when the construct's entry points came from more than one library. */
static int check_entries(const construct *c, const char *door) {
  char calls[512], note[1024] = "";
  int mixed = 0;
  snprintf(calls, sizeof calls, "%s", c->calls);
  for (char *save = NULL, *name = strtok_r(calls, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
    const char *lib = library_of(name);
    if (strcmp(lib, door)) {
      size_t len = strlen(note);
      snprintf(note + len, sizeof note - len, " %s=%s", name, lib);
      mixed = 1;
    }
  }
  if (mixed) {
    fprintf(stderr, "# %s: mixed-runtime: parallel regions from %s but%s\n", c->name, door, note);
    fflush(stderr);
  }
  return mixed ? 3 : 0;
}

static int run_construct(const construct *c, const char *door) {
  int status = check_entries(c, door);
  /* Warm-up: small blocks for --warmup-ms, so that the sizing below does not see the runtime's
   * first, slower instances (threads waking, pools filling). */
  double warm_until = mono_now() + opt_warmup_ms * 1e-3;
  long warm_inner = round_inner(c, 1);
  do {
    double t = c->block(warm_inner);
    if (t < 1e-4 && warm_inner < LONG_MAX / 4) warm_inner = round_inner(c, warm_inner * 2);
  } while (!wrong && mono_now() < warm_until);
  long inner = round_inner(c, opt_inner);
  if (opt_inner <= 0) { /* grow inner until a block takes target_us (also warms the construct) */
    double target = opt_target_us * 1e-6;
    inner = round_inner(c, 1);
    for (;;) {
      double t = INFINITY; /* the best of 3: one preempted block must not decide the size */
      for (int k = 0; k < 3 && !wrong; ++k) {
        double tk = c->block(inner);
        if (tk < t) t = tk;
      }
      if (wrong || t >= target || inner >= LONG_MAX / 64) break;
      double grow = t > 0 ? 1.2 * target / t : 16.0;
      if (grow > 16.0) grow = 16.0;
      if (grow < 2.0) grow = 2.0;
      inner = round_inner(c, (long)((double)inner * grow));
    }
  } else {
    c->block(inner); /* warm-up */
  }
  double *tb = malloc(sizeof(double) * (size_t)opt_outer * 3);
  if (!tb) {
    fprintf(stderr, "epcc: out of memory\n");
    return 1;
  }
  double *tr = tb + opt_outer, *ov = tr + opt_outer;
  double count = ref_count(c, inner);
  struct rusage ru0, ru1; /* context switches while timing: a busy machine shows here */
  getrusage(RUSAGE_SELF, &ru0);
  for (int r = 0; r < opt_outer && !wrong; ++r) {
    tr[r] = c->reference(count);
    tb[r] = c->block(inner);
    ov[r] = (tb[r] - tr[r]) * 1e9 / (double)inner;
  }
  getrusage(RUSAGE_SELF, &ru1);
  if (wrong) {
    fprintf(stderr, "epcc: %s: wrong result: %s\n", c->name, wrong_text);
    free(tb);
    return 1;
  }
  double lo = INFINITY, hi = -INFINITY;
  for (int r = 0; r < opt_outer; ++r) {
    if (ov[r] < lo) lo = ov[r];
    if (ov[r] > hi) hi = ov[r];
  }
  double mov = median(ov, opt_outer);
  double mref = median(tr, opt_outer) * 1e9 / (double)inner;
  double mblock = median(tb, opt_outer) * 1e9 / (double)inner;
  printf("%s,%d,%.1f\n", c->name, team, mov);
  fflush(stdout);
  fprintf(stderr,
          "# %s: threads=%d inner=%ld outer=%d block_ns=%.1f ref_ns=%.1f overhead_ns=%.1f "
          "min=%.1f max=%.1f csw=%ld icsw=%ld\n",
          c->name, team, inner, opt_outer, mblock, mref, mov, lo, hi, ru1.ru_nvcsw - ru0.ru_nvcsw,
          ru1.ru_nivcsw - ru0.ru_nivcsw);
  free(tb);
  return status;
}

/* --- main ------------------------------------------------------------------------------------- */

static void usage(FILE *f, const char *argv0) {
  fprintf(f,
          "usage: %s [options]\n"
          "  --construct NAME      one of the constructs below, or all            [all]\n"
          "  --delay-ns D          busy delay per instance, ns                    [100]\n"
          "  --inner K             instances per timed block (0 = grow to target) [0]\n"
          "  --target-us U         with --inner 0: a block takes at least U us    [1000]\n"
          "  --outer R             timed blocks (each with its reference)         [20]\n"
          "  --warmup-ms W         run the construct this long before sizing/timing [20]\n"
          "  --iters-per-thread P  for-*: loop iterations per thread              [8]\n"
          "  --threads N           omp_set_num_threads(N) (0 = OMP_NUM_THREADS)   [0]\n"
          "  --header              print the CSV header line first\n"
          "  --list                print the construct names and exit\n"
          "prints construct,threads,overhead_ns per construct; details on stderr\n"
          "constructs:",
          argv0);
  for (size_t i = 0; i < EPCC_NCONSTRUCTS; ++i) fprintf(f, " %s", constructs[i].name);
  fprintf(f, "\n");
}

static double parse_number(const char *opt, const char *text, double lo, double hi) {
  char *end;
  errno = 0;
  double v = text ? strtod(text, &end) : 0;
  if (!text || errno || end == text || *end || v < lo || v > hi) {
    fprintf(stderr, "epcc: %s needs a number in [%g, %g], not '%s'\n", opt, lo, hi, text ? text : "");
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  const char *which = "all";
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout, argv[0]);
      return 0;
    } else if (!strcmp(a, "--list")) {
      for (size_t k = 0; k < EPCC_NCONSTRUCTS; ++k) printf("%s\n", constructs[k].name);
      return 0;
    } else if (!strcmp(a, "--header")) {
      opt_header = 1;
      continue;
    } else if (!strcmp(a, "--construct")) {
      if (!v) {
        usage(stderr, argv[0]);
        return 2;
      }
      which = v;
    } else if (!strcmp(a, "--delay-ns")) {
      opt_delay_ns = parse_number(a, v, 0, 1e9);
    } else if (!strcmp(a, "--inner")) {
      opt_inner = (long)parse_number(a, v, 0, 1e12);
    } else if (!strcmp(a, "--target-us")) {
      opt_target_us = parse_number(a, v, 1, 1e8);
    } else if (!strcmp(a, "--warmup-ms")) {
      opt_warmup_ms = parse_number(a, v, 0, 1e6);
    } else if (!strcmp(a, "--outer")) {
      opt_outer = (int)parse_number(a, v, 1, 1e6);
    } else if (!strcmp(a, "--iters-per-thread")) {
      opt_iters_per_thread = (long)parse_number(a, v, 1, 1e6);
    } else if (!strcmp(a, "--threads")) {
      opt_threads = (int)parse_number(a, v, 0, EPCC_MAX_THREADS);
    } else {
      fprintf(stderr, "epcc: unknown argument '%s'\n", a);
      usage(stderr, argv[0]);
      return 2;
    }
    ++i; /* the option's value */
  }
  int selected = -1;
  if (strcmp(which, "all")) {
    for (size_t k = 0; k < EPCC_NCONSTRUCTS; ++k)
      if (!strcmp(which, constructs[k].name)) selected = (int)k;
    if (selected < 0) {
      fprintf(stderr, "epcc: unknown construct '%s'\n", which);
      usage(stderr, argv[0]);
      return 2;
    }
  }

  if (opt_threads > 0) omp_set_num_threads(opt_threads);
#pragma omp parallel
  {
    if (omp_get_thread_num() == 0) team = omp_get_num_threads(); /* also starts the team */
  }
  if (team < 1 || team > EPCC_MAX_THREADS) {
    fprintf(stderr, "epcc: team of %d threads (1..%d supported)\n", team, EPCC_MAX_THREADS);
    return 1;
  }

  double clock_ratio = 1.0;
  double ns_per_iter = calibrate(&clock_ratio);
  delay_iters = (unsigned long)llround(opt_delay_ns / ns_per_iter);
  const char *door = library_of("GOMP_parallel");
  fprintf(stderr,
          "# epcc: runtime=%s threads=%d delay_ns=%.1f busy_iters=%lu ns_per_iter=%.4f "
          "omp_get_wtime=%s\n",
          door, team, opt_delay_ns, delay_iters, ns_per_iter, library_of("omp_get_wtime"));
  if (fabs(clock_ratio - 1.0) > 0.02)
    fprintf(stderr, "# epcc: warning: omp_get_wtime runs at %.4f x CLOCK_MONOTONIC\n", clock_ratio);
  omp_init_lock(&lock);

  if (opt_header) printf("construct,threads,overhead_ns\n");
  int status = 0;
  for (size_t k = 0; k < EPCC_NCONSTRUCTS; ++k) {
    if (selected >= 0 && (size_t)selected != k) continue;
    int s = run_construct(&constructs[k], door);
    if (s == 1) {
      status = 1;
      break;
    }
    if (s > status) status = s;
  }
  omp_destroy_lock(&lock);
  return status;
}
