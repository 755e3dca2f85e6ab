/* Affinity display (OpenMP 5.0), in libgomp's format:
 * - affinity-format-var starts as OMP_AFFINITY_FORMAT, else libgomp's default
 *   "level %L thread %i affinity %A"; omp_set/get_affinity_format (a short buffer gets a truncated,
 *   terminated copy and the full length is returned);
 * - omp_capture_affinity expands every field, short and long names (%t %T %L %n %N %a %H %P %i %A,
 *   %{team_num} ... %{thread_affinity}) at level 0, in a team and in a nested team, with the size
 *   and justification modifiers (%0.4n zero-filled, %.4n right-justified, %4n left-justified) and
 *   %% for a percent sign; it returns the length needed even when the buffer is too short; a null
 *   or empty format means affinity-format-var. %i is the pthread_t in hex, %A the CPUs of the
 *   calling thread's affinity mask as ranges ("0-3,6");
 * - with OMP_DISPLAY_AFFINITY=true (registration affinity_format.display, which also sets
 *   OMP_AFFINITY_FORMAT=AFF:%L:%0.3n:%{num_threads}) every thread of a team of two or more prints
 *   one line when it enters its first region and again when what the fields show changes (not for
 *   the same team again); omp_display_affinity prints one line per call. */
#define _GNU_SOURCE
#include "omp_test.h"
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#define DEFAULT_FORMAT "level %L thread %i affinity %A"
#define DISPLAY_FORMAT "AFF:%L:%0.3n:%{num_threads}"

static void cpu_ranges(char *out, size_t size) {
  cpu_set_t set;
  CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity");
  out[0] = 0;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set) || (c > 0 && CPU_ISSET(c - 1, &set))) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) last++;
    size_t n = strlen(out);
    if (last == c)
      snprintf(out + n, size - n, "%s%d", n ? "," : "", c);
    else
      snprintf(out + n, size - n, "%s%d-%d", n ? "," : "", c, last);
  }
}

/* The expected expansion of "%t|%T|%L|%n|%N|%a|%H|%P|%i|%A" for the calling thread. */
static void expected_fields(char *out, size_t size) {
  char host[256] = "", cpus[1024];
  gethostname(host, sizeof host - 1);
  cpu_ranges(cpus, sizeof cpus);
  snprintf(out, size, "%d|%d|%d|%d|%d|%d|%s|%d|0x%lx|%s", omp_get_team_num(), omp_get_num_teams(), omp_get_level(),
           omp_get_thread_num(), omp_get_num_threads(), omp_get_ancestor_thread_num(omp_get_level() - 1), host,
           (int)getpid(), (unsigned long)pthread_self(), cpus);
}

/* 0 when both field lists expand as expected for the calling thread. */
static int fields_wrong(void) {
  char want[2048], got[2048];
  expected_fields(want, sizeof want);
  size_t n = omp_capture_affinity(got, sizeof got, "%t|%T|%L|%n|%N|%a|%H|%P|%i|%A");
  if (n != strlen(want) || strcmp(got, want) != 0) {
    fprintf(stderr, "short fields: got '%s' (%zu), expected '%s'\n", got, n, want);
    return 1;
  }
  n = omp_capture_affinity(got, sizeof got,
                           "%{team_num}|%{num_teams}|%{nesting_level}|%{thread_num}|%{num_threads}|%{ancestor_tnum}|"
                           "%{host}|%{process_id}|%{native_thread_id}|%{thread_affinity}");
  if (n != strlen(want) || strcmp(got, want) != 0) {
    fprintf(stderr, "long fields: got '%s' (%zu), expected '%s'\n", got, n, want);
    return 1;
  }
  return 0;
}

static int capture_is(const char *format, const char *want) {
  char got[512];
  size_t n = omp_capture_affinity(got, sizeof got, format);
  if (n == strlen(want) && strcmp(got, want) == 0) return 1;
  fprintf(stderr, "'%s' expanded to '%s' (%zu), expected '%s'\n", format, got, n, want);
  return 0;
}

/* OMP_DISPLAY_AFFINITY: stderr goes to a file while regions run; returns the lines written since
 * the last call that start with prefix. */
