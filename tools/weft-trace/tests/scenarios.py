"""Small traces with known answers, worked out by hand in the comments (times in ns)."""

from .tracegen import MEMBER, NON_WORKER, REDIRECT, REPLAY, TraceBuilder


def chain():
    """One worker, A -> B -> C (10, 20, 30 ns of body).

    Ready: A [2,10], B [20,20], C [40,45] = 13 ns, all outside bodies -> overhead 13.
    Tasks in flight [0,75] (A created at 0, C ends at 75): serial 25. Work 60, idle 100 - 60 - 13 -
    25 = 2 (A being created, [0,2]). Discovery 2 + 2 + 2 = 6. Critical path 60."""
    t = TraceBuilder(workers=1, end_ns=100)
    step = t.kind("step")
    A, B, C = 0x1000, 0x2000, 0x3000
    t.create(0, 0, A, 0, step)
    t.submit(0, 2, A)
    t.ready(0, 2, A)
    t.create(0, 3, B, 0, step)
    t.edge(0, 5, A, B)
    t.submit(0, 5, B)
    t.create(0, 6, C, 0, step)
    t.edge(0, 8, B, C)
    t.submit(0, 8, C)
    t.idle(0, 8, 10)
    t.start(0, 10, A)
    t.end(0, 20, A)
    t.ready(0, 20, B)
    t.start(0, 20, B)
    t.end(0, 40, B)
    t.ready(0, 40, C)
    t.start(0, 45, C)
    t.end(0, 75, C)
    t.idle(0, 75, 100)
    return t, {"tasks": 3, "edges": 2, "collapsed": 2, "critical_path": 60,
               "breakdown": [(60, 13, 2, 25)], "discovery": {0: 6}}


def fork_join():
    """Two workers. Root P (w0) makes C1..C4 and J (C1..C4 -> J), runs C1 and C4 nested in its
    taskwait, suspends (children) at 63, resumes at 91. w1 steals C2, runs C3 and J.

    Durations: P 11 + 9 = 20, C1 20, C4 30, C2 40, C3 20, J 16.
    Work: w0 [2,63] + [91,100] = 70; w1 [14,90] = 76.
    Ready: P [1,2], C1 [4,13], C2 [6,14], C3 [8,54], C4 [10,33], J [74,74] -> [1,2] U [4,54] = 51.
    Overhead: w0 51 - 50 = 1, w1 51 - 40 = 11. In flight [0,100] (P): serial 100.
    Idle: w0 200-70-1-100 = 29, w1 200-76-11-100 = 13.
    Critical path: C2 + J = 56. Discovery w0: 1 + 5 * 1 = 6."""
    t = TraceBuilder(workers=2, end_ns=200)
    root, leaf, join = t.kind("root"), t.kind("leaf"), t.kind("join")
    P, C1, C2, C3, C4, J = 0x10, 0x20, 0x30, 0x40, 0x50, 0x60
    t.create(0, 0, P, 0, root)
    t.submit(0, 1, P)
    t.ready(0, 1, P)
    t.start(0, 2, P)
    for n, c in enumerate((C1, C2, C3, C4)):
        t.create(0, 3 + 2 * n, c, P, leaf)
        t.submit(0, 4 + 2 * n, c)
        t.ready(0, 4 + 2 * n, c)
    t.create(0, 11, J, P, join)
    for c in (C1, C2, C3, C4):
        t.edge(0, 12, c, J)
    t.submit(0, 12, J)
    t.start(0, 13, C1)
    t.end(0, 33, C1)
    t.start(0, 33, C4)
    t.end(0, 63, C4)
    t.suspend(0, 63, P, wait=1)
    t.idle(0, 63, 91)
    t.resume(0, 91, P)
    t.end(0, 100, P)
    t.idle(0, 100)
    t.idle(1, 0, 14)
    t.steal(1, 14, 0, C2)
    t.start(1, 14, C2)
    t.end(1, 54, C2)
    t.start(1, 54, C3)
    t.end(1, 74, C3)
    t.ready(1, 74, J)
    t.start(1, 74, J)
    t.end(1, 90, J)
    t.idle(1, 90)
    return t, {"tasks": 6, "edges": 4, "collapsed": 4, "critical_path": 56,
               "breakdown": [(70, 1, 29, 100), (76, 11, 13, 100)], "discovery": {0: 6},
               "durations": {1: 20, 2: 20, 3: 40, 4: 20, 5: 30, 6: 16},
               "segments": 7, "idle_intervals": 4}


