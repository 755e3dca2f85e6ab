// pingpong: the measurement behind `netrun.sh --self-test`, between ranks 0 and 1 (others wait).
// Prints one line on rank 0:
//   netrun-selftest lat_min_us=.. lat_med_us=.. lat_avg_us=.. bw_gbit=..
// lat_*: one-way latency of 8-byte messages (half the round trip; min, median and mean over the
// iterations);
// bw_gbit: payload bandwidth of back-to-back 4 MiB sends (rank 1 acknowledges the last one).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "pingpong: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int lat_iters = argc > 1 ? atoi(argv[1]) : 1000;
  const int bw_msgs = argc > 2 ? atoi(argv[2]) : 10;
  const int big = 4 << 20;
  char small[8] = {0};
  char* buf = calloc((size_t)big, 1);
  double* rtts = calloc((size_t)lat_iters, sizeof *rtts);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank < 2) {
    const int peer = 1 - rank;
    double min_rtt = 1e30, sum_rtt = 0;
    // The first 50 round trips set up the connection and warm the caches: not counted.
    for (int i = -50; i < lat_iters; ++i) {
      double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(small, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(small, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(small, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(small, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
      }
      double rtt = MPI_Wtime() - t0;
      if (i >= 0) {
        rtts[i] = rtt;
        sum_rtt += rtt;
        if (rtt < min_rtt) min_rtt = rtt;
      }
    }
    double bw = 0;
    for (int round = 0; round < 2; ++round) {  // round 0 warms the large-message path
      int msgs = round == 0 ? 2 : bw_msgs;
      double t0 = MPI_Wtime();
      for (int m = 0; m < msgs; ++m) {
        if (rank == 0)
          MPI_Send(buf, big, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
        else
          MPI_Recv(buf, big, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      if (rank == 0)
        MPI_Recv(small, 1, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else
        MPI_Send(small, 1, MPI_CHAR, peer, 2, MPI_COMM_WORLD);
      bw = (double)msgs * big * 8 / (MPI_Wtime() - t0) / 1e9;
    }
    qsort(rtts, (size_t)lat_iters, sizeof *rtts, by_value);
    if (rank == 0)
      printf("netrun-selftest lat_min_us=%.2f lat_med_us=%.2f lat_avg_us=%.2f bw_gbit=%.3f\n",
             min_rtt / 2 * 1e6, rtts[lat_iters / 2] / 2 * 1e6, sum_rtt / lat_iters / 2 * 1e6, bw);
  }
  free(rtts);
  free(buf);
  MPI_Finalize();
  return 0;
}
