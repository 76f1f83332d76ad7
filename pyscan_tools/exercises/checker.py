"""The checker: compiles -> right on integers -> right on floats -> step by step -> races and memory -> speed,
stopping at the first class of failure with its diagnosis (report.py).  Without a GPU: the compile stage, the
model's steps on the CPU (a picture when asked), and which stages need a GPU."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from . import runners
from .compiling import compile_builds
from .hints import first_wrong, index_hint, scalar_hint
from .registry import get, guess
from .report import FAIL, NEEDS_GPU, PASS, SKIP, STAGES, Report, Stage

SANITIZER_TIMEOUT = 300  # seconds per tool


def resolve(path, exercise):
    """(absolute path, Exercise) of a check; ValueError / FileNotFoundError saying what is missing."""
    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no file {path}")
    if exercise is None:
        found = guess(path)
        if found is None:
            raise ValueError(f"{path.name} has no '// pyscan exercise: NAME' line: name the exercise (--exercise NAME)")
        return path, found
    return path, (get(exercise) if isinstance(exercise, str) else exercise)


def check(path, exercise=None, *, picture=None, sanitize=True, speed=True, gpu=None, quick=False, seed=None,
          isolate=True) -> Report:
    """Check the kernel file `path` against `exercise` (a name; None: read off the file's marker line).

    The stages that run the kernel run in a child process (isolate=True): a kernel that faults (an illegal address
    leaves the CUDA context unusable) or hangs takes that process with it, not the caller's -- a notebook's, or a
    test runner's."""
    path, ex = resolve(path, exercise)
    report = Report(ex.name, str(path))
    for name in STAGES:
        report.stage(name)
    stage = report.stage("compiles")
    ok, lines = compile_builds(path, ex)
    if ok is None:
        stage.status, stage.summary, stage.diagnosis = NEEDS_GPU, lines[0], "no_nvcc"
        return report
    if not ok:
        stage.status, stage.details, stage.diagnosis = FAIL, lines, "compile"
        stage.summary = "nvcc: " + (lines[1] if len(lines) > 1 else "")
        return report
    stage.status, stage.summary = PASS, lines[0]
    if gpu is None:
        from pyscan import gpu_unavailable_reason

        reason = gpu_unavailable_reason()
        gpu = reason is None
    else:
        reason = None if gpu else "not asked to use the GPU"
    if not gpu:
        _without_gpu(report, ex, reason, picture)
        return report
    options = {"picture": picture, "sanitize": sanitize, "speed": speed, "quick": quick,
               "seed": int(time.time()) if seed is None else seed}
    stages = _in_child(str(path), ex.name, options) if isolate else gpu_stages(str(path), ex.name, options)
    report.stages = [stage] + stages
    return report


CHILD_TIMEOUT = 600  # seconds for all the stages that run the kernel (a deadlocked kernel never returns)


def _in_child(path, name, options) -> list:
    """gpu_stages() in a fresh process (spawned: its own CUDA context); what a crash or a hang leaves, reported."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures import TimeoutError as FutureTimeout
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    failure = None
    try:
        return pool.submit(gpu_stages, path, name, options).result(timeout=CHILD_TIMEOUT)
    except BrokenProcessPool:
        failure = ("the process running your kernel died (a crash: an access far outside the arrays, or a "
                   "stack overflow)", "memory")
    except FutureTimeout:
        failure = (f"your kernel did not finish in {CHILD_TIMEOUT} s: a deadlock (a __syncthreads() that not every "
                   "thread of the block reaches) or a loop that never ends", "hang")
        for process in list(getattr(pool, "_processes", {}).values()):  # the executor cannot cancel a running call
            process.kill()
    finally:
        pool.shutdown(wait=failure is None, cancel_futures=True)
    stages = [Stage(n) for n in STAGES[1:]]
    stages[0].status, stages[0].summary, stages[0].diagnosis = FAIL, failure[0], failure[1]
    return stages


def gpu_stages(path, name, options) -> list:
    """The stages after `compiles`, in this process (the child of check(); or directly with isolate=False)."""
    ex = get(name)
    report = Report(ex.name, path)
    for stage_name in STAGES[1:]:
        report.stage(stage_name)
    sanitize, speed = options.get("sanitize", True), options.get("speed", True)
    kwargs = {"quick": options.get("quick", False), "seed": options.get("seed", 0), "picture": options.get("picture")}
    for stage_fn in (_integers, _floats, _steps, _races, _speed):
        if stage_fn is _speed and not speed:
            report.stage("speed").status = SKIP
            continue
        if stage_fn is _races:
            keep_going = _races(report, ex, Path(path), sanitize=sanitize, **kwargs)
        else:
            keep_going = stage_fn(report, ex, Path(path), **kwargs)
        if not keep_going:
            break
    return report.stages


# ---------------------------------------------------------------------------------------------------------------

def _without_gpu(report, ex, reason, picture):
    for name in STAGES[1:]:
        s = report.stage(name)
        s.status = NEEDS_GPU
        s.summary = "runs your kernel" if name != "step by step" else "traces your kernel (the model's steps: below)"
    s = report.stage("step by step")
    model = _model_steps_only(ex)
    if model is not None:
        label, steps = model
        s.details = [f"the model's {len(steps)} steps of {label} (what your TRACE build must show):"]
        s.details += [f"{st.label:28s} {np.asarray(st.values).tolist()}" for st in steps[:12]]
        if picture:
            s.picture = _draw(ex, steps, None, None, picture)
            s.details.append(f"picture of the model's steps: {picture}")
    report.stage("right on integers").details = [f"no GPU here: {reason}"]


def _model_steps_only(ex):
    x = (np.arange(16, dtype=np.int32) % 7 + 1) * (-1 if ex.op == "max" else 1)
    if ex.kind in ("reduce_tree", "reduce_atomic"):
        from pyscan.reductions import steps as reduction_steps

        return "one block of 16 elements", reduction_steps.model_steps(ex.algorithm, x, op=ex.op)
    if ex.kind in ("section_scan", "hierarchical", "blelloch"):
        from pyscan.scans import SCANS

        _, steps = SCANS.get(ex.algorithm).model(x, op=ex.op, exclusive=ex.exclusive, return_steps=True)
        return "one section of 16 elements", steps
    return None


def _value(v):
    return np.asarray(v).item()


def _describe(case, want, got, ok, ex) -> str:
    """One line: the case, how many are wrong, the first wrong index with expected and got."""
    if want.size == 1 and ex.kind in ("reduce_tree", "reduce_atomic"):
        return f"{case.label}: expected {_value(want[0])!r}, got {_value(got[0])!r}"
    bad = int(np.count_nonzero(~ok))
    if bad == 0:
        return f"{case.label}: every value right, but the kernel wrote past the end of the output"
    i, e, g = first_wrong(want.reshape(-1), got.reshape(-1), ok.reshape(-1))
    where = f"index {i}" if want.ndim == 1 else f"cell (row, column) {tuple(int(v) for v in np.unravel_index(i, want.shape))}"
    return f"{case.label}: {bad} of {want.size} wrong; first at {where}: expected {_value(e)!r}, got {_value(g)!r}"


def _hint(case, want, got, ok, ex, result):
    if want.size == 1 and ex.kind in ("reduce_tree", "reduce_atomic"):
        return scalar_hint(want[0], got[0], case.inputs["x"], ex.op)
    block = ex.section if ex.kind in ("section_scan", "hierarchical", "map") else None
    return index_hint(want.reshape(-1), got.reshape(-1), ok.reshape(-1), block=block,
                      guard_written=result.guard_written)


TELLING_N = 1 << 17  # the hint is read off the largest failing case up to this size (small ones say little)


def _run_cases(report, ex, path, cases, stage_name, *, hidden_from=None):
    """Every case of the stage; on failures: the first one in the summary, the sizes that failed and those that
    passed, and the hint read off the most telling failing case (the largest up to TELLING_N elements)."""
    stage = report.stage(stage_name)
    failures, passed = [], []
    for k, case in enumerate(cases):
        if failures and case.n > TELLING_N:
            continue  # after a failure the large cases add no hint, only the risk of a fault
        try:
            result = runners.run(ex, runners.target(ex, path), case)
        except Exception as exc:  # noqa: BLE001 - a launch failure, the student's driver raising: the diagnosis
            if failures:
                break  # the failure found first is the verdict (a fault now leaves the context unusable anyway)
            stage.status, stage.summary = FAIL, f"{case.label}: {type(exc).__name__}: {str(exc)[:300]}"
            stage.diagnosis = "memory" if "ILLEGAL_ADDRESS" in str(exc) or "illegal" in str(exc) else "error"
            if stage.diagnosis == "memory":
                stage.hint = "an out-of-bounds access: run the races-and-memory stage's memcheck (this is fatal: " \
                             "the process's GPU context is gone; fix it and check again)"
            return False
        want, tolerance = runners.expected(ex, case)
        want, got = np.asarray(want), np.asarray(result.got)
        ok = np.asarray(runners.compare(want, got, tolerance))
        if np.all(ok) and not len(result.guard_written):
            passed.append(case)
            continue
        failures.append((k, case, want, got, ok, result, tolerance))
        if len(result.guard_written):
            break  # it writes past its output: stop before a larger case writes past the allocation
    if not failures:
        stage.status, stage.summary = PASS, f"{len(cases)} cases" + (
            f" (n = {', '.join(str(c.n) for c in cases[:14])}{', ...' if len(cases) > 14 else ''})" if cases else "")
        return True
    stage.status = FAIL
    k, case, want, got, ok, result, tolerance = failures[0]
    stage.summary = _describe(case, want, got, ok, ex)
    telling = [f for f in failures if f[1].n <= TELLING_N] or failures[:1]
    k2, case2, want2, got2, ok2, result2, _ = max(telling, key=lambda f: f[1].n)
    stage.hint = _hint(case2, want2, got2, ok2, ex, result2)
    stage.diagnosis = stage.hint.kind if stage.hint is not None else "wrong"
    if case2 is not case:
        stage.details.append(f"the hint is read off {_describe(case2, want2, got2, ok2, ex)}")
    if ex.kind not in ("histogram", "life"):
        stage.details.append(f"wrong at n = {_sizes(f[1] for f in failures)}; right at n = {_sizes(passed) or '-'}")
    else:
        stage.details.append(f"{len(failures)} of {len(cases)} cases wrong: " + "; ".join(f[1].label for f in failures[:3]))
    if not len(result.guard_written) and _changes_between_runs(ex, path, case, got):
        stage.diagnosis = "nondeterministic"
        stage.hint = ("the wrong values change from run to run: a race -- threads read values other threads write in "
                      "the same step (a missing __syncthreads()), or blocks update global memory without atomics")
    elif hidden_from is not None and all(f[0] >= hidden_from for f in failures):
        stage.diagnosis = "special_cased"
        stage.hint = ("right at every listed size, wrong at a size drawn for this check: a kernel must not depend on "
                      "the sizes it is tested at")
    elif tolerance is not None and stage.diagnosis == "scattered":
        stage.details.append("float bound per element: h * eps * sum |x_j| over its inputs, h = the algorithm's "
                             "error depth (pyscan's error_depth)")
        stage.diagnosis = "float_error"
    return False


def _changes_between_runs(ex, path, case, got, runs: int = 3) -> bool:
    """Whether the case, run again, gives other bits than `got` (a race shows so)."""
    for _ in range(runs):
        try:
            again = np.asarray(runners.run(ex, runners.target(ex, path), case).got)
        except Exception:  # noqa: BLE001 - the first failure is already the verdict
            return False
        if not np.array_equal(np.asarray(got).view(np.uint8), again.view(np.uint8)):
            return True
    return False


def _sizes(cases, limit=10) -> str:
    ns = sorted({c.n for c in cases})
    return ", ".join(map(str, ns[:limit])) + (", ..." if len(ns) > limit else "")


def _integers(report, ex, path, *, quick, seed, picture):
    cases = runners.integer_cases(ex, quick=quick, seed=seed)
    listed = len([c for c in cases if "hidden" not in c.label])
    return _run_cases(report, ex, path, cases, "right on integers", hidden_from=listed)


def _floats(report, ex, path, *, quick, seed, picture):
    cases = runners.float_cases(ex, quick=quick)
    if not cases:
        s = report.stage("right on floats")
        s.status, s.summary = SKIP, "integer counts only"
        return True
    return _run_cases(report, ex, path, cases, "right on floats")


def _steps(report, ex, path, *, quick, seed, picture):
    stage = report.stage("step by step")
    compared = []
    for n in runners.STEP_SIZES:
        try:
            found = runners.steps(ex, runners.target(ex, path), n)
        except Exception as exc:  # noqa: BLE001
            stage.status, stage.diagnosis = FAIL, "steps"
            stage.summary = f"the trace build failed: {type(exc).__name__}: {exc}"
            return False
        if found is None:
            stage.status, stage.summary = SKIP, "no step-model for this exercise (its results are checked above)"
            return True
        label, model, traced, used = found
        if len(traced) != len(model):
            stage.status, stage.diagnosis = FAIL, "steps"
            stage.summary = f"your trace has {len(traced)} steps, the model {len(model)}: keep the TRACE hooks in place"
            return False
        for k, (step, values) in enumerate(zip(model, traced)):
            want, got = np.asarray(step.values), np.asarray(values)
            if want.shape != got.shape or not np.array_equal(want, got):
                bad = np.flatnonzero(want != got) if want.shape == got.shape else np.arange(want.size)
                stage.status, stage.diagnosis = FAIL, "steps"
                again = runners.steps(ex, runners.target(ex, path), n)[2]
                racy = any(not np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(traced, again))
                stage.summary = (f"{label} of {n} elements: the results are right, but step {k} ({step.label}) parts "
                                 f"from the model at index {_list(bad)}")
                yours = got[bad[:8]].tolist() if want.shape == got.shape else f"shape {got.shape}"
                stage.details = [f"model: {want[bad[:8]].tolist()}", f"yours: {yours}"]
                stage.hint = ("your kernel gets the right answer another way than the algorithm of the exercise "
                              "(or its TRACE hooks moved): compare the steps")
                if k == 0 and ex.kind != "life" and want.shape == got.shape and bad.size and bad[0] >= used:
                    stage.diagnosis = "memory"
                    stage.summary = (f"{label} of {used} elements: the load puts other values than the identity "
                                     f"past n (at {_list(bad)}): it reads past the end of the input")
                    stage.hint = ("an out-of-bounds read: positions k >= n must hold the identity (op_identity()), "
                                  "not in[base + k] -- the results below n happen to be right, the loads are not")
                if racy:
                    stage.diagnosis = "nondeterministic"
                    stage.hint = ("the trace changes from run to run: a race between the threads of a step (a "
                                  "missing __syncthreads())")
                if True:  # the picture goes into the report (HTML); to a file when asked
                    try:
                        stage.picture = _draw(ex, model, traced, bad, picture, upto=k)
                        if picture:
                            stage.details.append(f"picture: {picture}")
                    except Exception as exc:  # noqa: BLE001 - a picture is a help, never the verdict
                        stage.details.append(f"(no picture: {exc})")
                return False
        compared.append(f"{n}: {len(model)} steps")
    stage.status, stage.summary = PASS, f"{label}: every step equals the model's ({', '.join(compared)})"
    return True


def _list(indices, limit=8):
    shown = ", ".join(str(int(i)) for i in indices[:limit])
    return shown + (", ..." if len(indices) > limit else "")


def _draw(ex, model, traced, bad, save, upto=None):
    """PNG bytes of the model's steps (and, with traced, yours: the diverging boxes outlined in red)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from pyscan.scans.steps import Step

    from ..pictures.visual import MAX_PICTURE_COLUMNS, _row_gaps, draw_step_panels

    last = len(model) if upto is None else min(len(model), upto + 2)
    width = len(np.asarray(model[0].values))
    lo = 0
    if width > 32:  # a window of 32 boxes around the first diverging index
        first = int(bad[0]) if bad is not None and len(bad) else 0
        lo = max(0, min(first - 8, width - 32))
    hi = min(width, lo + min(32, MAX_PICTURE_COLUMNS))

    def window(steps_values, labels, edges_of):
        out = []
        for values, label, edges in zip(steps_values, labels, edges_of):
            values = np.asarray(values)
            if values.size != width:
                values = np.resize(values, width)
            kept = [(s - lo, d - lo) for s, d in edges if lo <= s < hi and lo <= d < hi]
            out.append(Step(label, values[lo:hi].copy(), kept))
        return out

    labels = [s.label for s in model[:last]]
    edges = [s.edges if len(np.asarray(s.values)) == width else [] for s in model[:last]]
    panels = [("the model" + (f" (elements {lo}..{hi - 1})" if lo or hi < width else ""),
               window([s.values for s in model[:last]], labels, edges))]
    if traced is not None:
        panels.append(("your kernel (red: where it parts from the model)", window(traced[:last], labels, edges)))
    fig = draw_step_panels(panels, suptitle=f"exercise {ex.name}")
    if traced is not None:
        ax = fig.axes[-1]
        mine = panels[-1][1]
        gaps = _row_gaps(mine)
        ys = [0.0]
        for g in gaps:
            ys.append(ys[-1] - g)
        for r, (step, values) in enumerate(zip(model[:last], traced[:last])):
            want, got = np.asarray(step.values), np.asarray(values)
            if want.shape != got.shape:
                continue
            for i in np.flatnonzero(want[lo:hi] != got[lo:hi]):
                ax.add_patch(Rectangle((i - 0.48, ys[r] - 0.4), 0.96, 0.8, fill=False, edgecolor="red", linewidth=2.2,
                                       zorder=5))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    if save:
        Path(save).write_bytes(buf.getvalue())
    plt.close(fig)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------------------------
# Races and memory.

_LOCATION_RE = re.compile(r"\bin (\S+?\.cuh?):(\d+)")


def _repeat_runs(ex, path):
    """The largest quick integer case run REPEATS times: (case label, the first run that differed) or None."""
    cases = runners.integer_cases(ex, quick=True)
    case = max(cases, key=lambda c: c.n)
    first = runners.run(ex, runners.target(ex, path), case).got
    for r in range(1, runners.REPEATS):
        again = runners.run(ex, runners.target(ex, path), case).got
        if not np.array_equal(np.asarray(first).view(np.uint8), np.asarray(again).view(np.uint8)):
            return case.label, r
    return None


def sanitizer_cases(ex) -> list:
    """The few small cases each sanitizer tool runs (the tools are slow: every access is checked)."""
    cases = runners.integer_cases(ex, quick=True)
    if ex.kind == "histogram":
        return [c for c in cases if c.n in (33, 257, 769)][:6]
    if ex.kind == "life":
        return [c for c in cases if c.inputs["iters"] == 2][:4]
    s = ex.section or 1024
    wanted = {1, 33, s + 1, 3 * s} if ex.kind != "map" else {33, 10_000, 3 * s + 1}
    return [c for c in cases if c.n in wanted and "hidden" not in c.label][:4]


def _run_tool(tool, sanitizer, path, ex, log_dir):
    from ..check.sanitizer import TOOL_OPTIONS, parse_sanitizer_output
    from ..check.workers import child_env

    log = Path(log_dir) / f"{tool}.log"
    cmd = [sanitizer, "--tool", tool, "--error-exitcode", "1", *TOOL_OPTIONS.get(tool, []), sys.executable, "-m",
           "pyscan_tools.exercises.worker", str(path), ex.name]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), timeout=SANITIZER_TIMEOUT)
        text = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        text = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        text += f"\n[checker] stopped at {SANITIZER_TIMEOUT} s"
    log.write_text(text)
    return tool, parse_sanitizer_output(tool, text), text, str(log)


