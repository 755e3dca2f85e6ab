// Trace buffers, the kind registry, the buffer shared by threads that are not workers, and the
// session: its start and end, and its trace written when SIGINT or SIGTERM ends the process.
#include "trace/recorder.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "trace/names.hpp"
#include "trace/session.hpp"

namespace weft::trace {

constinit bool on = false;
constinit std::uint64_t origin_ns = 0;

namespace {

// Kinds live for the whole process (a later trace in the same process keeps the numbers): entries
// never move, so caches may keep pointers to them.
struct registry {
  std::mutex lock;
  std::deque<kind> kinds;
  std::unordered_map<const void*, std::uint32_t> by_function;
  std::unordered_map<std::string, std::uint32_t> by_name[5];
};

registry& kinds() {
  static registry* r = new registry;  // never destroyed: the exit-time writer may still use it
  return *r;
}

struct function_slot {
  const void* fn;
  std::uint32_t id;
};
struct name_slot {
  const char* text;
  const kind* entry;
};
constexpr int cache_slots = 64;
thread_local function_slot function_cache[cache_slots];
thread_local name_slot name_cache[cache_slots];

int slot_of(const void* p) {
  return static_cast<int>((reinterpret_cast<std::uintptr_t>(p) >> 4) % cache_slots);
}

struct shared_buffer {
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> dropped{0};
  event* events = nullptr;
  std::uint64_t capacity = 0;
};
shared_buffer foreign;

std::size_t buffer_bytes = 0;

// The session's worker buffers (allocate: in worker order) and file name, for the write on a
// signal. The lock makes that write, the end of the session and the buffers' coming and going take
// turns; `holder` says which thread holds it, for a signal handler that interrupted that thread.
std::mutex session_lock;
std::atomic<pid_t> holder{0};
std::vector<const buffer*> worker_buffers;
std::string session_path;

struct session_guard {
  session_guard() {
    session_lock.lock();
    holder.store(gettid(), std::memory_order_relaxed);
  }
  ~session_guard() {
    holder.store(0, std::memory_order_relaxed);
    session_lock.unlock();
  }
  session_guard(const session_guard&) = delete;
  session_guard& operator=(const session_guard&) = delete;
};

void map_events(buffer& b) {
  void* p = mmap(nullptr, buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "weft: WEFT_TRACE: cannot map a %zu-byte trace buffer; this thread's events are dropped\n",
                 buffer_bytes);
    b = buffer{};
    return;
  }
  b.begin = b.cursor = static_cast<event*>(p);
  b.end = b.begin + buffer_bytes / sizeof(event);
  b.dropped = 0;
  b.idle = false;
}

// --- SIGINT and SIGTERM ---------------------------------------------------------------------------
// A run stopped by Ctrl-C or by a batch system's SIGTERM still leaves its trace. Writing the file
// needs what a signal handler must not call (malloc, stdio, locks, the symbol tables), so a thread of
// its own, blocking every signal, writes it: the handler asks through a pipe and waits for the
// answer in poll, and calls nothing that is not async-signal-safe. Then the signal takes its course:
// the handler that was there before runs, or the default action ends the process, as its exit status
// says. The price of waiting: when the interrupted thread holds a lock the writer needs (it was
// allocating memory, or naming a new kind), the writer cannot finish, and after flush_timeout_ms the
// process ends without a trace, as it did before. The other threads run on while the file is written,
// so its last events come a little after the signal. A second signal while the first is handled (on
// another thread: a thread's handler blocks the signal it handles) takes its course at once.
constexpr int caught_signals[2] = {SIGINT, SIGTERM};
constexpr int flush_timeout_ms = 10000;

struct signal_state {
  int request[2] = {-1, -1};  // handler to writer: a request number and the signal
  int answer[2] = {-1, -1};   // writer to handler: the number of the request done (non-blocking)
  struct sigaction previous[2];
  bool installed[2] = {false, false};
  pid_t pid = 0;  // the process whose writer thread it is (a forked child has none)
};
signal_state signals;
std::atomic<bool> handling{false};  // lock-free, so usable in a handler
unsigned char last_request = 0;     // only the handler that set `handling` touches it

int elapsed_ms(const timespec& since) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int>((now.tv_sec - since.tv_sec) * 1000 + (now.tv_nsec - since.tv_nsec) / 1000000);
}

void wait_for_flush(int sig) {
  unsigned char n;
  while (read(signals.answer[0], &n, 1) == 1) {
  }  // answers that came after an earlier handler gave up
  const unsigned char mine = ++last_request;
  const unsigned char request[2] = {mine, static_cast<unsigned char>(sig)};
  if (write(signals.request[1], request, 2) != 2) return;
  timespec since;
  clock_gettime(CLOCK_MONOTONIC, &since);
  for (int left; (left = flush_timeout_ms - elapsed_ms(since)) > 0;) {
    pollfd p{signals.answer[0], POLLIN, 0};
    if (poll(&p, 1, left) < 0 && errno != EINTR) return;
    while (read(signals.answer[0], &n, 1) == 1)
      if (n == mine) return;
  }
}

