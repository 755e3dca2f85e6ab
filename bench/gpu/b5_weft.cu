// B5 (paper 002, §3.3) natively on weft with libweft-cuda: `b5_weft tasks3|fused n T reps`.
//
// The producer is the main program (weft's worker 0; WEFT_NUM_THREADS workers in all): it creates
// the tasks of all T triplets in order, then waits for them with weft_taskwait, in which it runs
// tasks too. The clock runs from the first creation to the end of that taskwait.
//
//   tasks3  three tasks per triplet, each inout(y[t*n]) and each on its own weft_cuda_stream():
//           copy in, kernel, copy out. Each ends with weft_cuda_iwait, so its successor is released
//           (and queues its work on its own stream) only once the predecessor's work is done on the
//           GPU: the paper's three `target ... nowait depend(inout: y[t*n])` constructs.
//   fused   one task per triplet, inout(y[t*n]), queues all three on its stream, then iwait.
//
// No task ever blocks its core: iwait returns at once, libweft-cuda's poller releases successors.
#include "b5_kernels.cuh"

#include <weft/cuda.h>
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <atomic>

namespace {

// A failure to queue work (found in a task body); asynchronous failures come through taskwait.
std::atomic<int> queue_failures{0};

bool ok(cudaError_t rc, const char* what, uint32_t i0) {
  if (rc == cudaSuccess) return true;
  if (queue_failures.fetch_add(1) < 5)
    std::fprintf(stderr, "b5_weft: %s (triplet at y[%u]): %s: %s\n", what, i0, cudaGetErrorName(rc),
                 cudaGetErrorString(rc));
  return false;
}

// What a task needs of its triplet (40 bytes: stored inside the task descriptor).
struct Triplet {
  const double* dx;
  double* dy;
  double* hy;
  uint32_t i0, n;
};

cudaStream_t task_stream(uint32_t i0) {
  cudaStream_t s = weft_cuda_stream();
  if (!s) ok(cudaErrorNoDevice, "weft_cuda_stream", i0);
  return s;
}

void copy_in(const Triplet& p, cudaStream_t s) {
  ok(cudaMemcpyAsync(p.dy + p.i0, p.hy + p.i0, p.n * sizeof(double), cudaMemcpyHostToDevice, s), "copy in", p.i0);
}
void kernel(const Triplet& p, cudaStream_t s) { ok(b5::daxpy(s, b5::kA, p.dx, p.dy, p.i0, p.n), "daxpy launch", p.i0); }
void copy_out(const Triplet& p, cudaStream_t s) {
  ok(cudaMemcpyAsync(p.hy + p.i0, p.dy + p.i0, p.n * sizeof(double), cudaMemcpyDeviceToHost, s), "copy out", p.i0);
}

// One operation of a triplet as a task: take the task's stream, queue, bind completion.
template <void (*Op)(const Triplet&, cudaStream_t)>
void one(const Triplet& p) {
  cudaStream_t s = task_stream(p.i0);
  if (!s) return;
  Op(p, s);
  ok(weft_cuda_iwait(s), "weft_cuda_iwait", p.i0);
}

void fused(const Triplet& p) {
  cudaStream_t s = task_stream(p.i0);
  if (!s) return;
  copy_in(p, s);
  kernel(p, s);
  copy_out(p, s);
  ok(weft_cuda_iwait(s), "weft_cuda_iwait", p.i0);
}

// One run of the T triplets; false when any part failed (reported on stderr).
bool run(bool three, const b5::Args& a, b5::Buffers& b) {
  for (uint32_t t = 0; t < a.T; ++t) {
    const Triplet p{b.dx, b.dy, b.hy, t * a.n, a.n};
    const double& dep = b.hy[p.i0];
    if (three) {
      weft::spawn([p] { one<copy_in>(p); }, weft::inout(dep));
      weft::spawn([p] { one<kernel>(p); }, weft::inout(dep));
      weft::spawn([p] { one<copy_out>(p); }, weft::inout(dep));
    } else {
      weft::spawn([p] { fused(p); }, weft::inout(dep));
    }
  }
  int status = weft_taskwait();
  if (status != WEFT_OK) {
    void (*release)(void*) = nullptr;
    void* payload = weft_take_error(&release);
    if (const weft_cuda_error_t* e = weft_cuda_error_of(payload, release)) {
      std::fprintf(stderr, "b5_weft: %s: %s\n", e->call, e->message);
    } else {
      std::fprintf(stderr, "b5_weft: weft_taskwait: %s\n", weft_strerror(status));
    }
    if (release) release(payload);
    return false;
  }
  return queue_failures.load() == 0;
}

}  // namespace

int main(int argc, char** argv) {
  b5::Args a;
  if (!b5::parse_args(argc, argv, "tasks3|fused", a)) return 2;
  if (a.variant != "tasks3" && a.variant != "fused") {
    std::fprintf(stderr, "b5_weft: unknown variant '%s' (tasks3 or fused)\n", a.variant.c_str());
    return 2;
  }
  if (!weft_cuda_available()) return b5::skipped();
  if (weft_init() != WEFT_OK) {
    std::fprintf(stderr, "b5_weft: weft_init failed\n");
    return 1;
  }
  bool good = true;
  {
    b5::Buffers b(a.n, a.T);
    std::fprintf(stderr, "# b5 weft %s: n=%u T=%u reps=%d, %d workers, producer: main program, block=%u, %s\n",
                 a.variant.c_str(), a.n, a.T, a.reps, weft_num_workers(), b5::block_size(), b5::device_name().c_str());
    const bool three = a.variant == "tasks3";
    try {
      for (int rep = 0; rep <= a.reps && good; ++rep) {  // rep 0: the warm-up, not printed
        b.reset();
        auto start = b5::steady::now();
        good = run(three, a, b);
        double seconds = b5::seconds_since(start);
        if (good && rep > 0) b5::print_rep("weft", a.variant, a, seconds);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "b5_weft: %s\n", e.what());
      good = false;
    }
    if (good) good = b5::check(b.x, b.hy, a.n, a.T);
    weft_finalize();
  }
  if (!good) {
    std::printf("check failed\n");
    return 1;
  }
  std::printf("check ok\n");
  return 0;
}
