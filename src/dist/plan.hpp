// The transfers of a distributed taskiter (paper 003, Figure 8): from one recorded round, the same on
// every rank, the send/receive pairs that carry each region from its last writer to the ranks that
// read it, the values fetched before the first iteration and written back after the last.
//
// Pure and deterministic: every rank computes the same plan from the same round, so the tags of a
// pair match by construction. No MPI here (tests run all ranks' plans in one process).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft::dist {

struct region {
  std::uintptr_t address;
  std::size_t bytes;
  int home;         // holds the region's value before the loop and gets it back after
  bool contiguous;  // one row (a 2-D region is never merged with another)
};

// A task's use of one region (one entry per region: a task's several accesses to it are joined).
struct use {
  std::uint32_t region;
  bool reads;   // in, inout, mutexinoutset, inoutset: needs the current value
  bool writes;  // anything but in
};

struct round_task {
  int rank;
  int iteration;  // within the round
  std::uint32_t first_use, use_count;
};

struct transfer {
  std::uint32_t region;
  std::uint32_t regions;  // regions region .. region + regions - 1, adjacent in memory (merged)
  int from, to;
  int tag;               // per ordered pair (from, to), 0, 1, ...: the same on both sides
  std::uint32_t before;  // index of the task it precedes; tasks.size(): at the end of the round
  std::uint32_t after;   // index of the task that wrote the value (the last writer)
  int iteration;         // within the round: the task's, or the last for those at the end
};

struct region_copy {  // one region sent between ranks outside the loop
  std::uint32_t region;
  int from, to;
};

struct plan {
  std::vector<transfer> transfers;   // ordered by `before`, then by region
  std::vector<region_copy> initial;  // before the first iteration: home -> readers of the old value
  std::vector<region_copy> final;    // after the last: last writer -> home
  int max_tag = -1;
};

// iterations: of the whole loop (a last round may be cut short: iterations % unroll).
// merge: transfers of adjacent contiguous regions between the same two ranks become one message
// where one point of the round suits them all: after every one's writer, before every one's reader
// (then no other access to those regions lies between, on either rank). Fewer, larger messages;
// the reader of the first region waits for the others.
plan make_plan(const std::vector<region>& regions, const std::vector<round_task>& tasks, const std::vector<use>& uses,
               int ranks, long iterations, int unroll, bool merge);

}  // namespace weft::dist
