// Worksharing constructs: loops (every schedule, ordered, doacross, the unsigned long long forms),
// sections, and the combined parallel forms.
//
// The members of a team meet every worksharing construct in the same order, so construct q uses
// the work share of q in the team's chain of blocks (omp_internal.hpp, workshare_block): the first
// member to arrive sets it up, the others join it. Members may run any number of nowait
// constructs apart.
//
// Loops are handed out in logical iterations 0 .. total-1 (iteration i is start + i*incr). An
// ordered loop gives each chunk a ticket in iteration order; ordered regions run in ticket order,
// and a member passes the turn on when it moves past its chunk.
#include <sched.h>

#include <cstdarg>
#include <cstdlib>
#include <cstring>

#include "core/dependency_domain.hpp"
#include "omp/gomp_abi.h"
#include "omp/omp_internal.hpp"

namespace weft::omp {

namespace {

void relax(int& spins) {
  if (spins == 0) report_finished_before_waiting();
  if (++spins < 64) {
    __builtin_ia32_pause();
  } else if (waits_must_yield()) {
    // What it waits for may need this worker: a member fiber of it, or a tied task parked here
    // (a thread waiting for its ordered turn held the task its predecessor waited for). What ran
    // meanwhile may have left counts batched here: out with them before waiting on.
    yield_member(nullptr, nullptr);
    report_finished_before_waiting();
  } else {
    sched_yield();  // teams may have more members than cores
  }
}

// Frees what the previous construct of a slot left for readers after its end.
void recycle(workshare& ws) {
  std::free(ws.mem);
  ws.mem = nullptr;
  delete[] ws.doacross;
  ws.doacross = nullptr;
}

// Into the next block: linked by the first member to get there, given back by the last to leave
// the one before (every member read its link by then).
workshare_block* next_block(member& m) {
  team& t = *m.crew;
  workshare_block* old = m.block;
  workshare_block* next = old->next.load(std::memory_order_acquire);
  if (!next) {
    workshare_block* fresh = take_block(t, old->first + workshare_block_size);
    // acq_rel: the winner publishes the reset block; a loser sees the winner's.
    if (old->next.compare_exchange_strong(next, fresh, std::memory_order_acq_rel, std::memory_order_acquire))
      next = fresh;
    else
      give_block(t, fresh);
  }
  m.block = next;
  if (old->members_in.fetch_sub(1, std::memory_order_acq_rel) == 1) give_block(t, old);
  return next;
}

bool claim(member& m, workshare*& out) {
  std::uint64_t q = m.ws_seq++;
  workshare_block* b = m.block;
  while (q >= b->first + workshare_block_size) b = next_block(m);
  workshare& ws = b->ws[q - b->first];
  int spins = 0;
  for (;;) {
    std::uint64_t st = ws.stage.load(std::memory_order_acquire);
    if (st == 3 * q) {
      if (ws.stage.compare_exchange_weak(st, 3 * q + 1, std::memory_order_acquire, std::memory_order_relaxed)) {
        recycle(ws);
        m.ws = &ws;
        m.ws_index = q;
        out = &ws;
        return true;  // the caller sets it up, then publish()
      }
      continue;
    }
    if (st == 3 * q + 2) {
      m.ws = &ws;
      m.ws_index = q;
      out = &ws;
      return false;
    }
    relax(spins);
  }
}

void publish(member& m) {
  m.ws->stage.store(3 * m.ws_index + 2, std::memory_order_release);
}

// The taskgroup of a worksharing construct's task reduction (hidden from cancel taskgroup).
core::taskgroup* open_group(worker& w) {
  core::taskgroup_begin(w);
  core::taskgroup* g = core::state_of(w, w.current).current_group;
  g->hidden = true;
  return g;
}

void start_extras(member& m, workshare& ws, std::uintptr_t* reductions, void** mem) {
  if (mem) {
    std::size_t bytes = reinterpret_cast<std::uintptr_t>(*mem);
    ws.mem = std::calloc(1, bytes ? bytes : 1);
    if (!ws.mem) fatal("GOMP_loop_start: out of memory for the construct's scratch memory");
  }
  if (reductions) {
    worker& w = self();
    // Every member drops its reference in GOMP_workshare_task_reduction_unregister.
    register_reductions(open_group(w), reductions, m.crew->size, m.crew->size);
    ws.reductions = reductions;
  }
}

void adopt_extras(member&, workshare& ws, std::uintptr_t* reductions) {
  if (!reductions) return;
  auto* first = static_cast<std::uintptr_t*>(ws.reductions);
  reductions[2] = first[2];
  reductions[5] = first[5];
  reductions[6] = first[6];
  reductions[4] = 0;
  open_group(self())->reductions = reductions;
}

void setup(workshare& ws, const loop_spec& s, int team_size) {
  // A team of one takes a loop's whole range in one chunk, whatever the schedule: it would take
  // every chunk in order anyway, and a call per chunk cost ~90 instructions per chunk (an ordered
  // static,1 loop on one thread: 118 instructions per iteration against libgomp's 27, which does
  // the same for static schedules).
  const bool whole = team_size == 1 && !s.itemwise;
  ws.kind = whole ? sched_static : s.kind;
  ws.ordered = s.ordered && team_size > 1;  // a team of one runs its iterations in order anyway
  ws.total = s.total;
  ws.chunk = whole ? 0 : s.chunk;
  ws.chunks = ws.chunk ? (s.total + ws.chunk - 1) / ws.chunk : 0;
  ws.start = s.start;
  ws.incr = s.incr;
  ws.ustart = s.ustart;
  ws.uincr = s.uincr;
  ws.next.store(0, std::memory_order_relaxed);
  ws.ordered_turn.store(0, std::memory_order_relaxed);
  ws.slow_turns.store(false, std::memory_order_relaxed);
  ws.tickets = 0;
  ws.cancelled.store(false, std::memory_order_relaxed);
  ws.copy = nullptr;
  ws.reductions = nullptr;
}

// Ordered turns and doacross posts: one member waits for a counter of the work share to reach a
// value, and the member that moves it there is the only one that can end the wait. Past the cores
// that member may be off its core. Among the team's own threads a yield soon hands the core to it
// (an ordered loop of 9,801 turns, 4 threads on 2 cores: 0.28 s, libgomp 2.5 s). Beside a busy
// process the bound member waited for sits behind that process on its core, and yields only pass
// the other cores around: the same loop ran past 30 s (the OpenMP validation suite's
// omp_for_collapse, run two at a time; libgomp 1.7 s: its waiters sleep, and nothing is bound).
// So a wait that has lasted slow_wait_ns sleeps on its own word, and the construct's members may
// run on every CPU of the process from their next turn on (settle_after); whoever moves a counter
// wakes the sleepers it satisfied.
constexpr std::int64_t slow_wait_ns = 50'000;

void wait_reaches(member& m, workshare& ws, const std::atomic<std::uint64_t>& counter, std::uint64_t value) {
  // Once one wait of the construct was slow, every member floats at its next turn: a member waited
  // for that is still bound sits behind the busy process until it gets a turn of the core.
  if (ws.slow_turns.load(std::memory_order_relaxed)) core::float_worker(self());
  int spins = 0;
  std::int64_t since = 0;
  while (counter.load(std::memory_order_acquire) < value) {
    worker& w = self();
    if (spins < 64 || waits_must_yield() || !w.crew ||
        !core::instance->oversubscribed.load(std::memory_order_relaxed)) {
      relax(spins);
      continue;
    }
    const std::int64_t now = core::steady_ns();
    if (since == 0) since = now;
    if (now - since < slow_wait_ns) {
      sched_yield();
      continue;
    }
    ws.slow_turns.store(true, std::memory_order_relaxed);
    core::float_worker(w);
    m.wait_value.store(value, std::memory_order_relaxed);
    m.wait_counter.store(&counter, std::memory_order_relaxed);
    // seq_cst, with the waker's move of the counter and its read of the count (see wake_reached).
    ws.sleepers.fetch_add(1, std::memory_order_seq_cst);
    core::note_asleep(w, true);
    w.crew->park.sleep_woken_directly(
        m.wait_word, [&] { return counter.load(std::memory_order_seq_cst) >= value; }, 1'000'000);
    core::note_asleep(w, false);
    ws.sleepers.fetch_sub(1, std::memory_order_relaxed);
    m.wait_counter.store(nullptr, std::memory_order_relaxed);
  }
}

// After a seq_cst move of `counter`: a sleeper that counted itself before this read is visible
// here with its counter and value, and one that counted itself after it sees the move itself.
void wake_reached(member& m, workshare& ws, const std::atomic<std::uint64_t>& counter) {
  if (ws.sleepers.load(std::memory_order_seq_cst) == 0) return;
  const std::uint64_t now = counter.load(std::memory_order_relaxed);
  for (member* k : m.crew->members) {
    if (k != &m && k->wait_counter.load(std::memory_order_relaxed) == &counter &&
        k->wait_value.load(std::memory_order_relaxed) <= now)
      sched::idle_park::wake(k->wait_word);
  }
}

// Hands the ordered turn on past the chunk this member holds.
void pass_turn(member& m) {
  if (m.ticket < 0) return;
  workshare& ws = *m.ws;
  const auto ticket = static_cast<std::uint64_t>(m.ticket);
  wait_reaches(m, ws, ws.ordered_turn, ticket);  // the turn only grows: reaching it is having it
  ws.ordered_turn.store(ticket + 1, std::memory_order_seq_cst);
  wake_reached(m, ws, ws.ordered_turn);
  m.ticket = -1;
}

std::uint64_t guided_size(std::uint64_t remaining, std::uint64_t chunk, int n) {
  std::uint64_t size = (remaining + 2 * static_cast<std::uint64_t>(n) - 1) / (2 * static_cast<std::uint64_t>(n));
  if (size < chunk) size = chunk;
  return size < remaining ? size : remaining;
}

void lock_grab(workshare& ws) {
  int spins = 0;
  while (ws.grab_lock.exchange(true, std::memory_order_acquire)) relax(spins);
}

std::uint64_t count_signed(long start, long end, long incr) {
  __int128 s = start, e = end, i = incr;
  if (i > 0) return e > s ? static_cast<std::uint64_t>((e - s + i - 1) / i) : 0;
  return s > e ? static_cast<std::uint64_t>((s - e - i - 1) / -i) : 0;
}

std::uint64_t count_unsigned(bool up, unsigned long long start, unsigned long long end, unsigned long long incr) {
  if (up)
    return end > start ? static_cast<std::uint64_t>((static_cast<unsigned __int128>(end - start) + incr - 1) / incr)
                       : 0;
  unsigned long long step = -incr;
  return start > end ? static_cast<std::uint64_t>((static_cast<unsigned __int128>(start - end) + step - 1) / step) : 0;
}

loop_spec unsigned_loop(bool up, unsigned long long start, unsigned long long end, unsigned long long incr, int kind,
                        unsigned long long chunk) {
  loop_spec s{};
  s.kind = kind;
  s.total = count_unsigned(up, start, end, incr);
  s.chunk = chunk;
  s.ustart = start;
  s.uincr = incr;
  return s;
}

bool start_loop(const loop_spec& s, long* istart, long* iend) {
  member& m = current();
  workshare* ws;
  if (claim(m, ws)) {
    setup(*ws, s, m.crew->size);
    publish(m);
  }
  m.static_round = 0;
  m.ticket = -1;
  if (!istart) return true;
  std::uint64_t first, last;
  if (!next_chunk(m, first, last)) return false;
  *istart = ws->start + static_cast<long>(first) * ws->incr;
  *iend = ws->start + static_cast<long>(last) * ws->incr;
  return true;
}

bool next_signed(long* istart, long* iend) {
  member& m = current();
  std::uint64_t first, last;
  if (!next_chunk(m, first, last)) return false;
  workshare& ws = *m.ws;
  *istart = ws.start + static_cast<long>(first) * ws.incr;
  *iend = ws.start + static_cast<long>(last) * ws.incr;
  return true;
}

bool start_loop_ull(const loop_spec& s, unsigned long long* istart, unsigned long long* iend) {
  member& m = current();
  workshare* ws;
  if (claim(m, ws)) {
    setup(*ws, s, m.crew->size);
    publish(m);
  }
  m.static_round = 0;
  m.ticket = -1;
  if (!istart) return true;
  std::uint64_t first, last;
  if (!next_chunk(m, first, last)) return false;
  *istart = ws->ustart + first * ws->uincr;
  *iend = ws->ustart + last * ws->uincr;
  return true;
}

bool next_unsigned(unsigned long long* istart, unsigned long long* iend) {
  member& m = current();
  std::uint64_t first, last;
  if (!next_chunk(m, first, last)) return false;
  workshare& ws = *m.ws;
  *istart = ws.ustart + first * ws.uincr;
  *iend = ws.ustart + last * ws.uincr;
  return true;
}

bool first_chunk_signed(member& m, long* istart, long* iend) {
  m.static_round = 0;
  m.ticket = -1;
  if (!istart) return true;
  return next_signed(istart, iend);
}

bool start_loop_extras(const loop_spec& s, long* istart, long* iend, std::uintptr_t* reductions, void** mem) {
  member& m = current();
  claim_with_extras(m, s, reductions, mem);
  return first_chunk_signed(m, istart, iend);
}

// A worker floated by slow ordered or doacross waits (wait_reaches) stays floating while the loops
// it meets stay slow, and is bound again after one that was not.
void settle_after(member& m) {
  if (m.ws && !m.ws->slow_turns.load(std::memory_order_relaxed)) core::settle_worker(self());
}

void end_loop(bool wait) {
  member& m = current();
  pass_turn(m);
  settle_after(m);
  leave_workshare(m);
  if (wait) barrier(self(), m);
}

bool end_loop_cancel() {
  member& m = current();
  pass_turn(m);
  settle_after(m);
  leave_workshare(m);
  return cancellable_barrier(self(), m);
}

// Doacross: the work share iterates the outermost loop; doacross[i] holds 1 + the flattened index
// of the last inner iteration posted in outer iteration i.
void setup_doacross(workshare& ws, unsigned ncounts, const std::uint64_t* counts) {
  ws.doacross = new std::atomic<std::uint64_t>[ws.total ? ws.total : 1];
  for (std::uint64_t i = 0; i < ws.total; ++i) ws.doacross[i].store(0, std::memory_order_relaxed);
  ws.doacross_counts.assign(counts, counts + ncounts);
}

template <class Int>
// mem (the generic entry points): *mem bytes in, the team-shared zeroed block out.
bool doacross_start(unsigned ncounts, const Int* counts, int sched, Int chunk, Int* istart, Int* iend,
                    std::uintptr_t* reductions = nullptr, void** mem = nullptr) {
  member& m = current();
  long c = static_cast<long>(chunk);
  int kind = resolve_schedule(sched, c);
  loop_spec s{};
  s.kind = kind;
  s.itemwise = true;  // the posts and waits follow the chunks as the program's schedule makes them
  s.total = static_cast<std::uint64_t>(counts[0]);
  s.chunk = static_cast<std::uint64_t>(c);
  s.start = 0;
  s.incr = 1;
  s.ustart = 0;
  s.uincr = 1;
  workshare* ws;
  if (claim(m, ws)) {
    setup(*ws, s, m.crew->size);
    std::vector<std::uint64_t> cs(ncounts);
    for (unsigned i = 0; i < ncounts; ++i) cs[i] = static_cast<std::uint64_t>(counts[i]);
    setup_doacross(*ws, ncounts, cs.data());
    start_extras(m, *ws, reductions, mem);  // task reductions as on any loop: the others adopt them
    publish(m);
  } else {
    adopt_extras(m, *ws, reductions);
  }
  if (mem) *mem = ws->mem;
  m.static_round = 0;
  m.ticket = -1;
  if (!istart) return true;
  std::uint64_t first, last;
  if (!next_chunk(m, first, last)) return false;
  *istart = static_cast<Int>(first);
  *iend = static_cast<Int>(last);
  return true;
}

template <class Int>
void doacross_post(const Int* v) {
  member& m = current();
  workshare& ws = *m.ws;
  if (!ws.doacross) return;
  std::uint64_t flat = 0;
  for (std::size_t d = 1; d < ws.doacross_counts.size(); ++d)
    flat = flat * ws.doacross_counts[d] + static_cast<std::uint64_t>(v[d]);
  auto& slot = ws.doacross[static_cast<std::uint64_t>(v[0])];
  slot.store(flat + 1, std::memory_order_seq_cst);
  wake_reached(m, ws, slot);
}

template <class Int>
void doacross_wait(const Int* v, std::size_t n) {
  member& m = current();
  workshare& ws = *m.ws;
  if (!ws.doacross || n != ws.doacross_counts.size()) return;
  // A sink vector outside the iteration space names no iteration: nothing to wait for.
  for (std::size_t d = 0; d < n; ++d)
    if (static_cast<std::uint64_t>(v[d]) >= ws.doacross_counts[d]) return;
  std::uint64_t flat = 0;
  for (std::size_t d = 1; d < n; ++d) flat = flat * ws.doacross_counts[d] + static_cast<std::uint64_t>(v[d]);
  wait_reaches(m, ws, ws.doacross[static_cast<std::uint64_t>(v[0])], flat + 1);
}

template <class Int>
void doacross_wait_va(Int first, va_list ap) {
  member& m = current();
  std::size_t n = m.ws && m.ws->doacross ? m.ws->doacross_counts.size() : 1;
  Int v[64];
  if (n > 64) fatal("ordered(n) doacross loop nest deeper than 64 is not supported");
  v[0] = first;
  for (std::size_t d = 1; d < n; ++d) v[d] = va_arg(ap, Int);
  doacross_wait(v, n);
}

team* parallel_loop(void (*fn)(void*), void* data, unsigned n, const loop_spec& s, unsigned flags) {
  worker& w = self();
  team* t = fork(w, fn, data, n, flags, true);
  member& m = *t->members[0];
  workshare* ws;
  claim(m, ws);  // the master sets the work share up for every member
  setup(*ws, s, m.crew->size);
  publish(m);
  m.static_round = 0;
  m.ticket = -1;
  // The members claim it again at region start (run_member): the master already holds its slot.
  return t;
}

void run_parallel_loop(void (*fn)(void*), void* data, unsigned n, const loop_spec& s, unsigned flags) {
  worker& w = self();
  team* t = parallel_loop(fn, data, n, s, flags);
  launch(t);
  fn(data);
  join(w, t);
}

loop_spec sections_spec(unsigned count) {
  loop_spec s{};
  s.kind = sched_dynamic;
  s.itemwise = true;
  s.total = count;
  s.chunk = 1;
  s.start = 1;
  s.incr = 1;
  return s;
}

}  // namespace

// Claims a construct with GOMP_loop_start's extras: a team-shared zeroed block (*mem bytes in, its
// address out) and task reductions (each member opens an implicit taskgroup holding the team's
// private copies). The initializer sets both up before publishing, so the others see them.
workshare& claim_with_extras(member& m, const loop_spec& s, std::uintptr_t* reductions, void** mem) {
  workshare* ws;
  if (claim(m, ws)) {
    setup(*ws, s, m.crew->size);
    start_extras(m, *ws, reductions, mem);
    publish(m);
  } else {
    adopt_extras(m, *ws, reductions);
  }
  if (mem) *mem = ws->mem;
  return *ws;
}

workshare& enter_workshare(member& m, bool& initializer) {
  workshare* ws;
  initializer = claim(m, ws);
  if (initializer) {
    ws->copy = nullptr;
    ws->cancelled.store(false, std::memory_order_relaxed);
    publish(m);
  }
  return *ws;
}

void leave_workshare(member& m) {
  m.ws = nullptr;  // the work share stays until its block is given back
}

// The spare list's lock is a spinning word, not a mutex: members reach a new block together, and a
// mutex would put the loser to sleep in the kernel once per block of constructs.
workshare_block* take_block(team& t, std::uint64_t first) {
  lock_word(t.blocks_lock);
  workshare_block* b = t.spare_blocks;
  if (b) {
    t.spare_blocks = b->spare_next;
  } else {
    t.made_blocks.push_back(std::make_unique<workshare_block>());
    b = t.made_blocks.back().get();
  }
  unlock_word(t.blocks_lock);
  b->reset(first, t.size);
  return b;
}

void give_block(team& t, workshare_block* b) {
  lock_word(t.blocks_lock);
  b->spare_next = t.spare_blocks;
  t.spare_blocks = b;
  unlock_word(t.blocks_lock);
}

int resolve_schedule(int sched, long& chunk) {
  int kind = sched & 0x7fffffff;
  if (kind == 0 || kind == sched_auto) {
    const icvs& icv = current().icv;
    kind = icv.run_sched & 0x7fffffff;
    chunk = icv.run_chunk;
  }
  if (kind == sched_auto) {
    kind = sched_static;
    chunk = 0;
  }
  if (kind != sched_static && chunk < 1) chunk = 1;
  if (kind == sched_static && chunk < 0) chunk = 0;
  return kind;
}

loop_spec signed_loop(long start, long end, long incr, int kind, long chunk) {
  loop_spec s{};
  s.kind = kind;
  s.total = count_signed(start, end, incr);
  s.chunk = static_cast<std::uint64_t>(chunk);
  s.start = start;
  s.incr = incr;
  return s;
}

bool next_chunk(member& m, std::uint64_t& first, std::uint64_t& last) {
  workshare& ws = *m.ws;
  if (ws.ordered) pass_turn(m);
  if (ws.cancelled.load(std::memory_order_relaxed)) return false;
  int n = m.crew->size;
  switch (ws.kind) {
    case sched_static:
    default: {
      if (ws.chunk == 0) {
        if (m.static_round++ > 0) return false;
        std::uint64_t q = ws.total / n, r = ws.total % n, k = m.thread_num;
        first = k * q + (k < r ? k : r);
        last = first + q + (k < r);
        if (first == last) return false;
        if (ws.ordered) m.ticket = static_cast<std::int64_t>(k);
        return true;
      }
      std::uint64_t index = m.static_round++ * n + m.thread_num;
      if (index >= ws.chunks) return false;
      first = index * ws.chunk;
      last = first + ws.chunk < ws.total ? first + ws.chunk : ws.total;
      if (ws.ordered) m.ticket = static_cast<std::int64_t>(index);
      return true;
    }
    case sched_dynamic:
    case sched_guided: {
      if (ws.ordered) {
        lock_grab(ws);
        std::uint64_t cur = ws.next.load(std::memory_order_relaxed);
        bool got = cur < ws.total;
        if (got) {
          std::uint64_t size = ws.kind == sched_dynamic ? (ws.chunk < ws.total - cur ? ws.chunk : ws.total - cur)
                                                        : guided_size(ws.total - cur, ws.chunk, n);
          first = cur;
          last = cur + size;
          ws.next.store(last, std::memory_order_relaxed);
          m.ticket = ws.tickets++;
        }
        ws.grab_lock.store(false, std::memory_order_release);
        return got;
      }
      if (ws.kind == sched_dynamic) {
        // Relaxed: the counter only splits the space; the loop body's data is ordered by barriers.
        if (ws.next.load(std::memory_order_relaxed) >= ws.total) return false;
        first = ws.next.fetch_add(ws.chunk, std::memory_order_relaxed);
        if (first >= ws.total) return false;
        last = first + ws.chunk < ws.total ? first + ws.chunk : ws.total;
        return true;
      }
      std::uint64_t cur = ws.next.load(std::memory_order_relaxed);
      for (;;) {
        if (cur >= ws.total) return false;
        std::uint64_t size = guided_size(ws.total - cur, ws.chunk, n);
        if (ws.next.compare_exchange_weak(cur, cur + size, std::memory_order_relaxed)) {
          first = cur;
          last = cur + size;
          return true;
        }
      }
    }
  }
}

}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

