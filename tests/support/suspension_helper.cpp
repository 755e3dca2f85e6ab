// A small program the suspension tests start in a child process: it leaves tasks waiting on events
// nobody fulfils (or fulfils late), so that the test can check weft_finalize's stall report, the
// watchdog's report, the exit status, and that nothing hangs.
//   suspension_helper MODE
// MODE: stall-child       a child of the main program waits on an event nobody fulfils; finalize,
//                         then return from main (weft's exit handler finalizes again: must not hang)
//       stall-grandchild  a grandchild waits on such an event (its parent returned); finalize
//       stall-bind        a task binds an event nobody fulfils and returns; finalize
//       stall-many        several tasks wait on several unfulfilled events, others completed; finalize
//       stall-dirty-heap  stall-child after freeing heap blocks filled with nonzero bytes
//                         (the stall modes but stall-child end with _Exit after the report)
//       watchdog-late     a task waits on an event a foreign thread fulfils after 1.8 s; the main
//                         program waits for it (taskwait), then finalize must succeed
// On stdout: "event=<%p of each unfulfilled event>" lines, then "finalize=<status>" and
// "finalize_seconds=<s>". The runtime reads WEFT_WATCHDOG and WEFT_NUM_THREADS from the environment.
#include <weft/weft.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

std::atomic<int> waited{0};
std::atomic<int> completed{0};

void wait_on(void* p) {
  weft_event_t* e = *static_cast<weft_event_t**>(p);
  waited.fetch_add(1);
  weft_event_wait(e);  // never returns in the stall modes
  completed.fetch_add(1);
}

void spawn_waiter(weft_event_t* e) {
  weft_task_t* t = weft_task_create(&wait_on, &e, sizeof e, 0);
  if (!t || weft_task_submit(t) != WEFT_OK) {
    std::fprintf(stderr, "helper: cannot submit a task: %s\n", weft_strerror(weft_last_error()));
    std::exit(3);
  }
}

void spawn_grandchild_waiter(void* p) {
  spawn_waiter(*static_cast<weft_event_t**>(p));  // returns without waiting for it
}

void bind_and_return(void* p) {
  weft_event_t* e = *static_cast<weft_event_t**>(p);
  if (weft_event_bind(e) != WEFT_OK) std::fprintf(stderr, "helper: weft_event_bind failed\n");
  completed.fetch_add(1);
}

void nothing(void*) { completed.fetch_add(1); }

void submit(weft_task_fn fn, weft_event_t* e) {
  weft_task_t* t = weft_task_create(fn, &e, sizeof e, 0);
  if (!t || weft_task_submit(t) != WEFT_OK) {
    std::fprintf(stderr, "helper: cannot submit a task: %s\n", weft_strerror(weft_last_error()));
    std::exit(3);
  }
}

void print_event(weft_event_t* e) {
  std::printf("event=%p\n", static_cast<void*>(e));
  std::fflush(stdout);
}

int finalize_and_report() {
  auto t0 = std::chrono::steady_clock::now();
  int status = weft_finalize();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("finalize=%d\nfinalize_seconds=%.2f\nwaited=%d completed=%d\n", status, seconds, waited.load(),
              completed.load());
  std::fflush(stdout);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* mode = argv[1];
  if (std::strcmp(mode, "stall-dirty-heap") == 0) {
    // Heap blocks full of nonzero bytes, freed, so that the runtime's first slabs may reuse them:
    // the report must list the one unfulfilled event, never a block that was never an event.
    std::vector<void*> dirty;
    for (int i = 0; i < 256; ++i) {
      void* p = std::malloc(4096 + 64 * (i % 8));
      if (!p) return 6;
      std::memset(p, 0x5A, 4096);
      dirty.push_back(p);
    }
    for (void* p : dirty) std::free(p);
    mode = "stall-child";
  }
  if (weft_init() != WEFT_OK) return 4;
  if (std::strcmp(mode, "stall-child") == 0) {
    weft_event_t* e = weft_event_create(1);
    print_event(e);
    spawn_waiter(e);
    finalize_and_report();
    return 0;
  }
  if (std::strcmp(mode, "stall-grandchild") == 0) {
    weft_event_t* e = weft_event_create(1);
    print_event(e);
    submit(&spawn_grandchild_waiter, e);
    if (weft_taskwait() != WEFT_OK) return 5;
    finalize_and_report();
    std::_Exit(0);  // the exit path after a stall is covered by stall-child
  }
  if (std::strcmp(mode, "stall-bind") == 0) {
    weft_event_t* e = weft_event_create(1);
    print_event(e);
    submit(&bind_and_return, e);
    finalize_and_report();
    std::_Exit(0);  // the exit path after a stall is covered by stall-child
  }
  if (std::strcmp(mode, "stall-many") == 0) {
    for (int i = 0; i < 20; ++i) submit(&nothing, nullptr);
    weft_event_t* e1 = weft_event_create(1);
    weft_event_t* e2 = weft_event_create(3);
    weft_event_t* fine = weft_event_create(1);
    print_event(e1);
    print_event(e2);
    for (int i = 0; i < 4; ++i) spawn_waiter(e1);
    weft_event_fulfill(e2);  // 2 of 3 missing
    spawn_waiter(e2);
    spawn_waiter(fine);
    weft_event_fulfill(fine);
    finalize_and_report();
    std::_Exit(0);  // the exit path after a stall is covered by stall-child
  }
  if (std::strcmp(mode, "watchdog-late") == 0) {
    weft_event_t* e = weft_event_create(1);
    print_event(e);
    spawn_waiter(e);
    std::thread late([e] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1800));
      weft_event_fulfill(e);
    });
    int status = weft_taskwait();
    late.join();
    weft_event_destroy(e);
    std::printf("taskwait=%d\n", status);
    finalize_and_report();
    return 0;
  }
  return 2;
}
