// heat_weft: the 2-D heat equation (heat_kernels.h) on native weft (weft.hpp), the peer of heat_omp.c.
//
//   heat_weft [--method gauss-seidel|jacobi] [--variant V] [-n N] [-b B] [-s S] [-p P] [--no-check]
//
// Variants:
//   weft                     one task per block per sweep (weft::spawn with weft::in/out/inout), no
//                            barrier between sweeps, one taskwait at the end.
//   weft-persistent          the same loop in a persistent graph (weft::graph), re-execute mode: the
//                            body runs every sweep and is matched against the recording of the first
//                            round (Jacobi: unroll 2, the arrays swap every sweep).
//   weft-persistent-barrier  the same with options.barrier = 1: each round waits for the previous one
//                            (Jacobi: a round is 2 sweeps).
//   weft-taskiter            taskiter mode: the body runs for one round only (Gauss-Seidel 1 sweep,
//                            Jacobi 2), recorded, and weft_graph_end replays it for the other sweeps.
//   serial                   the row-major blocked sweep on one thread (baseline; no tasks).
//   serial-random            one thread, blocks in a random dependence-respecting order (checks that
//                            any such order gives the serial bits).
//
// Gauss-Seidel tasks: inout(own block), in(north, south, west, east blocks); Jacobi: out(new block),
// in(old block and its 4 neighbours in the old array). A neighbour outside the grid is named by the
// block itself (weft merges an address named twice into its strongest access), so every task has the
// same accesses. -p P sets WEFT_NUM_THREADS before weft_init. The serial reference runs after the
// timed solve; error= is the largest difference to it, which must be 0.
#include <weft/weft.h>
#include <weft/weft.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "app_common.h"
#include "heat_kernels.h"

