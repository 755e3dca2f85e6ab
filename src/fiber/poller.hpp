// Pollers: functions the workers call at scheduling points and while idle, one worker at a time
// per poller, to progress outside work (MPI requests, GPU streams) and fulfil events.
#pragma once

#include <atomic>
#include <cstdint>

namespace weft::fiber {

inline constexpr int max_pollers = 64;

struct poller {
  int (*fn)(void*);
  void* arg;
  std::atomic<bool> busy{false};  // a worker is calling it
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> hits{0};  // calls that reported progress (fn returned non-zero)
  std::atomic<bool> pending{false};    // weft_poller_set_pending: completions expected soon
};

extern std::atomic<int> poller_count;
extern std::atomic<int> poller_limit;  // one past the highest slot ever used
extern std::atomic<poller*> poller_slots[max_pollers];

extern std::atomic<int> pollers_pending;  // pollers with pending set

inline bool pollers_active() {
  return poller_count.load(std::memory_order_relaxed) != 0;
}
// Some poller expects completions (requests in flight): idle workers keep polling, no sleep.
inline bool pollers_expecting() {
  return pollers_pending.load(std::memory_order_relaxed) != 0;
}
// Calls each registered poller that no other worker is calling, starting at a rotating slot so
// that no poller waits behind the others. Returns the number of calls that reported progress.
int poll_all(int worker_id);
// For the watchdog: prints the registered pollers.
void describe_pollers(char* out, std::size_t size);
// Wakes every sleeping worker (a poller started expecting completions: they poll rather than sleep).
void wake_sleeping_workers();
// Frees the records of unregistered pollers (finalize: no worker can hold one any more). Registered
// pollers stay registered across weft_finalize and weft_init: a layer registers once per process.
void release_retired_pollers();

}  // namespace weft::fiber
