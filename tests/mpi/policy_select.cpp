// WEFT_MPI_PRIORITY selects the engine's priority propagation at MPI_Init (fifo: none, ma1: as
// given, ma2: path, sa: depth, fa: detect), and under fa a task that sends through MPI marks its
// profile: a later task with the same function, parent and number of predecessors runs at the top
// priority, its predecessor one below. Run with WEFT_MPI_PRIORITY set by the test (2 ranks: each
// sends to the other).
#include <weft/mpi.h>
#include <weft/weft.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
#include "mpi_test.h"
}

namespace {

int rank_, peer_;

struct body_args {
  int round;
  int* levels;  // [round][0: predecessor, 1: send-task]
};

void predecessor_body(void* p) {
  auto* a = static_cast<body_args*>(p);
  a->levels[a->round * 2] = weft_task_get_priority(weft_task_self());
}

void send_body(void* p) {
  auto* a = static_cast<body_args*>(p);
  a->levels[a->round * 2 + 1] = weft_task_get_priority(weft_task_self());
  int value = a->round;
  CHECK(MPI_Send(&value, 1, MPI_INT, peer_, a->round, MPI_COMM_WORLD) == MPI_SUCCESS);
}

void gate_body(void* p) { weft_event_wait(*static_cast<weft_event_t**>(p)); }

// One round: gate -> predecessor -> send-task, all created before the gate opens.
void round_of(int round, int* levels) {
  char gate_word = 0, pred_word = 0;
  weft_event_t* event = weft_event_create(1);
  weft_task_t* g = weft_task_create(&gate_body, &event, sizeof event, 0);
  CHECK(g && weft_task_depend(g, WEFT_DEP_OUT, &gate_word, 1) == WEFT_OK && weft_task_submit(g) == WEFT_OK);
  body_args a{round, levels};
  weft_task_t* p = weft_task_create(&predecessor_body, &a, sizeof a, 0);
  CHECK(p && weft_task_depend(p, WEFT_DEP_IN, &gate_word, 1) == WEFT_OK);
  CHECK(weft_task_depend(p, WEFT_DEP_OUT, &pred_word, 1) == WEFT_OK && weft_task_submit(p) == WEFT_OK);
  weft_task_t* s = weft_task_create(&send_body, &a, sizeof a, 0);
  CHECK(s && weft_task_depend(s, WEFT_DEP_IN, &pred_word, 1) == WEFT_OK && weft_task_submit(s) == WEFT_OK);
  CHECK(weft_event_fulfill(event) == WEFT_OK);
  CHECK(weft_taskwait() == WEFT_OK);  // before the receive: the main program's calls block its worker
  int value = -1;
  CHECK(MPI_Recv(&value, 1, MPI_INT, peer_, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(value == round);
  weft_event_destroy(event);
}

}  // namespace

int main(int argc, char** argv) {
  int size = 0;
  test_init(&argc, &argv, &rank_, &size);
  CHECK(size == 2);
  peer_ = 1 - rank_;
  const char* policy = std::getenv("WEFT_MPI_PRIORITY");
  CHECK(policy != nullptr);
  CHECK(std::strcmp(weft_mpi_policy(), policy) == 0);
  static const struct {
    const char* name;
    int mode;
  } modes[] = {{"fifo", WEFT_PRIORITY_NONE}, {"ma1", WEFT_PRIORITY_AS_GIVEN}, {"ma2", WEFT_PRIORITY_PATH},
               {"sa", WEFT_PRIORITY_DEPTH}, {"fa", WEFT_PRIORITY_DETECT}};
  int expected = -1;
  for (const auto& m : modes)
    if (std::strcmp(m.name, policy) == 0) expected = m.mode;
  CHECK(weft_priority_propagation() == expected);
  int levels[4] = {-1, -1, -1, -1};
  round_of(0, levels);  // under fa, the send-task's MPI_Send registers its profile
  round_of(1, levels);
  int top = weft_max_priority();
  if (expected == WEFT_PRIORITY_DETECT) {
    CHECK(levels[0] == 0 && levels[1] == 0);  // nothing known yet in round 0
    CHECK(levels[2] == top - 1);              // recognised at creation in round 1
    CHECK(levels[3] == top);
  } else {
    for (int l : levels) CHECK(l == 0);  // no task was given a priority
  }
  if (rank_ == 0) std::printf("policy %s: levels %d %d %d %d (top %d)\n", policy, levels[0], levels[1], levels[2], levels[3], top);
  MPI_Finalize();
  return 0;
}
