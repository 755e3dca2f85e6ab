// The distributed taskiter as a graph layer (weft_graph_set_layer, mode WEFT_GRAPH_DISTRIBUTED),
// the steps of paper 003's Figure 6:
//   1. record: weft captures the round on every rank (record() below, at each submit);
//   2. check: the round's checksum is exchanged once; the first task that differs is named;
//   3. plan: the Figure 8 algorithm (plan.cpp) inserts the send and receive tasks, the same on
//      every rank; this rank's tasks and transfers form its local round;
//   4. fetch: the values the first iteration reads, from their homes;
//   5. run: the local round as an ordinary taskiter graph (weft's engine: recorded once, replayed
//      with cyclic edges, no barrier, no control message); a transfer task posts its request and
//      hands it to task-aware MPI (weft_mpi_iwait): its successors wait, its worker does not;
//   6. write back: each region's last writer sends it home.
#include <dlfcn.h>
#include <sched.h>
#include <weft/dist.h>
#include <weft/mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dist/dist.hpp"
#include "dist/plan.hpp"

namespace weft::dist {

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct captured {
  weft_task_fn fn;
  std::uint32_t args_offset, args_size;
  unsigned flags;
  int priority;
  std::uint32_t door;
  std::uint32_t first_access, access_count;
  std::uint64_t hash;
};

struct loop {
  weft_graph_options_t options;
  communicators c;
  std::vector<region> region_list;                              // by address
  std::vector<region_entry> shapes;                             // the same order
  std::vector<MPI_Datatype> types;                              // of the 2-D regions moved (else null)
  std::unordered_map<std::uintptr_t, std::uint32_t> region_at;  // start address -> index
  std::vector<captured> tasks;
  std::vector<round_task> round;
  std::vector<use> uses;
  std::vector<weft_recorded_access_t> accesses;
  std::vector<unsigned char> args;
  std::unordered_map<void*, std::uint64_t> function_ids;
  std::uint64_t hash = 0xcbf29ce484222325ull;
  int status = WEFT_OK;  // the first refusal while recording: every rank then fails the loop
  double opened = 0;
};

// Explicit ranks of tasks not yet submitted (weft_dist_task_rank), and the next task's.
thread_local std::vector<std::pair<const weft_task_t*, int>> pending_ranks;
thread_local int next_rank = -1;
weft_dist_timings_t last_timings{};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0x100000001b3ull;
}

// The symbol, else module+offset (for addr2line: a static function has no dynamic symbol).
std::string function_name(weft_task_fn fn) {
  Dl_info info{};
  const auto at = reinterpret_cast<std::uintptr_t>(fn);
  char text[512];
  if (!dladdr(reinterpret_cast<void*>(fn), &info)) {
    std::snprintf(text, sizeof text, "%#lx", static_cast<unsigned long>(at));
  } else if (info.dli_sname) {
    return info.dli_sname;
  } else {
    const char* module = info.dli_fname ? std::strrchr(info.dli_fname, '/') : nullptr;
    std::snprintf(text, sizeof text, "%s+%#lx", module ? module + 1 : "?",
                  static_cast<unsigned long>(at - reinterpret_cast<std::uintptr_t>(info.dli_fbase)));
  }
  return text;
}

// A function's identity on every rank: its module's name and its offset there (addresses differ
// between ranks when modules load at random places).
std::uint64_t function_id(loop& l, weft_task_fn fn) {
  auto found = l.function_ids.find(reinterpret_cast<void*>(fn));
  if (found != l.function_ids.end()) return found->second;
  Dl_info info{};
  std::uint64_t id = reinterpret_cast<std::uintptr_t>(fn);
  if (dladdr(reinterpret_cast<void*>(fn), &info) && info.dli_fbase) {
    id = reinterpret_cast<std::uintptr_t>(fn) - reinterpret_cast<std::uintptr_t>(info.dli_fbase);
    const char* name = info.dli_fname ? std::strrchr(info.dli_fname, '/') : nullptr;
    name = name ? name + 1 : (info.dli_fname ? info.dli_fname : "");
    for (const char* p = name; *p; ++p) id = mix(id, static_cast<unsigned char>(*p));
  }
  l.function_ids.emplace(reinterpret_cast<void*>(fn), id);
  return id;
}