def _locations(text, path) -> list:
    """'file:line: source' of the report lines that name the student's file (else any .cu file), in order."""
    found = []
    for file, line in _LOCATION_RE.findall(text):
        key = f"{file}:{line}"
        if key not in found:
            found.append(key)
    own = [k for k in found if Path(k.rsplit(":", 1)[0]).name == Path(path).name]
    shown = own or found
    out = []
    for key in shown[:4]:
        file, line = key.rsplit(":", 1)
        if not Path(file).is_file() and Path(file).name == Path(path).name:  # the tools print the file's name only
            file = str(path)
        try:
            source = Path(file).read_text().splitlines()[int(line) - 1].strip()
        except (OSError, IndexError, ValueError):
            source = ""
        out.append(f"{key}: {source}")
    return out


def _races(report, ex, path, *, quick=False, seed=0, picture=None, sanitize=True):
    stage = report.stage("races and memory")
    differed = _repeat_runs(ex, path)
    if differed:
        stage.status, stage.diagnosis = FAIL, "nondeterministic"
        stage.summary = f"{differed[0]}: run {differed[1] + 1} of {runners.REPEATS} differs from the first, bit for bit"
        stage.hint = "a race: threads read values other threads write in the same step (a missing barrier, or a " \
                     "global-memory race across blocks)"
        return False
    if not sanitize:
        stage.status, stage.summary = SKIP, f"{runners.REPEATS} repeated runs equal bit for bit; sanitizer not asked for"
        return True
    from ..check.sanitizer import find_compute_sanitizer

    sanitizer = find_compute_sanitizer()
    if sanitizer is None:
        stage.status, stage.summary = SKIP, (f"{runners.REPEATS} repeated runs equal bit for bit; compute-sanitizer "
                                             "not found (it ships with the CUDA toolkit)")
        return True
    tools = ("memcheck", "racecheck", "synccheck", "initcheck")
    with tempfile.TemporaryDirectory(prefix="pyscan-exercise-sanitizer-") as log_dir:
        with ThreadPoolExecutor(max_workers=len(tools)) as pool:
            results = list(pool.map(lambda t: _run_tool(t, sanitizer, path, ex, log_dir), tools))
    classes = {"memcheck": "memory", "initcheck": "memory", "racecheck": "race", "synccheck": "race"}
    hints = {"memory": "an access outside the arrays (memcheck) or a read of memory nobody wrote (initcheck): the "
                       "bounds of your loads and stores",
             "race": "threads of one block touch one shared element in one step without a barrier between: "
                     "__syncthreads() (PMPP §11.2)"}
    for tool, parsed, text, _ in results:
        if parsed.errors is None and "[checker] stopped" in text:
            stage.status, stage.diagnosis = FAIL, classes[tool]
            stage.summary = f"{tool}: did not finish in {SANITIZER_TIMEOUT} s"
            return False
        if not parsed.clean:
            stage.status, stage.diagnosis = FAIL, classes[tool]
            hazards = (f", {parsed.hazard_errors} error / {parsed.hazard_warnings} warning hazard(s)"
                       if parsed.hazards is not None else "")
            stage.summary = f"{tool}: {parsed.errors} error(s){hazards}"
            stage.details = parsed.first_reports[:3] + [f"at {loc}" for loc in _locations(text, path)]
            if parsed.errors is None:
                stage.details += text.strip().splitlines()[-6:]
            stage.hint = hints[classes[tool]]
            return False
    for tool, _parsed, text, _ in results:
        if "worker: FAILED" in text or "worker: done" not in text:
            stage.status, stage.diagnosis = FAIL, "nondeterministic"
            stage.summary = f"{tool} reports nothing, but under it your kernel gave a wrong result (or stopped)"
            stage.details = [line for line in text.splitlines() if line.startswith(("wrong", "error"))][:4]
            stage.hint = "a result that depends on timing: a race the tools do not see (global memory, atomics)"
            return False
    stage.status = PASS
    stage.summary = f"{runners.REPEATS} repeated runs equal bit for bit; memcheck, racecheck, synccheck, initcheck clean"
    return True


