// Initialisation of task-aware MPI: MPI_Init / MPI_Init_thread ask MPI for MPI_THREAD_MULTIPLE
// (tasks post requests from any worker while another worker polls), register the request poller,
// read WEFT_MPI_PRIORITY; MPI_Finalize undoes it. Also the public weft_mpi_* calls and the trace
// kinds.
#include <dlfcn.h>
#include <weft/mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "mpi_layer.hpp"

namespace weft::mpi {

std::atomic<bool> layer_on{false};

namespace {

weft_poller_t* poller = nullptr;
int provided_level = -1;
int asked_level = -1;
std::atomic<std::uint64_t> trace_ids{0};

struct policy_entry {
  const char* name;
  int mode;  // weft_set_priority_propagation
  const char* meaning;
};
constexpr policy_entry policies[] = {
    {"fifo", WEFT_PRIORITY_NONE, "every task at priority 0, the program's priorities ignored (the baseline)"},
    {"ma1", WEFT_PRIORITY_AS_GIVEN, "the program's priorities as given (its marked send-tasks first)"},
    {"ma2", WEFT_PRIORITY_PATH, "marked send-tasks and all their unfinished predecessors at priority >= 1"},
    {"sa", WEFT_PRIORITY_DEPTH,
     "marked send-tasks at the top priority, predecessors at top - distance, at creation (Algorithm 1)"},
    {"fa", WEFT_PRIORITY_DETECT,
     "send-tasks recognised by the profile of tasks that posted a send, propagated at creation and while idle "
     "(Algorithm 2)"},
};
int policy = 1;

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "unknown";
  }
}

void read_policy() {
  const char* v = std::getenv("WEFT_MPI_PRIORITY");
  if (!v || !*v) return;
  for (std::size_t i = 0; i < std::size(policies); ++i) {
    if (std::strcmp(v, policies[i].name) == 0) {
      policy = static_cast<int>(i);
      return;
    }
  }
  std::fprintf(stderr, "weft-mpi: WEFT_MPI_PRIORITY=%s is not a policy: expected fifo, ma1, ma2, sa or fa\n", v);
  std::exit(2);
}

// Preloading libweft-mpi alone loads libweft after the program's own OpenMP runtime (libgomp), so
// that runtime runs the tasks: they are not weft's, their blocking MPI calls hold the core, and
// the run hangs silently. Called with MPI initialised (to print on rank 0 only): when the
// program's GOMP_task is not libweft's, says what to preload and ends the process.
void require_weft_openmp(const char* call) {
  void* gomp_task = dlsym(RTLD_DEFAULT, "GOMP_task");
  Dl_info omp{}, weft{}, self{};
  if (!gomp_task || !dladdr(gomp_task, &omp) || !dladdr(reinterpret_cast<void*>(&weft_task_self), &weft) ||
      omp.dli_fbase == weft.dli_fbase) {
    return;  // no OpenMP in the process, or weft's OpenMP door is the one the program calls
  }
  dladdr(reinterpret_cast<void*>(&require_weft_openmp), &self);
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::fprintf(stderr,
                 "weft-mpi: %s: the program's OpenMP tasks run on %s, not on weft (%s), so blocking MPI calls "
                 "inside them are not task-aware and can hang.\n"
                 "  Preload both libraries: LD_PRELOAD=\"%s %s\"\n"
                 "  or start each rank with weft's launcher: mpiexec ... weft-run --mpi -- <program> (docs/mpi.md)\n",
                 call, omp.dli_fname, weft.dli_fname, self.dli_fname ? self.dli_fname : "libweft-mpi.so",
                 weft.dli_fname);
  }
  PMPI_Finalize();
  std::exit(2);
}

