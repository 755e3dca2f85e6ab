// The blocking MPI calls HPC codes make inside tasks, interposed through the PMPI profiling
// interface. Inside a task each becomes its non-blocking form plus a ticket: the request is tested
// once (an eager send or a message already there completes without any switch), else the task
// suspends and its core runs other tasks until the poller completes the request. Anywhere else
// (outside tasks, before MPI_Init, without MPI_THREAD_MULTIPLE) the call goes straight to PMPI.
#include <weft/mpi.h>

#include <cstdlib>
#include <cstring>

#include "mpi_layer.hpp"

namespace weft::mpi {

namespace {

// Trace interval of a blocking call: begun at the post with the bytes moved by this rank.
void trace_begin(ticket& t, const char* call, std::int64_t bytes, int peer) {
  std::uint32_t kind = trace_kind_of(call);
  if (!kind) return;
  t.trace_kind = kind;
  t.trace_id = next_trace_id();
  t.trace_peer = peer >= 0 ? static_cast<std::uint64_t>(peer) + 1 : 0;  // 0: unknown or many
  weft_trace_begin(kind, t.trace_id, bytes > 0 ? static_cast<std::uint64_t>(bytes) : 0);
}

std::int64_t bytes_of(int count, MPI_Datatype type) {
  if (!weft_trace_enabled() || type == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  PMPI_Type_size(type, &size);
  return static_cast<std::int64_t>(count) * size;
}

// Waits for the single request weft posted into t.own[0] (status may be MPI_STATUS_IGNORE).
int wait_own(ticket& t, MPI_Status* status) {
  t.requests = t.own;
  t.count = 1;
  t.statuses = status == MPI_STATUS_IGNORE ? nullptr : status;
  return wait_ticket(t);
}

}  // namespace

int wait_ticket(ticket& t) {
  // Already complete: no ticket, no switch. Single completions leave MPI_ERROR alone.
  int flag = 0;
  int rc = MPI_SUCCESS;
  switch (t.mode) {
    case completion::all:
      if (t.count == 1) {
        rc = PMPI_Test(t.requests, &flag, t.statuses ? t.statuses : MPI_STATUS_IGNORE);
      } else {
        rc = PMPI_Testall(t.count, t.requests, &flag, t.statuses ? t.statuses : MPI_STATUSES_IGNORE);
      }
      break;
    case completion::any:
      rc = PMPI_Testany(t.count, t.requests, t.index, &flag, t.statuses ? t.statuses : MPI_STATUS_IGNORE);
      break;
    case completion::some:
      rc = PMPI_Testsome(t.count, t.requests, t.outcount, t.index, t.statuses ? t.statuses : MPI_STATUSES_IGNORE);
      flag = *t.outcount != 0;  // MPI_UNDEFINED (no active request) completes too
      break;
  }
  if (rc != MPI_SUCCESS || flag) {
    if (t.trace_kind) weft_trace_end(t.trace_kind, t.trace_id, t.trace_peer);
    return rc;
  }
  if (t.mode == completion::some) *t.outcount = 0;  // the poller counts from here
  t.done = on_done::wake;
  t.event = weft_event_create(1);
  if (!t.event) {
    // No event (out of memory): block the worker rather than fail the call.
    switch (t.mode) {
      case completion::all:
        return t.count == 1 ? PMPI_Wait(t.requests, t.statuses ? t.statuses : MPI_STATUS_IGNORE)
                            : PMPI_Waitall(t.count, t.requests, t.statuses ? t.statuses : MPI_STATUSES_IGNORE);
      case completion::any:
        return PMPI_Waitany(t.count, t.requests, t.index, t.statuses ? t.statuses : MPI_STATUS_IGNORE);
      case completion::some:
        return PMPI_Waitsome(t.count, t.requests, t.outcount, t.index, t.statuses ? t.statuses : MPI_STATUSES_IGNORE);
    }
  }
  submit_ticket(&t);
  weft_event_wait(t.event);  // the poller's fulfil is its last access to t
  weft_event_destroy(t.event);
  return t.error;
}

}  // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

// --- point to point ------------------------------------------------------------------------------

WEFT_API int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  report_send();
  if (!task_aware_now()) return PMPI_Send(buf, count, type, dest, tag, comm);
  ticket t;
  int rc = PMPI_Isend(buf, count, type, dest, tag, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Send", bytes_of(count, type), dest);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  report_send();
  if (!task_aware_now()) return PMPI_Ssend(buf, count, type, dest, tag, comm);
  ticket t;
  int rc = PMPI_Issend(buf, count, type, dest, tag, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Ssend", bytes_of(count, type), dest);
  return wait_own(t, MPI_STATUS_IGNORE);
}

// Non-blocking sends pass straight through; under fa they mark their task as a send-task.
WEFT_API int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                       MPI_Request* request) {
  report_send();
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

WEFT_API int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  report_send();
  return PMPI_Issend(buf, count, type, dest, tag, comm, request);
}

WEFT_API int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!task_aware_now()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  ticket t;
  int rc = PMPI_Irecv(buf, count, type, source, tag, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Recv", bytes_of(count, type), source);
  return wait_own(t, status);
}

WEFT_API int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                          void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                          MPI_Status* status) {
  report_send();
  if (!task_aware_now()) {
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
  }
  ticket t;
  int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &t.own[1]);
  if (rc != MPI_SUCCESS) {
    PMPI_Cancel(&t.own[0]);
    PMPI_Request_free(&t.own[0]);
    return rc;
  }
  trace_begin(t, "MPI_Sendrecv", bytes_of(sendcount, sendtype) + bytes_of(recvcount, recvtype), dest);
  MPI_Status both[2];
  t.requests = t.own;
  t.count = 2;
  t.statuses = both;
  both[0].MPI_ERROR = both[1].MPI_ERROR = MPI_SUCCESS;
  rc = wait_ticket(t);
  if (status != MPI_STATUS_IGNORE) {
    int kept = status->MPI_ERROR;
    *status = both[0];  // the receive's status, as MPI_Sendrecv reports
    status->MPI_ERROR = kept;
  }
  return rc;
}