// --- signed loops -------------------------------------------------------------------------------
#define WEFT_LOOP_START(name, kind_expr)                                                      \
  GOMP_API bool name(long start, long end, long incr, long chunk, long* istart, long* iend) { \
    long c = chunk;                                                                           \
    int kind = resolve_schedule(kind_expr, c);                                                \
    return start_loop(signed_loop(start, end, incr, kind, c), istart, iend);                  \
  }
WEFT_LOOP_START(GOMP_loop_static_start, sched_static)
WEFT_LOOP_START(GOMP_loop_dynamic_start, sched_dynamic)
WEFT_LOOP_START(GOMP_loop_guided_start, sched_guided)
WEFT_LOOP_START(GOMP_loop_nonmonotonic_dynamic_start, sched_dynamic)
WEFT_LOOP_START(GOMP_loop_nonmonotonic_guided_start, sched_guided)
#undef WEFT_LOOP_START

#define WEFT_LOOP_RUNTIME_START(name)                                             \
  GOMP_API bool name(long start, long end, long incr, long* istart, long* iend) { \
    long c = 0;                                                                   \
    int kind = resolve_schedule(0, c);                                            \
    return start_loop(signed_loop(start, end, incr, kind, c), istart, iend);      \
  }
WEFT_LOOP_RUNTIME_START(GOMP_loop_runtime_start)
WEFT_LOOP_RUNTIME_START(GOMP_loop_nonmonotonic_runtime_start)
WEFT_LOOP_RUNTIME_START(GOMP_loop_maybe_nonmonotonic_runtime_start)
#undef WEFT_LOOP_RUNTIME_START

