// Chase-Lev work-stealing deque (Lê, Pop, Cohen, Zappa Nardelli, PPoPP 2013 memory orders).
// The owner pushes and pops at the bottom; thieves take from the top. The ring grows on overflow;
// retired rings stay alive until the deque dies because a thief may still read from one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace weft::sched {

inline constexpr std::size_t cache_line = 64;

// ThreadSanitizer does not model standalone fences (GCC refuses them under -fsanitize=thread).
// There the deque uses seq_cst operations instead, the fence-free form of the same algorithm.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool fences_modelled = false;
#else
inline constexpr bool fences_modelled = true;
#endif
inline constexpr std::memory_order relaxed_beside_fence =
    fences_modelled ? std::memory_order_relaxed : std::memory_order_seq_cst;
inline void full_fence() {
  if constexpr (fences_modelled) std::atomic_thread_fence(std::memory_order_seq_cst);
}

template <class T>
class work_deque {
  static_assert(std::is_pointer_v<T>, "work_deque holds pointers");

  struct ring {
    explicit ring(std::int64_t capacity) : mask(capacity - 1), slots(new std::atomic<T>[capacity]) {}
    std::int64_t capacity() const { return mask + 1; }
    T get(std::int64_t i) const { return slots[i & mask].load(std::memory_order_relaxed); }
    void put(std::int64_t i, T v) { slots[i & mask].store(v, std::memory_order_relaxed); }
    std::int64_t mask;
    std::unique_ptr<std::atomic<T>[]> slots;
  };

 public:
  explicit work_deque(std::int64_t capacity = 1024) {
    rings_.push_back(std::make_unique<ring>(capacity));
    ring_.store(rings_.back().get(), std::memory_order_relaxed);
  }
  work_deque(const work_deque&) = delete;
  work_deque& operator=(const work_deque&) = delete;

  // Owner only.
  void push(T item) {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    ring* r = ring_.load(std::memory_order_relaxed);
    // top only grows, so a stale copy overestimates the size: re-read the line thieves write
    // (a cache miss) only when the stale view says the ring is full.
    if (b - top_cache_ > r->capacity() - 1) {
      top_cache_ = top_.load(std::memory_order_acquire);
      if (b - top_cache_ > r->capacity() - 1) r = grow(r, top_cache_, b);
    }
    r->put(b, item);
    // Release: a thief that sees the new bottom also sees the slot written above.
    bottom_.store(b + 1, std::memory_order_release);
  }

  // Owner only: newest item (LIFO), or nullptr.
  T pop() {
    std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    ring* r = ring_.load(std::memory_order_relaxed);
    bottom_.store(b, relaxed_beside_fence);
    // seq_cst fence: the bottom decrement must be visible before reading top, or a thief and the
    // owner could both take the last item.
    full_fence();
    std::int64_t t = top_.load(relaxed_beside_fence);
    if (t > b) {  // empty
      bottom_.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    T item = r->get(b);
    if (t == b) {  // last item: race the thieves for it
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
        item = nullptr;
      bottom_.store(b + 1, std::memory_order_relaxed);
    }
    return item;
  }

  // Any thread: oldest item (FIFO), or nullptr when empty or when another thread won the race.
  T steal() {
    std::int64_t t = top_.load(fences_modelled ? std::memory_order_acquire : std::memory_order_seq_cst);
    // seq_cst fence pairs with the one in pop(): top is read before bottom.
    full_fence();
    std::int64_t b = bottom_.load(fences_modelled ? std::memory_order_acquire : std::memory_order_seq_cst);
    if (t >= b) return nullptr;
    ring* r = ring_.load(std::memory_order_acquire);
    T item = r->get(t);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      return nullptr;
    return item;
  }

  // Owner only: whether at least `bound` items are queued, without touching the line thieves write
  // unless the stale view of top says so.
  bool owner_holds_at_least(std::int64_t bound) {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    if (b - top_cache_ < bound) return false;
    top_cache_ = top_.load(std::memory_order_relaxed);
    return b - top_cache_ >= bound;
  }

  // Approximate number of items; exact for the owner when no thief is active.
  std::int64_t size() const {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    return b > t ? b - t : 0;
  }
  bool empty() const { return size() == 0; }

 private:
  ring* grow(ring* old, std::int64_t t, std::int64_t b) {
    auto bigger = std::make_unique<ring>(old->capacity() * 2);
    for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
    ring* r = bigger.get();
    rings_.push_back(std::move(bigger));  // old ring kept: a thief may be reading it
    ring_.store(r, std::memory_order_release);
    return r;
  }

  // top_ is written by thieves, bottom_ by the owner: separate lines so they do not false-share.
  alignas(cache_line) std::atomic<std::int64_t> top_{0};
  alignas(cache_line) std::atomic<std::int64_t> bottom_{0};
  std::int64_t top_cache_ = 0;  // owner only: a lower bound of top_
  std::atomic<ring*> ring_{nullptr};
  std::vector<std::unique_ptr<ring>> rings_;  // owner only
};

}  // namespace weft::sched