WEFT_API int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                                  int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (!task_aware_now()) return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  // The outgoing data is packed aside first, so the receive may land in buf while it is sent.
  int size = 0;
  int rc = PMPI_Pack_size(count, type, comm, &size);
  if (rc != MPI_SUCCESS) return rc;
  void* packed = std::malloc(size > 0 ? static_cast<std::size_t>(size) : 1);
  if (!packed) return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  int position = 0;
  rc = PMPI_Pack(buf, count, type, packed, size, &position, comm);
  if (rc == MPI_SUCCESS)
    rc = MPI_Sendrecv(packed, position, MPI_PACKED, dest, sendtag, buf, count, type, source, recvtag, comm, status);
  std::free(packed);
  return rc;
}

WEFT_API int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!task_aware_now()) return PMPI_Probe(source, tag, comm, status);
  // No non-blocking probe request exists: test, and let other tasks run between tests.
  for (;;) {
    int flag = 0;
    int rc = PMPI_Iprobe(source, tag, comm, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    weft_taskyield();
  }
}

// --- completion ----------------------------------------------------------------------------------

WEFT_API int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!task_aware_now() || !request || *request == MPI_REQUEST_NULL) return PMPI_Wait(request, status);
  ticket t;
  trace_begin(t, "MPI_Wait", 0, -1);
  t.requests = request;
  t.count = 1;
  t.statuses = status == MPI_STATUS_IGNORE ? nullptr : status;
  return wait_ticket(t);
}

WEFT_API int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!task_aware_now() || count <= 0 || !requests) return PMPI_Waitall(count, requests, statuses);
  ticket t;
  trace_begin(t, "MPI_Waitall", 0, -1);
  t.requests = requests;
  t.count = count;
  t.statuses = statuses == MPI_STATUSES_IGNORE ? nullptr : statuses;
  t.multi = true;
  return wait_ticket(t);
}

WEFT_API int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!task_aware_now() || count <= 0 || !requests || !index) return PMPI_Waitany(count, requests, index, status);
  ticket t;
  trace_begin(t, "MPI_Waitany", 0, -1);
  t.mode = completion::any;
  t.requests = requests;
  t.count = count;
  t.index = index;
  t.statuses = status == MPI_STATUS_IGNORE ? nullptr : status;
  return wait_ticket(t);
}

WEFT_API int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!task_aware_now() || incount <= 0 || !requests || !outcount || !indices) {
    return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  }
  ticket t;
  trace_begin(t, "MPI_Waitsome", 0, -1);
  t.mode = completion::some;
  t.requests = requests;
  t.count = incount;
  t.outcount = outcount;
  t.index = indices;
  t.statuses = statuses == MPI_STATUSES_IGNORE ? nullptr : statuses;
  t.multi = true;
  return wait_ticket(t);
}

// --- collectives ---------------------------------------------------------------------------------
// Each posts its non-blocking form (MPI-3) and waits like MPI_Wait. The bytes traced are this
// rank's contribution.

WEFT_API int MPI_Barrier(MPI_Comm comm) {
  if (!task_aware_now()) return PMPI_Barrier(comm);
  ticket t;
  int rc = PMPI_Ibarrier(comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Barrier", 0, -1);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (!task_aware_now()) return PMPI_Bcast(buf, count, type, root, comm);
  ticket t;
  int rc = PMPI_Ibcast(buf, count, type, root, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Bcast", bytes_of(count, type), root);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                        MPI_Comm comm) {
  if (!task_aware_now()) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  ticket t;
  int rc = PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Reduce", bytes_of(count, type), root);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!task_aware_now()) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  ticket t;
  int rc = PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Allreduce", bytes_of(count, type), -1);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!task_aware_now()) return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  ticket t;
  int rc = PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Gather", bytes_of(sendcount, sendtype), root);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!task_aware_now()) {
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  }
  ticket t;
  int rc = PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Gatherv", bytes_of(sendcount, sendtype), root);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!task_aware_now()) return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  ticket t;
  int rc = PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Scatter", bytes_of(recvcount, recvtype), root);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                          void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!task_aware_now()) {
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  ticket t;
  int rc = PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Scatterv", bytes_of(recvcount, recvtype), root);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  if (!task_aware_now()) return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  ticket t;
  int rc = PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Allgather", bytes_of(sendcount, sendtype), -1);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!task_aware_now()) {
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  }
  ticket t;
  int rc = PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Allgatherv", bytes_of(sendcount, sendtype), -1);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm) {
  if (!task_aware_now()) return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  ticket t;
  int rc = PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Alltoall", bytes_of(sendcount, sendtype), -1);
  return wait_own(t, MPI_STATUS_IGNORE);
}

WEFT_API int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm) {
  if (!task_aware_now()) {
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  }
  ticket t;
  int rc =
      PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, &t.own[0]);
  if (rc != MPI_SUCCESS) return rc;
  trace_begin(t, "MPI_Alltoallv", 0, -1);
  return wait_own(t, MPI_STATUS_IGNORE);
}

}  // extern "C"