GOMP_API bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long* istart, long* iend,
                              std::uintptr_t* reductions, void** mem) {
  long c = chunk;
  int kind = resolve_schedule(static_cast<int>(sched), c);
  return start_loop_extras(signed_loop(start, end, incr, kind, c), istart, iend, reductions, mem);
}

#define WEFT_ORDERED_START(name, kind_expr)                                                   \
  GOMP_API bool name(long start, long end, long incr, long chunk, long* istart, long* iend) { \
    long c = chunk;                                                                           \
    int kind = resolve_schedule(kind_expr, c);                                                \
    loop_spec s = signed_loop(start, end, incr, kind, c);                                     \
    s.ordered = true;                                                                         \
    return start_loop(s, istart, iend);                                                       \
  }
WEFT_ORDERED_START(GOMP_loop_ordered_static_start, sched_static)
WEFT_ORDERED_START(GOMP_loop_ordered_dynamic_start, sched_dynamic)
WEFT_ORDERED_START(GOMP_loop_ordered_guided_start, sched_guided)
#undef WEFT_ORDERED_START

GOMP_API bool GOMP_loop_ordered_runtime_start(long start, long end, long incr, long* istart, long* iend) {
  long c = 0;
  int kind = resolve_schedule(0, c);
  loop_spec s = signed_loop(start, end, incr, kind, c);
  s.ordered = true;
  return start_loop(s, istart, iend);
}