def diamond_redirect():
    """A -> {B, C} -> R (redirect) -> D on one worker. R gets task_ready but never runs: it must
    not count as a ready task. Collapsed: A->B, A->C, B->D, C->D.

    Ready: A [1,10], B [20,20], C [20,40], D [45,45] = 29; inside bodies [20,40] -> overhead 9.
    Work A 10 + B 20 + C 5 + D 7 = 42. In flight [0,52] (R, never ending, is not a task): serial
    48, idle 100 - 42 - 9 - 48 = 1. Critical path A + B + D = 37.
    Ids: A 1, B 2, C 3, D 4, R 5."""
    t = TraceBuilder(workers=1, end_ns=100)
    k = t.kind("node")
    A, B, C, D, R = 0xA, 0xB, 0xC, 0xD, 0xE
    t.create(0, 0, A, 0, k)
    t.submit(0, 1, A)
    t.ready(0, 1, A)
    t.create(0, 2, B, 0, k)
    t.edge(0, 3, A, B)
    t.submit(0, 3, B)
    t.create(0, 4, C, 0, k)
    t.edge(0, 5, A, C)
    t.submit(0, 5, C)
    t.create(0, 6, D, 0, k)
    t.create(0, 7, R, 0, 0, REDIRECT)
    t.edge(0, 8, B, R)
    t.edge(0, 8, C, R)
    t.edge(0, 8, R, D)
    t.submit(0, 8, D)
    t.start(0, 10, A)
    t.end(0, 20, A)
    t.ready(0, 20, B)
    t.ready(0, 20, C)
    t.start(0, 20, B)
    t.end(0, 40, B)
    t.start(0, 40, C)
    t.end(0, 45, C)
    t.ready(0, 45, R)
    t.ready(0, 45, D)
    t.start(0, 45, D)
    t.end(0, 52, D)
    return t, {"tasks": 4, "redirects": 1, "edges": 5, "collapsed": 4, "critical_path": 37,
               "breakdown": [(42, 9, 1, 48)]}


def serial_phases():
    """The program's serial code around two phases of tasks. w0 (the main program) runs serial code
    [0,30], creates A [30,32], waits for it [32,53] while w1 runs it [33,53], runs serial code again
    [53,80], creates B [80,81] and runs it itself [81,90], then serial code to the end. w1 waits for
    work [0,33] and [53,100].

    In flight: A [30,53], B [80,90]; serial [0,30] + [53,80] + [90,100] = 67 on both workers.
    Ready: A [32,33], B [81,81] -> overhead 1 each. Work w0 9, w1 20.
    Idle: w0 100-9-1-67 = 23 ([30,32], [33,53], [80,81]); w1 100-20-1-67 = 12 ([30,32], [80,90])."""
    t = TraceBuilder(workers=2, end_ns=100)
    k = t.kind("phase")
    A, B = 0x10, 0x20
    t.create(0, 30, A, 0, k)
    t.submit(0, 32, A)
    t.ready(0, 32, A)
    t.idle(0, 32, 53)
    t.idle(1, 0, 33)
    t.start(1, 33, A)
    t.end(1, 53, A)
    t.idle(1, 53)
    t.create(0, 80, B, 0, k)
    t.submit(0, 81, B)
    t.ready(0, 81, B)
    t.start(0, 81, B)
    t.end(0, 90, B)
    return t, {"tasks": 2, "breakdown": [(9, 1, 23, 67), (20, 1, 12, 67)], "serial": [(0, 30), (53, 80), (90, 100)],
               "creating": [(30, 32), (80, 81)]}


def recycled():
    """Address 0xA0 holds three tasks in turn. X2 is created on w1 at t=10, the very nanosecond
    X1 ends on w0: X1's task_end must still name X1. X3 gets a label.

    Ids by creation: X1 1 (t0), Y 2 (t3), X2 3 (t10), X3 4 (t40). Edge X1 -> Y.
    Durations X1 8, Y 10, X2 18, X3 8. Critical path X1 + Y = 18."""
    t = TraceBuilder(workers=2, end_ns=100)
    first, second, third, relabel, ykind = (t.kind("first"), t.kind("second"), t.kind("third"),
                                            t.kind("relabelled"), t.kind("y"))
    X, Y = 0xA0, 0xB0
    t.create(0, 0, X, 0, first)
    t.submit(0, 1, X)
    t.ready(0, 1, X)
    t.start(0, 2, X)
    t.create(0, 3, Y, 0, ykind)
    t.edge(0, 4, X, Y)
    t.submit(0, 4, Y)
    t.end(0, 10, X)
    t.ready(0, 10, Y)
    t.create(1, 10, X, 0, second)
    t.submit(1, 10, X)
    t.ready(1, 10, X)
    t.start(1, 12, X)
    t.end(1, 30, X)
    t.create(0, 40, X, 0, third)
    t.label(0, 41, X, relabel)
    t.submit(0, 41, X)
    t.ready(0, 41, X)
    t.start(0, 42, X)
    t.end(0, 50, X)
    t.start(0, 60, Y)
    t.end(0, 70, Y)
    return t, {"tasks": 4, "edges": [(1, 2)], "critical_path": 18,
               "durations": {1: 8, 2: 10, 3: 18, 4: 8},
               "kinds": {1: "first", 2: "y", 3: "second", 4: "relabelled"}}


