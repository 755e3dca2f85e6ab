// A small native program whose trace exercises every analysis of tools/weft-trace: labelled task
// kinds, dependences, tasks that wait for their children (suspension), communication intervals
// begun in tasks and completed by another thread, and a persistent graph replayed for a few rounds.
// Run with WEFT_TRACE=<file>; exits non-zero if the program itself went wrong.
#include <weft/weft.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

namespace {

void spin_us(int us) {
  auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

double grid[16];

}  // namespace

int main() {
  if (weft_init() != WEFT_OK) return 2;
  const std::uint32_t send = weft_trace_kind("MPI_Isend", WEFT_TRACE_COMMUNICATION);
  const std::uint32_t recv = weft_trace_kind("MPI_Irecv", WEFT_TRACE_COMMUNICATION);

  // Requests "posted" by tasks and "completed" 300 µs later by a progress thread, while compute
  // tasks run: the overlap analysis has something to measure.
  std::atomic<int> posted{0};
  std::atomic<bool> done{false};
  std::thread progress([&] {
    int completed = 0;
    while (!done.load() || completed < posted.load()) {
      if (completed < posted.load()) {
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        weft_trace_end(completed % 2 ? recv : send, static_cast<std::uint64_t>(completed), 4096);
        ++completed;
      } else {
        std::this_thread::yield();
      }
    }
  });
  for (int i = 0; i < 8; ++i) {
    weft::spawn(
        [&, i] {
          weft_trace_begin(i % 2 ? recv : send, static_cast<std::uint64_t>(i), 4096);
          posted.fetch_add(1);
        },
        weft::label("post"), weft::inout(grid[i % 4]));
    for (int k = 0; k < 4; ++k) weft::spawn([] { spin_us(50); }, weft::label("compute"), weft::in(grid[k]));
  }
  // Parents waiting for their children.
  for (int p = 0; p < 4; ++p)
    weft::spawn(
        [] {
          for (int c = 0; c < 4; ++c) weft::spawn([] { spin_us(30); }, weft::label("child"));
          weft::taskwait();
        },
        weft::label("parent"));
  weft::taskwait();
  done.store(true);
  progress.join();

  // A persistent graph: a 1-D stencil of 8 blocks, 4 iterations (round 0 recorded, 1..3 replayed).
  weft::graph g;
  for (int it = 0; it < 4; ++it)
    g.iteration([&] {
      for (int b = 0; b < 8; ++b)
        weft::spawn([b] { grid[b] += 1; spin_us(20); }, weft::label("sweep"), weft::inout(grid[b]),
                    weft::in(grid[(b + 1) % 8]));
    });
  g.end();
  for (int b = 0; b < 8; ++b)
    if (grid[b] < 4) {
      std::fprintf(stderr, "trace_program: block %d swept %g times, expected 4\n", b, grid[b]);
      return 1;
    }
  return weft_finalize() == WEFT_OK ? 0 : 1;
}