GOMP_API bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk, long* istart, long* iend,
                                      std::uintptr_t* reductions, void** mem) {
  long c = chunk;
  int kind = resolve_schedule(static_cast<int>(sched), c);
  loop_spec s = signed_loop(start, end, incr, kind, c);
  s.ordered = true;
  return start_loop_extras(s, istart, iend, reductions, mem);
}

#define WEFT_LOOP_NEXT(name)                     \
  GOMP_API bool name(long* istart, long* iend) { \
    return next_signed(istart, iend);            \
  }
WEFT_LOOP_NEXT(GOMP_loop_static_next)
WEFT_LOOP_NEXT(GOMP_loop_dynamic_next)
WEFT_LOOP_NEXT(GOMP_loop_guided_next)
WEFT_LOOP_NEXT(GOMP_loop_runtime_next)
WEFT_LOOP_NEXT(GOMP_loop_nonmonotonic_dynamic_next)
WEFT_LOOP_NEXT(GOMP_loop_nonmonotonic_guided_next)
WEFT_LOOP_NEXT(GOMP_loop_nonmonotonic_runtime_next)
WEFT_LOOP_NEXT(GOMP_loop_maybe_nonmonotonic_runtime_next)
WEFT_LOOP_NEXT(GOMP_loop_ordered_static_next)
WEFT_LOOP_NEXT(GOMP_loop_ordered_dynamic_next)
WEFT_LOOP_NEXT(GOMP_loop_ordered_guided_next)
WEFT_LOOP_NEXT(GOMP_loop_ordered_runtime_next)
#undef WEFT_LOOP_NEXT

