// weft/cuda.hpp — the C++ layer of weft/cuda.h: failures throw weft::cuda::error, which a task's
// taskwait rethrows in its parent (weft.hpp carries exceptions from child to parent).
#pragma once

#include <weft/cuda.h>

#include <stdexcept>
#include <string>

namespace weft::cuda {

class error : public std::runtime_error {
 public:
  error(cudaError_t code, const char* call)
      : std::runtime_error(std::string(call) + ": " + cudaGetErrorName(code) + ": " + cudaGetErrorString(code)),
        code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

inline void check(cudaError_t code, const char* call) {
  if (code != cudaSuccess) throw error(code, call);
}

inline bool available() {
  return weft_cuda_available() != 0;
}

// This task's stream (see weft_cuda_stream); throws when no device is usable.
inline cudaStream_t stream() {
  cudaStream_t s = weft_cuda_stream();
  if (!s) throw error(cudaErrorNoDevice, "weft::cuda::stream");
  return s;
}

// The calling task suspends until the stream's queued work is done; its error is thrown.
inline void wait(cudaStream_t s) {
  check(weft_cuda_wait(s), "weft::cuda::wait");
}

// The task completes when the stream's queued work does (a failure then reaches the parent's
// taskwait as weft::error with WEFT_ERR_TASK_FAILED; C code reads it with weft_cuda_error_of).
inline void iwait(cudaStream_t s) {
  check(weft_cuda_iwait(s), "weft::cuda::iwait");
}

}  // namespace weft::cuda
