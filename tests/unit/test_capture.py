"""CUDA-graph capture without a GPU (docs/runtime.md, "CUDA graphs"): what a call does when its stream is capturing,
with the driver's calls replaced by recorders.  The kept-state kernels (the decoupled look-back scan, the axis scans,
the fast reduction) take a zeroed buffer of their own with epoch 0 and leave the stream's kept buffer and its epoch
alone; waits, host copies and first-use uploads raise CaptureError before anything is enqueued; eager calls are as
before.  The launcher's cuStreamIsCapturing is in tests/unit/test_launcher.py; real captures in
tests/gpu/test_graphs_gpu.py."""

import numpy as np
import pytest

import pyscan
from pyscan.errors import CaptureError
from pyscan.reductions import fast
from pyscan.runtime import capture, driver, loader
from pyscan.scans import axis as axis_scan
from pyscan.scans import decoupled_lookback as dl

STREAM = 0x5CA9  # a stream handle no other test uses (the kept buffers are per (device, stream))


class Recorder:
    """The driver calls a launch makes, in order: allocations (alive or freed), memsets, launches."""

    def __init__(self, monkeypatch, capturing=()):
        self.events, self.capturing = [], set(capturing)
        recorder = self

        class Allocation:
            count = 0

            def __init__(self, nbytes):
                Allocation.count += 1
                self.address, self.nbytes, self.alive = 0x100000 * Allocation.count, nbytes, True
                recorder.events.append(("allocate", self.address, nbytes))

            def __del__(self):
                recorder.events.append(("free", self.address))

        monkeypatch.setattr(driver, "_capturing", lambda handle: 1 if handle in recorder.capturing else 0)
        monkeypatch.setattr(driver, "allocate", lambda nbytes, device, stream: Allocation(nbytes))
        monkeypatch.setattr(driver, "memset32", lambda address, value, words, stream:
                            self.events.append(("memset", address, words, stream)))
        monkeypatch.setattr(driver, "enter", lambda ordinal, keep_any_on_device=False: -1)
        monkeypatch.setattr(driver, "leave", lambda previous: None)
        # the plans' prepared calls: the C launcher with the kernel's handle (here its name)
        monkeypatch.setattr(loader, "launch_raw", lambda context, function, stream, geometry, types, *args:
                            self.events.append(("launch", function, stream, args)) or 0)

    def kernel(self, name="kernel"):
        recorder = self

        class Kernel:
            function, arg_types = name, "PPPPq"

            def launch_typed(self, context, stream, geometry, *args):
                recorder.events.append(("launch", name, stream, args))

            def config(self, grid, block, shared=0):
                return (grid, 1, 1, block, 1, 1, shared)

        return Kernel()

    def names(self):
        return [event[0] for event in self.events]

    def launches(self):
        return [event for event in self.events if event[0] == "launch"]


class FakeScanPlan:
    def __init__(self, kernel):
        self.kernel, self.tile, self.most_blocks, self.block, self.shared = kernel, 8192, 396, 256, 0
        self.one_tile, self.status_size = kernel.config(1, 256), 4


@pytest.fixture
def scan_plan(monkeypatch):
    def install(recorder):
        plan = FakeScanPlan(recorder.kernel("decoupled_lookback"))
        monkeypatch.setattr(dl, "plan", lambda *key: plan)
        monkeypatch.setattr(dl, "_plans", {})
        return plan

    yield install
    for workspace in dl._status.values():
        workspace._buffers.pop((0, STREAM), None)


def _scan(n):
    dl.launch(0x9000000, 0x8000000, n, np.dtype(np.int32), "add", False, 0, STREAM, 0)


