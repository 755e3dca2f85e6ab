// B5 (paper 002, §3.3) as hand-written CUDA, the floor the task versions are measured against:
// `b5_streams S n T reps`. One host thread queues triplet t (copy in, kernel, copy out) on stream
// t % S of S non-blocking streams, then cudaDeviceSynchronize. The clock runs from the first call
// to the end of that synchronisation.
#include "b5_kernels.cuh"

#include <vector>

int main(int argc, char** argv) {
  b5::Args a;
  if (!b5::parse_args(argc, argv, "S", a)) return 2;
  uint32_t streams_wanted = 0;
  if (!b5::parse_u32(a.variant.c_str(), 1024, streams_wanted)) {
    std::fprintf(stderr, "b5_streams: S must be a stream count from 1 to 1024, not '%s'\n", a.variant.c_str());
    return 2;
  }
  if (!b5::device_usable()) return b5::skipped();
  bool good = true;
  {
    b5::Buffers b(a.n, a.T);
    std::vector<cudaStream_t> streams(streams_wanted);
    for (auto& s : streams) B5_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::fprintf(stderr, "# b5 streams %s: n=%u T=%u reps=%d, block=%u, %s\n", a.variant.c_str(), a.n, a.T, a.reps,
                 b5::block_size(), b5::device_name().c_str());
    const size_t bytes = a.n * sizeof(double);
    for (int rep = 0; rep <= a.reps && good; ++rep) {  // rep 0: the warm-up, not printed
      b.reset();
      auto start = b5::steady::now();
      for (uint32_t t = 0; t < a.T && good; ++t) {
        cudaStream_t s = streams[t % streams.size()];
        const uint32_t i0 = t * a.n;
        cudaError_t rc = cudaMemcpyAsync(b.dy + i0, b.hy + i0, bytes, cudaMemcpyHostToDevice, s);
        if (rc == cudaSuccess) rc = b5::daxpy(s, b5::kA, b.dx, b.dy, i0, a.n);
        if (rc == cudaSuccess) rc = cudaMemcpyAsync(b.hy + i0, b.dy + i0, bytes, cudaMemcpyDeviceToHost, s);
        if (rc != cudaSuccess) {
          std::fprintf(stderr, "b5_streams: triplet %u: %s: %s\n", t, cudaGetErrorName(rc), cudaGetErrorString(rc));
          good = false;
        }
      }
      cudaError_t rc = cudaDeviceSynchronize();
      double seconds = b5::seconds_since(start);
      if (rc != cudaSuccess) {
        std::fprintf(stderr, "b5_streams: cudaDeviceSynchronize: %s: %s\n", cudaGetErrorName(rc), cudaGetErrorString(rc));
        good = false;
      }
      if (good && rep > 0) b5::print_rep("streams", a.variant, a, seconds);
    }
    if (good) good = b5::check(b.x, b.hy, a.n, a.T);
    for (auto s : streams) cudaStreamDestroy(s);
  }
  if (!good) {
    std::printf("check failed\n");
    return 1;
  }
  std::printf("check ok\n");
  return 0;
}
