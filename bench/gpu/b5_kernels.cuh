// The paper's B5 microbenchmark (paper 002, §3.3, Listings 1.1 and 1.2), shared by b5_weft.cu and
// b5_streams.cu: the daxpy-like kernel, its host reference, the data, the check, the command line,
// the device buffers and the result line. Each program includes this header once.
//
// B5: x and y hold n*T doubles. Triplet t copies y[t*n : n] to the device, runs
// daxpy(a, x, y, t*n, n) there and copies y[t*n : n] back; the three operations of a triplet are
// ordered (by dependences on y[t*n], or by a stream), the T triplets are independent.
//
//   for (I = I0; I < I0 + n; ++I)          // Listing 1.1; on the GPU one thread per I
//     for (J = 0; J <= I; ++J)
//       y[I] = y[I] + a * x[J];
//
// The data make every partial sum exact in double (a = 1/2, x[J] in {1/4, ..., 2}, y[I] in
// {0, 1/2, ..., 3}: every value is a multiple of 1/8 below 2^34), so fused multiply-adds on the GPU
// and separate ones on the host give the same bits, and y[I] = y0[I] + a * (x[0] + ... + x[I]) holds
// exactly: the check compares every element with that closed form and, where the host can afford
// it, whole triplets with the literal loop of Listing 1.1 as well (relative tolerance 1e-9).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace b5 {

constexpr double kA = 0.5;
constexpr double kTolerance = 1e-9;
// n*T is kept below 2^31: 32-bit indices in the kernel (and 16 GiB per vector is enough).
constexpr uint64_t kMaxElements = uint64_t{1} << 31;

// Setup calls outside the timed region: a failure ends the program (exit 1).
#define B5_CUDA(call)                                                                               \
  do {                                                                                              \
    cudaError_t b5_rc_ = (call);                                                                    \
    if (b5_rc_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(b5_rc_), \
                   cudaGetErrorString(b5_rc_));                                                     \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

inline double x_value(uint64_t j) { return 0.25 * static_cast<double>(j % 8 + 1); }
inline double y_initial(uint64_t i) { return 0.5 * static_cast<double>(i % 7); }

// --- the kernel (Listing 1.1, one thread per I) -------------------------------------------------

__global__ void daxpy_kernel(double a, const double* __restrict__ x, double* __restrict__ y, uint32_t i0,
                             uint32_t n) {
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  uint32_t i = i0 + k;
  // y[i] in a register, the same additions in the same order. `j < i + 1` (not `j <= i`) gives
  // the compiler a trip count, so it unrolls the loop (by 4) and overlaps the loads of x.
  double acc = y[i];
  const uint32_t end = i + 1;  // i < 2^31: no wrap-around
  for (uint32_t j = 0; j < end; ++j) acc = acc + a * x[j];
  y[i] = acc;
}

// Threads per block: B5_BLOCK (a power of two from 32 to 1024), default 128. A triplet is
// ceil(n / block) blocks: n = 2^9 gives 4 blocks, n = 2^16 gives 512.
inline unsigned block_size() {
  static const unsigned block = [] {
    const char* s = std::getenv("B5_BLOCK");
    if (!s || !*s) return 128u;
    char* end = nullptr;
    unsigned long v = std::strtoul(s, &end, 10);
    if (*end || v < 32 || v > 1024 || (v & (v - 1))) {
      std::fprintf(stderr, "B5_BLOCK=%s: want a power of two from 32 to 1024\n", s);
      std::exit(2);
    }
    return static_cast<unsigned>(v);
  }();
  return block;
}

// Queues daxpy(a, x, y, i0, n) on `stream`; returns the launch's error.
inline cudaError_t daxpy(cudaStream_t stream, double a, const double* x, double* y, uint32_t i0, uint32_t n) {
  unsigned block = block_size();
  daxpy_kernel<<<(n + block - 1) / block, block, 0, stream>>>(a, x, y, i0, n);
  return cudaGetLastError();
}

// --- host reference and check ---------------------------------------------------------------------

// Listing 1.1 as written.
inline void daxpy_host(double a, const double* x, double* y, uint64_t i0, uint64_t n) {
  for (uint64_t i = i0; i < i0 + n; ++i)
    for (uint64_t j = 0; j <= i; ++j) y[i] = y[i] + a * x[j];
}

inline void init_x(std::vector<double>& x) {
  for (uint64_t j = 0; j < x.size(); ++j) x[j] = x_value(j);
}

inline void init_y(double* y, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) y[i] = y_initial(i);
}

inline bool close_enough(double got, double want) {
  return std::fabs(got - want) <= kTolerance * std::max(std::fabs(want), 1.0);
}

