"""Lab check: pyscan.scan and pyscan.reduce replayed in CUDA graphs beside torch.cumsum and torch.sum replayed the
same way, and compiled functions calling pyscan beside the same functions run eagerly (docs/runtime.md, "CUDA
graphs" and "torch").

Graphs: one graph per (call, dtype, size) holding CALLS back-to-back calls on one input, captured under
torch.cuda.graph after warm-up; a round replays every row's graph once between CUDA events, rounds interleaved
(round r times replay r of every row), the median per call reported, with pyscan's ratio to torch's row.  Compile:
a small function (scan, a reduction, arithmetic) timed eagerly and under torch.compile(fullgraph=True) as host wall
time per call with a synchronize after each batch, the median of rounds.

    python pyscan_tools/lab/graph_replay_vs_torch.py [--sizes 10,12,14,16,18,20] [--dtypes int32,float32]
                                                     [--rounds 15] [--calls 20] [--no-compile] [--no-graphs] [--memset]

--memset adds the row "scan memset": the scan captured with no kept memory (capture.KEPT_MOST = 0), so each call is a
memset node and the kernel with epoch 0, the fallback (pyscan/runtime/capture.py) beside the one-node graph.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402

import pyscan  # noqa: E402
from pyscan.runtime import capture  # noqa: E402

ROWS = {
    "scan": (lambda x: pyscan.scan(x), lambda x: torch.cumsum(x, 0)),
    "reduce": (lambda x: pyscan.reduce(x), lambda x: torch.sum(x)),
    "scan max": (lambda x: pyscan.scan(x, op="max"), lambda x: torch.cummax(x, 0).values),
    "reduce max": (lambda x: pyscan.reduce(x, op="max"), lambda x: torch.amax(x)),
}


def without_kept_memory(fn):
    """fn, captured as when the device's kept memory is used up: a memset node and epoch 0 a scan."""
    def call(x):
        saved, capture.KEPT_MOST = capture.KEPT_MOST, 0
        try:
            return fn(x)
        finally:
            capture.KEPT_MOST = saved
    return call


def captured(fn, x, calls):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = [fn(x) for _ in range(calls)]
    graph.replay()
    torch.cuda.synchronize()
    return graph, outs


def replay_ms(graph):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def graphs(sizes, dtypes, rounds, calls):
    print(f"CUDA-graph replays: {calls} calls per graph, median of {rounds} interleaved rounds, us per call")
    print(f"{'call':<11} {'dtype':<8} {'n':>9} {'pyscan':>9} {'torch':>9} {'ratio':>7}")
    for name, (ours, theirs) in ROWS.items():
        for dtype in dtypes:
            for log2 in sizes:
                n = 1 << log2
                x = torch.randint(-4, 5, (n,), device="cuda").to(getattr(torch, dtype))
                ours_graph, ours_outs = captured(ours, x, calls)
                theirs_graph, _ = captured(theirs, x, calls)
                if name.startswith("scan"):
                    assert torch.equal(ours_outs[-1], theirs(x).to(ours_outs[-1].dtype)), (name, dtype, n)
                times = {"ours": [], "theirs": []}
                for _ in range(rounds):
                    times["ours"].append(replay_ms(ours_graph))
                    times["theirs"].append(replay_ms(theirs_graph))
                a, b = (1000 * statistics.median(times[k]) / calls for k in ("ours", "theirs"))
                print(f"{name:<11} {dtype:<8} {n:>9} {a:>9.2f} {b:>9.2f} {a / b:>7.2f}", flush=True)


def host_us(fn, x, rounds, calls):
    results = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn(x)
        torch.cuda.synchronize()
        results.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(results)


def compiled(sizes, rounds, calls):
    """The same small function with pyscan's calls and with torch's, each eager, compiled (fullgraph) and compiled
    with mode="reduce-overhead" (torch's CUDA graphs): torch.compile's own per-call cost shows in the torch rows."""
    def f(x):
        return pyscan.scan(x) * 2 + pyscan.reduce(x, op="max")

    def g(x):
        return torch.cumsum(x, 0) * 2 + torch.amax(x)

    print(f"\ntorch.compile(fullgraph=True) against eager: host wall time per call, us (median of {rounds} rounds of "
          f"{calls}); the function scan(x) * 2 + reduce(x, max) with pyscan's calls and with torch's")
    print(f"{'n':>9} {'calls':<7} {'eager':>9} {'compiled':>9} {'ratio':>7} {'reduce-overhead':>16}")

    def compiled_pair(fn):
        def f_default(x):  # one code object per compiled mode: two backends on one code object evict each other's
            return fn(x)   # entries on every call (Dynamo's BACKEND_MATCH guard), which times recompiling

        def f_overhead(x):
            return fn(x)

        return (torch.compile(f_default, fullgraph=True, dynamic=False),
                torch.compile(f_overhead, fullgraph=True, dynamic=False, mode="reduce-overhead"))

    torch._dynamo.reset()
    torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, 2 * len(sizes))
    rows = {"pyscan": (f, *compiled_pair(f)), "torch": (g, *compiled_pair(g))}
    for log2 in sizes:
        x = torch.randn(1 << log2, device="cuda")
        for label, fns in rows.items():
            for fn in fns:
                for _ in range(5):
                    fn(x)
            e, c, o = (host_us(fn, x, rounds, calls) for fn in fns)
            print(f"{1 << log2:>9} {label:<7} {e:>9.2f} {c:>9.2f} {c / e:>7.2f} {o:>16.2f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,12,14,16,18,20")
    parser.add_argument("--dtypes", default="int32,float32")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--no-graphs", action="store_true", help="only the compiled-against-eager table")
    parser.add_argument("--memset", action="store_true", help="add the scan's memset fallback as a row")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    if args.memset:
        ours, theirs = ROWS["scan"]
        ROWS["scan memset"] = (without_kept_memory(ours), theirs)
    if not args.no_graphs:
        graphs(sizes, args.dtypes.split(","), args.rounds, args.calls)
    if not args.no_compile:
        compiled(sizes, args.rounds, args.calls)


if __name__ == "__main__":
    main()
