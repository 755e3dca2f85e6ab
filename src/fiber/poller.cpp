#include "fiber/poller.hpp"

#include <dlfcn.h>
#include <sched.h>
#include <weft/weft.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "core/runtime.hpp"
#include "trace/names.hpp"

namespace weft::fiber {

std::atomic<int> poller_count{0};
std::atomic<poller*> poller_slots[max_pollers] = {};

std::atomic<int> poller_limit{0};
std::atomic<int> pollers_pending{0};

namespace {
std::mutex registry_lock;      // registration only
std::vector<poller*> retired;  // unregistered: freed at finalize (a racing worker may still read one)
// Where this thread starts its next pass: successive passes start one poller further, so that no
// poller always waits behind the others (no shared rotor: a pass touches no shared counter).
constinit thread_local unsigned turn = 0;
}  // namespace

int poll_all(int worker_id) {
  int progressed = 0;
  int limit = poller_limit.load(std::memory_order_acquire);  // slots at and past it are empty
  if (limit <= 0) return 0;
  unsigned start = turn++ + static_cast<unsigned>(worker_id);
  for (int i = 0; i < limit; ++i) {
    poller* p =
        poller_slots[(start + static_cast<unsigned>(i)) % static_cast<unsigned>(limit)].load(std::memory_order_acquire);
    if (!p) continue;
    // A plain read first: a poller another worker is calling costs no exchange on its line.
    if (p->busy.load(std::memory_order_relaxed) || p->busy.exchange(true, std::memory_order_acquire)) continue;
    int r = p->fn(p->arg);
    p->calls.store(p->calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (r) {
      p->hits.store(p->hits.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      ++progressed;
      if (trace::on) [[unlikely]] {
        std::uint64_t slot = (start + static_cast<unsigned>(i)) % static_cast<unsigned>(limit);
        if (core::worker* w = core::current_worker)
          trace::record(w->trace, trace::event_type::poll, slot, static_cast<std::uint64_t>(r));
        else
          trace::record_foreign(trace::event_type::poll, slot, static_cast<std::uint64_t>(r), 0, 0);
      }
    }
    p->busy.store(false, std::memory_order_release);
  }
  return progressed;
}

void describe_pollers(char* out, std::size_t size) {
  std::size_t used = 0;
  out[0] = 0;
  trace::symbolizer names;  // program functions are mostly local symbols, which dladdr cannot see
  for (auto& slot : poller_slots) {
    poller* p = slot.load(std::memory_order_acquire);
    if (!p || used >= size) continue;
    std::string name = names.name_of(reinterpret_cast<const void*>(p->fn));
    int n = std::snprintf(out + used, size - used, "  poller %s(%p): %llu calls, %llu with progress\n", name.c_str(),
                          p->arg, static_cast<unsigned long long>(p->calls.load(std::memory_order_relaxed)),
                          static_cast<unsigned long long>(p->hits.load(std::memory_order_relaxed)));
    if (n > 0) used += static_cast<std::size_t>(n);
  }
}

void wake_sleeping_workers() {
  core::runtime* rt = core::instance;
  if (!rt) return;
  int n = rt->worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) sched::idle_park::wake(rt->workers[i]->sleep_word);
}

void release_retired_pollers() {
  std::lock_guard<std::mutex> g(registry_lock);
  for (poller* p : retired) delete p;
  retired.clear();
}

}  // namespace weft::fiber

using namespace weft::fiber;

extern "C" {

weft_poller_t* weft_poller_register(weft_poller_fn fn, void* arg) {
  if (!fn) return nullptr;
  std::lock_guard<std::mutex> g(registry_lock);
  for (int i = 0; i < max_pollers; ++i) {
    auto& slot = poller_slots[i];
    if (slot.load(std::memory_order_relaxed)) continue;
    auto* p = new poller{fn, arg};
    slot.store(p, std::memory_order_release);
    if (poller_limit.load(std::memory_order_relaxed) < i + 1) poller_limit.store(i + 1, std::memory_order_release);
    // seq_cst, then the sleepers' words: a worker that chose its sleep without a timeout (no
    // poller then) announces its sleep and then reads the count in its sleep condition
    // (idle_wait), so one of the two sees the other. Asleep since before this poller existed, it
    // would otherwise never call it (a TSan CI run: a poller registered on an idle runtime was not
    // called within 10 s).
    poller_count.fetch_add(1, std::memory_order_seq_cst);
    wake_sleeping_workers();
    return reinterpret_cast<weft_poller_t*>(p);
  }
  return nullptr;
}

int weft_poller_set_pending(weft_poller_t* handle, int pending) {
  auto* p = reinterpret_cast<poller*>(handle);
  if (!p) return WEFT_ERR_INVALID_ARGUMENT;
  // relaxed: a hint read by idle workers to choose between polling again and a short sleep.
  if (p->pending.exchange(pending != 0, std::memory_order_relaxed) != (pending != 0)) {
    // seq_cst, then the sleepers' words: a worker announces its sleep, then reads the count in its
    // sleep condition (idle_wait), so one of the two sees the other. A worker asleep since before
    // this poller existed would otherwise never call it.
    pollers_pending.fetch_add(pending ? 1 : -1, std::memory_order_seq_cst);
    if (pending) wake_sleeping_workers();
  }
  return WEFT_OK;
}

int weft_poller_unregister(weft_poller_t* handle) {
  auto* p = reinterpret_cast<poller*>(handle);
  if (!p) return WEFT_ERR_INVALID_ARGUMENT;
  {
    std::lock_guard<std::mutex> g(registry_lock);
    bool found = false;
    for (auto& slot : poller_slots) {
      if (slot.load(std::memory_order_relaxed) == p) {
        slot.store(nullptr, std::memory_order_release);
        found = true;
      }
    }
    if (!found) return WEFT_ERR_INVALID_ARGUMENT;
    poller_count.fetch_sub(1, std::memory_order_relaxed);
    if (p->pending.exchange(false, std::memory_order_relaxed)) pollers_pending.fetch_sub(1, std::memory_order_relaxed);
  }
  // A worker that loaded the slot before it was cleared may still be calling it: wait for it (the
  // poller itself never unregisters from inside its function — that would wait forever).
  for (;;) {
    if (!p->busy.exchange(true, std::memory_order_acquire)) break;
    sched_yield();
  }
  // Another worker may still have p loaded and see busy set: it skips. The record is freed at
  // finalize, when no worker runs.
  if (!weft::core::instance) {
    delete p;  // no runtime: no worker can hold it
    return WEFT_OK;
  }
  std::lock_guard<std::mutex> g(registry_lock);
  retired.push_back(p);
  return WEFT_OK;
}

}  // extern "C"
