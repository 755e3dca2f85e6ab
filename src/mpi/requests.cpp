// The request poller: every request a suspended (or bound, or detached) task waits for sits in one
// table that a single MPI_Testsome completes per pass. weft calls the poller at scheduling points
// and in idle workers, never two at once, so the table is the poller's alone; tasks hand tickets
// over through a lock-free list.
#include <dlfcn.h>
#include <weft/mpi.h>
#include <weft/weft.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "mpi_layer.hpp"

namespace weft::mpi {

namespace {

std::atomic<ticket*> incoming{nullptr};  // pushed by tasks, taken whole by the poller
std::atomic<int> in_flight{0};           // tickets handed over and not finished

// The poller's table (only the thread inside poll_requests touches it).
struct entry {
  ticket* owner;
  int slot;  // index in the owner's request array
};
std::vector<MPI_Request> table;
std::vector<entry> owners;
std::vector<int> done_indices;
std::vector<MPI_Status> done_statuses;
std::vector<ticket*> finished;
// MPI_Waitany / MPI_Waitsome tickets: tested one by one on the caller's own array (batching them
// would complete requests the caller is not told about).
std::vector<ticket*> partial;
bool told_pending = false;  // what the poller last said through weft_poller_set_pending

using fulfil_fn = void (*)(std::uintptr_t);
std::atomic<fulfil_fn> omp_fulfill{nullptr};  // the OpenMP door's omp_fulfill_event, found once

void adopt(ticket* t) {
  if (t->mode != completion::all) {
    partial.push_back(t);
    return;
  }
  t->remaining = 0;
  for (int i = 0; i < t->count; ++i) {
    if (t->requests[i] == MPI_REQUEST_NULL) continue;
    table.push_back(t->requests[i]);
    owners.push_back({t, i});
    ++t->remaining;
  }
  if (t->remaining == 0) {  // nothing to wait for (null requests only): done now
    t->finished = true;
    finished.push_back(t);
  }
}

void record(ticket* t, int slot, const MPI_Status& st, bool in_status_error, MPI_Request after) {
  t->requests[slot] = after;  // MPI_REQUEST_NULL, or the inactive persistent request
  int err = in_status_error ? st.MPI_ERROR : MPI_SUCCESS;
  if (t->statuses) {
    MPI_Status& out = t->statuses[slot];
    int kept = out.MPI_ERROR;
    out = st;
    out.MPI_ERROR = t->multi ? err : kept;  // single-completion calls leave MPI_ERROR alone
  }
  if (err != MPI_SUCCESS && t->error == MPI_SUCCESS) {
    t->error = t->multi ? MPI_ERR_IN_STATUS : err;
    t->cause = err;
  }
  if (t->trace_kind && t->trace_peer == 0 && st.MPI_SOURCE >= 0)
    t->trace_peer = static_cast<std::uint64_t>(st.MPI_SOURCE) + 1;
  if (--t->remaining == 0) {
    t->finished = true;
    finished.push_back(t);
  }
}

// One MPI_Testany / MPI_Testsome on a partial ticket's own array.
void test_partial(ticket* t) {
  int rc;
  if (t->mode == completion::any) {
    int flag = 0;
    MPI_Status st;
    rc = PMPI_Testany(t->count, t->requests, t->index, &flag, t->statuses ? &st : MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !flag) return;
    if (rc == MPI_SUCCESS && t->statuses && *t->index != MPI_UNDEFINED) {
      int kept = t->statuses->MPI_ERROR;
      *t->statuses = st;
      t->statuses->MPI_ERROR = kept;
    }
  } else {
    rc = PMPI_Testsome(t->count, t->requests, t->outcount, t->index, t->statuses ? t->statuses : MPI_STATUSES_IGNORE);
    if (rc == MPI_SUCCESS && *t->outcount == 0) return;
  }
  t->error = rc;
  t->finished = true;
  finished.push_back(t);
}

// The last access to t by the poller (wake: t lives on the waiting task's stack).
void complete(ticket* t) {
  in_flight.fetch_sub(1, std::memory_order_relaxed);
  if (t->trace_kind) weft_trace_end(t->trace_kind, t->trace_id, t->trace_peer);
  switch (t->done) {
    case on_done::wake:
      weft_event_fulfill(t->event);
      break;
    case on_done::bound:
      // Nobody is left to return a failure to: the task's parent hears of it at its taskwait.
      if (t->error != MPI_SUCCESS) {
        weft_event_fail(t->event, make_error(t->cause != MPI_SUCCESS ? t->cause : t->error, t->call),
                        &weft_mpi_error_release);
      } else {
        weft_event_fulfill(t->event);
      }
      free_owned_ticket(t);
      break;
    case on_done::detach:
      omp_fulfill.load(std::memory_order_relaxed)(t->omp_event);
      free_owned_ticket(t);
      break;
  }
}

}  // namespace

ticket* make_owned_ticket(int count) {
  // One block: the ticket, then the requests it owns.
  void* block = std::malloc(sizeof(ticket) + static_cast<std::size_t>(count) * sizeof(MPI_Request));
  if (!block) return nullptr;
  ticket* t = new (block) ticket;
  t->requests = reinterpret_cast<MPI_Request*>(static_cast<unsigned char*>(block) + sizeof(ticket));
  t->count = count;
  return t;
}

void free_owned_ticket(ticket* t) {
  t->~ticket();
  std::free(t);
}

weft_mpi_error_t* make_error(int code, const char* call) {
  auto* e = static_cast<weft_mpi_error_t*>(std::calloc(1, sizeof(weft_mpi_error_t)));
  if (!e) return nullptr;
  e->code = code;
  e->call = call;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (PMPI_Error_string(code, text, &len) != MPI_SUCCESS) std::snprintf(text, sizeof text, "MPI error %d", code);
  std::snprintf(e->message, sizeof e->message, "%s: %s", call ? call : "weft_mpi_iwait", text);
  return e;
}

void complete_detach_now(std::uintptr_t omp_event) {
  omp_fulfill.load(std::memory_order_relaxed)(omp_event);
}

bool find_omp_fulfil() {
  if (!omp_fulfill.load(std::memory_order_relaxed)) {
    // weft's own when it is preloaded or linked (the door's symbol); relaxed: any thread that finds
    // it stores the same value, and the ticket's hand-over orders it before the poller's call.
    omp_fulfill.store(reinterpret_cast<fulfil_fn>(dlsym(RTLD_DEFAULT, "omp_fulfill_event")), std::memory_order_relaxed);
  }
  return omp_fulfill.load(std::memory_order_relaxed) != nullptr;
}

int pending_tickets() {
  return in_flight.load(std::memory_order_acquire);
}

void submit_ticket(ticket* t) {
  in_flight.fetch_add(1, std::memory_order_relaxed);
  ticket* head = incoming.load(std::memory_order_relaxed);
  do t->next = head;
  while (!incoming.compare_exchange_weak(head, t, std::memory_order_release, std::memory_order_relaxed));
}

int poll_requests(void*) {
  // Nothing pending: two loads (the bound the idle pass is measured against).
  if (table.empty() && partial.empty() && !incoming.load(std::memory_order_relaxed)) return 0;
  if (ticket* list = incoming.exchange(nullptr, std::memory_order_acquire)) {
    // The list is newest first: adopt oldest first so requests are tested in posting order.
    ticket* reversed = nullptr;
    while (list) {
      ticket* next = list->next;
      list->next = reversed;
      reversed = list;
      list = next;
    }
    for (ticket* t = reversed; t;) {
      ticket* next = t->next;  // t may be finished (and freed) by complete() below
      adopt(t);
      t = next;
    }
  }
  int n = static_cast<int>(table.size());
  if (n > 0) {
    done_indices.resize(static_cast<std::size_t>(n));
    done_statuses.resize(static_cast<std::size_t>(n));
    int outcount = 0;
    int rc = PMPI_Testsome(n, table.data(), &outcount, done_indices.data(), done_statuses.data());
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
      // The call itself failed (the communicator's handler returned): every waiter gets the error
      // rather than waiting for ever.
      for (entry& e : owners) {
        if (e.owner->error == MPI_SUCCESS) e.owner->error = rc;
        if (!e.owner->finished) {
          e.owner->finished = true;
          finished.push_back(e.owner);
        }
      }
      table.clear();
      owners.clear();
    } else if (outcount != MPI_UNDEFINED && outcount > 0) {
      for (int k = 0; k < outcount; ++k) {
        int i = done_indices[static_cast<std::size_t>(k)];
        entry& e = owners[static_cast<std::size_t>(i)];
        record(e.owner, e.slot, done_statuses[static_cast<std::size_t>(k)], rc == MPI_ERR_IN_STATUS,
               table[static_cast<std::size_t>(i)]);
        e.owner = nullptr;  // completed: dropped below
      }
      // Compact: drop the completed entries.
      std::size_t keep = 0;
      for (std::size_t i = 0; i < table.size(); ++i) {
        if (!owners[i].owner) continue;
        table[keep] = table[i];
        owners[keep] = owners[i];
        ++keep;
      }
      table.resize(keep);
      owners.resize(keep);
    }
  }
  if (!partial.empty()) {
    std::size_t keep = 0;
    for (ticket* t : partial) {
      test_partial(t);
      if (!t->finished) partial[keep++] = t;
    }
    partial.resize(keep);
  }
  // Idle workers poll without sleeping while requests are in flight (setup.cpp's poller handle).
  bool waiting = !table.empty() || !partial.empty();
  if (waiting != told_pending) {
    told_pending = waiting;
    set_poller_pending(waiting);
  }
  if (finished.empty()) return 0;
  int progressed = static_cast<int>(finished.size());
  for (ticket* t : finished) complete(t);
  finished.clear();
  return progressed;
}

}  // namespace weft::mpi
