// The program the tests of tests/unit/trace_signal_test.cpp and task_names_test.cpp run in a child
// process: a run ended by a signal, and the runtime's reports that name tasks.
//   weft_trace_helper MODE
// MODE: sigterm, sigint  tasks run, then the main program raises the signal (the trace must be
//                        written and the process end by the signal)
//       sigterm-in-task  a task sends SIGTERM to the process, and runs on until it ends
//       chained          SIGTERM has a handler of the program's, installed before weft_init: it runs
//                        once the trace is written, and the program goes on to finish normally
//       ignored          SIGINT is ignored before weft_init: it stays ignored
//       dispositions     prints SIGINT's and SIGTERM's handlers after weft_init and after
//                        weft_finalize ("default" or "weft")
//       watchdog         a labelled and an unlabelled task wait on an event fulfilled after 1.8 s
//                        (run with WEFT_WATCHDOG=1: the watchdog reports them)
//       graph-change     a persistent graph whose iteration 2 runs another task function (run with
//                        WEFT_GRAPH_ON_CHANGE=error: the change is reported)
// Prints what it did on stdout; the tests read WEFT_TRACE and the other settings from the environment.
#include <signal.h>
#include <unistd.h>
#include <weft/weft.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

double cells[8];

void step(void* p) {
  cells[*static_cast<int*>(p) % 8] += 1;
}

void run_some_tasks() {
  for (int i = 0; i < 32; ++i) {
    weft_task_t* t = weft_task_create(&step, &i, sizeof i, WEFT_TASK_DEFAULT);
    if (!t || weft_task_set_label(t, "before_the_signal") != WEFT_OK ||
        weft_task_depend(t, WEFT_DEP_INOUT, &cells[i % 8], sizeof(double)) != WEFT_OK || weft_task_submit(t) != WEFT_OK)
      std::exit(3);
  }
  if (weft_taskwait() != WEFT_OK) std::exit(3);
}

void submit(weft_task_fn fn, void* arg, std::size_t size, const char* label) {
  weft_task_t* t = weft_task_create(fn, arg, size, WEFT_TASK_DEFAULT);
  if (!t || (label && weft_task_set_label(t, label) != WEFT_OK) || weft_task_submit(t) != WEFT_OK) std::exit(3);
}

void send_sigterm(void*) {
  kill(getpid(), SIGTERM);  // to the process: any thread may take it
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < end) {
  }  // the signal ends the process first
}

const char* trace_path = nullptr;

void program_handler(int) {
  const char* line = access(trace_path, F_OK) == 0 ? "program handler: trace present\n" : "program handler: no trace\n";
  if (write(1, line, std::strlen(line)) < 0) _exit(4);
}

const char* disposition(int sig) {
  struct sigaction a;
  sigaction(sig, nullptr, &a);
  if (a.sa_flags & SA_SIGINFO) return "weft";
  return a.sa_handler == SIG_DFL ? "default" : a.sa_handler == SIG_IGN ? "ignored" : "other";
}

void waiter_with_label(void* p) {
  weft_event_wait(*static_cast<weft_event_t**>(p));
}
void waiter_without_label(void* p) {
  weft_event_wait(*static_cast<weft_event_t**>(p));
}
// Returns at once; its completion waits for the event (the watchdog lists the event by this name).
void bound_to_event(void* p) {
  weft_event_bind(*static_cast<weft_event_t**>(p));
}

void recorded_step(void* p) {
  step(p);
}
void changed_step(void* p) {
  step(p);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* mode = argv[1];
  trace_path = std::getenv("WEFT_TRACE");
  if (std::strcmp(mode, "chained") == 0) signal(SIGTERM, program_handler);
  if (std::strcmp(mode, "ignored") == 0) signal(SIGINT, SIG_IGN);
  if (weft_init() != WEFT_OK) return 4;
  if (std::strcmp(mode, "sigterm") == 0 || std::strcmp(mode, "sigint") == 0 || std::strcmp(mode, "chained") == 0 ||
      std::strcmp(mode, "ignored") == 0) {
    run_some_tasks();
    raise(std::strcmp(mode, "sigint") == 0 || std::strcmp(mode, "ignored") == 0 ? SIGINT : SIGTERM);
    std::printf("after the signal\n");
    return weft_finalize() == WEFT_OK ? 0 : 5;
  }
  if (std::strcmp(mode, "sigterm-in-task") == 0) {
    run_some_tasks();
    submit(&send_sigterm, nullptr, 0, "signalling");
    weft_taskwait();
    std::printf("after the signal\n");
    return 5;
  }
  if (std::strcmp(mode, "dispositions") == 0) {
    std::printf("running: SIGINT %s, SIGTERM %s\n", disposition(SIGINT), disposition(SIGTERM));
    if (weft_finalize() != WEFT_OK) return 5;
    std::printf("finalized: SIGINT %s, SIGTERM %s\n", disposition(SIGINT), disposition(SIGTERM));
    return 0;
  }
  if (std::strcmp(mode, "watchdog") == 0) {
    weft_event_t* e = weft_event_create(1);
    weft_event_t* bound = weft_event_create(1);
    submit(&waiter_with_label, &e, sizeof e, "late_event_waiter");
    submit(&waiter_without_label, &e, sizeof e, nullptr);
    submit(&bound_to_event, &bound, sizeof bound, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(1800));
    weft_event_fulfill(e);
    weft_event_fulfill(bound);
    int status = weft_taskwait();
    weft_event_destroy(e);
    weft_event_destroy(bound);
    return status == WEFT_OK && weft_finalize() == WEFT_OK ? 0 : 5;
  }
  if (std::strcmp(mode, "graph-change") == 0) {
    if (weft_graph_begin() != WEFT_OK) return 5;
    int changed = WEFT_OK;
    for (int it = 0; it < 4 && changed == WEFT_OK; ++it) {
      if (weft_graph_iteration() != WEFT_OK) break;
      weft_task_t* t = weft_task_create(it == 2 ? &changed_step : &recorded_step, &it, sizeof it, WEFT_TASK_DEFAULT);
      if (!t) {
        changed = weft_last_error();
        break;
      }
      if (weft_task_submit(t) != WEFT_OK) return 5;
    }
    weft_graph_end();
    std::printf("changed=%d\n", changed);
    return weft_finalize() == WEFT_OK ? 0 : 5;
  }
  return 2;
}
