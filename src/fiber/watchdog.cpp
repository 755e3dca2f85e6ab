#include "fiber/watchdog.hpp"

#include <dlfcn.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/engine.hpp"
#include "fiber/event.hpp"
#include "fiber/poller.hpp"

namespace weft::core {

namespace {

using clock = std::chrono::steady_clock;

std::uint64_t progress_mark() {
  runtime& rt = *instance;
  std::uint64_t sum = fiber::events_fulfilled();
  int n = rt.worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    auto& c = rt.workers[i]->counters;
    // Not resumes: a yielding context (the finalize wait itself) resumes without progressing.
    sum += c.tasks_completed.load(std::memory_order_relaxed) + c.tasks_created.load(std::memory_order_relaxed);
  }
  return sum;
}

const char* symbol(const void* fn) {
  Dl_info info{};
  return dladdr(fn, &info) && info.dli_sname ? info.dli_sname : "?";
}

struct report_lines {
  std::string text;
  int parked = 0;
};

void describe_context(fiber::context* c, void* arg) {
  auto& r = *static_cast<report_lines*>(arg);
  fiber::wait_kind k = c->waiting_for.load(std::memory_order_relaxed);
  if (k == fiber::wait_kind::none) return;
  task* t = c->waiting_task.load(std::memory_order_relaxed);
  char line[512];
  const void* fn = c->waiting_fn.load(std::memory_order_relaxed);
  std::snprintf(line, sizeof line, "  %s %p (%s) on worker %d waits for %s (%p)\n", fn ? "task" : "implicit task",
                static_cast<void*>(t), fn ? symbol(fn) : "main program or a thread",
                c->owner.load(std::memory_order_relaxed), fiber::describe(k),
                c->waiting_on.load(std::memory_order_relaxed));
  r.text += line;
  ++r.parked;
}

void report(const char* headline) {
  runtime& rt = *instance;
  report_lines r;
  fiber::for_each_fiber(describe_context, &r);
  int n = rt.worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) describe_context(&rt.workers[i]->thread_context, &r);
  // Not static: the watchdog thread and weft_finalize may report at the same time.
  std::vector<char> events(8192), pollers(4096);
  int unfulfilled = fiber::describe_events(events.data(), events.size());
  fiber::describe_pollers(pollers.data(), pollers.size());
  std::fprintf(stderr,
               "weft: %s\n  %lld task(s) pending; %d suspended, %d unfulfilled event(s); the others wait for "
               "predecessors or children among them\n%s%s%s",
               headline, static_cast<long long>(live_tasks()), r.parked, unfulfilled, r.text.c_str(), events.data(),
               pollers.data());
}

struct watchdog_state {
  std::thread thread;
  std::mutex lock;
  std::condition_variable stop_signal;
  bool stopping = false;
};
watchdog_state* dog = nullptr;

void watch(int seconds) {
  std::uint64_t last = progress_mark();
  auto since = clock::now();
  bool reported = false;
  std::unique_lock<std::mutex> lock(dog->lock);
  while (!dog->stopping) {
    dog->stop_signal.wait_for(lock, std::chrono::milliseconds(100));
    if (dog->stopping) break;
    std::uint64_t now_mark = progress_mark();
    auto now = clock::now();
    if (now_mark != last || live_tasks() == 0) {
      last = now_mark;
      since = now;
      reported = false;
      continue;
    }
    if (!reported && now - since >= std::chrono::seconds(seconds)) {
      char headline[128];
      std::snprintf(headline, sizeof headline, "watchdog: no task created or finished and no event fulfilled for %d s",
                    seconds);
      report(headline);
      reported = true;
    }
  }
}

bool every_other_worker_asleep(int self) {
  runtime& rt = *instance;
  int n = rt.worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (i != self && rt.workers[i]->has_thread && rt.workers[i]->sleep_word.load(std::memory_order_relaxed) != 1)
      return false;
  return true;
}

}  // namespace

void start_watchdog() {
  int seconds = instance->cfg.watchdog_seconds;
  if (!seconds || dog) return;
  dog = new watchdog_state;
  dog->thread = std::thread(watch, seconds);
}

void stop_watchdog() {
  if (!dog) return;
  {
    std::lock_guard<std::mutex> g(dog->lock);
    dog->stopping = true;
  }
  dog->stop_signal.notify_all();
  dog->thread.join();
  delete dog;
  dog = nullptr;
}

bool wait_for_all_tasks(worker& w0) {
  // The main program steps aside (its worker's loop runs the tasks, on fibers, so that a task that
  // waits forever cannot sit on the main program's stack), and looks again when the loop finds
  // nothing else to do. Tasks that can never finish (they wait on events nobody fulfils) are
  // reported after this long without progress, with every worker idle and no poller.
  int seconds = instance->cfg.watchdog_seconds ? instance->cfg.watchdog_seconds : 5;
  std::uint64_t mark = progress_mark();
  auto since = clock::now();
  worker* w = &w0;
  int countdown = 0;
  auto done = [](void* c) {
    int& n = *static_cast<int*>(c);
    if (n-- > 0) return false;
    n = 64;
    return live_tasks() == 0;
  };
  for (;;) {
    if (live_tasks() == 0) return true;
    std::uint64_t now_mark = progress_mark();
    auto now = clock::now();
    if (now_mark != mark || fiber::pollers_active() || !every_other_worker_asleep(w->id)) {
      mark = now_mark;
      since = now;
    } else if (now - since >= std::chrono::seconds(seconds)) {
      break;
    } else if (!w->next && !w->local_count && w->queue->empty() && !w->yielded) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // idle here: look again soon
    }
    w = &yield_until(*w, done, &countdown, fiber::wait_kind::barrier);
  }
  char headline[160];
  std::snprintf(headline, sizeof headline,
                "weft_finalize: tasks can never finish (nothing progressed for %d s with every worker idle); not "
                "waiting for them",
                seconds);
  report(headline);
  return false;
}

}  // namespace weft::core