GOMP_API void GOMP_loop_end(void) {
  end_loop(true);
}
GOMP_API void GOMP_loop_end_nowait(void) {
  end_loop(false);
}
GOMP_API bool GOMP_loop_end_cancel(void) {
  return end_loop_cancel();
}

GOMP_API void GOMP_ordered_start(void) {
  member& m = current();
  if (m.ticket < 0 || !m.ws) return;  // not in an ordered loop's chunk (e.g. a team of one)
  wait_reaches(m, *m.ws, m.ws->ordered_turn, static_cast<std::uint64_t>(m.ticket));
}

GOMP_API void GOMP_ordered_end(void) {}

// --- combined parallel loops ----------------------------------------------------------------------
#define WEFT_PARALLEL_LOOP(name, kind_expr)                                                                  \
  GOMP_API void name(void (*fn)(void*), void* data, unsigned n, long start, long end, long incr, long chunk, \
                     unsigned flags) {                                                                       \
    long c = chunk;                                                                                          \
    int kind = resolve_schedule(kind_expr, c);                                                               \
    run_parallel_loop(fn, data, n, signed_loop(start, end, incr, kind, c), flags);                           \
  }
WEFT_PARALLEL_LOOP(GOMP_parallel_loop_static, sched_static)
WEFT_PARALLEL_LOOP(GOMP_parallel_loop_dynamic, sched_dynamic)
WEFT_PARALLEL_LOOP(GOMP_parallel_loop_guided, sched_guided)
WEFT_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic, sched_dynamic)
WEFT_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided, sched_guided)
#undef WEFT_PARALLEL_LOOP

