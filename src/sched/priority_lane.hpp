// A bounded multi-producer multi-consumer FIFO (Vyukov's sequence-numbered ring) holding the ready
// tasks of one priority level, shared by all workers so that a higher priority runs first on
// whichever worker picks next.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "sched/work_deque.hpp"

namespace weft::sched {

template <class T>
class priority_lane {
  struct cell {
    std::atomic<std::uint64_t> sequence;
    T item;
  };

 public:
  explicit priority_lane(std::uint64_t capacity) : mask_(capacity - 1), cells_(new cell[capacity]) {
    for (std::uint64_t i = 0; i < capacity; ++i) cells_[i].sequence.store(i, std::memory_order_relaxed);
  }

  // False when full (the caller keeps the item elsewhere).
  bool push(T item) {
    std::uint64_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      cell& c = cells_[pos & mask_];
      // Acquire: pairs with the release of the consumer that freed this cell.
      std::uint64_t seq = c.sequence.load(std::memory_order_acquire);
      auto diff = static_cast<std::int64_t>(seq - pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.item = item;
          c.sequence.store(pos + 1, std::memory_order_release);  // publishes item
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  T pop() {
    std::uint64_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      cell& c = cells_[pos & mask_];
      std::uint64_t seq = c.sequence.load(std::memory_order_acquire);  // sees the producer's item
      auto diff = static_cast<std::int64_t>(seq - (pos + 1));
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          T item = c.item;
          c.sequence.store(pos + mask_ + 1, std::memory_order_release);  // frees the cell
          return item;
        }
      } else if (diff < 0) {
        return nullptr;
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

 private:
  const std::uint64_t mask_;
  std::unique_ptr<cell[]> cells_;
  alignas(cache_line) std::atomic<std::uint64_t> head_{0};
  alignas(cache_line) std::atomic<std::uint64_t> tail_{0};
};

}  // namespace weft::sched
