// Task-aware MPI: the state shared by the interposed calls (interpose.cpp), the request poller
// (requests.cpp) and initialisation (setup.cpp). A client of libweft's public C API only: events
// to suspend a task or hold its completion, one poller, trace intervals.
#pragma once

#include <mpi.h>
#include <weft/mpi.h>
#include <weft/weft.h>

#include <atomic>
#include <cstdint>

namespace weft::mpi {

// How a ticket's requests complete it.
enum class completion : std::uint8_t {
  all,   // every request (MPI_Wait, MPI_Waitall, the blocking calls, iwait)
  any,   // the first to complete (MPI_Waitany); the others stay live in the caller's array
  some,  // those completed in the poller pass that sees the first one (MPI_Waitsome)
};

// What happens once a ticket completes.
enum class on_done : std::uint8_t {
  wake,    // a task suspended on `event` (the ticket is on its stack: last access is the fulfil)
  bound,   // the event is bound to a task's completion; the poller frees the ticket
  detach,  // the poller fulfils an OpenMP detach event and frees the ticket
};

// One blocking operation handed to the poller: up to `count` requests, completed together.
struct ticket {
  ticket* next = nullptr;           // the poller's incoming list
  MPI_Request* requests = nullptr;  // the caller's array: completed entries are written back
  MPI_Status* statuses = nullptr;   // nullptr: MPI_STATUS(ES)_IGNORE
  int count = 0;
  int remaining = 0;  // poller only
  completion mode = completion::all;
  on_done done = on_done::wake;
  bool multi = false;          // Waitall/Waitsome/iwaitall: MPI_ERR_IN_STATUS, MPI_ERROR set
  bool finished = false;       // poller only
  int error = MPI_SUCCESS;     // first failure; MPI_ERR_IN_STATUS for multi-request calls
  int cause = MPI_SUCCESS;     // the first failed request's own error (what a report names)
  const char* call = nullptr;  // bound: the call a failure is reported under
  int* index = nullptr;        // any: the completed index; some: the indices
  int* outcount = nullptr;     // some: how many
  weft_event_t* event = nullptr;
  std::uintptr_t omp_event = 0;  // detach
  // Trace interval (0: not traced): kind, id, and the peer reported at the end.
  std::uint32_t trace_kind = 0;
  std::uint64_t trace_id = 0;
  std::uint64_t trace_peer = 0;
  MPI_Request own[2];  // requests weft posted itself (blocking calls) live here
};

// Whether calls made now should suspend the calling task: MPI initialised through weft with
// MPI_THREAD_MULTIPLE, a poller registered, and the caller inside a task.
bool task_aware_now();
extern std::atomic<bool> layer_on;
// A task that posts a send tells the engine; under WEFT_MPI_PRIORITY=fa (the engine's detect mode,
// which it checks itself) later tasks of the same profile are recognised as send-tasks.
inline void report_send() {
  if (weft_task_t* self = weft_task_self()) weft_task_report_send(self);
}

// Completes t: returns at once when its requests are already done, else suspends the calling
// task until the poller completes them. Returns t.error.
int wait_ticket(ticket& t);
// Hands a heap ticket (bound or detach) to the poller; it frees it once done.
void submit_ticket(ticket* t);
// The poller: one pass over the pending requests. Registered by setup.cpp.
int poll_requests(void* arg);
// A heap ticket with room for count requests after it (iwait, detach), and its release.
ticket* make_owned_ticket(int count);
void free_owned_ticket(ticket* t);
// A heap weft_mpi_error_t naming code, for a parent's taskwait (null when out of memory).
weft_mpi_error_t* make_error(int code, const char* call);
// Fulfils a detach event at once (the request was already complete).
void complete_detach_now(std::uintptr_t omp_event);
// Finds omp_fulfill_event for detach tickets; false when no OpenMP door is loaded.
bool find_omp_fulfil();
// weft_poller_set_pending on the layer's poller (setup.cpp owns the handle).
void set_poller_pending(bool pending);
// Pending requests (tickets handed over and not yet completed): finalisation drains them.
int pending_tickets();

// Trace kinds (0 while tracing is off): one per MPI call name.
std::uint32_t trace_kind_of(const char* call);
std::uint64_t next_trace_id();

// Policy (WEFT_MPI_PRIORITY).
const char* policy_name();

}  // namespace weft::mpi
