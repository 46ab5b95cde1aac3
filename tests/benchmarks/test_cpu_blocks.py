"""The CPU benchmark's blocks: each starts once other threads stop spinning, then runs untimed steps first."""

import sys
import threading
import time

import pytest

import benchmarks.step_time as st

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/task")
pytestmark = pytest.mark.timing  # spinning threads and CPU-time windows: a busy machine decides them


def _spinner(seconds):
    state = {"done": False}

    def spin():
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
        state["done"] = True

    t = threading.Thread(target=spin, daemon=True)
    t.start()
    return t, state


@linux
def test_other_threads_cpu_counts_a_busy_thread_and_not_the_caller():
    assert st.quiesce(max_wait=3.0)  # BLAS threads left spinning by earlier tests have stopped
    t, state = _spinner(0.6)
    before = st._other_threads_cpu_ns()
    time.sleep(0.2)
    during = st._other_threads_cpu_ns()
    assert not state["done"]
    assert during - before > 0.1e9  # the spinner had the CPU for most of the 0.2 s
    t.join()
    mine = st._other_threads_cpu_ns()
    end = time.perf_counter() + 0.1
    while time.perf_counter() < end:  # the caller's own work is not counted
        pass
    assert st._other_threads_cpu_ns() - mine < 0.02e9


@linux
def test_quiesce_returns_once_the_spinning_thread_has_stopped():
    t, state = _spinner(0.3)
    assert st.quiesce(max_wait=3.0) is True
    assert state["done"], "quiesce returned while another thread was still using the CPU"
    t.join()


@linux
def test_quiesce_gives_up_after_max_wait_and_says_so():
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            pass

    t = threading.Thread(target=spin, daemon=True)
    t.start()
    try:
        assert st.quiesce(max_wait=0.1) is False
    finally:
        stop.set()
        t.join()
    assert st.quiesce(max_wait=3.0) is True


def test_quiesce_without_proc_sleeps_instead(monkeypatch):
    monkeypatch.setattr(st, "_other_threads_cpu_ns", lambda: None)
    slept = []
    monkeypatch.setattr(st.time, "sleep", slept.append)
    assert st.quiesce(max_wait=0.5) is True
    assert slept == [0.1]


def test_cpu_blocks_settle_and_warm_up_before_timing(monkeypatch):
    """Every timed CPU block follows a quiesce and BLOCK_WARMUP untimed steps of the same implementation."""
    events = []
    monkeypatch.setattr(st, "quiesce", lambda: events.append("quiesce") or True)
    monkeypatch.setattr(st, "BLOCK_WARMUP_S", 0.0)  # the step count alone
    monkeypatch.setattr(st, "plan", lambda size, device, quick: (1, 2, 3))
    counter = {"n": 0}

    def fake(name):
        def step():
            counter["n"] += 1
            events.append(name)

        return step, {"loss": 0.0}

    monkeypatch.setattr(st, "_engine_step", lambda *a: fake("engine"))
    monkeypatch.setattr(st, "_raw_step", lambda *a: fake("raw"))
    monkeypatch.setattr(st, "_torch", lambda: None)
    row = st.measure_row("tiny", "tensor", "cpu")
    assert row.blocks == 2 and row.steps_per_block == 3
    timed = events[2:]  # after the one warm-up step of each implementation
    per_block = ["quiesce"] + ["engine"] * (st.BLOCK_WARMUP + 3) + ["quiesce"] + ["raw"] * (st.BLOCK_WARMUP + 3)
    assert timed == per_block * 2
    assert counter["n"] == 2 + 2 * 2 * (st.BLOCK_WARMUP + 3)


def test_quick_rows_skip_the_settling(monkeypatch):
    calls = []
    monkeypatch.setattr(st, "quiesce", lambda: calls.append(1) or True)
    row = st.measure_row("tiny", "tensor", "cpu", quick=True)
    assert calls == [] and row.blocks == 1


def test_block_warmup_lasts_at_least_its_time_and_steps(monkeypatch):
    monkeypatch.setattr(st, "BLOCK_WARMUP_S", 0.02)
    stamps = []
    start = time.perf_counter()
    st._rewarm(lambda: stamps.append(time.perf_counter()))
    assert len(stamps) >= st.BLOCK_WARMUP
    assert stamps[-1] - start >= 0.02  # fast steps: as many as fill the time

    monkeypatch.setattr(st, "BLOCK_WARMUP_S", 0.0)
    stamps.clear()
    st._rewarm(lambda: stamps.append(1))
    assert len(stamps) == st.BLOCK_WARMUP  # slow steps (or no time asked): the minimum count


def test_blocks_that_did_not_settle_are_counted(monkeypatch, capsys):
    answers = iter([True, False] * 10)
    monkeypatch.setattr(st, "quiesce", lambda: next(answers))
    monkeypatch.setattr(st, "BLOCK_WARMUP_S", 0.0)
    monkeypatch.setattr(st, "plan", lambda size, device, quick: (1, 3, 2))
    monkeypatch.setattr(st, "_torch", lambda: None)
    row = st.measure_row("tiny", "tensor", "cpu")
    assert row.unsettled == 3  # every raw block (engine, raw, engine, raw, ...) was refused
    assert row.to_dict()["unsettled"] == 3


def test_the_table_says_when_blocks_did_not_settle(monkeypatch, capsys, tmp_path):
    import benchmarks.__main__ as bench

    row = st.Row("tiny", "tensor", "cpu", "float32", 0.03, 0.02, None, 5, 10, 1.0, unsettled=2)
    monkeypatch.setattr(bench, "measure_row", lambda *a, **k: row)
    assert bench.main(["--sizes", "tiny", "--recipes", "tensor", "--devices", "cpu", "--no-app", "--quick",
                       "--out", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "(2 of 10 blocks started while other threads of this process were still busy" in out