#define WEFT_PARALLEL_LOOP_RUNTIME(name)                                                                           \
  GOMP_API void name(void (*fn)(void*), void* data, unsigned n, long start, long end, long incr, unsigned flags) { \
    long c = 0;                                                                                                    \
    int kind = resolve_schedule(0, c);                                                                             \
    run_parallel_loop(fn, data, n, signed_loop(start, end, incr, kind, c), flags);                                 \
  }
WEFT_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
WEFT_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
WEFT_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)
#undef WEFT_PARALLEL_LOOP_RUNTIME

// Legacy split forms: the caller runs fn and then GOMP_parallel_end.
#define WEFT_PARALLEL_LOOP_START(name, kind_expr)                                                              \
  GOMP_API void name(void (*fn)(void*), void* data, unsigned n, long start, long end, long incr, long chunk) { \
    long c = chunk;                                                                                            \
    int kind = resolve_schedule(kind_expr, c);                                                                 \
    launch(parallel_loop(fn, data, n, signed_loop(start, end, incr, kind, c), 0));                             \
  }
WEFT_PARALLEL_LOOP_START(GOMP_parallel_loop_static_start, sched_static)
WEFT_PARALLEL_LOOP_START(GOMP_parallel_loop_dynamic_start, sched_dynamic)
WEFT_PARALLEL_LOOP_START(GOMP_parallel_loop_guided_start, sched_guided)
#undef WEFT_PARALLEL_LOOP_START

