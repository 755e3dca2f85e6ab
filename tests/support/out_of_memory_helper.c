/* The program out_of_memory_test runs in a child process: it makes one allocation fail, or every one
 * from some point on, and does ordinary work on weft. Built twice: against the C API (native) and
 * with gcc -fopenmp (run with weft standing in for libgomp.so.1).
 *
 * Environment (the test sets it):
 *   WEFT_TEST_FAIL_ALLOCATION=k   the k-th allocation after start-up fails (malloc, calloc,
 *                                 realloc, the aligned ones and mmap, counted from every thread)
 *   WEFT_TEST_FAIL_FROM_THEN_ON=1 ... and every one after it
 *   WEFT_TEST_FAIL_AT_START=1     count from the program's first allocation, start-up included
 *
 * Prints "done allocations=N" after checking its results (exit 0). The native build exits 2 after
 * "refused: out of memory by <call>" when a call returned WEFT_ERR_OUT_OF_MEMORY and said so through
 * weft_last_error; 5 when a refusal was inconsistent; 4 on a wrong result. Anything else the
 * runtime does about a failed allocation must end the process with its own message. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#else
#include <weft/weft.h>
#endif

/* --- failing allocations: these definitions take the place of libc's for the whole process ------ */
extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void* __libc_memalign(size_t, size_t);

static atomic_long allocations;
static long fail_at = -1;
static int from_then_on;
static atomic_int armed;

static int fails(void) {
  if (!atomic_load_explicit(&armed, memory_order_relaxed)) return 0;
  long n = atomic_fetch_add(&allocations, 1) + 1;
  return from_then_on ? n >= fail_at : n == fail_at;
}
void* malloc(size_t n) {
  if (fails()) return errno = ENOMEM, NULL;
  return __libc_malloc(n);
}
void* calloc(size_t count, size_t n) {
  if (fails()) return errno = ENOMEM, NULL;
  return __libc_calloc(count, n);
}
void* realloc(void* p, size_t n) {
  if (fails()) return errno = ENOMEM, NULL;
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t align, size_t n) {
  if (fails()) return errno = ENOMEM, NULL;
  return __libc_memalign(align, n);
}
void* memalign(size_t align, size_t n) {
  if (fails()) return errno = ENOMEM, NULL;
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, size_t align, size_t n) {
  if (fails()) return ENOMEM;
  void* p = __libc_memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  if (fails()) return errno = ENOMEM, MAP_FAILED;
  return (void*)syscall(SYS_mmap, addr, length, prot, flags, fd, offset);
}

static void arm_from_environment(void) {
  const char* at = getenv("WEFT_TEST_FAIL_ALLOCATION");
  if (at) fail_at = atol(at);
  from_then_on = getenv("WEFT_TEST_FAIL_FROM_THEN_ON") != NULL;
}
static void disarm(void) {
  atomic_store(&armed, 0);
}

/* --- the work: a 1-D stencil of dependent tasks checked against a sequential sweep ------------- */
#define WIDTH 32
#define STEPS 60
static double field[2][WIDTH], reference[2][WIDTH];

static void cell_update(double (*f)[WIDTH], int step, int j) {
  const double* src = f[step & 1];
  double left = j > 0 ? src[j - 1] : 0, right = j < WIDTH - 1 ? src[j + 1] : 0;
  f[(step + 1) & 1][j] = (left + src[j] + right) / 3.0 + 1.0;
}
static int field_matches(void) {
  for (int s = 0; s < STEPS; s++)
    for (int j = 0; j < WIDTH; j++) cell_update(reference, s, j);
  return memcmp(field[STEPS & 1], reference[STEPS & 1], sizeof field[0]) == 0;
}

#ifdef _OPENMP
int main(void) {
  arm_from_environment();
  if (getenv("WEFT_TEST_FAIL_AT_START")) atomic_store(&armed, 1);
#pragma omp parallel
  { (void)0; }
  atomic_store(&armed, 1);
  long sum = 0;
#pragma omp parallel
#pragma omp single
  {
    for (int s = 0; s < STEPS; s++)
      for (int j = 0; j < WIDTH; j++) {
#pragma omp task depend(out                      \
                        : field[(s + 1) & 1][j]) \
    depend(in                                    \
           : field[s & 1][j], field[s & 1][j > 0 ? j - 1 : j], field[s & 1][j < WIDTH - 1 ? j + 1 : j])
        cell_update(field, s, j);
      }
#pragma omp taskwait
#pragma omp taskgroup
    {
#pragma omp taskloop grainsize(8) reduction(+ : sum)
      for (int i = 0; i < 1000; i++) sum += i;
    }
  }
