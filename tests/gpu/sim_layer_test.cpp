// libweft-cuda on a simulated device (sim_cudart.cpp, linked ahead of the CUDA runtime): a task
// waiting for a stream frees its worker, iwait holds successors until the stream's work is done,
// errors reach waits and taskwaits by name, streams rotate per worker, the poller drains many
// streams, and the quick paths (idle stream, outside a task). Each with 1, 2 and 8 workers.
#include <weft/cuda.h>
#include <weft/weft.h>
#include <weft/cuda.hpp>
#include <weft/weft.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "weft_test.h"

extern "C" void weft_sim_cuda_fail(cudaStream_t s, cudaError_t code);
extern "C" long weft_sim_cuda_event_queries(void);

namespace {

class SimCuda : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    rt_ = std::make_unique<weft_test::runtime_config>(
        weft_test::runtime_config::vars{{"WEFT_NUM_THREADS", std::to_string(GetParam())}});
    ASSERT_TRUE(rt_->ok());
    ASSERT_EQ(weft_cuda_available(), 1) << "the simulated device is not the one libweft-cuda sees";
  }
  void TearDown() override { rt_.reset(); }
  std::unique_ptr<weft_test::runtime_config> rt_;
};

// "Device work": a host function on the stream that sleeps, then runs `then`.
struct delayed {
  int micros;
  std::function<void()> then;
};
void run_delayed(void* p) {
  std::unique_ptr<delayed> d(static_cast<delayed*>(p));
  std::this_thread::sleep_for(std::chrono::microseconds(d->micros));
  if (d->then) d->then();
}
void enqueue(cudaStream_t s, int micros, std::function<void()> then = {}) {
  ASSERT_EQ(cudaLaunchHostFunc(s, &run_delayed, new delayed{micros, std::move(then)}), cudaSuccess);
}

TEST_P(SimCuda, WaitFreesTheWorker) {
  // The child can only run while its parent waits for the stream: on one worker a blocking wait
  // would leave it for the parent's taskwait.
  std::atomic<bool> child_ran{false}, device_done{false};
  std::atomic<bool> seen_by_parent{false};
  weft::spawn([&] {
    cudaStream_t s = weft_cuda_stream();
    enqueue(s, 50000, [&] { device_done = true; });
    weft::spawn([&] { child_ran = true; });
    EXPECT_EQ(weft_cuda_wait(s), cudaSuccess);
    EXPECT_TRUE(device_done.load()) << "weft_cuda_wait returned before the stream's work finished";
    seen_by_parent = child_ran.load();
    weft::taskwait();
  });
  weft::taskwait();
  EXPECT_TRUE(seen_by_parent.load()) << "the worker did not run the child while its parent waited for the stream";
}

TEST_P(SimCuda, IwaitHoldsSuccessorsUntilTheStreamIsDone) {
  const int chains = 24, steps = 6;
  std::vector<long> value(chains, 0);
  std::atomic<int> wrong{0};
  std::mt19937 rng(7);
  for (int step = 0; step < steps; ++step)
    for (int c = 0; c < chains; ++c) {
      int micros = static_cast<int>(rng() % 3000);
      long* v = &value[static_cast<std::size_t>(c)];
      weft::spawn(
          [v, step, micros, &wrong] {
            if (*v != step) ++wrong;  // the previous step's device write must be visible
            cudaStream_t s = weft_cuda_stream();
            enqueue(s, micros, [v] { ++*v; });
            EXPECT_EQ(weft_cuda_iwait(s), cudaSuccess);
          },
          weft::inout(*v));
    }
  weft::taskwait();
  EXPECT_EQ(wrong.load(), 0) << "a successor ran before its predecessor's stream work completed";
  for (int c = 0; c < chains; ++c) EXPECT_EQ(value[static_cast<std::size_t>(c)], steps) << "chain " << c;
}

TEST_P(SimCuda, WaitReturnsTheStreamsError) {
  cudaError_t seen = cudaSuccess;
  weft::spawn([&] {
    cudaStream_t s;  // its own: the error is sticky, and a pooled stream serves later tasks
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    enqueue(s, 2000);
    weft_sim_cuda_fail(s, cudaErrorLaunchFailure);
    seen = weft_cuda_wait(s);
  });
  weft::taskwait();
  EXPECT_EQ(seen, cudaErrorLaunchFailure);
}