void* open_loop(const weft_graph_options_t* options) {
  const char* call = "weft_graph_begin_with";
  if (!ensure_communicators(call)) return nullptr;
  if (!weft_mpi_task_aware()) {
    complain(WEFT_ERR_INVALID_ARGUMENT, call,
             "a distributed graph needs task-aware MPI: MPI_THREAD_MULTIPLE, MPI initialised with libweft-mpi linked");
    return nullptr;
  }
  auto* l = new loop;
  l->options = *options;
  l->c = comms();
  l->opened = now();
  l->region_list.reserve(regions().size());
  for (const auto& [at, r] : regions()) {
    l->region_at.emplace(at, static_cast<std::uint32_t>(l->region_list.size()));
    l->region_list.push_back({at, r.rows * r.row_bytes, r.home, r.rows == 1});
    l->shapes.push_back(r);
  }
  pending_ranks.clear();
  next_rank = -1;
  return l;
}

int record_task(void* state, const weft_task_t* handle, const weft_recorded_task_t* r) {
  loop& l = *static_cast<loop*>(state);
  const auto index = static_cast<long>(l.tasks.size());
  int rank = -1;
  for (auto& p : pending_ranks) {
    if (p.first != handle) continue;
    rank = p.second;
    p = pending_ranks.back();
    pending_ranks.pop_back();
    break;
  }
  if (rank < 0 && next_rank >= 0) rank = next_rank;
  next_rank = -1;

  round_task t{};
  t.iteration = r->iteration;
  t.first_use = static_cast<std::uint32_t>(l.uses.size());
  std::uint64_t h = mix(function_id(l, r->fn), r->args_size);
  h = mix(h, (static_cast<std::uint64_t>(r->iteration) << 8) | r->flags);
  for (int i = 0; i < r->access_count; ++i) {
    const weft_recorded_access_t& a = r->accesses[i];
    auto found = l.region_at.find(reinterpret_cast<std::uintptr_t>(a.address));
    if (found == l.region_at.end()) {
      int status = complain(WEFT_ERR_INVALID_ARGUMENT, "weft_task_submit",
                            "distributed graph: task %ld of the round (iteration %d, function %s) accesses %p, which "
                            "starts no region registered with weft_dist_region",
                            index, r->iteration, function_name(r->fn).c_str(), a.address);
      if (l.status == WEFT_OK) l.status = status;
      return status;
    }
    const bool reads = a.type != WEFT_DEP_OUT, writes = a.type != WEFT_DEP_IN;
    bool joined = false;
    for (std::size_t k = t.first_use; k < l.uses.size(); ++k) {
      if (l.uses[k].region != found->second) continue;
      l.uses[k].reads |= reads;
      l.uses[k].writes |= writes;
      joined = true;
    }
    if (!joined) l.uses.push_back({found->second, reads, writes});
    const region& g = l.region_list[found->second];
    const region_entry& shape = l.shapes[found->second];
    h = mix(mix(mix(h, g.address), shape.rows * 0x10001 + shape.stride),
            (static_cast<std::uint64_t>(shape.row_bytes) << 24) ^ (static_cast<std::uint64_t>(g.home) << 4) ^
                static_cast<std::uint64_t>(a.type));
  }
  t.use_count = static_cast<std::uint32_t>(l.uses.size()) - t.first_use;
  if (rank < 0) {  // owner computes: the home of the first region written, else read, else rank 0
    rank = 0;
    for (std::size_t k = t.first_use; k < l.uses.size(); ++k)
      if (l.uses[k].writes) {
        rank = l.region_list[l.uses[k].region].home;
        break;
      }
    if (rank == 0 && t.use_count && !l.uses[t.first_use].writes) {
      bool any_write = false;
      for (std::size_t k = t.first_use; k < l.uses.size(); ++k) any_write |= l.uses[k].writes;
      if (!any_write) rank = l.region_list[l.uses[t.first_use].region].home;
    }
  } else if (rank >= l.c.size) {
    int status = complain(WEFT_ERR_INVALID_ARGUMENT, "weft_task_submit",
                          "distributed graph: task %ld of the round (iteration %d, function %s) names rank %d, outside "
                          "the communicator (0..%d)",
                          index, r->iteration, function_name(r->fn).c_str(), rank, l.c.size - 1);
    if (l.status == WEFT_OK) l.status = status;
    return status;
  }
  t.rank = rank;
  h = mix(h, static_cast<std::uint64_t>(rank));

  captured c{};
  c.fn = r->fn;
  c.args_offset = static_cast<std::uint32_t>(l.args.size());
  c.args_size = static_cast<std::uint32_t>(r->args_size);
  c.flags = r->flags;
  c.priority = r->priority;
  c.door = r->door;
  c.first_access = static_cast<std::uint32_t>(l.accesses.size());
  c.access_count = static_cast<std::uint32_t>(r->access_count);
  c.hash = h;
  l.args.insert(l.args.end(), static_cast<const unsigned char*>(r->args),
                static_cast<const unsigned char*>(r->args) + r->args_size);
  l.accesses.insert(l.accesses.end(), r->accesses, r->accesses + r->access_count);
  l.tasks.push_back(c);
  l.round.push_back(t);
  l.hash = mix(l.hash, h);
  return WEFT_OK;
}

