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
 * The calls are weak references: the same binary runs unchanged on libgomp or LLVM libomp, where
 * they do nothing (the loop runs as ordinary tasks), and on weft, where the loop is recorded once
 * and replayed. Link with nothing extra. */
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

#endif /* WEFT_OMP_EXT_H */