void flush_on_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const struct sigaction& previous = signals.previous[sig == SIGINT ? 0 : 1];
  const bool first = !handling.exchange(true, std::memory_order_acq_rel);
  // Not when this thread holds the session's lock (it was writing the trace at the end of the run):
  // the writer would wait for it.
  if (first && getpid() == signals.pid && holder.load(std::memory_order_relaxed) != gettid()) wait_for_flush(sig);
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler == SIG_DFL) {
    // The signal is blocked while this handler runs: it ends the process when the handler returns.
    sigaction(sig, &previous, nullptr);
    raise(sig);
  } else {
    previous.sa_handler(sig);
  }
  if (first) handling.store(false, std::memory_order_release);
  errno = saved_errno;
}

void* write_on_request(void*) {
  unsigned char request[2];  // written at once (less than PIPE_BUF): read at once
  while (read(signals.request[0], request, 2) == 2) {
    {
      session_guard g;
      if (on) {
        std::fprintf(stderr, "weft: SIG%s: writing the trace recorded so far (WEFT_TRACE=%s)\n",
                     sigabbrev_np(request[1]), session_path.c_str());
        write_file_locked(session_path, worker_buffers, clock_ns() - origin_ns);
      }
    }
    if (write(signals.answer[1], &request[0], 1) != 1) break;
  }
  return nullptr;
}

bool start_signal_writer() {
  if (signals.pid == getpid()) return true;
  if (pipe2(signals.request, O_CLOEXEC) != 0) return false;
  if (pipe2(signals.answer, O_CLOEXEC | O_NONBLOCK) != 0) {
    close(signals.request[0]);
    close(signals.request[1]);
    return false;
  }
  // The writer inherits a mask that blocks every signal: none is ever handled on it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t writer;
  bool started = pthread_create(&writer, nullptr, write_on_request, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!started) {
    for (int fd : {signals.request[0], signals.request[1], signals.answer[0], signals.answer[1]}) close(fd);
    return false;
  }
  pthread_detach(writer);  // it waits in read until the process ends
  signals.pid = getpid();
  return true;
}

void install_signal_handlers() {
  if (!start_signal_writer()) {
    std::fprintf(stderr, "weft: WEFT_TRACE: cannot start the thread that writes the trace on SIGINT or SIGTERM\n");
    return;
  }
  for (int i = 0; i < 2; ++i) {
    struct sigaction previous;
    if (signals.installed[i] || sigaction(caught_signals[i], nullptr, &previous) != 0) continue;
    // A signal the program ignores (SIGINT in a background job) stays ignored.
    if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) continue;
    struct sigaction mine {};
    mine.sa_sigaction = flush_on_signal;
    mine.sa_mask = previous.sa_mask;
    mine.sa_flags = SA_SIGINFO | (previous.sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER | SA_RESETHAND));
    signals.previous[i] = previous;
    signals.installed[i] = sigaction(caught_signals[i], &mine, nullptr) == 0;
  }
}

void restore_signal_handlers() {
  for (int i = 0; i < 2; ++i) {
    if (!signals.installed[i]) continue;
    signals.installed[i] = false;
    struct sigaction current;
    // Unless the program has set a handler of its own since.
    if (sigaction(caught_signals[i], nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
        current.sa_sigaction == flush_on_signal)
      sigaction(caught_signals[i], &signals.previous[i], nullptr);
  }
}

// The latest label of each wanted task in one worker's buffer: a task's label follows its task_create
// in the creating worker's buffer, and an address is reused, so only labels after its latest
// creation count. (time of that creation, label kind or 0) per task created in this buffer.
// The buffer is read while its worker may still record: a report wants it as it stands, and a torn
// last event costs a name at most.
using created_label = std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::uint32_t>>;
__attribute__((no_sanitize("thread"))) created_label scan_labels(const buffer& b,
                                                                 const std::unordered_set<std::uint64_t>& wanted) {
  created_label out;
  std::unordered_map<std::uint64_t, std::uint32_t> label_after;
  for (const event* e = b.cursor; e-- != b.begin;) {
    const auto type = static_cast<event_type>(e->type);
    if ((type != event_type::task_create && type != event_type::task_label) || !wanted.contains(e->a) ||
        out.contains(e->a))
      continue;
    if (type == event_type::task_label) {
      label_after.try_emplace(e->a, e->c);  // newest first: the latest label
    } else {
      auto label = label_after.find(e->a);
      out.emplace(e->a, std::pair{e->time, label == label_after.end() ? 0u : label->second});
    }
  }
  return out;
}

}  // namespace

