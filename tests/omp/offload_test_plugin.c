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

VISIBLE const char *GOMP_OFFLOAD_get_name(void) { return "weft-test"; }
VISIBLE unsigned GOMP_OFFLOAD_get_caps(void) { return (1u << 1) | (1u << 2); /* NATIVE_EXEC | OPENMP_400 */ }
VISIBLE int GOMP_OFFLOAD_get_type(void) { return 2; /* OFFLOAD_TARGET_TYPE_HOST: no images of its own */ }
VISIBLE int GOMP_OFFLOAD_get_num_devices(void) {
  const char *v = getenv("OFFLOAD_TEST_DEVICES");
  return v ? atoi(v) : 1;
}
VISIBLE bool GOMP_OFFLOAD_init_device(int n) { (void)n; return true; }
VISIBLE bool GOMP_OFFLOAD_fini_device(int n) { (void)n; return true; }
VISIBLE unsigned GOMP_OFFLOAD_version(void) { return 1; }
VISIBLE int GOMP_OFFLOAD_load_image(int n, unsigned v, const void *data, struct addr_pair **table) {
  (void)n, (void)v, (void)data;
  *table = NULL;
  return 0;
}
VISIBLE bool GOMP_OFFLOAD_unload_image(int n, unsigned v, const void *data) {
  (void)n, (void)v, (void)data;
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

VISIBLE void GOMP_OFFLOAD_run(int n, void *fn, void *vars, void **args) {
  (void)n, (void)args;
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