def suspended_elsewhere():
    """T starts on w0, suspends (event) at 12, resumes on w1 at 30, ends at 40: 20 ns of body.
    Work 10 on each worker; ready [1,2] -> overhead 1 each; in flight [0,40]: serial 60; idle 29 each."""
    t = TraceBuilder(workers=2, end_ns=100)
    k = t.kind("waiter")
    T = 0x77
    t.create(0, 0, T, 0, k)
    t.submit(0, 1, T)
    t.ready(0, 1, T)
    t.start(0, 2, T)
    t.suspend(0, 12, T, wait=3)
    t.idle(0, 12)
    t.idle(1, 0, 30)
    t.resume(1, 30, T)
    t.end(1, 40, T)
    t.idle(1, 40)
    return t, {"tasks": 1, "breakdown": [(10, 1, 29, 60), (10, 1, 29, 60)], "durations": {1: 20}}


def nested_suspend():
    """P runs child C nested on w0; C suspends at 15 (their shared context is set aside), w0 runs U;
    C resumes on w1 at 30, ends at 35, and P goes on there until 45.

    Durations: P (5-2) + (45-35) = 13, C (15-5) + (35-30) = 15, U 10.
    Work: w0 [2,15] + [16,26] = 23, w1 [30,45] = 15.
    Ready: P [1,2], C [4,5], U [7,16] = 11; in w0's bodies 1 + 8 = 9 -> overhead w0 2, w1 11.
    In flight [0,45] (P): serial 55. Idle: w0 100-23-2-55 = 20, w1 100-15-11-55 = 19."""
    t = TraceBuilder(workers=2, end_ns=100)
    kp, kc, ku = t.kind("parent"), t.kind("child"), t.kind("other")
    P, C, U = 0x100, 0x200, 0x300
    t.create(0, 0, P, 0, kp)
    t.submit(0, 1, P)
    t.ready(0, 1, P)
    t.start(0, 2, P)
    t.create(0, 3, C, P, kc)
    t.submit(0, 4, C)
    t.ready(0, 4, C)
    t.start(0, 5, C)
    t.create(0, 6, U, C, ku)
    t.submit(0, 7, U)
    t.ready(0, 7, U)
    t.suspend(0, 15, C, wait=3)
    t.start(0, 16, U)
    t.end(0, 26, U)
    t.idle(0, 26)
    t.idle(1, 0, 30)
    t.resume(1, 30, C)
    t.end(1, 35, C)
    t.end(1, 45, P)
    t.idle(1, 45)
    return t, {"tasks": 3, "durations": {1: 13, 2: 15, 3: 10}, "breakdown": [(23, 2, 20, 55), (15, 11, 19, 55)]}


