"""Loss logs as CSV (``step,loss,elapsed_s,step_ms``) or JSON (config, device, versions, status, arrays).

Files are written atomically: to a temporary file in the same folder, flushed and fsynced, then renamed
over the target, so an interrupted export never leaves a half file. NaN and infinities are written so
that the file still parses (CSV: ``nan``/``inf``; JSON: ``null`` in the array plus a list of the steps).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import stat
import tempfile
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .config import ConfigError, RunConfig
from .records import LossLog, RunResult

FORMAT_VERSION = 1
CSV_HEADER = ["step", "loss", "elapsed_s", "step_ms"]


class ExportError(OSError):
    """The log could not be written or read; the message names the path and the reason."""


@dataclass
class LoadedLog:
    path: str
    log: LossLog
    config: RunConfig | None
    status: str
    device_name: str
    meta: dict


def export_format(path: str | os.PathLike) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in (".csv", ".json"):
        raise ExportError(f"{path}: unknown export format {suffix or '(none)'!r}; use a .csv or .json file name")
    return suffix[1:]


def check_writable(path: str | os.PathLike) -> None:
    """Refuse, before a run, a path that cannot be written (missing folder, no permission, a folder)."""
    target = Path(path)
    export_format(target)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        if not folder.is_dir():
            raise ExportError(f"{path}: the folder {folder} does not exist")
        limit = os.pathconf(folder, "PC_NAME_MAX")
        if len(os.fsencode(target.name)) > limit:
            raise ExportError(f"{_cut(str(path))}: the file name is longer than this file system allows "
                              f"({limit} bytes)")
        if target.is_dir():
            raise ExportError(f"{path}: is a folder, not a file")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ExportError(f"{path}: the folder {folder} is not writable")
        if target.exists() and not os.access(target, os.W_OK):
            raise ExportError(f"{path}: the file is not writable")
    except OSError as exc:  # a name too long for stat, a folder we may not look into, ...
        raise ExportError(f"{_cut(str(path))}: {exc.strerror or exc}") from None


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_umask_lock = threading.Lock()


def _file_mode() -> int:
    """The mode a new file gets from this process's umask (os.umask can only be read by setting it)."""
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def _fmt(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))


CHUNK = 1 << 14  # rows converted at a time: an export holds a chunk's text, not the whole file's


def _csv_chunks(log: LossLog):
    yield ",".join(CSV_HEADER) + "\n"
    for a in range(0, len(log), CHUNK):
        b = min(a + CHUNK, len(log))
        rows = zip(log.step[a:b].tolist(), log.loss[a:b].tolist(), log.elapsed_s[a:b].tolist(),
                   log.step_ms[a:b].tolist())
        yield "".join(f"{s},{_fmt(l)},{_fmt(e)},{_fmt(m)}\n" for s, l, e, m in rows)


def to_csv_text(log: LossLog) -> str:
    return "".join(_csv_chunks(log))


def _json_chunks(result: RunResult):
    """The JSON log, written piece by piece: the header fields, then each array a chunk at a time."""
    head = to_json_obj(result, arrays=False)
    yield json.dumps(head, indent=1, allow_nan=False)[:-2] + ",\n"
    log = result.log
    columns = (("step", log.step), ("loss", log.loss), ("elapsed_s", log.elapsed_s), ("step_ms", log.step_ms))
    for i, (name, values) in enumerate(columns):
        yield f' "{name}": ['
        for a in range(0, len(values), CHUNK):
            part = values[a : a + CHUNK]
            items = part.tolist() if name == "step" else _json_list(part)
            yield ("," if a else "") + ",".join("null" if v is None else repr(v) for v in items)
        yield "]" + (",\n" if i < len(columns) - 1 else "\n}")


def _json_list(values: np.ndarray) -> list:
    return [v if math.isfinite(v) else None for v in values.tolist()]


def to_json_obj(result: RunResult, arrays: bool = True) -> dict:
    log = result.log
    bad = np.flatnonzero(~np.isfinite(log.loss))  # a few indices, not a list of every step
    nonfinite = {int(log.step[i]): _fmt(float(log.loss[i])) for i in bad}
    return {
        "format": "gradscope-loss-log",
        "version": FORMAT_VERSION,
        "config": result.config.to_dict(),
        "device_name": result.device_name,
        "versions": result.versions,
        "started_at": result.started_at,
        "status": result.status,
        "message": result.message,
        "steps": len(log),
        "final_loss": _json_list(np.array([result.final_loss]))[0] if len(log) else None,
        "steps_per_second": result.steps_per_second if math.isfinite(result.steps_per_second) else None,
        "nonfinite_loss": nonfinite,
        **({"step": log.step.tolist(), "loss": _json_list(log.loss), "elapsed_s": _json_list(log.elapsed_s),
            "step_ms": _json_list(log.step_ms)} if arrays else {}),
    }