def test_an_eager_scan_uses_the_streams_kept_buffer_and_the_next_epoch(monkeypatch, scan_plan):
    recorder = Recorder(monkeypatch)
    scan_plan(recorder)
    _scan(5 * 8192)
    _scan(5 * 8192)
    launches = recorder.launches()
    assert [launch[3][-1] for launch in launches] == [1, 2]  # the epochs 1, 2
    assert recorder.names().count("allocate") == 1 and recorder.names().count("memset") == 1  # zeroed once
    kept = dl._status[4].kept(0, STREAM)
    assert launches[0][3][4] == launches[1][3][4] == kept.address and kept.state == 2


def test_a_captured_scan_takes_its_own_zeroed_buffer_and_epoch_0(monkeypatch, scan_plan):
    recorder = Recorder(monkeypatch)
    scan_plan(recorder)
    monkeypatch.setattr(capture, "_kept", {})  # no kept memory (a GPU run's plans made some)
    _scan(5 * 8192)  # eager first: the stream's kept buffer exists, epoch 1
    kept = dl._status[4].kept(0, STREAM)
    recorder.events.clear()
    recorder.capturing.add(STREAM)
    _scan(5 * 8192)
    _scan(3 * 8192)
    assert recorder.names() == ["allocate", "memset", "launch", "free"] * 2, recorder.events
    for i, tiles in ((0, 5), (4, 3)):
        (_, address, nbytes), (_, zeroed, words, stream), launch = recorder.events[i:i + 3]
        assert zeroed == address and stream == STREAM and words * 4 == 8 * (2 + tiles) <= nbytes
        status, epoch = launch[3][4], launch[3][-1]
        assert status == address and epoch == 0 and status != kept.address
    assert kept.state == 1  # the kept buffer's epoch is not advanced by captured calls
    recorder.capturing.clear()
    recorder.events.clear()
    _scan(5 * 8192)  # eager again: the kept buffer, the next epoch
    assert recorder.launches()[0][3][4] == kept.address and recorder.launches()[0][3][-1] == 2