#pragma omp parallel for reduction(+ : sum) schedule(dynamic, 7)
  for (int i = 0; i < 10000; i++) sum += 1;
  disarm();
  if (!field_matches() || sum != 499500 + 10000) {
    printf("wrong result\n");
    return 4;
  }
  printf("done allocations=%ld\n", atomic_load(&allocations));
  return 0;
}
#else
struct cell_args {
  int step, j;
};
static void cell_task(void* p) {
  const struct cell_args* a = p;
  cell_update(field, a->step, a->j);
}
static _Atomic(const char*) refused_by;
static atomic_int refusal_consistent = 1;
/* A call's failure: it must be WEFT_ERR_OUT_OF_MEMORY, and weft_last_error must say so. */
static void refused(const char* call, int status) {
  if (status != WEFT_ERR_OUT_OF_MEMORY || weft_last_error() != WEFT_ERR_OUT_OF_MEMORY) {
    disarm();
    printf("inconsistent: %s returned %d, weft_last_error %d\n", call, status, weft_last_error());
    atomic_store(&refusal_consistent, 0);
  }
  atomic_store(&refused_by, call);
}

static void leaf(void* p) {
  (void)p;
}
static void parent(void* p) {
  (void)p;
  for (int i = 0; i < 40; i++) {
    weft_task_t* t = weft_task_create(leaf, NULL, 0, WEFT_TASK_DEFAULT);
    if (!t) {
      refused("weft_task_create (in a task)", weft_last_error());
      return;
    }
    weft_task_submit(t);
  }
  weft_taskwait();
}

static int make_stencil(void) {
  for (int s = 0; s < STEPS; s++)
    for (int j = 0; j < WIDTH; j++) {
      struct cell_args a = {s, j};
      weft_task_t* t = weft_task_create(cell_task, &a, sizeof a, WEFT_TASK_DEFAULT);
      if (!t) return refused("weft_task_create", weft_last_error()), 0;
      const void* reads[3] = {&field[s & 1][j], &field[s & 1][j > 0 ? j - 1 : j],
                              &field[s & 1][j < WIDTH - 1 ? j + 1 : j]};
      int status = weft_task_depend(t, WEFT_DEP_OUT, &field[(s + 1) & 1][j], sizeof(double));
      for (int r = 0; r < 3 && status == WEFT_OK; r++)
        status = weft_task_depend(t, WEFT_DEP_IN, reads[r], sizeof(double));
      if (status != WEFT_OK) {
        refused("weft_task_depend", status);
        weft_task_discard(t);
        return 0;
      }
      weft_task_submit(t);
    }
  return 1;
}

int main(void) {
  arm_from_environment();
  if (getenv("WEFT_TEST_FAIL_AT_START")) atomic_store(&armed, 1);
  int status = weft_init();
  if (status != WEFT_OK) {
    refused("weft_init", status);
  } else {
    atomic_store(&armed, 1);
    int complete = make_stencil();
    weft_taskwait();
    if (complete) {
      disarm();
      if (!field_matches()) {
        printf("wrong result\n");
        return 4;
      }
      atomic_store(&armed, 1);
    }
    weft_taskgroup_begin();
    for (int i = 0; i < 16 && !atomic_load(&refused_by); i++) {
      weft_task_t* t = weft_task_create(parent, NULL, 0, WEFT_TASK_DEFAULT);
      if (!t)
        refused("weft_task_create", weft_last_error());
      else
        weft_task_submit(t);
    }
    weft_taskgroup_end();
    weft_finalize();
  }
  disarm();
  if (!atomic_load(&refusal_consistent)) return 5;
  if (atomic_load(&refused_by)) {
    printf("refused: out of memory by %s\n", atomic_load(&refused_by));
    return 2;
  }
  printf("done allocations=%ld\n", atomic_load(&allocations));
  return 0;
}
#endif