// WEFT_DIST_MERGE=0 keeps one message per region (plan.hpp, make_plan).
bool merge_transfers() {
  const char* v = std::getenv("WEFT_DIST_MERGE");
  return !(v && v[0] == '0');
}

// The start-up's waits. Outside a task they test and give the core away in turn: ranks that share
// cores (more ranks times threads than cores, common in MPI jobs) otherwise spin in MPI's blocking
// calls while the rank they wait for is descheduled, a time slice lost per wait (4-7 ms of the
// graph check with 4 ranks on 2 cores); with a core of its own, sched_yield returns at once. Inside
// a task, task-aware MPI suspends the task instead.
void wait_yielding(int count, MPI_Request* requests) {
  if (weft_task_self()) {
    MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
    return;
  }
  for (int done = 0;;) {
    PMPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE);
    if (done) return;
    sched_yield();
  }
}

// Step 2. Every rank returns the same verdict, so none waits for another in step 4.
int check_round(loop& l) {
  const char* call = "weft_graph_end";
  // Maximum of each value and of its complement: equal everywhere when both give the value back.
  unsigned long long mine[6] = {l.hash,
                                ~l.hash,
                                l.tasks.size(),
                                ~static_cast<unsigned long long>(l.tasks.size()),
                                l.status != WEFT_OK ? 1ull : 0ull,
                                0};
  unsigned long long all[6];
  MPI_Request reduced;
  PMPI_Iallreduce(mine, all, 6, MPI_UNSIGNED_LONG_LONG, MPI_MAX, l.c.setup, &reduced);
  wait_yielding(1, &reduced);
  if (all[4]) {
    return l.status != WEFT_OK
               ? l.status
               : complain(WEFT_ERR_INVALID_ARGUMENT, call,
                          "distributed graph: another rank refused a task of its round (see its message)");
  }
  if (all[0] == l.hash && ~all[1] == l.hash && all[2] == l.tasks.size() && ~all[3] == l.tasks.size()) return WEFT_OK;

  // The rounds differ: rank 0's task hashes go to every rank, which finds its first difference.
  unsigned long long count = l.tasks.size();
  PMPI_Bcast(&count, 1, MPI_UNSIGNED_LONG_LONG, 0, l.c.setup);
  std::vector<std::uint64_t> reference(count);
  for (std::size_t i = 0; i < l.tasks.size() && l.c.rank == 0; ++i) reference[i] = l.tasks[i].hash;
  PMPI_Bcast(reference.data(), static_cast<int>(count), MPI_UINT64_T, 0, l.c.setup);
  unsigned long long first = std::max<unsigned long long>(count, l.tasks.size());
  for (std::size_t i = 0; i < std::min<std::size_t>(count, l.tasks.size()); ++i)
    if (reference[i] != l.tasks[i].hash) {
      first = i;
      break;
    }
  if (first == std::max<unsigned long long>(count, l.tasks.size()) && count == l.tasks.size()) first = ~0ull;
  unsigned long long earliest = 0;
  PMPI_Allreduce(&first, &earliest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, l.c.setup);
  if (first != earliest) return WEFT_ERR_GRAPH_CHANGED;  // another rank names the task
  if (earliest < l.tasks.size()) {
    const captured& t = l.tasks[earliest];
    return complain(
        WEFT_ERR_GRAPH_CHANGED, call,
        "distributed graph: task %llu of the round (iteration %d, function %s, placed on rank %d, %u access(es)) "
        "differs from rank 0's: its function, arguments size, accesses or rank",
        earliest, l.round[earliest].iteration, function_name(t.fn).c_str(), l.round[earliest].rank, t.access_count);
  }
  return complain(WEFT_ERR_GRAPH_CHANGED, call, "distributed graph: this rank's round has %zu tasks, rank 0's %llu",
                  l.tasks.size(), count);
}