// Called with MPI initialised: turns the layer on when MPI gave MPI_THREAD_MULTIPLE.
void start(int asked) {
  asked_level = asked;
  PMPI_Query_thread(&provided_level);
  read_policy();
  weft_set_priority_propagation(policies[policy].mode);
  const char* aware = std::getenv("WEFT_MPI_TASK_AWARE");
  bool wanted = !aware || std::strcmp(aware, "0") != 0;  // =0: every call passes through (a baseline)
  if (aware && std::strcmp(aware, "0") != 0 && std::strcmp(aware, "1") != 0) {
    std::fprintf(stderr, "weft-mpi: WEFT_MPI_TASK_AWARE=%s: expected 0 or 1\n", aware);
    std::exit(2);
  }
  if (wanted && provided_level == MPI_THREAD_MULTIPLE) {
    poller = weft_poller_register(poll_requests, nullptr);
    layer_on.store(poller != nullptr, std::memory_order_release);
  }
  const char* display = std::getenv("WEFT_DISPLAY_ENV");
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  weft_trace_set_rank(rank, size);  // one trace file per rank, merged by weft-trace
  if (display && std::strcmp(display, "1") == 0 && rank == 0) {
    std::fprintf(stderr,
                 "weft-mpi settings (rank 0 of %d):\n"
                 "  task-aware MPI: %s\n"
                 "  thread level: %s provided (weft asked for MPI_THREAD_MULTIPLE, the program for %s)\n"
                 "  WEFT_MPI_PRIORITY=%s (%s)\n",
                 size,
                 layer_on.load(std::memory_order_relaxed) ? "on: blocking calls inside tasks suspend the task"
                 : !wanted                                ? "off (WEFT_MPI_TASK_AWARE=0): calls pass through"
                 : provided_level != MPI_THREAD_MULTIPLE
                     ? "off: MPI did not provide MPI_THREAD_MULTIPLE, calls pass through"
                     : "off: no poller slot free, calls pass through",
                 level_name(provided_level), level_name(asked), policies[policy].name, policies[policy].meaning);
  }
  if (!layer_on.load(std::memory_order_relaxed) && rank == 0 && provided_level != MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr,
                 "weft-mpi: MPI provided %s, not MPI_THREAD_MULTIPLE: blocking MPI calls inside tasks "
                 "will hold their core\n",
                 level_name(provided_level));
  }
}

// Copies a request the caller hands over into a heap ticket that the poller frees.
ticket* owned_ticket(int count, MPI_Request* requests, MPI_Status* statuses) {
  ticket* t = make_owned_ticket(count);
  if (!t) return nullptr;
  for (int i = 0; i < count; ++i) {
    t->requests[i] = requests[i];
    requests[i] = MPI_REQUEST_NULL;
  }
  t->statuses = statuses;
  t->multi = count > 1;
  return t;
}

}  // namespace

void set_poller_pending(bool pending) {
  if (poller) weft_poller_set_pending(poller, pending ? 1 : 0);
}

bool task_aware_now() {
  return layer_on.load(std::memory_order_relaxed) && weft_task_self() != nullptr;
}

const char* policy_name() {
  return policies[policy].name;
}

std::uint64_t next_trace_id() {
  return trace_ids.fetch_add(1, std::memory_order_relaxed) + 1;
}

std::uint32_t trace_kind_of(const char* call) {
  if (!weft_trace_enabled()) return 0;
  return weft_trace_kind(call, WEFT_TRACE_COMMUNICATION);
}

}  // namespace weft::mpi

using namespace weft::mpi;

namespace {

// A request handed over by iwait / detach: tested once, else the poller completes it.
// The trace interval is named `call` (category communication), begins with `bytes` and ends with
// the peer + 1 (0: unknown), as the blocking calls' intervals do.
int hand_over(int count, MPI_Request* requests, MPI_Status* statuses, on_done done, std::uintptr_t omp_event,
              const char* call, std::uint64_t bytes = 0, int peer = -1) {
  ticket* t = owned_ticket(count, requests, statuses);
  if (!t) return MPI_ERR_NO_MEM;
  t->done = done;
  t->omp_event = omp_event;
  int flag = 0;
  int rc = count == 1 ? PMPI_Test(t->requests, &flag, statuses ? statuses : MPI_STATUS_IGNORE)
                      : PMPI_Testall(count, t->requests, &flag, statuses ? statuses : MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS || flag) {
    if (done == on_done::detach) complete_detach_now(omp_event);
    free_owned_ticket(t);
    return rc;
  }
  if (std::uint32_t kind = trace_kind_of(call)) {
    t->trace_kind = kind;
    t->trace_id = next_trace_id();
    t->trace_peer = peer >= 0 ? static_cast<std::uint64_t>(peer) + 1 : 0;
    weft_trace_begin(kind, t->trace_id, bytes);
  }
  if (done == on_done::bound) {
    t->call = call;
    t->event = weft_event_create(1);
    if (!t->event || weft_event_bind(t->event) != WEFT_OK) {
      if (t->event) weft_event_destroy(t->event);
      rc = count == 1 ? PMPI_Wait(t->requests, statuses ? statuses : MPI_STATUS_IGNORE)
                      : PMPI_Waitall(count, t->requests, statuses ? statuses : MPI_STATUSES_IGNORE);
      if (t->trace_kind) weft_trace_end(t->trace_kind, t->trace_id, t->trace_peer);
      free_owned_ticket(t);
      return rc;
    }
    weft_event_destroy(t->event);  // freed once the poller fulfils it
  }
  submit_ticket(t);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

WEFT_API int MPI_Init(int* argc, char*** argv) {
  int provided = 0;
  int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (rc == MPI_SUCCESS) {
    require_weft_openmp("MPI_Init");
    start(MPI_THREAD_SINGLE);
  }
  return rc;
}

WEFT_API int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  // Asking for more than required is allowed: MPI reports what it gave, and so does weft.
  int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, provided);
  if (rc == MPI_SUCCESS) {
    require_weft_openmp("MPI_Init_thread");
    start(required);
  }
  return rc;
}