static FILE *display_log;
static long display_seen;
static int new_lines(const char *prefix, char lines[][64], int max) {
  fflush(stderr);
  fseek(display_log, display_seen, SEEK_SET);
  char line[256];
  int n = 0;
  while (fgets(line, sizeof line, display_log)) {
    line[strcspn(line, "\n")] = 0;
    if (strncmp(line, prefix, strlen(prefix)) == 0 && n < max) snprintf(lines[n++], 64, "%.63s", line);
  }
  display_seen = ftell(display_log);
  return n;
}

static void check_display(int T) {
  CHECK(omp_test_env_is("OMP_AFFINITY_FORMAT", DISPLAY_FORMAT), "the display registration sets OMP_AFFINITY_FORMAT");
  char path[] = "/tmp/weft-affinity-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp");
  display_log = fopen(path, "r");
  unlink(path);
  int saved = dup(2);
  fflush(stderr);
  dup2(fd, 2);
  /* Lines of each step, counted while stderr is redirected and checked after. */
  static char first[16][64], again[16][64], bigger[16][64], calls[16][64];
  int n_first, n_again, n_bigger, n_calls;
  #pragma omp parallel
  omp_test_spin(100);
  n_first = new_lines("AFF:", first, 16);
  #pragma omp parallel
  omp_test_spin(100);
  n_again = new_lines("AFF:", again, 16);
  #pragma omp parallel num_threads(T + 1)
  omp_test_spin(100);
  n_bigger = new_lines("AFF:", bigger, 16);
  #pragma omp parallel num_threads(2)
  omp_display_affinity("CALL:%n/%N");
  omp_display_affinity(NULL);
  omp_display_affinity("");
  n_calls = new_lines("CALL:", calls, 16);
  int n_level0 = 0;
  fseek(display_log, 0, SEEK_SET);
  char line[256];
  while (fgets(line, sizeof line, display_log)) n_level0 += strcmp(line, "AFF:0:000:1\n") == 0;
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  fclose(display_log);

  CHECK(n_first == (T > 1 ? T : 0), "first region of %d: %d display lines", T, n_first);
  int seen[16] = {0};
  for (int i = 0; i < n_first; i++) {
    int level = -1, num = -1, size = -1;
    char exact[64];
    CHECK(sscanf(first[i], "AFF:%d:%d:%d", &level, &num, &size) == 3 && level == 1 && size == T && num >= 0 &&
              num < T && !seen[num]++ && snprintf(exact, sizeof exact, "AFF:1:%03d:%d", num, T) > 0 &&
              strcmp(exact, first[i]) == 0,
          "display line '%s'", first[i]);
  }
  CHECK(n_again == 0, "the same team again printed %d lines, first '%s'", n_again, again[0]);
  CHECK(n_bigger == T + 1, "a team of %d printed %d lines", T + 1, n_bigger);
  memset(seen, 0, sizeof seen);
  for (int i = 0; i < n_bigger; i++) {
    int level = -1, num = -1, size = -1;
    CHECK(sscanf(bigger[i], "AFF:%d:%d:%d", &level, &num, &size) == 3 && level == 1 && size == T + 1 && num >= 0 &&
              num <= T && !seen[num]++,
          "display line '%s'", bigger[i]);
  }
  CHECK(n_calls == 2, "omp_display_affinity in a team of 2 printed %d lines", n_calls);
  CHECK(strcmp(calls[0], calls[1]) != 0 && (strcmp(calls[0], "CALL:0/2") == 0 || strcmp(calls[0], "CALL:1/2") == 0) &&
            (strcmp(calls[1], "CALL:0/2") == 0 || strcmp(calls[1], "CALL:1/2") == 0),
        "omp_display_affinity lines '%s' '%s'", calls[0], calls[1]);
  CHECK(n_level0 == 2, "omp_display_affinity(NULL) and (\"\") at level 0: %d lines 'AFF:0:000:1'", n_level0);
}