# ---------------------------------------------------------------------------------------------------------------
# Speed: beside the book's kernel, the fast one and a device copy.

def _speed(report, ex, path, *, quick, seed, picture):
    stage = report.stage("speed")
    try:
        rows = timings(ex, path)
    except Exception as exc:  # noqa: BLE001 - timings inform, they are not the verdict
        stage.status, stage.summary = SKIP, f"not timed: {type(exc).__name__}: {str(exc)[:200]}"
        return True
    copy = rows.get("device copy")
    stage.status = PASS
    parts = [f"{name} {ms * 1e3:.0f} us" + (f" ({ms / copy:.1f}x copy)" if copy else "") for name, ms in rows.items()]
    stage.summary = f"n = {runners.speed_n(ex):,}: " + "; ".join(parts)
    return True


def timings(ex, path) -> dict:
    """Median ms per launch, on inputs already on the device: yours, the book's (the worked solution), the fast
    kernel and a device-to-device copy of the input."""
    from pyscan.timing import median_ms

    n = runners.speed_n(ex)
    case = (runners.histogram_cases(ex)[-3] if ex.kind == "histogram" else
            runners.life_cases(ex)[-1] if ex.kind == "life" else runners.make_case(ex, n, np.int32))
    yours, _ = runners.prepare(ex, runners.target(ex, path), case)
    book, _ = runners.prepare(ex, None, case)
    rows = {"yours": median_ms(yours, repeat=7, warmup=2), "the book's": median_ms(book, repeat=7, warmup=2)}
    fast = _fast(ex, case)
    if fast is not None:
        rows["fast"] = median_ms(fast, repeat=7, warmup=2)
    copy = _copy(case)
    if copy is not None:
        rows["device copy"] = median_ms(copy, repeat=7, warmup=2)
    return rows


