/* The distributed taskiter through the OpenMP door: an MPI + gcc -fopenmp program whose loop of
 * #pragma omp task depend(...) is made distributed with weft/omp_ext.h alone.
 *
 * A 1-D in-place (Gauss-Seidel) sweep over NB blocks: block b += f(block b-1 of this sweep, block
 * b+1 of the last), STEPS sweeps; block b's home is block-cyclic over the ranks, and every third
 * task is placed explicitly (weft_dist_set_next_rank) on the next rank instead. Linked to
 * libweft-dist, the ranks share the work and each checks its home blocks against a serial sweep;
 * on libgomp (weak references: nothing linked) every rank runs the whole loop alone and checks it. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <weft/omp_ext.h>

enum { NB = 12, BS = 16, STEPS = 9 };

static void update(double* self, const double* left, const double* right) {
  for (int i = 0; i < BS; ++i)
    self[i] = 0.5 * self[i] + 0.25 * (left ? left[i] : 1.0) + 0.25 * (right ? right[i] : 0.0);
}

int main(int argc, char** argv) {
  int provided = 0, rank = 0, ranks = 1, world_rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const int on_weft = weft_omp_dist_available();
  if (on_weft) {
    rank = weft_dist_rank();
    ranks = weft_dist_size();
  }
  double ref[NB][BS];
  for (int b = 0; b < NB; ++b)
    for (int i = 0; i < BS; ++i) ref[b][i] = (double)(b * BS + i) / (NB * BS);
  for (int k = 0; k < STEPS; ++k)
    for (int b = 0; b < NB; ++b) update(ref[b], b ? ref[b - 1] : NULL, b + 1 < NB ? ref[b + 1] : NULL);

  double* u = weft_dist_alloc(sizeof(double) * NB * BS);
  for (int b = 0; b < NB; ++b) weft_dist_region(u + b * BS, sizeof(double) * BS, weft_dist_block_cyclic(b, 2));
  for (int b = 0; b < NB; ++b)
    if (weft_dist_home(u + b * BS) == rank)
      for (int i = 0; i < BS; ++i) u[b * BS + i] = (double)(b * BS + i) / (NB * BS);

  weft_graph_options_t o;
  memset(&o, 0, sizeof o);
  o.mode = WEFT_GRAPH_DISTRIBUTED;
  o.iterations = STEPS;
  int rc_begin = 0, rc_end = 0;
#pragma omp parallel
#pragma omp single
  {
    /* Without libweft-dist (libgomp, or weft alone) the loop is an ordinary one on each rank. */
    if (on_weft) rc_begin = weft_graph_begin_with(&o);
    for (int k = 0; k < (on_weft ? 1 : STEPS); ++k) { /* on weft the round is recorded once */
      if (on_weft) weft_graph_iteration();
      for (int b = 0; b < NB; ++b) {
        double *self = u + b * BS, *left = b ? u + (b - 1) * BS : NULL, *right = b + 1 < NB ? u + (b + 1) * BS : NULL;
        if (b % 3 == 2) weft_dist_set_next_rank((b + 1) % ranks);
        if (left && right) {
#pragma omp task depend(inout : self[0]) depend(in : left[0], right[0]) firstprivate(self, left, right)
          update(self, left, right);
        } else if (left) {
#pragma omp task depend(inout : self[0]) depend(in : left[0]) firstprivate(self, left)
          update(self, left, NULL);
        } else {
#pragma omp task depend(inout : self[0]) depend(in : right[0]) firstprivate(self, right)
          update(self, NULL, right);
        }
      }
    }
    if (on_weft) rc_end = weft_graph_end();
  }
  int bad = rc_begin != 0 || rc_end != 0;
  if (bad) fprintf(stderr, "rank %d: weft_graph_begin_with %d, weft_graph_end %d\n", rank, rc_begin, rc_end);
  for (int b = 0; b < NB && !bad; ++b) {
    if (on_weft && weft_dist_home(u + b * BS) != rank) continue;
    if (memcmp(u + b * BS, ref[b], sizeof ref[b]) != 0) {
      fprintf(stderr, "rank %d: block %d differs from the serial sweep\n", rank, b);
      bad = 1;
    }
  }
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (world_rank == 0 && !any)
    printf("OpenMP door: %d sweeps on %s match the serial sweep\n", STEPS,
           on_weft ? "weft (distributed)" : "another runtime (each rank alone)");
  weft_dist_free(u);
  MPI_Finalize();
  return any;
}