namespace {

const char* const variants[] = {
    "weft", "weft-persistent", "weft-persistent-barrier", "weft-taskiter", "serial", "serial-random", nullptr};
enum { V_WEFT, V_PERSISTENT, V_PERSISTENT_BARRIER, V_TASKITER, V_SERIAL, V_SERIAL_RANDOM };

// The bytes a block spans in its array (informative: traces).
std::size_t block_bytes(const gk_grid& g) {
  return sizeof(double) * ((static_cast<std::size_t>(g.b) - 1) * g.stride + static_cast<std::size_t>(g.b));
}

// Runs sweep(k) for k = 0 .. sweeps-1 as the variant asks, and waits for every task.
template <class Sweep>
void run_sweeps(int variant, int unroll, long sweeps, Sweep&& sweep) {
  if (variant == V_WEFT) {
    for (long k = 0; k < sweeps; ++k) sweep(k);
    weft::taskwait();
    return;
  }
  weft_graph_options_t o{};
  o.mode = variant == V_TASKITER ? WEFT_GRAPH_TASKITER : WEFT_GRAPH_REEXECUTE;
  o.unroll = unroll;
  o.iterations = variant == V_TASKITER ? sweeps : 0;
  o.barrier = variant == V_PERSISTENT_BARRIER ? 1 : 0;
  weft::graph graph(o);
  // Taskiter: the body runs for the recorded round only; end() replays it for the rest.
  const long body = variant == V_TASKITER ? std::min<long>(unroll, sweeps) : sweeps;
  for (long k = 0; k < body; ++k) graph.iteration([&] { sweep(k); });
  graph.end();
}

void gs_solve(int variant, const gk_grid* g, double* u, long sweeps) {
  const int nb = g->nb;
  const std::size_t len = block_bytes(*g);
  run_sweeps(variant, 1, sweeps, [&](long) {
    for (int bi = 0; bi < nb; ++bi) {
      for (int bj = 0; bj < nb; ++bj) {
        const double* c = heat_block(g, u, bi, bj);
        const double* no = bi > 0 ? heat_block(g, u, bi - 1, bj) : c;
        const double* so = bi + 1 < nb ? heat_block(g, u, bi + 1, bj) : c;
        const double* we = bj > 0 ? heat_block(g, u, bi, bj - 1) : c;
        const double* ea = bj + 1 < nb ? heat_block(g, u, bi, bj + 1) : c;
        weft::spawn([g, u, bi, bj] { gk_gs_block(g, u, bi, bj); }, weft::inout(c, len), weft::in(no, len),
                    weft::in(so, len), weft::in(we, len), weft::in(ea, len), weft::label("gs-block"));
      }
    }
  });
}

// Sweep k reads (k odd ? b : a) and writes the other; the result is in (sweeps odd ? b : a).
void jacobi_solve(int variant, const gk_grid* g, double* a, double* b, long sweeps) {
  const int nb = g->nb;
  const std::size_t len = block_bytes(*g);
  run_sweeps(variant, 2, sweeps, [&](long k) {
    double* src = (k & 1) ? b : a;
    double* dst = (k & 1) ? a : b;
    for (int bi = 0; bi < nb; ++bi) {
      for (int bj = 0; bj < nb; ++bj) {
        const double* c = heat_block(g, src, bi, bj);
        const double* no = bi > 0 ? heat_block(g, src, bi - 1, bj) : c;
        const double* so = bi + 1 < nb ? heat_block(g, src, bi + 1, bj) : c;
        const double* we = bj > 0 ? heat_block(g, src, bi, bj - 1) : c;
        const double* ea = bj + 1 < nb ? heat_block(g, src, bi, bj + 1) : c;
        weft::spawn([g, dst, src, bi, bj] { gk_jacobi_block(g, dst, src, bi, bj); },
                    weft::out(heat_block(g, dst, bi, bj), len), weft::in(c, len), weft::in(no, len), weft::in(so, len),
                    weft::in(we, len), weft::in(ea, len), weft::label("jacobi-block"));
      }
    }
  });
}

int run(int argc, char** argv) {
  heat_options o;
  heat_parse(&o, argc, argv, "heat_weft", variants);
  const gk_grid* g = &o.grid;
  const int variant = o.variant_index;
  const bool jacobi = o.method == HEAT_JACOBI;
  const bool serial = variant == V_SERIAL || variant == V_SERIAL_RANDOM;

  double* u = gk_alloc(g);
  double* u2 = jacobi ? gk_alloc(g) : nullptr;
  if (!u || (jacobi && !u2)) app_die("heat_weft: out of memory for a %d x %d grid", o.n + 2, o.n + 2);
  gk_init(g, u);
  if (jacobi) gk_init(g, u2);

  int threads = 1;
  if (!serial) {
    if (o.threads > 0) setenv("WEFT_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
    if (int s = weft_init(); s != WEFT_OK) app_die("heat_weft: weft_init: %s", weft_strerror(s));
    threads = weft_num_workers();
  }
  app_weft_reset_stats();

  double t0 = app_now();
  double* result = u;
  if (!jacobi) {
    switch (variant) {
      case V_SERIAL:
        gk_gs_serial(g, u, o.sweeps);
        break;
      case V_SERIAL_RANDOM:
        if (heat_gs_random_order(g, u, o.sweeps, 12345) != 0) app_die("heat_weft: serial-random found no ready block");
        break;
      default:
        gs_solve(variant, g, u, o.sweeps);
        break;
    }
  } else {
    switch (variant) {
      case V_SERIAL:
        gk_jacobi_serial(g, u, u2, o.sweeps);
        break;
      case V_SERIAL_RANDOM:
        if (!heat_jacobi_random_order(g, u, u2, o.sweeps, 12345)) app_die("heat_weft: out of memory");
        break;
      default:
        jacobi_solve(variant, g, u, u2, o.sweeps);
        break;
    }
    result = (o.sweeps & 1) ? u2 : u;
  }
  double seconds = app_now() - t0;
  weft_stats_t st;
  app_weft_stats(&st);

  double error = 0.0;
  bool ok = true;
  double* ref = nullptr;
  if (o.check) {
    // Gauss-Seidel in a fresh array; Jacobi in the array the solve did not end in, and a fresh one.
    ref = gk_alloc(g);
    if (!ref) app_die("heat_weft: out of memory for the reference grid");
    gk_init(g, ref);
    const double* expect = ref;
    if (!jacobi) {
      gk_gs_serial(g, ref, o.sweeps);
    } else {
      double* other = result == u ? u2 : u;
      gk_init(g, other);
      expect = gk_jacobi_serial(g, other, ref, o.sweeps);
    }
    error = heat_max_diff(g, result, expect);
    ok = error == 0.0;
  }

  app_result r{};
  r.app = jacobi ? "heat-jacobi" : "heat-gs";
  r.variant = o.variant;
  r.runtime = "weft";
  r.threads = threads;
  r.size = o.n;
  r.block = o.b;
  r.iters = o.sweeps;
  r.seconds = seconds;
  r.gflops = heat_gflops(&o, seconds);
  r.tasks = serial ? -1 : o.sweeps * static_cast<long long>(g->nb) * g->nb;  // created by the program
  r.edges = serial ? -1 : static_cast<long long>(st.edges_created);
  r.ok = ok;
  r.error = error;
  app_print_result(&r);
  std::free(u);
  std::free(u2);
  std::free(ref);
  if (weft_initialized()) {
    if (int s = weft_finalize(); s != WEFT_OK) app_die("heat_weft: weft_finalize: %s", weft_strerror(s));
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heat_weft: %s\n", e.what());
    return 1;
  }
}