// How a region travels: count elements of type (a strided vector for a 2-D region, made once).
struct payload {
  MPI_Datatype type;
  int count;
};
payload payload_of(loop& l, std::uint32_t r) {
  const region_entry& shape = l.shapes[r];
  if (shape.rows == 1) return {MPI_BYTE, static_cast<int>(shape.row_bytes)};
  if (l.types.empty()) l.types.assign(l.shapes.size(), MPI_DATATYPE_NULL);
  MPI_Datatype& t = l.types[r];
  if (t == MPI_DATATYPE_NULL) {
    PMPI_Type_create_hvector(static_cast<int>(shape.rows), static_cast<int>(shape.row_bytes),
                             static_cast<MPI_Aint>(shape.stride), MPI_BYTE, &t);
    PMPI_Type_commit(&t);
  }
  return {t, 1};
}

// Steps 4 and 6: copies posted in plan order on both sides, so one tag serves them all (MPI keeps
// the order of messages between two ranks with the same tag).
void copy_regions(loop& l, const std::vector<region_copy>& copies) {
  std::vector<MPI_Request> requests;
  for (const region_copy& x : copies) {
    if (x.from != l.c.rank && x.to != l.c.rank) continue;
    void* at = reinterpret_cast<void*>(l.region_list[x.region].address);
    const payload p = payload_of(l, x.region);
    requests.emplace_back();
    if (x.from == l.c.rank)
      MPI_Isend(at, p.count, p.type, x.to, 0, l.c.setup, &requests.back());
    else
      MPI_Irecv(at, p.count, p.type, x.from, 0, l.c.setup, &requests.back());
  }
  wait_yielding(static_cast<int>(requests.size()), requests.data());
}

struct transfer_args {
  void* address;
  MPI_Comm comm;
  MPI_Datatype type;
  std::uint64_t bytes;  // for the trace
  int count;
  int peer;
  int tag;
  int send;
};