int main(void) {
  int T = omp_test_threads();
  const char *env_format = getenv("OMP_AFFINITY_FORMAT");
  int display = omp_test_env_is("OMP_DISPLAY_AFFINITY", "true");

  PHASE("affinity-format-var");
  {
    const char *want = env_format ? env_format : DEFAULT_FORMAT;
    char buf[256];
    size_t n = omp_get_affinity_format(buf, sizeof buf);
    CHECK(n == strlen(want) && strcmp(buf, want) == 0, "initial format '%s' (%zu), expected '%s'", buf, n, want);
    char small[6];
    n = omp_get_affinity_format(small, sizeof small);
    CHECK(n == strlen(want) && strlen(small) == 5 && strncmp(small, want, 5) == 0, "short buffer: '%s' (%zu)", small, n);
    CHECK(omp_get_affinity_format(NULL, 0) == strlen(want), "length without a buffer");
    if (env_format) CHECK(capture_is(NULL, "AFF:0:000:1"), "OMP_AFFINITY_FORMAT is used by omp_capture_affinity");
  }

  if (display) {
    PHASE("OMP_DISPLAY_AFFINITY");
    check_display(T);
    PASS();
  }

  PHASE("fields at level 0");
  CHECK(fields_wrong() == 0, "level 0 (see above)");

  PHASE("fields in a team and in a nested team");
  {
    omp_set_max_active_levels(2);
    int bad = 0;
    #pragma omp parallel reduction(+ : bad)
    {
      #pragma omp critical
      bad += fields_wrong();
      #pragma omp parallel num_threads(2) reduction(+ : bad)
      {
        #pragma omp critical
        bad += fields_wrong();
      }
    }
    CHECK(bad == 0, "%d threads expanded a field wrongly (see above)", bad);
  }

  PHASE("size and justification");
  {
    char host[256] = "", want[512];
    gethostname(host, sizeof host - 1);
    CHECK(capture_is("[%0.4n][%.4n][%4n][%0.3{thread_num}][%.3{num_threads}][%3{nesting_level}]",
                     "[0000][   0][0   ][000][  1][0  ]"),
          "numbers at level 0");
    CHECK(capture_is("[%0.5a][%.5a][%5a][%1L][%%][%%n]", "[-0001][   -1][-1   ][0][%][%n]"), "negatives and %%%%");
    snprintf(want, sizeof want, "[%-40s][%40s][%s]", host, host, host);
    CHECK(capture_is("[%40H][%.40{host}][%1{host}]", want), "host justified in 40 columns");
    snprintf(want, sizeof want, "[0x%016lx]", (unsigned long)pthread_self());
    CHECK(capture_is("[%0.18i]", want), "zero-filled native thread id keeps its 0x");
    int bad = 0;
    #pragma omp parallel num_threads(3) reduction(+ : bad)
    {
      char expect[64];
      snprintf(expect, sizeof expect, "L%02d n%-3dN%3d", omp_get_level(), omp_get_thread_num(), omp_get_num_threads());
      bad += !capture_is("L%0.2L n%3nN%.3N", expect);
    }
    CHECK(bad == 0, "%d threads: modifiers in a team", bad);
  }

  PHASE("return value and buffers");
  {
    char buf[8];
    memset(buf, 'x', sizeof buf);
    size_t n = omp_capture_affinity(buf, 5, "abcdefghij%0.4n");
    CHECK(n == 14 && strcmp(buf, "abcd") == 0 && buf[5] == 'x', "short buffer: %zu '%s'", n, buf);
    CHECK(omp_capture_affinity(NULL, 0, "%0.100n") == 100, "length needed without a buffer");
    omp_set_affinity_format("T%n of %N");
    char out[64];
    n = omp_get_affinity_format(out, sizeof out);
    CHECK(n == 9 && strcmp(out, "T%n of %N") == 0, "omp_set_affinity_format: '%s'", out);
    CHECK(capture_is(NULL, "T0 of 1") && capture_is("", "T0 of 1"), "null and empty formats use the variable");
    int bad = 0;
    #pragma omp parallel num_threads(2) reduction(+ : bad)
    {
      char expect[32];
      snprintf(expect, sizeof expect, "T%d of 2", omp_get_thread_num());
      bad += !capture_is(NULL, expect);
    }
    CHECK(bad == 0, "affinity-format-var in a team");
  }
  (void)T;
  PASS();
}
