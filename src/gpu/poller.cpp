// The event poller: every CUDA event a suspended (or bound) task waits for sits in one table that
// each pass queries in submission order. weft calls pollers at scheduling points and in idle
// workers, never two at once, so the table is the poller's alone; tasks hand tickets over through
// a lock-free list.
#include <weft/weft.h>

#include <atomic>
#include <vector>

#include "cuda_layer.hpp"

namespace weft::gpu {

namespace {

std::atomic<ticket*> incoming{nullptr};  // pushed by tasks, taken whole by the poller
std::vector<ticket*> table;              // the poller's, oldest first
bool told_pending = false;               // what the poller last said through weft_poller_set_pending

// Streams found busy in this pass: work queued later on the same stream cannot be done either, so
// its events are not queried (each query costs a call into the driver).
constexpr int busy_slots = 16;

void complete(ticket* t) {
  if (t->trace_kind) weft_trace_end(t->trace_kind, t->trace_id, static_cast<std::uint64_t>(t->error));
  if (!t->bound) {
    weft_event_fulfill(t->done);  // the last access: the waiter recycles t
    return;
  }
  if (t->error != cudaSuccess) {
    weft_event_fail(t->done, make_error(t->error, "weft_cuda_iwait", t->stream), &weft_cuda_error_release);
  } else {
    weft_event_fulfill(t->done);
  }
  weft_event_destroy(t->done);
  recycle_home(t);
}

}  // namespace

void submit(ticket* t) {
  ticket* head = incoming.load(std::memory_order_relaxed);
  do t->next = head;
  while (!incoming.compare_exchange_weak(head, t, std::memory_order_release, std::memory_order_relaxed));
}

int poll_events(void*) {
  // Nothing pending: two loads (the bound the idle pass is measured against).
  if (table.empty() && !incoming.load(std::memory_order_relaxed)) return 0;
  if (ticket* list = incoming.exchange(nullptr, std::memory_order_acquire)) {
    // Newest first: appended oldest first, so each stream's events stay in their queue order.
    std::size_t at = table.size();
    for (; list; list = list->next) table.push_back(list);
    for (std::size_t i = at, j = table.size() - 1; i < j; ++i, --j) std::swap(table[i], table[j]);
  }
  cudaStream_t busy[busy_slots];
  int nbusy = 0;
  int progressed = 0;
  std::size_t keep = 0;
  for (std::size_t i = 0; i < table.size(); ++i) {
    ticket* t = table[i];
    bool skip = false;
    for (int b = 0; b < nbusy && !skip; ++b) skip = busy[b] == t->stream;
    cudaError_t rc = skip ? cudaErrorNotReady : cudaEventQuery(t->event);
    if (rc == cudaErrorNotReady) {
      if (!skip && nbusy < busy_slots) busy[nbusy++] = t->stream;
      table[keep++] = t;
      continue;
    }
    t->error = rc;  // cudaSuccess, or the error the stream's work ran into
    complete(t);
    ++progressed;
  }
  table.resize(keep);
  // Idle workers poll without sleeping while events are pending (layer.cpp's poller handle).
  bool waiting = !table.empty();
  if (waiting != told_pending) {
    told_pending = waiting;
    set_poller_pending(waiting);
  }
  return progressed;
}

}  // namespace weft::gpu
