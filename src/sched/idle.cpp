#include "sched/idle.hpp"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace weft::sched {

namespace {
long membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }
}  // namespace

void idle_park::init() {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer does not model membarrier: use real fences so it sees the ordering.
  cheap_fence_ = false;
#else
  long supported = membarrier(MEMBARRIER_CMD_QUERY);
  cheap_fence_ = supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                 membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
#endif
}

void idle_park::heavy_fence() {
#if defined(__SANITIZE_THREAD__)
  // The sleeper count increment that precedes this call is already a seq_cst read-modify-write,
  // which is what the ThreadSanitizer build relies on (see sleeper_count_after_fence).
  return;
#endif
  if (cheap_fence_) {
    if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
      // Cannot happen after a successful registration; stay correct regardless.
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

void idle_park::wake_one(int prefer) {
  unsigned start = count_ ? rotor_.fetch_add(1, std::memory_order_relaxed) : 0;
  for (int i = 0; i < count_; ++i) {
    const int k = static_cast<int>((start + static_cast<unsigned>(i)) % static_cast<unsigned>(count_));
    if (prefer >= 0 && cores_of_ && cores_of_[k] != prefer) continue;
    std::atomic<std::uint32_t>& w = *words_[k];
    if (w.load(std::memory_order_relaxed) == 1 && w.exchange(0, std::memory_order_seq_cst) == 1) {
      futex_wake(w);
      return;
    }
  }
  // For an idle core, failing a member asleep there on its own word: one asleep on a barrier's
  // (sleep_on), if any. Not otherwise: beside busy processes, a barrier waiter woken per task took
  // cores they held (a taskloop loop 1.2x slower), where its own timeout serves.
  if (prefer < 0 || other_sleepers_.load(std::memory_order_relaxed) == 0) return;
  if (auto* other = other_word_.load(std::memory_order_relaxed)) futex_wake(*other, 1);
}

void idle_park::futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns) {
  struct timespec ts;
  struct timespec* tp = nullptr;
  if (timeout_ns > 0) {
    ts.tv_sec = timeout_ns / 1000000000;
    ts.tv_nsec = timeout_ns % 1000000000;
    tp = &ts;
  }
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, tp, nullptr, 0);
}

void idle_park::futex_wake(std::atomic<std::uint32_t>& word, int waiters) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, waiters, nullptr, nullptr, 0);
}

}  // namespace weft::sched
