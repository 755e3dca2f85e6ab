// Parking idle workers without losing wake-ups and without a fence on the hot path.
//
// A producer that makes work available does only a compiler barrier before reading the sleeper
// count; a worker about to sleep publishes itself and then issues a process-wide memory barrier
// (membarrier(2)), which orders the producer's earlier queue store for it. This is the asymmetric
// Dekker pattern: the rare side (going to sleep) pays, the common side (pushing a task) does not.
// Where membarrier is unavailable both sides use a full fence.
#pragma once

#include <sched.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <vector>

namespace weft::sched {

class idle_park {
 public:
  static void init();  // registers for membarrier once per process

  // Hot path, after a task was made available. None is woken while a worker counted by
  // yield_looking will look again: a full fence first (only then, instead of a futex call), so
  // that a looker that leaves the count after this read sees the work when it looks. Unless, with
  // workers bound to cores, a core has none awake: a looker bound beside a busy thread looks only
  // when that thread gives the core up, while a sleeper's core idles (past the cores, a burst of
  // tasks after a serial stretch ran on its producer alone, 1.4x the time); a sleeper bound there
  // is woken.
  void notify_work() {
    if (sleeper_count_after_fence() == 0) return;
    if (lookers_.load(std::memory_order_relaxed) != 0) {
      if (int idle = idle_core(); idle >= 0) return wake_one(idle);
#if defined(__SANITIZE_THREAD__)
      if (lookers_.fetch_add(0, std::memory_order_seq_cst) != 0) return;  // no fences under TSan
#else
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (lookers_.load(std::memory_order_relaxed) != 0) return;
#endif
    }
    wake_one(-1);
  }

  // An idle worker that will look for work again gives its core away meanwhile (more threads than
  // cores). Counted so that producers leave the sleepers alone; never held across a sleep. A task a
  // looker leaves (it took another, or resumed a context) reaches a sleeper through the thieves'
  // chain or the sleepers' timeout (scheduler.cpp: try_steal_from, idle_wait).
  bool someone_looking() const { return lookers_.load(std::memory_order_relaxed) != 0; }
  // Workers asleep here now (approximate: for choosing a timeout).
  int sleeping() const {
    return sleepers_.load(std::memory_order_relaxed);
  }
  void yield_looking() {
    begin_look();
    sched_yield();
    end_look();
  }
  // The two halves of yield_looking (the test drives them without a yield). seq_cst on leaving:
  // the count drops before the next look (see notify_work).
  void begin_look() {
    lookers_.fetch_add(1, std::memory_order_relaxed);
  }
  void end_look() {
    lookers_.fetch_sub(1, std::memory_order_seq_cst);
  }

