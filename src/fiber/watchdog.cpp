#include "fiber/watchdog.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/engine.hpp"
#include "fiber/event.hpp"
#include "fiber/poller.hpp"
#include "trace/names.hpp"

namespace weft::core {

namespace {

using clock = std::chrono::steady_clock;

std::uint64_t progress_mark() {
  runtime& rt = *instance;
  std::uint64_t sum = fiber::events_fulfilled();
  int n = rt.worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const worker& v = *rt.workers[i];
    // Not resumes: a yielding context (the finalize wait itself) resumes without progressing.
    sum += static_cast<std::uint64_t>(v.finished.load(std::memory_order_relaxed) +
                                      v.submitted.load(std::memory_order_relaxed));
  }
  return sum;
}

// A context set aside, as the report names it.
struct parked_context {
  const task* t;
  const void* fn;  // its body, or null for an implicit task
  int owner;
  fiber::wait_kind why;
  const void* on;
};

void collect(fiber::context* c, void* arg) {
  fiber::wait_kind k = c->waiting_for.load(std::memory_order_relaxed);
  if (k == fiber::wait_kind::none) return;
  static_cast<std::vector<parked_context>*>(arg)->push_back(
      parked_context{c->waiting_task.load(std::memory_order_relaxed), c->waiting_fn.load(std::memory_order_relaxed),
                     c->owner.load(std::memory_order_relaxed), k, c->waiting_on.load(std::memory_order_relaxed)});
}

// A task is named by its label (kept in the trace only), else its function's symbol, else the
// function's address.
std::string describe_parked(const std::vector<parked_context>& parked) {
  trace::symbolizer names;
  std::vector<std::uint64_t> ids;
  for (const parked_context& p : parked)
    if (p.fn) ids.push_back(reinterpret_cast<std::uintptr_t>(p.t));
  const std::unordered_map<std::uint64_t, std::string> labels = trace::labels_of(ids, names);
  std::string text;
  for (const parked_context& p : parked) {
    std::string name = "main program or a thread";
    if (p.fn) {
      auto label = labels.find(reinterpret_cast<std::uintptr_t>(p.t));
      name = label != labels.end() ? label->second : names.name_of(p.fn);
    }
    char task[32], on[32];
    std::snprintf(task, sizeof task, "%p", static_cast<const void*>(p.t));
    std::snprintf(on, sizeof on, "%p", p.on);
    text += std::string("  ") + (p.fn ? "task " : "implicit task ") + task + " (" + name + ") on worker " +
            std::to_string(p.owner) + " waits for " + fiber::describe(p.why) + " (" + on + ")\n";
  }
  return text;
}

// What a worker that is not asleep runs: with nothing progressing, a task or team member blocked in
// the kernel or spinning in user code (a gang-scheduled member that blocks holds every member
// sharing its worker). Read without synchronisation: a diagnostic, the worker may move on (the
// descriptor it names stays mapped: pooled, or a team's that outlives this read but for a race
// window the sanitizers need not see).
__attribute__((no_sanitize("thread", "address"))) std::string describe_running(runtime& rt) {
  trace::symbolizer names;
  std::string text;
  int n = rt.worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    worker& w = *rt.workers[i];
    if (!w.has_thread && i != 0) continue;
    // What it holds that another wait may need: ready tasks only it runs, counts not reported yet
    // (a sleeping worker too).
    std::string held;
    auto add = [&held](std::int64_t n, const char* what) {
      if (n) held += (held.empty() ? "" : ", ") + std::to_string(n) + " " + what;
    };
    add(w.next ? 1 : 0, "ready task in its depth-first slot");
    add(w.local_count, "ready task(s) in its local buffer");
    add(w.inbox.load(std::memory_order_relaxed) || w.resume_next ? 1 : 0, "context(s) to resume");
    add(w.batch_finished, "finished child(ren) not yet counted out of their parent");
    add(w.group_owed, "finished task(s) not yet counted out of their taskgroup");
    if (!held.empty()) text += "  worker " + std::to_string(i) + " holds " + held + "\n";
    if (w.sleep_word.load(std::memory_order_relaxed) == 1) continue;
    const task* t = w.current;
    if (!t || t == &w.root) continue;  // at its scheduling loop
    char at[32];
    std::snprintf(at, sizeof at, "%p", static_cast<const void*>(t));
    bool implicit = t->flags & flag_root;
    text += "  worker " + std::to_string(i) + " is not idle: it runs " + (implicit ? "implicit task " : "task ") + at +
            " (" + (implicit ? "a team member" : names.name_of(reinterpret_cast<const void*>(t->fn))) +
            (w.portable ? ", gang-scheduled: the members sharing this worker wait for it" : "") +
            ") or waits in it without sleeping\n";
  }
  return text;
}

void report(const char* headline) {
  runtime& rt = *instance;
  std::vector<parked_context> parked;
  fiber::for_each_fiber(collect, &parked);
  int n = rt.worker_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) collect(&rt.workers[i]->thread_context, &parked);
  const std::string lines = describe_parked(parked) + describe_running(rt);
  // Not static: the watchdog thread and weft_finalize may report at the same time.
  std::vector<char> events(8192), pollers(4096);
  int unfulfilled = fiber::describe_events(events.data(), events.size());
  fiber::describe_pollers(pollers.data(), pollers.size());
  std::fprintf(stderr,
               "weft: %s\n  %lld task(s) pending; %d suspended, %d unfulfilled event(s); the others wait for "
               "predecessors or children among them\n%s%s%s",
               headline, static_cast<long long>(live_tasks()), static_cast<int>(parked.size()), unfulfilled,
               lines.c_str(), events.data(), pollers.data());
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
