// Exported entry points of the OpenMP door. Their symbol versions (GOMP_1.0, OMP_3.0, ...) come
// from the linker version script libgomp.map, so that a gcc-built binary's versioned references
// bind to them under LD_PRELOAD and when weft stands in as libgomp.so.1.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GOMP_API __attribute__((visibility("default")))

// Flags of GOMP_task and GOMP_taskloop (gcc's include/gomp-constants.h values).
enum {
  GOMP_TASK_FLAG_UNTIED = 1 << 0,
  GOMP_TASK_FLAG_FINAL = 1 << 1,
  GOMP_TASK_FLAG_MERGEABLE = 1 << 2,
  GOMP_TASK_FLAG_DEPEND = 1 << 3,
  GOMP_TASK_FLAG_PRIORITY = 1 << 4,
  GOMP_TASK_FLAG_UP = 1 << 8,
  GOMP_TASK_FLAG_GRAINSIZE = 1 << 9,
  GOMP_TASK_FLAG_IF = 1 << 10,
  GOMP_TASK_FLAG_NOGROUP = 1 << 11,
  GOMP_TASK_FLAG_REDUCTION = 1 << 12,
  GOMP_TASK_FLAG_DETACH = 1 << 13,
  GOMP_TASK_FLAG_STRICT = 1 << 14,
};

// Dependence kinds in omp_depend_t objects (depobj).
enum { GOMP_DEPEND_IN = 1, GOMP_DEPEND_OUT = 2, GOMP_DEPEND_INOUT = 3, GOMP_DEPEND_MUTEXINOUTSET = 4,
       GOMP_DEPEND_INOUTSET = 5 };

// GOMP_cancel / GOMP_cancellation_point kinds.
enum { GOMP_CANCEL_PARALLEL = 1, GOMP_CANCEL_LOOP = 2, GOMP_CANCEL_SECTIONS = 4, GOMP_CANCEL_TASKGROUP = 8 };