def _fast(ex, case):
    """A launch of the project's fastest kernel for the pattern on the same input, already on the device."""
    from pyscan.runtime.arrays import Call

    call = Call.tool()
    if ex.kind in ("section_scan", "hierarchical", "blelloch", "segmented_scan"):
        from pyscan.scans import SCANS

        x = call.to_device(case.inputs["x"])
        out = call.empty((x.size,), x.dtype)
        algorithm = SCANS.get(SCANS.choose(x.size))
        return lambda: algorithm.driver(x, out, op=ex.op, exclusive=ex.exclusive, call=call)
    if ex.kind in ("reduce_tree", "reduce_atomic"):
        from pyscan.reductions import REDUCTIONS

        x = call.to_device(case.inputs["x"])
        algorithm = REDUCTIONS.get(REDUCTIONS.choose(x.size))
        return lambda: algorithm.launch(x, op=ex.op, call=call)
    if ex.kind == "histogram":
        from pyscan.histograms import HISTOGRAMS

        data, bins = call.to_device(case.inputs["data"]), case.inputs["bins"]
        algorithm = HISTOGRAMS.get(HISTOGRAMS.choose(data.size))
        return lambda: algorithm.driver(data, bins, call=call)
    return None


def _copy(case):
    from pyscan.runtime.arrays import Call

    call = Call.tool()
    host = case.inputs.get("x", case.inputs.get("data", case.inputs.get("lattice")))
    x = call.to_device(host)
    out = call.empty(host.shape, host.dtype)
    return lambda: call.copy(out, x, host.nbytes)


__all__ = ["check", "resolve", "sanitizer_cases", "timings"]