def write_atomic(path: str | os.PathLike, text) -> None:
    """Write ``text`` (a str, bytes, or an iterable of str pieces) to a temporary file beside ``path``, fsync it,
    then rename it over ``path``: an interrupted or failed write (a full disk) leaves the old file as it was and
    no temporary file."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    tmp_name = None
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        os.fchmod(fd, _file_mode())  # mkstemp's 0600 would outlive the rename; files follow the umask
        binary = isinstance(text, bytes)
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")) as fh:
            for piece in ((text,) if isinstance(text, (str, bytes)) else text):
                fh.write(piece)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, target)
        tmp_name = None
    except OSError as exc:
        raise ExportError(f"could not write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass


def export(result: RunResult, path: str | os.PathLike) -> Path:
    fmt = export_format(path)
    write_atomic(path, _csv_chunks(result.log) if fmt == "csv" else _json_chunks(result))
    return Path(path)


AUTOSAVE_KEEP = 50  # the autosave folder keeps the newest logs only


def autosave(result: RunResult, folder: str | os.PathLike, keep: int = AUTOSAVE_KEEP) -> Path:
    """Save the log of a run cut short (the window closed during it) under a name no other run shares, then let
    go of the oldest autosaves beyond ``keep``. ExportError when it cannot be written."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"could not make the autosave folder {folder}: {exc.strerror or exc}") from None
    # the save's time to the microsecond first, so names sort oldest first (file times are too coarse for that),
    # then a random part: the start second alone let two runs closed in one second share a file
    saved_at = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"run-{saved_at}-{result.config.recipe}-{uuid.uuid4().hex[:8]}.json"
    export(result, path)
    saved = sorted(folder.glob("run-*.json"))
    for old in saved[: max(0, len(saved) - keep)]:
        if old != path:
            try:
                old.unlink()
            except OSError:
                pass
    return path


def _float(text: str) -> float:
    return float(text)  # float() reads 'nan', 'inf', '-inf'


def _read_text(path: str | os.PathLike) -> str:
    """A regular file's text as UTF-8; ExportError for anything else (a folder, a device or a pipe would read
    without end or block for ever)."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ExportError(f"could not read {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ExportError(f"{path} is not a regular file (a folder, a device or a pipe); a loss log is a .csv or "
                          ".json file")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ExportError(f"could not read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExportError(f"{path} is not a loss log this app can read: not UTF-8 text (byte {exc.start} is "
                          f"{data[exc.start:exc.start + 1]!r}); the app writes its logs as UTF-8") from None


def _numbers(data: dict, name: str, n: int | None, integer: bool = False) -> list:
    values = data.get(name)
    if not isinstance(values, list) or (n is not None and len(values) != n):
        raise ValueError(f"{name!r} must be a list of {n if n is not None else 'the'} numbers")
    kinds = (int,) if integer else (int, float, type(None))
    bad = next((v for v in values if isinstance(v, bool) or not isinstance(v, kinds)), "ok")
    if bad != "ok":
        raise ValueError(f"{name!r} holds {bad!r}, not a{'' if integer else ' number or'} "
                         f"{'whole number' if integer else 'null'}")
    return values


def load(path: str | os.PathLike) -> LoadedLog:
    """Read an exported log back (to overlay it on the plot). Anything else gives one ExportError that names the
    file and what is wrong with it."""
    fmt = export_format(path)
    text = _read_text(path)
    try:
        if fmt == "csv":
            rows = list(csv.reader(io.StringIO(text)))
            if not rows or rows[0] != CSV_HEADER:
                raise ValueError(f"the first line must be {','.join(CSV_HEADER)}")
            body = [r for r in rows[1:] if r]
            bad = next((i for i, r in enumerate(body) if len(r) != len(CSV_HEADER)), None)
            if bad is not None:
                raise ValueError(f"line {bad + 2} has {len(body[bad])} fields, not {len(CSV_HEADER)}")
            cols = list(zip(*body)) if body else [(), (), (), ()]
            log = LossLog.from_arrays([int(v) for v in cols[0]], [_float(v) for v in cols[1]],
                                      [_float(v) for v in cols[2]], [_float(v) for v in cols[3]])
            return LoadedLog(str(path), log, None, "", "", {})
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"the file holds a JSON {type(data).__name__}, not a log's object")
        if data.get("format") != "gradscope-loss-log":
            raise ValueError("not a gradscope loss log (no \"format\": \"gradscope-loss-log\")")
        steps = _numbers(data, "step", None, integer=True)
        loss = [math.nan if v is None else v for v in _numbers(data, "loss", len(steps))]
        elapsed = [math.nan if v is None else v for v in _numbers(data, "elapsed_s", len(steps))]
        step_ms = [math.nan if v is None else v for v in _numbers(data, "step_ms", len(steps))]
        nonfinite = data.get("nonfinite_loss", {})
        if not isinstance(nonfinite, dict):
            raise ValueError("'nonfinite_loss' must be an object of step: 'nan' / 'inf' / '-inf'")
        where = {s: i for i, s in enumerate(steps)}
        for step, value in nonfinite.items():
            if value not in ("nan", "inf", "-inf") or int(step) not in where:
                raise ValueError(f"'nonfinite_loss' has {step!r}: {value!r}, not a step of the log with nan/inf")
            loss[where[int(step)]] = float(value)
        log = LossLog.from_arrays(steps, loss, elapsed, step_ms)
        try:  # settings the app could not run are shown as unknown, not trusted
            config = RunConfig.from_dict(data["config"]).validated(check_device=False, check_memory=False)
        except (ConfigError, TypeError, KeyError, AttributeError):
            config = None
        status, device = data.get("status", ""), data.get("device_name", "")
        return LoadedLog(str(path), log, config, status if isinstance(status, str) else "",
                         device if isinstance(device, str) else "", data)
    except (ValueError, KeyError, IndexError, TypeError, OverflowError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        if isinstance(exc, OverflowError):
            reason = f"a number too large for a step or value ({exc})"
        raise ExportError(f"{path} is not a loss log this app can read: {reason}") from None
