from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from app import export
from app.config import RunConfig
from app.runner import Runner


@pytest.fixture(scope="module")
def result():
    return Runner(RunConfig(batch=8, d_in=20, hidden=10, d_out=3, iters=40)).run()


@pytest.fixture(scope="module")
def diverged():
    return Runner(RunConfig(batch=8, d_in=20, hidden=10, d_out=3, lr=5.0, iters=200)).run()


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_round_trip(tmp_path, result, suffix):
    path = tmp_path / f"log{suffix}"
    export.export(result, path)
    back = export.load(path)
    np.testing.assert_array_equal(back.log.step, result.log.step)
    np.testing.assert_array_equal(back.log.loss, result.log.loss)  # repr() keeps every bit
    np.testing.assert_array_equal(back.log.elapsed_s, result.log.elapsed_s)
    np.testing.assert_array_equal(back.log.step_ms, result.log.step_ms)
    if suffix == ".json":
        assert back.config == result.config and back.status == "done"


def test_csv_layout(tmp_path, result):
    path = tmp_path / "log.csv"
    export.export(result, path)
    lines = path.read_text().splitlines()
    assert lines[0] == "step,loss,elapsed_s,step_ms"
    assert len(lines) == 41
    assert lines[1].split(",")[0] == "0" and float(lines[1].split(",")[1]) == result.log.loss[0]


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_nonfinite_losses_still_parse(tmp_path, diverged, suffix):
    assert diverged.status == "diverged" and not math.isfinite(diverged.final_loss)
    path = tmp_path / f"d{suffix}"
    export.export(diverged, path)
    if suffix == ".json":
        data = json.loads(path.read_text())  # strict JSON: no bare NaN/Infinity
        assert data["status"] == "diverged" and data["loss"][-1] is None
    back = export.load(path)
    assert np.array_equal(back.log.loss, diverged.log.loss, equal_nan=True)


def test_json_has_config_device_versions_and_start(tmp_path, result):
    path = tmp_path / "log.json"
    export.export(result, path)
    data = json.loads(path.read_text())
    assert data["config"]["recipe"] == "tensor" and data["device_name"]
    assert data["versions"]["numpy"] == np.__version__ and "engine" in data["versions"]
    assert data["started_at"].startswith("20") and data["steps"] == 40


def test_interrupted_export_leaves_no_partial_file(tmp_path, result, monkeypatch):
    path = tmp_path / "log.json"
    path.write_text("previous complete log")

    def dying_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", dying_fsync)
    with pytest.raises(export.ExportError, match="No space left on device"):
        export.export(result, path)
    assert path.read_text() == "previous complete log"  # untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.json"]  # no temporary left behind


def test_unwritable_paths_are_refused(tmp_path):
    with pytest.raises(export.ExportError, match="does not exist"):
        export.check_writable(tmp_path / "missing" / "log.csv")
    with pytest.raises(export.ExportError, match="unknown export format"):
        export.check_writable(tmp_path / "log.xlsx")
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(export.ExportError, match="is a folder"):
        export.check_writable(tmp_path / "dir.csv")
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        with pytest.raises(export.ExportError, match="not writable"):
            export.check_writable(locked / "log.csv")


def test_a_refusal_names_the_path_once(tmp_path):
    # ExportError is an OSError: check_writable's own refusals must not be caught and wrapped a second time
    missing = tmp_path / "missing" / "log.csv"
    with pytest.raises(export.ExportError) as caught:
        export.check_writable(missing)
    assert str(caught.value) == f"{missing}: the folder {missing.parent} does not exist"
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(export.ExportError) as caught:
        export.check_writable(tmp_path / "dir.csv")
    assert str(caught.value) == f"{tmp_path / 'dir.csv'}: is a folder, not a file"
    with pytest.raises(export.ExportError) as caught:  # not "." (what Path("") reads as)
        export.check_writable("")
    assert str(caught.value) == "the export file name is empty; give a .csv or .json file name"