def persistent(round0_instances=True):
    """A persistent graph of two nodes, a (10 ns) -> b (20 ns) within a round and b -> a from round
    r to r+1 (cyclic), run for 3 rounds on one worker. Round 0 is ordinary tasks (recorded edge
    R0a -> R0b); rounds 1 and 2 are replay instances, round 2 at round 1's (recycled) addresses.

    Ids: R0a 1, R0b 2, I1a 3, I1b 4, I2a 5, I2b 6.
    With graph_instance events for round 0: expanded R0b->I1a, I1a->I1b, I1b->I2a, I2a->I2b (the
    round-0 edge is recorded already); everything is one chain: critical path 3 * 30 = 90.
    Without them: I1a->I1b, I1b->I2a, I2a->I2b; critical path 60."""
    t = TraceBuilder(workers=1, end_ns=120)
    ka, kb = t.kind("g.a"), t.kind("g.b")
    G = 0xFEED
    R0a, R0b, Ia, Ib = 0x100, 0x200, 0x900, 0x980
    t.create(0, 0, R0a, 0, ka)
    if round0_instances:
        t.graph_instance(0, 1, R0a, 0, 0)
    t.submit(0, 1, R0a)
    t.ready(0, 1, R0a)
    t.create(0, 2, R0b, 0, kb)
    t.edge(0, 3, R0a, R0b)
    if round0_instances:
        t.graph_instance(0, 3, R0b, 0, 1)
    t.submit(0, 3, R0b)
    t.start(0, 5, R0a)
    t.end(0, 15, R0a)
    t.ready(0, 15, R0b)
    t.start(0, 15, R0b)
    t.end(0, 35, R0b)
    t.graph_edge(0, 36, G, 0, 1)
    t.graph_edge(0, 36, G, 1, 0, cyclic=True)
    for rnd, base in ((1, 37), (2, 71)):
        t.create(0, base, Ia, 0, ka, REPLAY)
        t.graph_instance(0, base, Ia, rnd, 0)
        t.create(0, base + 1, Ib, 0, kb, REPLAY)
        t.graph_instance(0, base + 1, Ib, rnd, 1)
        t.ready(0, base + 2, Ia)
        t.start(0, base + 3, Ia)
        t.end(0, base + 13, Ia)
        t.ready(0, base + 13, Ib)
        t.start(0, base + 13, Ib)
        t.end(0, base + 33, Ib)
    if round0_instances:
        return t, {"tasks": 6, "edges": 1, "replayed": 4, "collapsed": 5, "critical_path": 90, "rounds": 3}
    return t, {"tasks": 6, "edges": 1, "replayed": 3, "collapsed": 4, "critical_path": 60, "rounds": 2}


def communication():
    """Two workers; A runs on w0 [10,50], B on w1 [20,80]. Category-1 intervals (begun and ended
    on different threads, some in the non-worker buffer, listed there out of time order):
      MPI_Isend 0x10      [30,60]  c 30  work w0 20 + w1 30 = 50
      MPI_Isend 0x11      [5,25]   c 20  work w0 15 + w1 5  = 20
      MPI_Iallreduce 0x10 [70,90]  c 20  work w1 10         = 10   (same id, another kind)
      MPI_Isend 0x10      [85,95]  c 10  work 0                    (id reused)
    Isend: 3 requests, C 60, W 70, ratio 70 / (2 * 60); Iallreduce: 1, C 20, W 10, ratio 10 / 40;
    total: 4, C 80, W 80, ratio 0.5. A GPU interval and a mark are not communication."""
    t = TraceBuilder(workers=2, end_ns=100)
    k = t.kind("compute")
    isend = t.kind("MPI_Isend", 1)
    allreduce = t.kind("MPI_Iallreduce", 1)
    memcpy = t.kind("cudaMemcpyAsync", 2)
    phase = t.kind("phase", 3)
    A, B = 0x1, 0x2
    t.simple_task(0, A, k, 0, 10, 50)
    t.simple_task(0, B, k, 1, 20, 80, run_on=1)
    t.interval_end(NON_WORKER, 60, 0x10, isend, 99)
    t.interval_begin(0, 30, 0x10, isend, 1)
    t.interval_begin(NON_WORKER, 5, 0x11, isend)
    t.interval_end(1, 25, 0x11, isend)
    t.interval_end(NON_WORKER, 90, 0x10, allreduce)
    t.interval_begin(1, 70, 0x10, allreduce)
    t.interval_begin(0, 85, 0x10, isend)
    t.interval_end(0, 95, 0x10, isend)
    t.interval_begin(1, 40, 0x5, memcpy)
    t.interval_end(NON_WORKER, 45, 0x5, memcpy)
    t.mark(0, 50, phase, 7)
    t.poll(NON_WORKER, 60, 0, 1)
    return t, {"overlap": {"MPI_Isend": (3, 60, 70), "MPI_Iallreduce": (1, 20, 10)}, "total": (4, 80, 80),
               "intervals": 5}


def dropped():
    """A chain of two tasks on one worker whose buffers lost 5 + 2 events."""
    t, _ = chain()
    t.dropped = {0: 5, NON_WORKER: 2}
    return t, {"dropped": 7}