WEFT_API int MPI_Finalize(void) {
  if (layer_on.exchange(false, std::memory_order_acq_rel)) {
    if (int n = pending_tickets()) {
      std::fprintf(stderr,
                   "weft-mpi: MPI_Finalize with %d request(s) still handed to weft (iwait, detach or a "
                   "suspended task): they never completed\n",
                   n);
    }
    weft_poller_unregister(poller);
    poller = nullptr;
  }
  return PMPI_Finalize();
}

WEFT_API int weft_mpi_task_aware(void) {
  return layer_on.load(std::memory_order_relaxed) ? 1 : 0;
}

WEFT_API void weft_mpi_error_release(void* payload) {
  std::free(payload);
}

WEFT_API const weft_mpi_error_t* weft_mpi_error_of(void* payload, void (*release)(void*)) {
  return release == &weft_mpi_error_release ? static_cast<const weft_mpi_error_t*>(payload) : nullptr;
}

WEFT_API const char* weft_mpi_policy(void) {
  return policy_name();
}

WEFT_API int weft_mpi_iwait(MPI_Request* request, MPI_Status* status) {
  if (!request) return MPI_ERR_REQUEST;
  if (*request == MPI_REQUEST_NULL || !task_aware_now()) return PMPI_Wait(request, status);
  return hand_over(1, request, status == MPI_STATUS_IGNORE ? nullptr : status, on_done::bound, 0, "weft_mpi_iwait");
}

WEFT_API int weft_mpi_iwait_as(MPI_Request* request, MPI_Status* status, const char* name, uint64_t bytes, int peer) {
  if (!request || !name) return MPI_ERR_ARG;
  if (*request == MPI_REQUEST_NULL || !task_aware_now()) return PMPI_Wait(request, status);
  return hand_over(1, request, status == MPI_STATUS_IGNORE ? nullptr : status, on_done::bound, 0, name, bytes, peer);
}

WEFT_API int weft_mpi_iwaitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (count < 0 || (count > 0 && !requests)) return MPI_ERR_ARG;
  if (count == 0) return MPI_SUCCESS;
  if (!task_aware_now()) return PMPI_Waitall(count, requests, statuses);
  return hand_over(count, requests, statuses == MPI_STATUSES_IGNORE ? nullptr : statuses, on_done::bound, 0,
                   "weft_mpi_iwaitall");
}

WEFT_API int weft_mpi_detach(MPI_Request* request, MPI_Status* status, uintptr_t omp_event) {
  if (!request) return MPI_ERR_REQUEST;
  if (!find_omp_fulfil()) {
    std::fprintf(stderr, "weft_mpi_detach: no omp_fulfill_event in the process (is weft's OpenMP door loaded?)\n");
    return MPI_ERR_OTHER;
  }
  if (*request == MPI_REQUEST_NULL || !task_aware_now()) {
    int rc = PMPI_Wait(request, status);
    if (rc == MPI_SUCCESS) complete_detach_now(omp_event);
    return rc;
  }
  return hand_over(1, request, status == MPI_STATUS_IGNORE ? nullptr : status, on_done::detach, omp_event,
                   "weft_mpi_detach");
}

}  // extern "C"