def test_loading_garbage_is_a_clear_error(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("hello,world\n1,2\n")
    with pytest.raises(export.ExportError, match="not a loss log"):
        export.load(bad)
    bad_json = tmp_path / "x.json"
    bad_json.write_text("{}")
    with pytest.raises(export.ExportError, match="not a loss log"):
        export.load(bad_json)


def _good_json(tmp_path):
    result = Runner(RunConfig(iters=5, batch=4, d_in=6, hidden=3, d_out=2)).run()
    return json.loads(json.dumps(export.to_json_obj(result)))


@pytest.mark.parametrize("kind", [
    "binary", "latin-1", "utf-16", "json list", "json null", "json number", "json string",
    "nonfinite_loss as a list", "lr as a string", "deeply nested", "step of 10**30", "csv step of 10**30",
    "csv short row", "arrays of different lengths", "a folder named .json", "a fifo named .csv",
    "a link to /dev/zero",
])
def test_every_bad_log_file_gets_one_clear_error_naming_it(tmp_path, kind):
    """Issue: 14 kinds of bad file escaped with a traceback; a FIFO blocked for ever, /dev/zero read without end."""
    good = _good_json(tmp_path)
    path = tmp_path / ("log.csv" if "csv" in kind else "log.json")
    if kind == "binary":
        path.write_bytes(bytes(range(256)))
    elif kind == "latin-1":
        path.write_bytes("step,loss,elapsed_s,step_ms\n0,1.0,0.1,0.1 # é\n".encode("latin-1"))
    elif kind == "utf-16":
        path.write_bytes(json.dumps(good).encode("utf-16"))
    elif kind.startswith("json "):
        path.write_text({"json list": "[1, 2]", "json null": "null", "json number": "3", "json string": '"x"'}[kind])
    elif kind == "nonfinite_loss as a list":
        path.write_text(json.dumps({**good, "nonfinite_loss": [1, 2]}))
    elif kind == "lr as a string":
        loaded_ok = {**good, "config": {**good["config"], "lr": "fast"}}
        path.write_text(json.dumps(loaded_ok))
        back = export.load(path)  # the curve loads; the settings the app could not run are not trusted
        assert back.config is None and len(back.log) == 5
        assert back.meta["settings_problem"].startswith("lr: the learning rate must be a finite number")
        return
    elif kind == "deeply nested":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "step of 10**30":
        path.write_text(json.dumps({**good, "step": [10**30] + good["step"][1:]}))
    elif kind == "csv step of 10**30":
        path.write_text("step,loss,elapsed_s,step_ms\n" + str(10**30) + ",1.0,0.1,0.1\n")
    elif kind == "csv short row":
        path.write_text("step,loss,elapsed_s,step_ms\n0,1.0\n")
    elif kind == "arrays of different lengths":
        path.write_text(json.dumps({**good, "loss": good["loss"][:2]}))
    elif kind == "a folder named .json":
        path.mkdir()
    elif kind == "a fifo named .csv":
        os.mkfifo(path)
    elif kind == "a link to /dev/zero":
        path.symlink_to("/dev/zero")
    with pytest.raises(export.ExportError) as info:
        export.load(path)
    text = str(info.value)
    assert str(path) in text and "Traceback" not in text and len(text) < 400, text


def test_autosaves_never_overwrite_each_other_and_the_folder_keeps_the_newest(tmp_path):
    """Issue: the name carried the start second, so runs closed in the same second shared one file."""
    result = Runner(RunConfig(iters=3, batch=4, d_in=6, hidden=3, d_out=2)).run()
    paths = [export.autosave(result, tmp_path, keep=5) for _ in range(4)]  # same run, same start second
    assert len(set(paths)) == 4 and all(p.exists() for p in paths)
    more = [export.autosave(result, tmp_path, keep=5) for _ in range(6)]
    left = sorted(tmp_path.glob("run-*.json"))
    assert len(left) == 5 and set(more[-5:]) == set(left)  # the oldest went, the newest stayed
    assert export.load(left[0]).log.n == 3
    (tmp_path / "blocked").write_text("a file where the folder should be")
    with pytest.raises(export.ExportError, match="could not make the autosave folder"):
        export.autosave(result, tmp_path / "blocked" / "autosave")


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_long_log_is_written_in_bounded_memory_and_reads_back_the_same(tmp_path, fmt):
    """Issue: exporting a 2M-step log peaked at 1.2 GB (8x the file). Written a chunk at a time, the export holds a
    chunk's text, not the file's."""
    import dataclasses
    import tracemalloc

    n = 400_000
    rng = np.random.default_rng(0)
    loss = rng.random(n)
    loss[[3, 5, 7]] = [np.nan, np.inf, -np.inf]
    log = export.LossLog.from_arrays(np.arange(n), loss, np.cumsum(rng.random(n)), rng.random(n))
    result = Runner(RunConfig(iters=2, batch=4, d_in=6, hidden=3, d_out=2)).run()
    result = dataclasses.replace(result, log=log)
    path = tmp_path / f"long.{fmt}"
    tracemalloc.start()
    try:
        export.export(result, path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    size = path.stat().st_size
    assert size > 12e6 and peak < 0.5 * size, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"
    # reading back: the data (4 columns of 8 bytes) a few times over, not the file's text as Python objects (a
    # 200 MB CSV took 2.75 GB)
    seen = []
    tracemalloc.start()
    try:
        back = export.load(path, progress=seen.append).log
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    data = 4 * 8 * n
    assert peak < 4 * data, f"reading peaked at {peak / 1e6:.1f} MB for {data / 1e6:.1f} MB of data"
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    np.testing.assert_array_equal(back.step, log.step)
    np.testing.assert_array_equal(back.loss, log.loss)  # nan and inf included
    np.testing.assert_array_equal(back.elapsed_s, log.elapsed_s)
    if fmt == "json":
        assert json.loads(path.read_text())["steps"] == n
