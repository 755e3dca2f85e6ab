// The loop a worker runs while it waits for a condition: it keeps its core busy with other ready
// tasks, nesting them on its stack up to max_nesting (then only its own children), and parks
// when there is nothing to run.
#pragma once

#include <sched.h>

namespace weft::core {

inline constexpr int max_nesting = 256;

template <class Done>
void run_until(worker& w, Done&& done) {
  int spins = 0;
  for (;;) {
    // done() may depend on counts this worker holds back: those of the waiting task's children or
    // of a taskgroup it opened. Counts for other tasks stay batched while there is work (a team
    // barrier's waiters run each other's tasks); idle_wait reports them before sleeping.
    if ((w.batch_finished && w.batch_parent == w.current) ||
        (w.group_owed && w.batch_group->owner == w.current))
      flush_finished_children(w);
    if (done()) break;
    // Past the nesting bound only the waiting task's own children run here: they are what it
    // waits for, so progress is guaranteed without piling unrelated work onto this stack.
    task* t = w.nesting < max_nesting ? find_work(w) : find_child_work(w);
    if (t) {
      spins = 0;
      execute_task(w, t);
      continue;
    }
    auto ready = [](void* d) { return (*static_cast<std::remove_reference_t<Done>*>(d))(); };
    idle_wait(w, ready, &done, spins);
  }
}

template <class Ready>
void wait_until(worker& w, Ready&& ready) {
  flush_finished_children(w);  // nobody may wait on counts this worker keeps while it waits
  for (int spins = 0;; ++spins) {
    if (ready()) return;
    int spin_rounds = instance->spin_rounds.load(std::memory_order_relaxed);
    if (spins < spin_rounds) {
      // One pause per check at first: the waits here (a pooled or bound team member waiting for
      // its next region) are usually over within a microsecond, and polling steals nothing.
      int pauses = spins < 512 ? 1 : 16;
      for (int i = 0; i < pauses; ++i) __builtin_ia32_pause();
    } else if (spins < spin_rounds + 50 || instance->cfg.wait == wait_policy::active) {
      sched_yield();
    } else {
      instance->pool_park.sleep(w.sleep_word, ready, 0);
    }
  }
}

}  // namespace weft::core