def test_a_captured_scan_takes_kept_status_and_the_device_epoch_and_no_memset(monkeypatch, scan_plan):
    # the kernel reads its epoch from the kept words and its last block advances it, so one launch serves every replay
    recorder = Recorder(monkeypatch, capturing={STREAM})
    scan_plan(recorder)
    monkeypatch.setattr(capture, "_kept", {0: [type("Bytes", (), {"address": 0x5000})(), 0]})
    _scan(5 * 8192)
    _scan(3 * 8192)
    assert recorder.names() == ["launch", "launch"], recorder.events
    first, second = recorder.launches()
    assert first[3][4:6] == (0x5000, 0x5010) and first[3][-1] == dl.EPOCH_ON_DEVICE  # counter, then the status words
    assert second[3][4] == 0x5000 + 64 and second[3][-1] == dl.EPOCH_ON_DEVICE  # the next piece (56 bytes, 16-aligned)
    assert dl._status[4].kept(0, STREAM) is None  # the stream's eager buffer is not made
    # a scan whose status is more than KEPT_MOST bytes, or finds too few left, zeroes a buffer of its own again
    recorder.events.clear()
    _scan(8192 * (capture.KEPT_MOST // 8))
    capture._kept[0][1] = capture.KEPT_BYTES - 16
    _scan(5 * 8192)
    assert recorder.names() == ["allocate", "memset", "launch", "free"] * 2, recorder.events
    assert all(launch[3][-1] == 0 for launch in recorder.launches())


def test_kept_pieces_are_16_byte_aligned_and_never_given_twice(monkeypatch):
    monkeypatch.setattr(capture, "_kept", {0: [type("Bytes", (), {"address": 0x5000})(), 0]})
    pieces = [capture.kept(nbytes, 0) for nbytes in (8, 24, 16, 1)]
    assert pieces == [0x5000, 0x5010, 0x5030, 0x5040]
    assert capture.kept(capture.KEPT_MOST + 1, 0) is None and capture.kept(8, 1) is None  # too large; no device 1


def test_a_captured_one_tile_scan_is_one_launch(monkeypatch, scan_plan):
    recorder = Recorder(monkeypatch, capturing={STREAM})
    scan_plan(recorder)
    _scan(1000)
    assert recorder.names() == ["launch"]


def test_a_captured_fast_reduction_zeroes_only_its_counter(monkeypatch):
    recorder = Recorder(monkeypatch, capturing={STREAM})
    kernel = recorder.kernel("reduce_fast")
    monkeypatch.setattr(capture, "_kept", {})  # no kept memory (a GPU run's plans made some)
    fast._launch(kernel, 132, 0x7000, 0x8000, 1 << 20, 8, 0, STREAM, 0)
    assert recorder.names() == ["allocate", "memset", "launch", "free"]
    (_, address, nbytes), (_, zeroed, words, _), launch = recorder.events[:3]
    assert nbytes >= fast.PARTIALS_OFFSET + 132 * 8 and zeroed == address and words == fast.PARTIALS_OFFSET // 4
    assert launch[3][1] == address + fast.PARTIALS_OFFSET and launch[3][2] == address
    assert fast._workspace.kept(0, STREAM) is None


def test_a_captured_fast_reduction_takes_a_kept_zero_counter_and_no_memset(monkeypatch):
    # the kernel's last block puts the counter back to zero, so a word zeroed once serves every replay of one graph
    recorder = Recorder(monkeypatch, capturing={STREAM})
    kernel = recorder.kernel("reduce_fast")
    monkeypatch.setattr(capture, "_kept", {0: [type("Bytes", (), {"address": 0x5000})(), 0]})
    fast._launch(kernel, 132, 0x7000, 0x8000, 1 << 20, 8, 0, STREAM, 0)
    fast._launch(kernel, 132, 0x7000, 0x8000, 1 << 20, 8, 0, STREAM, 0)
    assert recorder.names() == ["allocate", "launch", "free"] * 2  # partials only: no memset node
    first, second = recorder.launches()
    assert first[3][2] == 0x5000 and second[3][2] == 0x5010  # a piece each, for good
    assert first[3][1] == recorder.events[0][1] and recorder.events[0][2] >= 132 * 8
    capture._kept[0][1] = capture.KEPT_BYTES  # every piece given: the memset of a counter of its own again
    recorder.events.clear()
    fast._launch(kernel, 132, 0x7000, 0x8000, 1 << 20, 8, 0, STREAM, 0)
    assert recorder.names() == ["allocate", "memset", "launch", "free"]


def test_a_prepared_launch_that_fails_goes_again_through_launch_typed_which_raises(monkeypatch, scan_plan):
    # the plans call the C launcher with everything ready; on an error code they call Kernel.launch_typed with the
    # same arguments, which launches again and raises naming the launch (here the fake records it)
    recorder = Recorder(monkeypatch)
    monkeypatch.setattr(loader, "launch_raw", lambda *args: 719)  # CUDA_ERROR_LAUNCH_FAILED
    fast._launch(recorder.kernel("reduce_fast"), 1, 0x7000, 0x8000, 100, 8, 0, STREAM, 0)
    scan_plan(recorder)
    _scan(1000)
    assert recorder.launches() == [("launch", "reduce_fast", STREAM, (0x7000, 0, 0, 0x8000, 100)),
                                   ("launch", "decoupled_lookback", STREAM,
                                    (0x9000000, 0x8000000, 1000, False, 0, 0, 1, 0))]


def test_kept_memory_is_made_once_and_not_while_the_legacy_stream_is_forbidden(monkeypatch):
    recorder = Recorder(monkeypatch)
    monkeypatch.setattr(driver, "synchronize", lambda stream: recorder.events.append(("synchronize", stream)))
    monkeypatch.setattr(capture, "_kept", {})
    monkeypatch.setattr(driver, "_capturing", lambda handle: -906)  # a blocking stream captures: nothing on stream 0
    capture.prepare_kept(0)
    assert recorder.events == [] and capture.kept(8, 0) is None
    monkeypatch.setattr(driver, "_capturing", lambda handle: 0)
    capture.prepare_kept(0)
    capture.prepare_kept(0)
    assert recorder.names() == ["allocate", "memset", "synchronize"]
    assert recorder.events[0][2] == capture.KEPT_BYTES and recorder.events[1][2:] == (capture.KEPT_BYTES // 4, 0)
    assert capture.kept(8, 0) == recorder.events[0][1]


def test_a_captured_axis_scan_takes_its_own_status(monkeypatch):
    recorder = Recorder(monkeypatch, capturing={STREAM})
    base, epoch, owner = axis_scan._next_status(40, 8, 0, STREAM)
    assert epoch == 0 and base == owner.address and recorder.names() == ["allocate", "memset"]
    assert axis_scan._status[8].kept(0, STREAM) is None


def test_torch_scratch_comes_from_torchs_pool_when_torch_captures_on_the_stream(monkeypatch):
    """capture.scratch: torch.empty when torch's current stream is the one capturing (its graph pool), else the
    stream-ordered pool."""
    made = []

    class FakeTorch:
        uint8 = "uint8"

        class cuda:
            @staticmethod
            def is_initialized():
                return True

            @staticmethod
            def current_stream(device):
                return type("S", (), {"cuda_stream": STREAM})()

            @staticmethod
            def is_current_stream_capturing():
                return True

        @staticmethod
        def device(kind, index):
            return (kind, index)

        @staticmethod
        def empty(n, dtype, device):
            made.append((n, dtype, device))
            return type("T", (), {"data_ptr": lambda self: 0xABC00})()

    monkeypatch.setitem(__import__("sys").modules, "torch", FakeTorch)
    buffer = capture.scratch(100, 0, STREAM)
    assert buffer.address == 0xABC00 and made == [(112, "uint8", ("cuda", 0))]
    recorder = Recorder(monkeypatch)
    other = capture.scratch(100, 0, STREAM + 1)  # torch captures elsewhere: pyscan's pool
    assert recorder.names() == ["allocate"] and other.address == recorder.events[0][1]


def test_waits_and_host_copies_raise_before_anything_is_enqueued(monkeypatch):
    monkeypatch.setattr(driver, "_capturing", lambda handle: 1 if handle == STREAM else 0)

    class NoDriver:
        def __getattr__(self, name):
            raise AssertionError(f"{name} was called under capture")

    monkeypatch.setattr(driver, "_cu", NoDriver())
    with pytest.raises(CaptureError, match="waiting for the stream cannot be captured"):
        driver.synchronize(STREAM)
    with pytest.raises(CaptureError, match="copying host memory to the device"):
        driver.copy_htod(0x1000, 0x2000, 16, STREAM)
    with pytest.raises(CaptureError, match="copying a device result to host memory"):
        driver.copy_dtoh(0x2000, 0x1000, 16, STREAM)


def test_the_legacy_stream_during_a_blocking_capture_is_refused(monkeypatch):
    monkeypatch.setattr(driver, "_capturing", lambda handle: -906)
    with pytest.raises(CaptureError, match="legacy default stream"):
        driver.capturing(0)


def test_a_thread_with_no_current_context_asks_again_in_the_devices(monkeypatch):
    # cuStreamIsCapturing of the legacy stream from a worker thread's first call: CUDA_ERROR_INVALID_CONTEXT, then the
    # answer once the device's primary context is current (tests/gpu/test_interop_gpu.py, the thread pool)
    current = []
    monkeypatch.setattr(driver, "_capturing", lambda handle: 0 if current else -201)
    monkeypatch.setattr(driver, "enter", lambda ordinal, keep_any_on_device=False: current.append(ordinal) or -1)
    monkeypatch.setattr(driver, "leave", lambda previous: current.clear())
    assert driver.capturing(0, 0) is False and current == []
    monkeypatch.setattr(driver, "_cu", pytest.importorskip("cuda.bindings.driver"))  # names the error's code
    with pytest.raises(driver.CudaError, match="INVALID_CONTEXT"):
        driver.capturing(0)  # no device to ask in: the error, not a guess


def test_a_histograms_first_upload_under_capture_says_to_warm_up(monkeypatch):
    from pyscan.histograms import numpy_histogram as nh

    monkeypatch.setattr(driver, "_capturing", lambda handle: 1)
    rule = nh._uniform_rule(np.float32, 10, np.float32(0), np.float32(1), explicit_range=True)
    call = type("Call", (), {"device": 0, "stream": STREAM})()
    nh._device_constants.pop(rule, None)
    with pytest.raises(CaptureError, match="make the same call once before the capture"):
        nh._constant(rule, "edges", rule.edges, call)


def test_numpy_input_while_torch_captures_is_refused(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    with pytest.raises(CaptureError, match="a NumPy array while torch is capturing"):
        pyscan.scan(np.ones(5, np.float32))


class _SegmentsCall:
    """What pyscan.segments and pyscan.scans.segments read of a Call."""
    device, stream, context, size = 0, STREAM, 0, 10


def test_captured_segmented_calls_take_the_1d_scans_kept_status_and_device_epoch(monkeypatch, scan_plan):
    """The segmented scan and reduction are the 1-D scan's launch (the segments build): under capture the same
    kept words and EPOCH_ON_DEVICE, the offsets' address and S before them, the scan's exclusive flag too."""
    from pyscan.scans import segments as seg_scan

    recorder = Recorder(monkeypatch, capturing={STREAM})
    scan_plan(recorder)
    monkeypatch.setattr(capture, "_kept", {0: [type("Bytes", (), {"address": 0x5000})(), 0]})
    i32, i64 = np.dtype(np.int32), np.dtype(np.int64)
    seg_scan.launch(0x9000000, 0x8000000, 5 * 8192, i32, (0x7000000, 40, i64), "add", i64, 0, STREAM, 0, True)
    seg_scan.launch(0x9000000, 0x8000000, 5 * 8192, i32, (0x7000000, 40, i32), "max", i32, 0, STREAM, 0)
    assert recorder.names() == ["launch", "launch"], recorder.events
    scan, reduce = recorder.launches()
    assert scan[3][3:] == (0x7000000, 40, True, 0x5000, 0x5010, 5, dl.EPOCH_ON_DEVICE)
    assert reduce[3][3:] == (0x7000000, 40, 0x5000 + 64, 0x5000 + 80, 5, dl.EPOCH_ON_DEVICE)


def test_captured_segments_refuse_host_offsets_and_the_device_check(monkeypatch):
    from pyscan import segments

    Recorder(monkeypatch, capturing={STREAM})
    host = segments.Offsets(None, np.int32, 2, host=np.array([0, 4, 10], np.int32))
    with pytest.raises(CaptureError, match="offsets= on the host"):
        segments.device_offsets(host, _SegmentsCall())
    on_device = segments.Offsets(object(), np.int32, 2)
    with pytest.raises(CaptureError, match="check_offsets=False"):
        segments.check_device_offsets(on_device, _SegmentsCall(), "offsets")


def test_the_legacy_stream_while_another_captures_raises_on_the_kept_buffer_paths(monkeypatch):
    """cuStreamIsCapturing's error for the legacy stream (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) reaches the kept-buffer
    paths as a non-zero code: they raise CaptureError before allocating or enqueuing anything."""
    recorder = Recorder(monkeypatch)
    monkeypatch.setattr(driver, "_capturing", lambda handle: -906)
    with pytest.raises(CaptureError, match="legacy default stream"):
        axis_scan._next_status(40, 8, 0, 0)
    assert recorder.events == []
