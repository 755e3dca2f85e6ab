/* A libgomp offload plugin for the tests (GCC 12's GOMP_OFFLOAD_* interface) with a pretend device:
   - its memory is its own: GOMP_OFFLOAD_alloc mallocs a fresh block filled with 0xA5 bytes, and data
     only moves between it and the host through host2dev/dev2host (memcpy), so a program sees a value
     only where the mapping rules copy it;
   - GOMP_OFFLOAD_CAP_NATIVE_EXEC | GOMP_OFFLOAD_CAP_OPENMP_400: a region's "device code" is the
     host function itself, run on the device copies (its argument is the device block of device
     addresses that the runtime built);
   - run executes it on the calling thread; async_run starts a thread that executes it, sleeps
     OFFLOAD_TEST_DELAY_MS (default 100) milliseconds, then calls
     GOMP_PLUGIN_target_task_completion (the runtime's callback, resolved in the process);
   - OFFLOAD_TEST_DEVICES devices (default 1);
   - built with -DOFFLOAD_TEST_NO_ASYNC it has no async_run, like GCC 12's nvptx plugin: the
     runtime then runs a target nowait region synchronously inside its task.
   Not linked against any libgomp: its GOMP_PLUGIN_* references bind to whatever runtime loaded it. */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern void GOMP_PLUGIN_target_task_completion(void *data);
extern void GOMP_PLUGIN_error(const char *fmt, ...);

struct addr_pair {
  uintptr_t start;
  uintptr_t end;
};

#define VISIBLE __attribute__((visibility("default")))

static int images_mode(void) {
  const char *v = getenv("OFFLOAD_TEST_IMAGES");
  return v && atoi(v) > 0;
}

VISIBLE const char *GOMP_OFFLOAD_get_name(void) { return "weft-test"; }
VISIBLE unsigned GOMP_OFFLOAD_get_caps(void) {
  /* NATIVE_EXEC | OPENMP_400; with OFFLOAD_TEST_IMAGES=1, OPENMP_400 only: the runtime must find
     a region's device function in the loaded image. */
  return images_mode() ? (1u << 2) : (1u << 1) | (1u << 2);
}
VISIBLE int GOMP_OFFLOAD_get_type(void) { return 2; /* OFFLOAD_TARGET_TYPE_HOST: no images of its own */ }
VISIBLE int GOMP_OFFLOAD_get_num_devices(void) {
  const char *v = getenv("OFFLOAD_TEST_DEVICES");
  return v ? atoi(v) : 1;
}
VISIBLE bool GOMP_OFFLOAD_init_device(int n) { (void)n; return true; }
VISIBLE bool GOMP_OFFLOAD_fini_device(int n) { (void)n; return true; }
VISIBLE unsigned GOMP_OFFLOAD_version(void) { return 1; }
/* An "image" (OFFLOAD_TEST_IMAGES=1): target_data points at this description, built by the test
   program (tests/omp/offload_image.c): device functions in the host table's order, the declare
   target variables' sizes and initial values, and whether the image has an omp_get_device_num
   variable (a trailing table entry, which the runtime must set to the device's number). */
struct test_image {
  int nfuncs;
  void **dev_funcs;
  int nvars;
  const size_t *var_sizes;
  const void *const *var_inits;
  int device_num_var;
};

static int *device_num_storage;
static void *var_storage[64];  /* the image's variables, freed with it */
static int nvar_storage;

VISIBLE void *GOMP_OFFLOAD_alloc(int n, size_t size);

VISIBLE int GOMP_OFFLOAD_load_image(int n, unsigned v, const void *data, struct addr_pair **table) {
  (void)n, (void)v;
  const struct test_image *im = data;
  if (!images_mode() || !im) {
    *table = NULL;
    return 0;
  }
  int count = im->nfuncs + im->nvars + (im->device_num_var ? 1 : 0);
  struct addr_pair *t = malloc((count ? count : 1) * sizeof *t);
  for (int i = 0; i < im->nfuncs; ++i) {
    t[i].start = (uintptr_t)im->dev_funcs[i];
    t[i].end = t[i].start + 1;
  }
  for (int i = 0; i < im->nvars; ++i) {
    void *storage = GOMP_OFFLOAD_alloc(n, im->var_sizes[i]);
    if (nvar_storage < 64) var_storage[nvar_storage++] = storage;
    memcpy(storage, im->var_inits[i], im->var_sizes[i]);
    t[im->nfuncs + i].start = (uintptr_t)storage;
    t[im->nfuncs + i].end = (uintptr_t)storage + im->var_sizes[i];
  }
  if (im->device_num_var) {
    device_num_storage = GOMP_OFFLOAD_alloc(n, sizeof(int));
    t[count - 1].start = (uintptr_t)device_num_storage;
    t[count - 1].end = (uintptr_t)device_num_storage + sizeof(int);
  }
  *table = t;
  return count;
}
VISIBLE bool GOMP_OFFLOAD_unload_image(int n, unsigned v, const void *data) {
  (void)n, (void)v, (void)data;
  free(device_num_storage);  /* what load_image allocated (LeakSanitizer checks) */
  device_num_storage = NULL;
  while (nvar_storage > 0) free(var_storage[--nvar_storage]);
  return true;
}

VISIBLE void *GOMP_OFFLOAD_alloc(int n, size_t size) {
  (void)n;
  void *p = malloc(size ? size : 1);
  if (p) memset(p, 0xA5, size);
  return p;
}
VISIBLE bool GOMP_OFFLOAD_free(int n, void *p) {
  (void)n;
  free(p);
  return true;
}
VISIBLE bool GOMP_OFFLOAD_dev2host(int n, void *dst, const void *src, size_t size) {
  (void)n;
  memcpy(dst, src, size);
  return true;
}
VISIBLE bool GOMP_OFFLOAD_host2dev(int n, void *dst, const void *src, size_t size) {
  (void)n;
  memcpy(dst, src, size);
  return true;
}
VISIBLE bool GOMP_OFFLOAD_dev2dev(int n, void *dst, const void *src, size_t size) {
  (void)n;
  memmove(dst, src, size);
  return true;
}

extern void GOMP_PLUGIN_fatal(const char *fmt, ...);

VISIBLE void GOMP_OFFLOAD_run(int n, void *fn, void *vars, void **args) {
  (void)args;
  if (device_num_storage && *device_num_storage != n)
    GOMP_PLUGIN_fatal("offload test plugin: the image's device number variable is %d, not %d", *device_num_storage, n);
  ((void (*)(void *))fn)(vars);
}

#ifndef OFFLOAD_TEST_NO_ASYNC
struct async_run {
  void *fn, *vars, *async_data;
};

static void *async_body(void *arg) {
  struct async_run *r = arg;
  ((void (*)(void *))r->fn)(r->vars);
  const char *v = getenv("OFFLOAD_TEST_DELAY_MS");
  long ms = v ? atol(v) : 100;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  GOMP_PLUGIN_target_task_completion(r->async_data);
  free(r);
  return NULL;
}

VISIBLE void GOMP_OFFLOAD_async_run(int n, void *fn, void *vars, void **args, void *async_data) {
  (void)n, (void)args;
  struct async_run *r = malloc(sizeof *r);
  r->fn = fn;
  r->vars = vars;
  r->async_data = async_data;
  pthread_t t;
  if (pthread_create(&t, NULL, async_body, r) != 0) {
    GOMP_PLUGIN_error("offload test plugin: pthread_create failed");
    async_body(r);
    return;
  }
  pthread_detach(t);
}
#endif
