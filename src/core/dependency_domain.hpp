// Access records of one parent's children, keyed by address. Only the thread running the parent
// touches them (siblings are created by their parent), so the domain takes no lock.
//
// Each record keeps a gate — the task (or node) every later access must follow — and the current
// group of concurrent accesses of one kind (in, inoutset or mutexinoutset) created since the gate.
// An access of another kind closes the group: a lone member becomes the gate, several are joined
// through one empty redirect node (m + n edges instead of m·n, ICPP'23 optimisation (c)); readers
// followed by a writer link to it directly. A member list that fills up first drops the members
// that have finished (an edge from them would be pruned anyway), so it stays proportional to the
// live tasks.
#pragma once

#include <weft/weft.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/task.hpp"

namespace weft::core {

struct worker;
struct pending_access;

inline constexpr std::uint32_t record_members = 5;

// Fibonacci hashing: the top `bits` bits of a multiplication mix every bit of the address, and
// spread consecutive addresses (a field's cells) over the table without collisions.
inline std::uint32_t hash_address(const void* a, std::uint32_t bits) {
  return static_cast<std::uint32_t>((reinterpret_cast<std::uintptr_t>(a) * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

struct access_record {
  const void* address;  // null: free slot
  task* gate;
  std::uint8_t group;   // 0, WEFT_DEP_IN, WEFT_DEP_INOUTSET or WEFT_DEP_MUTEXINOUTSET
  // joined: the group's node is the only member and every member links to it as it arrives
  // (mutexinoutset: the node carries the group's mutex).
  std::uint8_t joined;
  std::uint32_t count;
  std::uint32_t capacity;       // record_members while inline
  task** spilled;               // members beyond the inline slots (heap), or null
  task* member[record_members];
  task** members() { return spilled ? spilled : member; }
};

class dependency_domain {
 public:
  dependency_domain();
  // Orders t after the earlier siblings touching each of its accesses, per their types. Returns the
  // number of edges created into t. One call per task: the per-access part is inlined in its loop.
  int add(worker& w, task* t, const pending_access* accesses, int count);
  // The same for `count` addresses of which the first `writes` are inout and the others in; a null
  // one calls refuse_null, which must not return (checked here: no pass of its own over them).
  int add_array(worker& w, task* t, const void* const* addresses, int writes, int count, void (*refuse_null)());
  // Forgets every record (children all finished, or no sibling can be created any more).
  void clear(worker& w) {
    if (!occupied_.empty()) clear_records(w);
  }
  bool empty() const { return occupied_.empty(); }

 private:
  // The record of address, made if new (the rare part out of line).
  access_record& find_or_insert(worker& w, const void* address) {
    std::uint32_t i = hash_address(address, bits_);
    for (;;) {
      access_record& r = table_[i];
      if (r.address == address) return r;
      if (r.address == nullptr) return insert(w, address, i);
      i = (i + 1) & mask_;
    }
  }
  [[gnu::noinline]] access_record& insert(worker& w, const void* address, std::uint32_t slot);
  int add_one(worker& w, task* t, const void* address, weft_dep_type type);
  void rebuild(worker& w, std::size_t size);
  void clear_records(worker& w);
  task* close_group(worker& w, access_record& r);
  void hold(task* t);
  void set_gate(worker& w, access_record& r, task* gate);
  void push_member(worker& w, access_record& r, task* t);
  [[gnu::noinline]] void push_member_slow(worker& w, access_record& r, task* t);
  void join(worker& w, access_record& r, std::uint8_t node_flags);
  void reset_members(access_record& r);

  std::vector<access_record> table_;
  std::vector<std::uint32_t> occupied_;  // slots in use, for a clear proportional to use
  std::uint32_t mask_ = 0;
  std::uint32_t bits_ = 0;  // log2 of the table's size: hashes take the product's top bits
};

// Failure payload a child handed to its parent (weft_report_error).
struct error_box {
  void* payload;
  void (*release)(void*);
};

// What a task needs once it has children with accesses, taskgroups or errors.
struct parent_state {
  dependency_domain domain;
  taskgroup* current_group = nullptr;
  std::atomic<error_box*> error{nullptr};
  error_box* claimed = nullptr;
  // The context parked in this task's taskwait (or waiting for its undeferred child), and the
  // ticket its waker presents (see fiber::notify).
  std::atomic<fiber::context*> waiting_context{nullptr};
  std::atomic<std::uint64_t> waiting_ticket{0};
  graph* open_graph = nullptr;  // the persistent graph this task has open (graph_owner)
};

}  // namespace weft::core