  // Worker `self` (its futex word) sleeps unless ready() turns true after it announced itself.
  // Returns after a wake-up, a timeout (ns; 0 = none), or immediately when ready() holds.
  template <class Ready>
  void sleep(std::atomic<std::uint32_t>& word, Ready&& ready, std::int64_t timeout_ns) {
    word.store(1, std::memory_order_seq_cst);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    heavy_fence();
    if (!ready()) futex_wait(word, 1, timeout_ns);
    word.store(0, std::memory_order_relaxed);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

  // As sleep, for a wait whose every waker makes the condition true with a seq_cst write and then
  // calls wake(word) (a seq_cst exchange), never notify_work: a full fence on each side makes the
  // Dekker pair, and the process-wide barrier is not needed. That barrier interrupts every core
  // the process runs on; 1,000 members going back to the pool after each region paid 1,000 of
  // them (the pool's waits, run_until.hpp: wait_until).
  template <class Ready>
  void sleep_woken_directly(std::atomic<std::uint32_t>& word, Ready&& ready, std::int64_t timeout_ns) {
    word.store(1, std::memory_order_seq_cst);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
#if !defined(__SANITIZE_THREAD__)  // no fences under ThreadSanitizer: the RMW above stands in
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
    if (!ready()) futex_wait(word, 1, timeout_ns);
    word.store(0, std::memory_order_relaxed);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

  // A worker that sleeps on another word while `word` holds `value` (a team barrier's generation,
  // which its last arrival wakes all at once) still counts as a sleeper of this park, so that a
  // producer's notify_work may wake one such sleeper for a core that idles (wake_one). Best
  // effort, hence no heavy fence here: a producer may miss a sleeper whose count it reads just
  // before the increment lands while the sleeper's ready() misses the task still in the
  // producer's store buffer; that sleeper wakes at its timeout. A wake that comes before the
  // futex call is lost the same way (the value does not change).
  template <class Ready>
  void sleep_on(std::atomic<std::uint32_t>& word, std::uint32_t value, Ready&& ready, std::int64_t timeout_ns) {
    other_word_.store(&word, std::memory_order_relaxed);
    other_sleepers_.fetch_add(1, std::memory_order_relaxed);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (!ready()) futex_wait(word, value, timeout_ns);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    other_sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

  // Wakes the worker owning `word` if it sleeps (used when a wait it announced is satisfied).
  static void wake(std::atomic<std::uint32_t>& word) {
    if (word.exchange(0, std::memory_order_seq_cst) == 1) futex_wake(word);
  }

  // Wakes every sleeper on `word`: a word many threads wait on at once (a barrier's generation)
  // costs its waker one call.
  static void wake_all(std::atomic<std::uint32_t>& word) { futex_wake(word); }

  // The sleep words wake_one chooses from (those of a gang's members), the core each member is
  // bound to (-1: none; null when binding is off), and how many workers bound to each of the
  // `cores` cores are awake (null when binding is off).
  void set_words(std::atomic<std::uint32_t>* const* words, const int* cores_of, int count,
                 const std::atomic<int>* awake_on_core, int cores) {
    words_ = words;
    cores_of_ = cores_of;
    count_ = count;
    awake_ = awake_on_core;
    member_cores_.clear();
    if (!awake_) return;
    core_seen_.assign(static_cast<std::size_t>(cores), 0);
    for (int k = 0; k < count; ++k) {
      const int c = cores_of[k];
      if (c >= 0 && c < cores && !core_seen_[c]) {
        core_seen_[c] = 1;
        member_cores_.push_back(c);
      }
    }
  }

 private:
  // Wakes a member asleep on its own word, one bound to core `prefer` if >= 0 (then none other), or
  // failing that one asleep on a barrier's word.
  void wake_one(int prefer);
  // The core of a member whose core has nobody awake, or -1 (only this gang's members' cores: a
  // core that idles without one of them is not this park's to fill). A loop over the distinct
  // cores, not the members: it runs for tasks pushed past the cores, where a team of 1,000 on 2
  // cores has 2 of them.
  int idle_core() const {
    for (const int c : member_cores_)
      if (awake_[c].load(std::memory_order_relaxed) == 0) return c;
    return -1;
  }
  static void heavy_fence();
  static void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns);
  static void futex_wake(std::atomic<std::uint32_t>& word, int waiters = INT_MAX);

  int sleeper_count_after_fence() {
#if defined(__SANITIZE_THREAD__)
    // No fences under ThreadSanitizer: a read-modify-write on the sleeper count takes part in the
    // same total order as the sleeper's increment, which gives the Dekker guarantee.
    return sleepers_.fetch_add(0, std::memory_order_seq_cst);
#else
    if (cheap_fence_) std::atomic_signal_fence(std::memory_order_seq_cst);
    else std::atomic_thread_fence(std::memory_order_seq_cst);
    // Relaxed: ordered by the fence above (paired with heavy_fence on the sleeping side).
    return sleepers_.load(std::memory_order_relaxed);
#endif
  }

  static inline bool cheap_fence_ = false;
  std::atomic<std::uint32_t>* const* words_ = nullptr;
  const int* cores_of_ = nullptr;
  int count_ = 0;
  const std::atomic<int>* awake_ = nullptr;
  std::vector<int> member_cores_;  // the distinct cores the members are bound to (binding on)
  std::vector<char> core_seen_;    // set_words' scratch
  std::atomic<unsigned> rotor_{0};
  // The word the last sleep_on slept on: a futex wake on a stale one (its team gone) is harmless,
  // a spurious wake-up for whoever waits there, which every futex protocol tolerates.
  std::atomic<std::atomic<std::uint32_t>*> other_word_{nullptr};
  std::atomic<int> other_sleepers_{0};  // in sleep_on now: no futex call on a word nobody waits on
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<int> lookers_{0};  // on the sleepers' line: notify_work reads both
};

}  // namespace weft::sched