GOMP_API void GOMP_parallel_loop_runtime_start(void (*fn)(void*), void* data, unsigned n, long start, long end,
                                               long incr) {
  long c = 0;
  int kind = resolve_schedule(0, c);
  launch(parallel_loop(fn, data, n, signed_loop(start, end, incr, kind, c), 0));
}

// --- unsigned long long loops -----------------------------------------------------------------------
typedef unsigned long long ull;

#define WEFT_ULL_START(name, kind_expr, ordered_flag)                                            \
  GOMP_API bool name(bool up, ull start, ull end, ull incr, ull chunk, ull* istart, ull* iend) { \
    long c = static_cast<long>(chunk);                                                           \
    int kind = resolve_schedule(kind_expr, c);                                                   \
    loop_spec s = unsigned_loop(up, start, end, incr, kind, static_cast<ull>(c));                \
    s.ordered = ordered_flag;                                                                    \
    return start_loop_ull(s, istart, iend);                                                      \
  }
WEFT_ULL_START(GOMP_loop_ull_static_start, sched_static, false)
WEFT_ULL_START(GOMP_loop_ull_dynamic_start, sched_dynamic, false)
WEFT_ULL_START(GOMP_loop_ull_guided_start, sched_guided, false)
WEFT_ULL_START(GOMP_loop_ull_nonmonotonic_dynamic_start, sched_dynamic, false)
WEFT_ULL_START(GOMP_loop_ull_nonmonotonic_guided_start, sched_guided, false)
WEFT_ULL_START(GOMP_loop_ull_ordered_static_start, sched_static, true)
WEFT_ULL_START(GOMP_loop_ull_ordered_dynamic_start, sched_dynamic, true)
WEFT_ULL_START(GOMP_loop_ull_ordered_guided_start, sched_guided, true)
#undef WEFT_ULL_START

#define WEFT_ULL_RUNTIME_START(name, ordered_flag)                                    \
  GOMP_API bool name(bool up, ull start, ull end, ull incr, ull* istart, ull* iend) { \
    long c = 0;                                                                       \
    int kind = resolve_schedule(0, c);                                                \
    loop_spec s = unsigned_loop(up, start, end, incr, kind, static_cast<ull>(c));     \
    s.ordered = ordered_flag;                                                         \
    return start_loop_ull(s, istart, iend);                                           \
  }
WEFT_ULL_RUNTIME_START(GOMP_loop_ull_runtime_start, false)
WEFT_ULL_RUNTIME_START(GOMP_loop_ull_nonmonotonic_runtime_start, false)
WEFT_ULL_RUNTIME_START(GOMP_loop_ull_maybe_nonmonotonic_runtime_start, false)
WEFT_ULL_RUNTIME_START(GOMP_loop_ull_ordered_runtime_start, true)
#undef WEFT_ULL_RUNTIME_START

static bool ull_start_generic(bool up, ull start, ull end, ull incr, long sched, ull chunk, ull* istart, ull* iend,
                              std::uintptr_t* reductions, void** mem, bool ordered) {
  long c = static_cast<long>(chunk);
  int kind = resolve_schedule(static_cast<int>(sched), c);
  loop_spec s = unsigned_loop(up, start, end, incr, kind, static_cast<ull>(c));
  s.ordered = ordered;
  member& m = current();
  claim_with_extras(m, s, reductions, mem);
  m.static_round = 0;
  m.ticket = -1;
  if (!istart) return true;
  return next_unsigned(istart, iend);
}

GOMP_API bool GOMP_loop_ull_start(bool up, ull start, ull end, ull incr, long sched, ull chunk, ull* istart, ull* iend,
                                  std::uintptr_t* reductions, void** mem) {
  return ull_start_generic(up, start, end, incr, sched, chunk, istart, iend, reductions, mem, false);
}
GOMP_API bool GOMP_loop_ull_ordered_start(bool up, ull start, ull end, ull incr, long sched, ull chunk, ull* istart,
                                          ull* iend, std::uintptr_t* reductions, void** mem) {
  return ull_start_generic(up, start, end, incr, sched, chunk, istart, iend, reductions, mem, true);
}

#define WEFT_ULL_NEXT(name)                    \
  GOMP_API bool name(ull* istart, ull* iend) { \
    return next_unsigned(istart, iend);        \
  }
