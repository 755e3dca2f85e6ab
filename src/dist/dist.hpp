// Distributed taskiter: what the symmetric heap (symmetric_heap.cpp) and the graph layer
// (taskiter.cpp) share. A client of libweft's and libweft-mpi's public C APIs.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <map>

namespace weft::dist {

// Communicators of their own, so that no user message can match weft's: `loop` carries the
// transfers of the iterations, `setup` the checksum, fetches and write-backs (a fetch still in
// flight can then never take a loop message with the same tag). Null before the first collective.
struct communicators {
  MPI_Comm loop = MPI_COMM_NULL;
  MPI_Comm setup = MPI_COMM_NULL;
  int rank = -1, size = 0;
};
// Duplicates MPI_COMM_WORLD on first use (collective). False, with a message naming `call`, when
// MPI is not initialised.
bool ensure_communicators(const char* call);
const communicators& comms();

// Registered regions, by start address: `rows` rows of row_bytes, `stride` bytes apart (one row:
// a contiguous range), sent as one MPI datatype.
struct region_entry {
  std::size_t rows, row_bytes, stride;
  int home;
  std::size_t extent() const { return (rows - 1) * stride + row_bytes; }
};
const std::map<std::uintptr_t, region_entry>& regions();

// Prints "weft: <call>: <what>" on stderr (once per message) and returns status.
int complain(int status, const char* call, const char* format, ...) __attribute__((format(printf, 3, 4)));

}  // namespace weft::dist