// A transfer task: posts its request and returns; task-aware MPI holds its successors until the
// request completes (a send's writer of the next iteration, a receive's readers).
void run_transfer(void* p) {
  const auto& a = *static_cast<const transfer_args*>(p);
  MPI_Request request;
  if (a.send)
    MPI_Isend(a.address, a.count, a.type, a.peer, a.tag, a.comm, &request);  // task-aware MPI notes the send (fa)
  else
    MPI_Irecv(a.address, a.count, a.type, a.peer, a.tag, a.comm, &request);
  // Traced as dist_send / dist_recv intervals (bytes, peer); the tag as a mark where it is posted.
  if (weft_trace_enabled()) {
    static const std::uint32_t tag_kind = weft_trace_kind("dist_tag", WEFT_TRACE_COMMUNICATION);
    weft_trace_mark(tag_kind, static_cast<std::uint64_t>(a.tag));
  }
  weft_mpi_iwait_as(&request, MPI_STATUS_IGNORE, a.send ? "dist_send" : "dist_recv", a.bytes, a.peer);
}

int submit_transfer(loop& l, const transfer& x) {
  const region& g = l.region_list[x.region];
  const bool send = x.from == l.c.rank;
  payload p = payload_of(l, x.region);
  if (x.regions > 1) {  // adjacent contiguous regions: one range of bytes
    const region& end = l.region_list[x.region + x.regions - 1];
    p = {MPI_BYTE, static_cast<int>(end.address + end.bytes - g.address)};
  }
  std::uint64_t bytes = 0;
  for (std::uint32_t r = x.region; r < x.region + x.regions; ++r) bytes += l.region_list[r].bytes;
  transfer_args a{
      reinterpret_cast<void*>(g.address), l.c.loop, p.type, bytes, p.count, send ? x.to : x.from, x.tag, send ? 1 : 0};
  weft_task_t* t = weft_task_create(run_transfer, &a, sizeof a, WEFT_TASK_DEFAULT);
  if (!t) return weft_last_error();
  // A send: the reader on the other rank waits for it (the communication-aware policies raise it
  // and its predecessors; FIFO ignores priorities).
  if (send) weft_task_set_priority(t, weft_max_priority());
  weft_task_set_label(t, send ? "dist_send" : "dist_recv");
  for (std::uint32_t r = x.region; r < x.region + x.regions; ++r)
    weft_task_depend(t, send ? WEFT_DEP_IN : WEFT_DEP_OUT, reinterpret_cast<void*>(l.region_list[r].address),
                     l.region_list[r].bytes);
  return weft_task_submit(t);
}

int submit_task(const loop& l, std::size_t i) {
  const captured& c = l.tasks[i];
  weft_recorded_task_t r{};
  r.fn = c.fn;
  r.args = l.args.data() + c.args_offset;
  r.args_size = c.args_size;
  r.flags = c.flags;
  r.priority = c.priority;
  r.door = c.door;
  r.iteration = l.round[i].iteration;
  r.access_count = static_cast<int>(c.access_count);
  r.accesses = l.accesses.data() + c.first_access;
  weft_task_t* t = weft_task_create_recorded(&r);
  return t ? weft_task_submit(t) : weft_last_error();
}

// Step 5: this rank's tasks and transfers, in round order, as a taskiter graph.
int run_local(loop& l, const plan& p, long& local_tasks) {
  weft_graph_options_t o = l.options;
  o.mode = WEFT_GRAPH_TASKITER;
  int status = weft_graph_begin_with(&o);
  if (status != WEFT_OK) return status;
  const int unroll = o.unroll > 1 ? o.unroll : 1;
  // Fewer iterations than a round: the recording is the whole loop, cut where it ends.
  const int limit = o.iterations < unroll ? static_cast<int>(o.iterations) : unroll;
  const std::size_t n = l.tasks.size();
  std::size_t next_transfer = 0;
  int iteration = -1;
  auto enter = [&](int it) {
    while (iteration < it && status == WEFT_OK) {
      ++iteration;
      status = weft_graph_iteration();
    }
  };
  for (std::size_t i = 0; i <= n && status == WEFT_OK; ++i) {
    for (; next_transfer < p.transfers.size() && p.transfers[next_transfer].before == i && status == WEFT_OK;
         ++next_transfer) {
      const transfer& x = p.transfers[next_transfer];
      if ((x.from != l.c.rank && x.to != l.c.rank) || x.iteration >= limit) continue;
      enter(x.iteration);
      if (status == WEFT_OK) status = submit_transfer(l, x);
      ++local_tasks;
    }
    if (i == n || l.round[i].rank != l.c.rank || l.round[i].iteration >= limit || status != WEFT_OK) continue;
    enter(l.round[i].iteration);
    if (status == WEFT_OK) status = submit_task(l, i);
    ++local_tasks;
  }
  enter(limit - 1);
  int end = weft_graph_end();
  return status != WEFT_OK ? status : end;
}

