// Type-stable pools of fixed-size blocks: a free list per worker (no atomics, no locks), slabs
// allocated in bulk, and a lock-free depot of batches that moves blocks from workers that free
// more than they allocate (consumers) to workers that allocate more than they free (producers). Blocks
// are never returned to the system while the runtime runs, so a stale pointer still points at an
// object of the same type — a fact the completion protocol relies on for benign late reads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace weft::sched {

// Blocks shared by all workers of one runtime for one object type.
class block_depot {
 public:
  block_depot(std::size_t block_size, std::size_t batch) : block_size_(block_size), batch_(batch) {}
  block_depot(const block_depot&) = delete;
  block_depot& operator=(const block_depot&) = delete;
  ~block_depot() {
    for (void* s : slabs_) std::free(s);
  }

  std::size_t block_size() const { return block_size_; }
  std::size_t batch() const { return batch_; }

  // A chain of `batch` blocks linked through their first word, or null. Lock-free: the depot is a
  // fixed array of slots, each empty or holding one chain, claimed with one exchange.
  void* take_batch() {
    // Newest first: give_batch fills the slot at the rotor and moves it on, so a scan forward from
    // the rotor met the batch just given last, after the whole array (15 instructions per task on
    // one worker, which gives and takes its own batches); the newest blocks are also the warmest.
    unsigned start = rotor_.load(std::memory_order_relaxed) - 1;
    for (unsigned i = 0; i < slot_count; ++i) {
      std::atomic<void*>& slot = slots_[(start - i) % slot_count];
      // A plain read first so that empty slots are skipped without taking their lines. Acquire
      // on the exchange: the chain's links were written by the worker that gave it.
      if (slot.load(std::memory_order_relaxed)) {
        if (void* chain = slot.exchange(nullptr, std::memory_order_acquire)) return chain;
      }
    }
    return nullptr;
  }
  // False when every slot is taken: the caller keeps its blocks.
  bool give_batch(void* chain) {
    unsigned start = rotor_.fetch_add(1, std::memory_order_relaxed);
    for (unsigned i = 0; i < slot_count; ++i) {
      std::atomic<void*>& slot = slots_[(start + i) % slot_count];
      // A plain read first: a full depot costs a scan of its lines, not 256 locked operations.
      if (slot.load(std::memory_order_relaxed)) continue;
      void* empty = nullptr;
      // Release: publishes the chain's links to the taker.
      if (slot.compare_exchange_strong(empty, chain, std::memory_order_release, std::memory_order_relaxed))
        return true;
    }
    return false;
  }
  // Fresh blocks, linked; null when the system has no memory left (the caller decides whether
  // that refuses a request or ends the process).
  void* new_slab(std::size_t count) {
    void* slab = std::aligned_alloc(64, block_size_ * count);
    if (!slab) return nullptr;
    // Zeroed: for_each_block reads blocks never handed out, whose flags must say "free" (heap
    // memory reused from the program held anything: the watchdog listed such blocks as events).
    std::memset(slab, 0, block_size_ * count);
    {
      std::lock_guard<std::mutex> g(lock_);
      slabs_.push_back(slab);
    }
    char* p = static_cast<char*>(slab);
    for (std::size_t i = 0; i < count; ++i) {
      void* next = i + 1 < count ? p + (i + 1) * block_size_ : nullptr;
      *reinterpret_cast<void**>(p + i * block_size_) = next;
    }
    return slab;
  }
  // Visits every block ever made (diagnostics: free blocks too; read their fields racily).
  template <class F>
  void for_each_block(F&& f) {
    std::lock_guard<std::mutex> g(lock_);
    for (void* s : slabs_)
      for (std::size_t i = 0; i < batch_; ++i) f(static_cast<char*>(s) + i * block_size_);
  }

 private:
  const std::size_t block_size_;
  const std::size_t batch_;
  static constexpr unsigned slot_count = 256;
  std::atomic<void*> slots_[slot_count] = {};
  std::atomic<unsigned> rotor_{0};
  std::mutex lock_;  // slab list only (allocation of fresh slabs, the rare path)
  std::vector<void*> slabs_;
};

// One worker's free list for one block type. Owner thread only.
class block_cache {
 public:
  explicit block_cache(block_depot& depot) : depot_(depot) {}
  block_cache(const block_cache&) = delete;
  block_cache& operator=(const block_cache&) = delete;

  // A block, or null when no memory is left for a fresh slab.
  void* allocate() {
    if (!head_ && !refill()) [[unlikely]]
      return nullptr;
    void* b = head_;
    head_ = *static_cast<void**>(b);
    --count_;
    if (head_) {
      for (std::size_t line = 0; line < depot_.block_size(); line += 64)
        __builtin_prefetch(static_cast<char*>(head_) + line, 1, 3);
    }
    return b;
  }

  void release(void* b) {
    *static_cast<void**>(b) = head_;
    head_ = b;
    if (++count_ >= spill_at_ && count_ % depot_.batch() == 0) spill();
  }

 private:
  bool refill() {
    head_ = depot_.take_batch();
    if (!head_) head_ = depot_.new_slab(depot_.batch());
    if (!head_) return false;
    count_ = depot_.batch();
    return true;
  }
  // Hands `batch` blocks to the depot so that a producer can reuse them (if the depot is full,
  // they stay here).
  void spill() {
    void* first = head_;
    void* last = head_;
    for (std::size_t i = 1; i < depot_.batch(); ++i) last = *static_cast<void**>(last);
    void* rest = *static_cast<void**>(last);
    *static_cast<void**>(last) = nullptr;
    if (depot_.give_batch(first)) {
      head_ = rest;
      count_ -= depot_.batch();
      spill_at_ = 4 * depot_.batch();
    } else {
      *static_cast<void**>(last) = rest;  // relink: keep them, and try again much later
      spill_at_ = count_ + 16 * depot_.batch();
    }
  }

  block_depot& depot_;
  void* head_ = nullptr;
  std::size_t count_ = 0;
  // Blocks kept before a batch goes back to the depot: four batches, so that a producer and a
  // consumer of the same worker (a yielded producer and its loop) do not move batches back and
  // forth; more after the depot was found full.
  std::size_t spill_at_ = 4 * depot_.batch();
};

}  // namespace weft::sched
