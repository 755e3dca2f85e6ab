// The watchdog (WEFT_WATCHDOG=<seconds>) and the stall check of weft_finalize: when nothing has
// started or finished for that long while tasks are pending, say what they wait for.
#pragma once

namespace weft::core {

struct worker;

void start_watchdog();
void stop_watchdog();
// finalize: waits (running tasks) until no task is left; false when the remaining tasks can never
// finish (every worker idle, no poller, no progress for the stall time), after reporting them.
bool wait_for_all_tasks(worker& w);

}  // namespace weft::core