def mpi_run(machines=1):
    """Three MPI ranks of one run, one trace each, listed out of rank order (r2, r0, r1).

    r0: the `communication` scenario (2 workers, 100 ns), start_ns 1_000_000, pid 100.
    r1: 1 worker, 80 ns, start_ns 1_000_030, pid 101. Task A [0,40]; MPI_Isend [10,30] (4096 bytes
        to rank 0: end value 1), c 20, w 20; MPI_Recv [50,70] (from anyone: end value 0), c 20, w 0.
    r2: 2 workers, 50 ns, start_ns 1_000_010, pid 102; no communication; a task on each worker.

    One machine: offsets 0, 30, 10 (the spans [0,100], [30,110], [10,60] meet); the run's wall
    time is 110. All ranks: MPI_Isend 4 requests, C 60 + 20 = 80, W 70 + 20 = 90, workers x C =
    2 * 60 + 1 * 20 = 140; MPI_Iallreduce 1, 20, 10, 40; MPI_Recv 1, 20, 0, 20; total 6, C 120,
    W 100, workers x C 200, ratio 0.5.

    machines=3: each on its own machine, clocks seconds apart (the spans never meet): offsets 0,
    wall time 100."""
    gap = 0 if machines == 1 else 5_000_000_000
    r0, _ = communication()
    r0.start_ns, r0.pid, r0.rank, r0.ranks = 1_000_000, 100, 0, 3
    r1 = TraceBuilder(workers=1, end_ns=80, pid=101, start_ns=1_000_030 + gap, rank=1, ranks=3)
    k = r1.kind("compute")
    isend, recv = r1.kind("MPI_Isend", 1), r1.kind("MPI_Recv", 1)
    r1.simple_task(0, 0x1, k, 0, 0, 40)
    r1.interval_begin(0, 10, 0x7, isend, 4096)
    r1.interval_end(NON_WORKER, 30, 0x7, isend, 1)
    r1.interval_begin(0, 50, 0x8, recv, 64)
    r1.interval_end(0, 70, 0x8, recv, 0)
    r2 = TraceBuilder(workers=2, end_ns=50, pid=102, start_ns=1_000_010 + 2 * gap, rank=2, ranks=3)
    k = r2.kind("compute")
    r2.simple_task(0, 0x1, k, 0, 5, 25)
    r2.simple_task(0, 0x2, k, 1, 10, 45, run_on=1)
    expected = {"offsets": [0, 30, 10] if machines == 1 else [0, 0, 0], "wall": 110 if machines == 1 else 100,
                "overlap": {"MPI_Isend": (4, 80, 90, 140), "MPI_Iallreduce": (1, 20, 10, 40),
                            "MPI_Recv": (1, 20, 0, 20)},
                "total": (6, 120, 100, 200), "per_rank_total": [(4, 80, 80), (2, 40, 20), (0, 0, 0)]}
    return [r2, r0, r1], expected


def gang_members():
    """Task P (w0, from 2) opens a gang-scheduled region of two members (create flag 8, kind
    "region"): its master M0 (a child of P) starts at 3 on P's context; M1 (a child of M0) is
    offered at 4 and started by w1 at 10. M0 parks at the barrier at 6 (wait kind 7) until 25, M1
    at 20 until 25; M1 ends at 30, M0 at 40, P at 45.

    Durations: P (3-2) + (45-40) = 6, M0 (6-3) + (40-25) = 18, M1 (20-10) + (30-25) = 15.
    Critical path: P weighs 6 + 18 (its master's runs are its own) = 24. Discovery: P alone, 1."""
    t = TraceBuilder(workers=2, end_ns=100)
    kp, kr = t.kind("panel"), t.kind("region")
    P, M0, M1 = 0x100, 0x200, 0x300
    t.create(0, 0, P, 0, kp)
    t.submit(0, 1, P)
    t.ready(0, 1, P)
    t.start(0, 2, P)
    t.create(0, 3, M0, P, kr, MEMBER)
    t.submit(0, 3, M0)
    t.start(0, 3, M0)
    t.create(0, 4, M1, M0, kr, MEMBER)
    t.submit(0, 4, M1)
    t.ready(0, 4, M1)
    t.suspend(0, 6, M0, wait=7)
    t.idle(0, 6, 25)
    t.idle(1, 0, 10)
    t.start(1, 10, M1)
    t.suspend(1, 20, M1, wait=7)
    t.resume(0, 25, M0)
    t.resume(1, 25, M1)
    t.end(1, 30, M1)
    t.idle(1, 30)
    t.end(0, 40, M0)
    t.end(0, 45, P)
    t.idle(0, 45)
    return t, {"durations": {1: 6, 2: 18, 3: 15}, "critical_path": 24}


ALL = {"chain": chain, "gang_members": gang_members, "fork_join": fork_join, "diamond_redirect": diamond_redirect, "recycled": recycled,
       "serial_phases": serial_phases,
       "suspended_elsewhere": suspended_elsewhere, "nested_suspend": nested_suspend,
       "persistent": persistent, "persistent_no_round0": lambda: persistent(False),
       "communication": communication, "dropped": dropped}
