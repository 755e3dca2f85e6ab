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
 * Distributed taskiter (weft/dist.h, docs/dist.md) for an MPI + OpenMP program linked to (or
 * preloading) libweft-dist: the shared data in weft_dist_alloc's heap, cut with weft_dist_region;
 * weft_graph_begin_with with mode WEFT_GRAPH_DISTRIBUTED; and, before a #pragma omp task,
 *
 *   weft_dist_set_next_rank(r);          // the task runs on rank r (default: owner computes)
 *
 * The calls are weak references: the same binary runs unchanged on libgomp or LLVM libomp, where
 * they do nothing (the loop runs as ordinary tasks, regions as the runtime runs them; without
 * libweft-dist each rank sees itself alone: weft_dist_rank 0, weft_dist_size 1, weft_dist_alloc is
 * calloc, every region's home 0), and on weft. Link with nothing extra. */
#ifndef WEFT_OMP_EXT_H
#define WEFT_OMP_EXT_H

#include <stdlib.h>
#include <weft/dist.h>
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

#pragma weak weft_dist_rank
#pragma weak weft_dist_size
#pragma weak weft_dist_alloc
#pragma weak weft_dist_free
#pragma weak weft_dist_region
#pragma weak weft_dist_home
#pragma weak weft_dist_block_cyclic
#pragma weak weft_dist_set_next_rank

/* 1 when the program runs on weft with libweft-dist (distributed graphs take effect). */
static inline int weft_omp_dist_available(void) { return weft_dist_alloc != 0; }

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
#define weft_dist_rank() (weft_dist_rank ? (weft_dist_rank)() : 0)
#define weft_dist_size() (weft_dist_size ? (weft_dist_size)() : 1)
#define weft_dist_alloc(bytes) (weft_dist_alloc ? (weft_dist_alloc)(bytes) : calloc(1, (bytes)))
#define weft_dist_free(address) (weft_dist_free ? (weft_dist_free)(address) : (free(address), 0))
#define weft_dist_region(address, bytes, home) (weft_dist_region ? (weft_dist_region)(address, bytes, home) : 0)
#define weft_dist_home(address) (weft_dist_home ? (weft_dist_home)(address) : 0)
#define weft_dist_block_cyclic(index, block) (weft_dist_block_cyclic ? (weft_dist_block_cyclic)(index, block) : 0)
#define weft_dist_set_next_rank(rank) (weft_dist_set_next_rank ? (weft_dist_set_next_rank)(rank) : 0)
#define weft_omp_reset_gang_sched() (weft_omp_reset_gang_sched ? (weft_omp_reset_gang_sched)() : (void)0)

#endif /* WEFT_OMP_EXT_H */