TEST_P(SimCuda, IwaitErrorReachesTheParentsTaskwaitByName) {
  int status = WEFT_OK;
  std::string message;
  cudaError_t code = cudaSuccess;
  weft::spawn([&] {
    // The parent is a task so that its taskwait is the one told (the C API, not weft.hpp's).
    weft::spawn([] {
      cudaStream_t s;
      ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);  // its own: the error is sticky
      enqueue(s, 3000);
      weft_sim_cuda_fail(s, cudaErrorIllegalAddress);
      EXPECT_EQ(weft_cuda_iwait(s), cudaSuccess);  // found later, by the poller
    });
    status = weft_taskwait();
    void (*release)(void*) = nullptr;
    void* payload = weft_take_error(&release);
    if (const weft_cuda_error_t* e = weft_cuda_error_of(payload, release)) {
      code = e->code;
      message = e->message;
      EXPECT_STREQ(e->call, "weft_cuda_iwait");
    }
    if (release) release(payload);
  });
  weft::taskwait();
  EXPECT_EQ(status, WEFT_ERR_TASK_FAILED);
  EXPECT_EQ(code, cudaErrorIllegalAddress);
  EXPECT_NE(message.find("cudaErrorIllegalAddress"), std::string::npos) << message;
}

TEST_P(SimCuda, CppWaitThrowsANamedError) {
  std::string what;
  try {
    weft::spawn([] {
      cudaStream_t s;
      ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
      weft_sim_cuda_fail(s, cudaErrorLaunchFailure);
      enqueue(s, 1000);
      weft::cuda::wait(s);
    });
    weft::taskwait();
  } catch (const weft::cuda::error& e) {
    what = e.what();
    EXPECT_EQ(e.code(), cudaErrorLaunchFailure);
  }
  EXPECT_NE(what.find("weft::cuda::wait: cudaErrorLaunchFailure"), std::string::npos) << what;
}

TEST_P(SimCuda, StreamsRotatePerWorker) {
  // Consecutive tasks on one worker get different streams, WEFT_CUDA_STREAMS (32) of them in turn.
  std::vector<cudaStream_t> got(64);
  weft::spawn([&] {
    for (auto& s : got) s = weft_cuda_stream();
  });
  weft::taskwait();
  std::set<cudaStream_t> distinct(got.begin(), got.end());
  EXPECT_EQ(distinct.size(), 32u);
  EXPECT_EQ(got[0], got[32]);
}

TEST_P(SimCuda, ManyStreamsManyWaits) {
  // 64 own streams plus the pooled ones, mixed waits and iwaits, all completing.
  const int n = 400;
  std::vector<cudaStream_t> own(64);
  for (auto& s : own) ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  std::atomic<int> device_done{0}, waited{0};
  for (int i = 0; i < n; ++i)
    weft::spawn([&, i] {
      cudaStream_t s = i % 2 ? own[static_cast<std::size_t>(i % 64)] : weft_cuda_stream();
      enqueue(s, (i * 37) % 700, [&] { ++device_done; });
      if (i % 3 == 0) {
        EXPECT_EQ(weft_cuda_iwait(s), cudaSuccess);
      } else {
        EXPECT_EQ(weft_cuda_wait(s), cudaSuccess);
        ++waited;
      }
    });
  weft::taskwait();
  EXPECT_EQ(device_done.load(), n) << "taskwait returned before every stream's work was done";
  EXPECT_EQ(waited.load(), n - (n + 2) / 3);
}

TEST_P(SimCuda, IdleStreamAndOutsideATaskDoNotSuspend) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  // Outside a task: a plain synchronisation.
  std::atomic<bool> done{false};
  enqueue(s, 5000, [&] { done = true; });
  EXPECT_EQ(weft_cuda_wait(s), cudaSuccess);
  EXPECT_TRUE(done.load());
  // An idle stream inside a task: answered by one query, nothing handed to the poller (whose
  // every pass queries the pending events).
  long before = weft_sim_cuda_event_queries();
  weft::spawn([&] {
    EXPECT_EQ(weft_cuda_wait(s), cudaSuccess);
    EXPECT_EQ(weft_cuda_iwait(s), cudaSuccess);
  });
  weft::taskwait();
  EXPECT_EQ(weft_sim_cuda_event_queries(), before);
}

INSTANTIATE_TEST_SUITE_P(Workers, SimCuda, ::testing::Values(1, 2, 8),
                         [](const ::testing::TestParamInfo<int>& i) { return "w" + std::to_string(i.param); });

}  // namespace