// Checks y (after one run of the T triplets from init_y) against the closed form everywhere, and
// triplets 0, 1, T/2 and T-1 (every triplet when n <= 1024) against daxpy_host where that costs at
// most 2^28 multiply-adds each (2^30 in all). Prints what it did; false on a mismatch.
inline bool check(const std::vector<double>& x, const double* y, uint64_t n, uint64_t T) {
  const uint64_t count = n * T;
  long bad = 0;
  double prefix = 0;
  for (uint64_t i = 0; i < count; ++i) {
    prefix += x[i];
    double want = y_initial(i) + kA * prefix;
    if (!close_enough(y[i], want) && bad++ < 5)
      std::fprintf(stderr, "check: y[%llu] = %.17g, closed form %.17g (triplet %llu)\n",
                   static_cast<unsigned long long>(i), y[i], want, static_cast<unsigned long long>(i / n));
  }
  std::vector<uint64_t> triplets;
  if (n <= 1024) {
    for (uint64_t t = 0; t < T; ++t) triplets.push_back(t);
  } else {
    triplets = {0, 1, T / 2, T - 1};
  }
  std::sort(triplets.begin(), triplets.end());
  triplets.erase(std::unique(triplets.begin(), triplets.end()), triplets.end());
  uint64_t budget = uint64_t{1} << 30, literal = 0;
  std::vector<double> ref(count);
  for (uint64_t t : triplets) {
    if (t >= T) continue;
    uint64_t cost = n * (t + 1) * n;  // about: sum over the triplet's I of I + 1
    if (cost > (uint64_t{1} << 28) || cost > budget) continue;
    budget -= cost;
    ++literal;
    for (uint64_t i = t * n; i < t * n + n; ++i) ref[i] = y_initial(i);
    daxpy_host(kA, x.data(), ref.data(), t * n, n);
    for (uint64_t i = t * n; i < t * n + n; ++i)
      if (!close_enough(y[i], ref[i]) && bad++ < 10)
        std::fprintf(stderr, "check: y[%llu] = %.17g, Listing 1.1 on the host %.17g (triplet %llu)\n",
                     static_cast<unsigned long long>(i), y[i], ref[i], static_cast<unsigned long long>(t));
  }
  std::fprintf(stderr, "# check: %llu elements against the closed form, %llu of %zu triplets against the host loop: %ld wrong\n",
               static_cast<unsigned long long>(count), static_cast<unsigned long long>(literal), triplets.size(), bad);
  return bad == 0;
}

// --- command line, device, result line --------------------------------------------------------------

struct Args {
  std::string variant;  // b5_weft: tasks3 | fused; b5_streams: the stream count S
  uint32_t n = 0, T = 0;
  int reps = 0;
};

inline bool parse_u32(const char* s, uint64_t max, uint32_t& out) {
  if (!s || !*s || *s == '-') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (errno || *end || v < 1 || v > max) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

// `prog VARIANT n T reps`; false (after a usage message) when malformed.
inline bool parse_args(int argc, char** argv, const char* variants, Args& args) {
  uint32_t reps = 0;
  bool ok = argc == 5 && parse_u32(argv[2], kMaxElements - 1, args.n) && parse_u32(argv[3], 1u << 20, args.T) &&
            parse_u32(argv[4], 1000000, reps) && uint64_t{args.n} * args.T < kMaxElements;
  if (!ok) {
    std::fprintf(stderr,
                 "usage: %s %s n T reps\n"
                 "  B5 of paper 002: T triplets (copy y[t*n:n] in, daxpy kernel, copy out); n*T < 2^31.\n"
                 "  Prints one line per rep after a warm-up rep, then 'check ok'. Exit 77 without a GPU.\n"
                 "  B5_BLOCK: threads per block of the kernel (default 128).\n",
                 argc > 0 ? argv[0] : "b5", variants);
    return false;
  }
  args.variant = argv[1];
  args.reps = static_cast<int>(reps);
  return true;
}

// Prints the line the scripts look for and returns 77 (skipped).
inline int skipped() {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  std::printf("SKIPPED: no usable CUDA device (cudaGetDeviceCount: %s, %d devices)\n", cudaGetErrorName(rc), count);
  std::fflush(stdout);
  return 77;
}

// A device this process can use (b5_streams; b5_weft asks weft_cuda_available).
inline bool device_usable() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) return false;
  return cudaFree(nullptr) == cudaSuccess;  // creates the context
}

inline std::string device_name() {
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return "?";
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
         std::to_string(prop.multiProcessorCount) + " SMs)";
}

// x on the device in full (copied once), y on the device, y on the host pinned.
struct Buffers {
  uint64_t count = 0;
  std::vector<double> x;      // host x, for the check
  double* dx = nullptr;       // device x, all n*T
  double* dy = nullptr;       // device y, all n*T
  double* hy = nullptr;       // host y, pinned (cudaMallocHost)

  Buffers(uint64_t n, uint64_t T) : count(n * T), x(n * T) {
    init_x(x);
    B5_CUDA(cudaMalloc(&dx, count * sizeof(double)));
    B5_CUDA(cudaMalloc(&dy, count * sizeof(double)));
    B5_CUDA(cudaMallocHost(&hy, count * sizeof(double)));
    B5_CUDA(cudaMemcpy(dx, x.data(), count * sizeof(double), cudaMemcpyHostToDevice));
    B5_CUDA(cudaMemset(dy, 0, count * sizeof(double)));
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() {
    cudaFreeHost(hy);
    cudaFree(dy);
    cudaFree(dx);
  }
  void reset() { init_y(hy, count); }  // before each rep, outside the timed region
};

using steady = std::chrono::steady_clock;

inline double seconds_since(steady::time_point start) {
  return std::chrono::duration<double>(steady::now() - start).count();
}

inline void print_rep(const char* impl, const std::string& variant, const Args& a, double seconds) {
  std::printf("b5 %s %s n=%u T=%u seconds=%.6f\n", impl, variant.c_str(), a.n, a.T, seconds);
  std::fflush(stdout);
}

}  // namespace b5