WEFT_ULL_NEXT(GOMP_loop_ull_static_next)
WEFT_ULL_NEXT(GOMP_loop_ull_dynamic_next)
WEFT_ULL_NEXT(GOMP_loop_ull_guided_next)
WEFT_ULL_NEXT(GOMP_loop_ull_runtime_next)
WEFT_ULL_NEXT(GOMP_loop_ull_nonmonotonic_dynamic_next)
WEFT_ULL_NEXT(GOMP_loop_ull_nonmonotonic_guided_next)
WEFT_ULL_NEXT(GOMP_loop_ull_nonmonotonic_runtime_next)
WEFT_ULL_NEXT(GOMP_loop_ull_maybe_nonmonotonic_runtime_next)
WEFT_ULL_NEXT(GOMP_loop_ull_ordered_static_next)
WEFT_ULL_NEXT(GOMP_loop_ull_ordered_dynamic_next)
WEFT_ULL_NEXT(GOMP_loop_ull_ordered_guided_next)
WEFT_ULL_NEXT(GOMP_loop_ull_ordered_runtime_next)
#undef WEFT_ULL_NEXT

// --- doacross -----------------------------------------------------------------------------------------
#define WEFT_DOACROSS_START(name, Int, kind_expr)                                        \
  GOMP_API bool name(unsigned ncounts, Int* counts, Int chunk, Int* istart, Int* iend) { \
    return doacross_start<Int>(ncounts, counts, kind_expr, chunk, istart, iend);         \
  }
WEFT_DOACROSS_START(GOMP_loop_doacross_static_start, long, sched_static)
WEFT_DOACROSS_START(GOMP_loop_doacross_dynamic_start, long, sched_dynamic)
WEFT_DOACROSS_START(GOMP_loop_doacross_guided_start, long, sched_guided)
WEFT_DOACROSS_START(GOMP_loop_ull_doacross_static_start, ull, sched_static)
WEFT_DOACROSS_START(GOMP_loop_ull_doacross_dynamic_start, ull, sched_dynamic)
WEFT_DOACROSS_START(GOMP_loop_ull_doacross_guided_start, ull, sched_guided)
#undef WEFT_DOACROSS_START

GOMP_API bool GOMP_loop_doacross_runtime_start(unsigned ncounts, long* counts, long* istart, long* iend) {
  return doacross_start<long>(ncounts, counts, 0, 0, istart, iend);
}
GOMP_API bool GOMP_loop_ull_doacross_runtime_start(unsigned ncounts, ull* counts, ull* istart, ull* iend) {
  return doacross_start<ull>(ncounts, counts, 0, 0, istart, iend);
}

GOMP_API bool GOMP_loop_doacross_start(unsigned ncounts, long* counts, long sched, long chunk, long* istart, long* iend,
                                       std::uintptr_t* reductions, void** mem) {
  return doacross_start<long>(ncounts, counts, static_cast<int>(sched), chunk, istart, iend, reductions, mem);
}
GOMP_API bool GOMP_loop_ull_doacross_start(unsigned ncounts, ull* counts, long sched, ull chunk, ull* istart, ull* iend,
                                           std::uintptr_t* reductions, void** mem) {
  return doacross_start<ull>(ncounts, counts, static_cast<int>(sched), chunk, istart, iend, reductions, mem);
}

GOMP_API void GOMP_doacross_post(long* counts) {
  doacross_post(counts);
}
GOMP_API void GOMP_doacross_ull_post(ull* counts) {
  doacross_post(counts);
}

GOMP_API void GOMP_doacross_wait(long first, ...) {
  va_list ap;
  va_start(ap, first);
  doacross_wait_va<long>(first, ap);
  va_end(ap);
}

GOMP_API void GOMP_doacross_ull_wait(ull first, ...) {
  va_list ap;
  va_start(ap, first);
  doacross_wait_va<ull>(first, ap);
  va_end(ap);
}

// --- sections (numbered 1..count; 0 = none left) -----------------------------------------------------
GOMP_API unsigned GOMP_sections_start(unsigned count) {
  long a, b;
  if (!start_loop(sections_spec(count), &a, &b)) return 0;
  return static_cast<unsigned>(a);
}

GOMP_API unsigned GOMP_sections2_start(unsigned count, std::uintptr_t* reductions, void** mem) {
  long a, b;
  if (!start_loop_extras(sections_spec(count), &a, &b, reductions, mem)) return 0;
  return static_cast<unsigned>(a);
}

GOMP_API unsigned GOMP_sections_next(void) {
  long a, b;
  return next_signed(&a, &b) ? static_cast<unsigned>(a) : 0;
}

GOMP_API void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned n, unsigned count, unsigned flags) {
  run_parallel_loop(fn, data, n, sections_spec(count), flags);
}

GOMP_API void GOMP_parallel_sections_start(void (*fn)(void*), void* data, unsigned n, unsigned count) {
  launch(parallel_loop(fn, data, n, sections_spec(count), 0));
}

GOMP_API void GOMP_sections_end(void) {
  end_loop(true);
}
GOMP_API void GOMP_sections_end_nowait(void) {
  end_loop(false);
}
GOMP_API bool GOMP_sections_end_cancel(void) {
  return end_loop_cancel();
}

}  // extern "C"