int run_loop(void* state) {
  loop& l = *static_cast<loop*>(state);
  weft_dist_timings_t t{};
  double start = now();
  t.record = start - l.opened;
  t.tasks = static_cast<long>(l.tasks.size());
  t.accesses = static_cast<long>(l.accesses.size());
  int status = check_round(l);
  double checked = now();
  t.check = checked - start;
  if (status == WEFT_OK) {
    const int unroll = l.options.unroll > 1 ? l.options.unroll : 1;
    plan p = make_plan(l.region_list, l.round, l.uses, l.c.size, l.options.iterations, unroll, merge_transfers());
    int* tag_ub = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(l.c.loop, MPI_TAG_UB, &tag_ub, &found);
    double planned = now();
    t.plan = planned - checked;
    t.transfers = static_cast<long>(p.transfers.size());
    if (found && tag_ub && p.max_tag > *tag_ub) {
      status = complain(WEFT_ERR_INVALID_ARGUMENT, "weft_graph_end",
                        "distributed graph: %d transfers between two ranks in one round, over MPI_TAG_UB (%d)",
                        p.max_tag + 1, *tag_ub);
    } else {
      copy_regions(l, p.initial);
      double fetched = now();
      t.fetch = fetched - planned;
      status = run_local(l, p, t.local_tasks);
      double ran = now();
      t.run = ran - fetched;
      copy_regions(l, p.final);
      t.write_back = now() - ran;
    }
  }
  last_timings = t;
  for (MPI_Datatype& type : l.types)
    if (type != MPI_DATATYPE_NULL) PMPI_Type_free(&type);
  delete &l;
  return status;
}

const weft_graph_layer_t layer = {open_loop, record_task, run_loop};

// Loaded with the program: the mode is there before main.
[[gnu::constructor]] void register_layer() {
  weft_graph_set_layer(WEFT_GRAPH_DISTRIBUTED, &layer);
}

}  // namespace

}  // namespace weft::dist

using namespace weft::dist;

extern "C" {

WEFT_API int weft_dist_task_rank(const weft_task_t* task, int rank) {
  const int size = weft_dist_size();
  if (!task) return complain(WEFT_ERR_INVALID_ARGUMENT, "weft_dist_task_rank", "task is NULL");
  if (rank < 0 || (size > 0 && rank >= size))
    return complain(WEFT_ERR_INVALID_ARGUMENT, "weft_dist_task_rank", "rank %d is outside the communicator (0..%d)",
                    rank, size - 1);
  for (auto& p : pending_ranks)
    if (p.first == task) {
      p.second = rank;
      return WEFT_OK;
    }
  pending_ranks.emplace_back(task, rank);
  return WEFT_OK;
}

WEFT_API int weft_dist_set_next_rank(int rank) {
  const int size = weft_dist_size();
  if (rank < 0 || (size > 0 && rank >= size))
    return complain(WEFT_ERR_INVALID_ARGUMENT, "weft_dist_set_next_rank", "rank %d is outside the communicator (0..%d)",
                    rank, size - 1);
  next_rank = rank;
  return WEFT_OK;
}

WEFT_API int weft_dist_last_timings(weft_dist_timings_t* timings) {
  if (!timings) return WEFT_ERR_INVALID_ARGUMENT;
  *timings = last_timings;
  return WEFT_OK;
}

}  // extern "C"
