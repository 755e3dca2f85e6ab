/* weft extensions for OpenMP programs built with gcc -fopenmp (or clang -fopenmp).
 *
 * Persistent task graphs around an existing loop of `#pragma omp task`:
 *
 *   #include <weft/omp_ext.h>
 *   #pragma omp parallel
 *   #pragma omp single
 *   {
 *     weft_graph_begin();
 *     for (int it = 0; it < steps; ++it) {
 *       weft_graph_iteration();
 *       for (int b = 0; b < nb; ++b) {
 *         #pragma omp task depend(inout: x[b]) depend(in: x[b - 1]) firstprivate(b, it)
 *         update(b, it);
 *       }
 *     }
 *     weft_graph_end();
 *   }
 *
 * Gang-scheduled parallel regions (docs/openmp.md, "Nested regions"): after
 *
 *   weft_omp_set_gang_sched();
 *
 * the parallel regions the calling task starts, and those nested in them, run their members as
 * fibers on weft's existing workers (no new threads), even where WEFT_GANG would not;
 * weft_omp_reset_gang_sched() returns to WEFT_GANG's choice (by default: nested regions only).
 *
 * The calls are weak references: the same binary runs unchanged on libgomp or LLVM libomp, where
 * they do nothing (the loop runs as ordinary tasks, regions as the runtime runs them), and on weft.
 * Link with nothing extra. */
#ifndef WEFT_OMP_EXT_H
#define WEFT_OMP_EXT_H

#include <weft/weft.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma weak weft_graph_begin
#pragma weak weft_graph_begin_with
#pragma weak weft_graph_iteration
#pragma weak weft_graph_end

void weft_omp_set_gang_sched(void);
void weft_omp_reset_gang_sched(void);
#pragma weak weft_omp_set_gang_sched
#pragma weak weft_omp_reset_gang_sched

/* 1 when the program runs on weft (the graph calls take effect), 0 on another OpenMP runtime. */
static inline int weft_omp_graphs_available(void) { return weft_graph_begin != 0; }

#ifdef __cplusplus
}
#endif

/* Function-like macros of the same names: a call goes to weft when it is loaded, else does
 * nothing and returns 0 (WEFT_OK). The name inside each expansion is not expanded again. */
#define weft_graph_begin() (weft_graph_begin ? (weft_graph_begin)() : 0)
#define weft_graph_begin_with(options) (weft_graph_begin_with ? (weft_graph_begin_with)(options) : 0)
#define weft_graph_iteration() (weft_graph_iteration ? (weft_graph_iteration)() : 0)
#define weft_graph_end() (weft_graph_end ? (weft_graph_end)() : 0)
#define weft_omp_set_gang_sched() (weft_omp_set_gang_sched ? (weft_omp_set_gang_sched)() : (void)0)
#define weft_omp_reset_gang_sched() (weft_omp_reset_gang_sched ? (weft_omp_reset_gang_sched)() : (void)0)

#endif /* WEFT_OMP_EXT_H */
