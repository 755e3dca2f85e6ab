/* weft/dist.h — distributed taskiter (library libweft-dist, built when MPI is found; docs/dist.md).
 *
 * Every rank runs the same program (SPMD) between MPI_Init and MPI_Finalize. The data that tasks
 * share across ranks lives in a symmetric heap (the same addresses on every rank) cut into
 * registered regions, each with a home rank. A taskiter loop opened with the mode
 * WEFT_GRAPH_DISTRIBUTED is recorded once on every rank; each task runs on one rank (its home by
 * default: the home of the first region it writes). weft then inserts the send and receive tasks
 * that carry each region from its writer to its readers (tags that match on every rank by
 * construction), fetches the values the first iteration reads, runs every iteration with no control
 * message, and writes each region back to its home at the end:
 *
 *   double *u = weft_dist_alloc(nb * bs * sizeof(double));          // collective
 *   for (int b = 0; b < nb; ++b)
 *     weft_dist_region(u + b * bs, bs * sizeof(double), weft_dist_block_cyclic(b, 1));
 *   weft_graph_options_t o = {.mode = WEFT_GRAPH_DISTRIBUTED, .iterations = steps};
 *   weft_graph_begin_with(&o);
 *   weft_graph_iteration();
 *   for (int b = 0; b < nb; ++b) { ... a task: inout u + b * bs, in its neighbours ... }
 *   weft_graph_end();   // all steps done; each region's final value is on its home rank
 *
 * Rules: every access of a task in the loop names the start of a registered region; a task's
 * accesses are its whole data (a task reading a region no access names reads a stale copy). The
 * round must be the same on every rank (checked: a checksum exchanged once, the first task that
 * differs is named). MPI must give MPI_THREAD_MULTIPLE (libweft-mpi's MPI_Init asks for it).
 * Errors return a weft_status with a message on stderr naming the call, the task and the argument. */
#ifndef WEFT_DIST_H
#define WEFT_DIST_H

#include <stddef.h>
#include <weft/weft.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This process's rank and the number of ranks (MPI_COMM_WORLD); -1 before MPI_Init. */
WEFT_API int weft_dist_rank(void);
WEFT_API int weft_dist_size(void);

/* Collective (every rank, the same sizes in the same order): bytes at the same address on every
 * rank, zero-filled, 64-byte aligned. Only the pages a rank touches take memory. NULL on error
 * (ranks asking for different sizes, the heap full: WEFT_DIST_HEAP sets its size, default 1T). */
WEFT_API void* weft_dist_alloc(size_t bytes);
/* Collective: gives the pages back; the regions inside are unregistered. */
WEFT_API int weft_dist_free(void* address);

/* Registers [address, address + bytes) of the symmetric heap as a region whose value lives on rank
 * home before and after a distributed loop. The same on every rank. Regions do not overlap. */
WEFT_API int weft_dist_region(const void* address, size_t bytes, int home);
/* The same for a 2-D region: `rows` rows of row_bytes each, stride_bytes apart (row_bytes <=
 * stride_bytes): a tile of a row-major matrix, sent as one strided MPI datatype. Tiles may
 * interleave in memory (the tiles of one row of tiles) but not overlap. */
WEFT_API int weft_dist_region_2d(const void* address, size_t rows, size_t row_bytes, size_t stride_bytes, int home);
/* The home of the region holding address, or -1 when none does (e.g. to initialise only one's own). */
WEFT_API int weft_dist_home(const void* address);
/* Block-cyclic placement: (index / block) % weft_dist_size(); -1 (said on stderr) on a negative
 * index, a block below 1 or before MPI_Init (weft_dist_region then refuses the home). */
WEFT_API int weft_dist_block_cyclic(long index, long block);

/* The rank that runs a task of a distributed loop, before its submit (default: the home of the
 * first region it writes, else of the first it reads, else rank 0). */
WEFT_API int weft_dist_task_rank(const weft_task_t* task, int rank);
/* The same for the next task the calling thread submits (the OpenMP door: #pragma omp task). */
WEFT_API int weft_dist_set_next_rank(int rank);

/* What the last distributed loop of this rank cost, step by step (paper 003, Figure 6). */
typedef struct weft_dist_timings {
  double record;     /* s: weft_graph_begin_with to weft_graph_end (the round built) */
  double check;      /* s: the checksum exchanged */
  double plan;       /* s: transfers inserted, the local round built */
  double fetch;      /* s: initial values fetched */
  double run;        /* s: every iteration */
  double write_back; /* s: final values sent home */
  long tasks;        /* of the recorded round, every rank's */
  long accesses;
  long local_tasks; /* this rank's, communication tasks included */
  long transfers;   /* send/receive pairs per round, all ranks */
} weft_dist_timings_t;
WEFT_API int weft_dist_last_timings(weft_dist_timings_t* timings);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_DIST_H */
