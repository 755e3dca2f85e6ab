// libweft-cuda on a real GPU: `device_test PART`, one part per CTest test (the errors part leaves
// the CUDA context unusable, so each runs in its own process). Without a usable device it prints
// why and exits 77, which CTest reports as skipped.
//   results       copy in, kernel, copy out per task, completion bound with weft_cuda_iwait; the
//                 successor checks the values
//   frees_worker  on 1 worker, a task waiting for a 50 ms kernel lets its child run meanwhile
//   streams       many tasks on several workers, pooled and own streams, dependent chains
//   errors        a trapping kernel: weft_cuda_wait returns the error; with iwait, the parent's
//                 taskwait gets it by name
#include <weft/cuda.h>
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failures = 0;
#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                              \
      std::fprintf(stderr, "\n");                                     \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

__global__ void affine(float* x, int n, float a, float b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}

// Spins for about `ns` of device time (the global timer), so the host has something to wait for.
__global__ void spin(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < ns);
}

__global__ void trap() { __trap(); }

void results() {
  const int tasks = 64, n = 1 << 16;
  std::vector<std::vector<float>> host(tasks, std::vector<float>(n));
  std::vector<float*> dev(tasks);
  for (int t = 0; t < tasks; ++t) {
    for (int i = 0; i < n; ++i) host[t][i] = static_cast<float>(i % 1000 + t);
    CHECK(cudaMalloc(&dev[t], n * sizeof(float)) == cudaSuccess, "cudaMalloc");
  }
  std::atomic<int> wrong{0};
  for (int t = 0; t < tasks; ++t) {
    float* h = host[t].data();
    float* d = dev[t];
    weft::spawn(
        [h, d, n] {
          cudaStream_t s = weft_cuda_stream();
          cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, s);
          affine<<<(n + 255) / 256, 256, 0, s>>>(d, n, 2.0f, 1.0f);
          cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, s);
          cudaError_t rc = weft_cuda_iwait(s);
          if (rc != cudaSuccess) std::fprintf(stderr, "iwait: %s\n", cudaGetErrorName(rc));
        },
        weft::inout(host[t][0]));
    weft::spawn(
        [h, t, n, &wrong] {
          for (int i = 0; i < n; ++i)
            if (h[i] != 2.0f * static_cast<float>(i % 1000 + t) + 1.0f) {
              ++wrong;
              return;
            }
        },
        weft::in(host[t][0]));
  }
  weft::taskwait();
  CHECK(wrong.load() == 0, "%d of %d tasks saw wrong values after their predecessor's iwait", wrong.load(), tasks);
  for (float* d : dev) cudaFree(d);
}

void frees_worker() {
  std::atomic<bool> child_ran{false};
  bool seen = false;
  cudaError_t rc = cudaSuccess;
  weft::spawn([&] {
    cudaStream_t s = weft_cuda_stream();
    spin<<<1, 1, 0, s>>>(50ull * 1000 * 1000);
    weft::spawn([&] { child_ran = true; });
    rc = weft_cuda_wait(s);
    seen = child_ran.load();
    weft::taskwait();
  });
  weft::taskwait();
  CHECK(rc == cudaSuccess, "weft_cuda_wait: %s", cudaGetErrorName(rc));
  CHECK(seen, "the only worker did not run the child while its parent waited for the kernel");
  weft_stats_t st{};
  weft_get_stats(&st);
  CHECK(st.suspensions >= 1, "no suspension recorded (%llu)", static_cast<unsigned long long>(st.suspensions));
}

void streams() {
  const int chains = 96, steps = 8, n = 4096;
  std::vector<float*> dev(chains);
  std::vector<cudaStream_t> own(16);
  for (auto& s : own) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (auto& d : dev) {
    cudaMalloc(&d, n * sizeof(float));
    cudaMemset(d, 0, n * sizeof(float));
  }
  std::vector<float> token(chains);
  for (int step = 0; step < steps; ++step)
    for (int c = 0; c < chains; ++c) {
      float* d = dev[c];
      cudaStream_t mine = own[c % 16];
      bool pooled = (c + step) % 2 == 0;
      weft::spawn(
          [d, mine, pooled, step, n] {
            cudaStream_t s = pooled ? weft_cuda_stream() : mine;
            affine<<<(n + 255) / 256, 256, 0, s>>>(d, n, 1.0f, 1.0f);
            if (step % 2) {
              weft_cuda_iwait(s);
            } else {
              weft_cuda_wait(s);
            }
          },
          weft::inout(token[c]));
    }
  weft::taskwait();
  std::vector<float> back(n);
  int wrong = 0;
  for (int c = 0; c < chains; ++c) {
    cudaMemcpy(back.data(), dev[c], n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) wrong += back[i] != static_cast<float>(steps);
  }
  CHECK(wrong == 0, "%d values differ from %d (a step overtook its predecessor)", wrong, steps);
  for (float* d : dev) cudaFree(d);
}

void errors() {
  cudaError_t waited = cudaSuccess;
  int status = WEFT_OK;
  std::string message;
  weft::spawn([&] {
    weft::spawn([] {
      cudaStream_t s = weft_cuda_stream();
      spin<<<1, 1, 0, s>>>(5ull * 1000 * 1000);
      trap<<<1, 1, 0, s>>>();
      weft_cuda_iwait(s);
    });
    status = weft_taskwait();
    void (*release)(void*) = nullptr;
    void* payload = weft_take_error(&release);
    if (const weft_cuda_error_t* e = weft_cuda_error_of(payload, release)) message = e->message;
    if (release) release(payload);
    cudaStream_t s = weft_cuda_stream();
    waited = weft_cuda_wait(s);  // the context is broken now: every later call reports it
  });
  weft::taskwait();
  CHECK(status == WEFT_ERR_TASK_FAILED, "the parent's taskwait returned %d", status);
  CHECK(!message.empty(), "no weft_cuda_error_t payload");
  std::fprintf(stderr, "reported: %s\n", message.c_str());
  CHECK(waited != cudaSuccess, "weft_cuda_wait after a trap returned cudaSuccess");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s results|frees_worker|streams|errors\n", argv[0]);
    return 2;
  }
  if (!weft_cuda_available()) {
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    std::printf("SKIPPED: no usable CUDA device (cudaGetDeviceCount: %s, %d devices)\n", cudaGetErrorName(rc), count);
    return 77;
  }
  if (weft_init() != WEFT_OK) return 1;
  std::string part = argv[1];
  if (part == "results") {
    results();
  } else if (part == "frees_worker") {
    frees_worker();
  } else if (part == "streams") {
    streams();
  } else if (part == "errors") {
    errors();
  } else {
    std::fprintf(stderr, "unknown part %s\n", argv[1]);
    return 2;
  }
  weft_finalize();
  if (failures) return 1;
  std::printf("PASS %s\n", argv[1]);
  return 0;
}