std::uint32_t kind_of_function(const void* fn) {
  function_slot& s = function_cache[slot_of(fn)];
  if (s.fn == fn && s.id) return s.id;
  registry& r = kinds();
  std::lock_guard<std::mutex> g(r.lock);
  auto [it, added] = r.by_function.try_emplace(fn, static_cast<std::uint32_t>(r.kinds.size() + 1));
  if (added) r.kinds.push_back(kind{std::string(), fn, category_task, it->second});
  s = function_slot{fn, it->second};
  return it->second;
}

std::uint32_t kind_of_name(const char* name, category cat) {
  name_slot& s = name_cache[slot_of(name)];
  // The same pointer with the same text: labels are usually literals, but a reused buffer is not.
  if (s.text == name && s.entry && s.entry->cat == cat && s.entry->name == name) return s.entry->id;
  registry& r = kinds();
  std::lock_guard<std::mutex> g(r.lock);
  auto [it, added] = r.by_name[cat].try_emplace(name, static_cast<std::uint32_t>(r.kinds.size() + 1));
  if (added) r.kinds.push_back(kind{name, nullptr, cat, it->second});
  s = name_slot{name, &r.kinds[it->second - 1]};
  return it->second;
}

std::vector<kind> snapshot_kinds() {
  registry& r = kinds();
  std::lock_guard<std::mutex> g(r.lock);
  return std::vector<kind>(r.kinds.begin(), r.kinds.end());
}

void allocate(buffer& b) {
  map_events(b);
  session_guard g;
  worker_buffers.push_back(&b);
}

void release(buffer& b) {
  session_guard g;
  std::erase(worker_buffers, &b);
  if (b.begin) munmap(b.begin, buffer_bytes);
  b = buffer{};
}

void record_foreign(event_type type, std::uint64_t a, std::uint64_t b, std::uint32_t c, std::uint16_t d) {
  if (!foreign.events) return;
  // relaxed: the slot number only has to be unique; the writer reads after the threads are done.
  std::uint64_t i = foreign.next.fetch_add(1, std::memory_order_relaxed);
  if (i >= foreign.capacity) {
    foreign.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  foreign.events[i] = event{clock_ns() - origin_ns, a, b, c, static_cast<std::uint16_t>(type), d};
}

void begin_session(std::size_t bytes_per_buffer) {
  buffer_bytes = bytes_per_buffer < (std::size_t{64} << 10) ? (std::size_t{64} << 10) : bytes_per_buffer;
  buffer_bytes = (buffer_bytes + 4095) & ~std::size_t{4095};
  buffer shared;
  map_events(shared);
  foreign.events = shared.begin;
  foreign.capacity = shared.begin ? buffer_bytes / sizeof(event) : 0;
  foreign.next.store(0, std::memory_order_relaxed);
  foreign.dropped.store(0, std::memory_order_relaxed);
  {
    session_guard g;
    worker_buffers.clear();
    const char* path = std::getenv("WEFT_TRACE");  // what the runtime's configuration read
    session_path = path ? path : "";
    origin_ns = clock_ns();
    on = true;
  }
  install_signal_handlers();
}

buffer foreign_events() {
  buffer b;
  std::uint64_t n = foreign.next.load(std::memory_order_relaxed);
  if (n > foreign.capacity) n = foreign.capacity;
  b.begin = foreign.events;
  b.cursor = foreign.events + n;
  b.end = foreign.events + foreign.capacity;
  b.dropped = foreign.dropped.load(std::memory_order_relaxed);
  return b;
}

void end_session(bool unmap) {
  restore_signal_handlers();
  session_guard g;
  on = false;
  counters_on = false;
  if (!unmap) return;
  if (foreign.events) munmap(foreign.events, buffer_bytes);
  foreign.events = nullptr;
  foreign.capacity = 0;
}

bool write_file(const std::string& path, const std::vector<const buffer*>& workers, std::uint64_t end_ns) {
  session_guard g;
  return write_file_locked(path, workers, end_ns);
}

std::unordered_map<std::uint64_t, std::string> labels_of(const std::vector<std::uint64_t>& tasks, symbolizer& names) {
  std::unordered_map<std::uint64_t, std::string> out;
  created_label latest;  // over all buffers: the latest creation of each task
  {
    session_guard g;
    if (!on || tasks.empty()) return out;
    const std::unordered_set<std::uint64_t> wanted(tasks.begin(), tasks.end());
    for (const buffer* b : worker_buffers)
      for (const auto& [task, found] : scan_labels(*b, wanted)) {
        auto [it, added] = latest.try_emplace(task, found);
        if (!added && found.first >= it->second.first) it->second = found;
      }
  }
  const std::vector<kind> all = snapshot_kinds();
  for (const auto& [task, found] : latest) {
    const std::uint32_t label = found.second;
    if (!label || label > all.size()) continue;
    const kind& k = all[label - 1];  // ids are numbered from 1 in registration order
    out.emplace(task, k.fn ? names.name_of(k.fn) : k.name);
  }
  return out;
}

}  // namespace weft::trace
