"""Lab probe: small arrays scanned as ONE tile of a bigger block (no tile counter, no status, no look-back) against
the shipped SMALL tiles, replayed in CUDA graphs beside torch.cumsum (float32 into float32, int32 into int64).

    python pyscan_tools/lab/one_tile_probe.py [--rounds 15] [--calls 20]
"""
import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402

import pyscan  # noqa: E402
from pyscan.scans import decoupled_lookback as dl  # noqa: E402

VARIANTS = {  # name -> {element size: Config} used as SMALL (one tile when n fits it)
    "shipped": None,
    "512x4": {4: dl.Config(threads=512, vecs=4, min_blocks=1), 8: dl.Config(threads=512, vecs=4, min_blocks=1)},
    "512x8": {4: dl.Config(threads=512, vecs=8, min_blocks=1), 8: dl.Config(threads=512, vecs=8, min_blocks=1)},
    "1024x4": {4: dl.Config(threads=1024, vecs=4, min_blocks=1), 8: dl.Config(threads=1024, vecs=4, min_blocks=1)},
}


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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    shipped = dict(dl.SMALL)
    cases = [(dtype, n) for dtype in ("float32", "int32") for n in (2**12, 2**13, 2**14, 2**15, 2**16)]
    graphs = {}  # (dtype, n) -> {row: graph}
    for dtype, n in cases:
        x = torch.randint(-4, 5, (n,), device="cuda").to(getattr(torch, dtype))
        expected = torch.cumsum(x, 0)
        rows = {"torch": captured(lambda x: torch.cumsum(x, 0), x, args.calls)[0]}
        for name, table in VARIANTS.items():
            dl.SMALL.clear()
            dl.SMALL.update(table or shipped)
            dl._plans.clear()
            size = dl.element_size(dtype, dl.result_dtype(dl.np.dtype(dtype), "add"))
            tile = dl._tile(dl.SMALL[size], size)
            if table is not None and n > tile:
                continue  # one tile only
            graph, outs = captured(lambda x: pyscan.scan(x), x, args.calls)
            assert torch.equal(outs[-1], expected), (name, dtype, n)
            rows[f"{name}{' (1 tile)' if n <= tile else ''}"] = graph
        graphs[(dtype, n)] = (x, rows)
    dl.SMALL.clear()
    dl.SMALL.update(shipped)
    dl._plans.clear()
    print(f"CUDA-graph replays, {args.calls} calls per graph, median of {args.rounds} interleaved rounds, us per call")
    for (dtype, n), (_, rows) in graphs.items():
        times = {name: [] for name in rows}
        for _ in range(args.rounds):
            for name, graph in rows.items():
                times[name].append(replay_ms(graph))
        line = "  ".join(f"{name} {1000 * statistics.median(t) / args.calls:6.2f}" for name, t in times.items())
        print(f"{dtype:<8} {n:>7}  {line}", flush=True)


if __name__ == "__main__":
    main()
