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

import ijson
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


    def as_result(self) -> RunResult:
        """The log as a run's result, to be written again (a log opened, a session's run restored): its settings
        (None for a CSV, which records none), status, device and versions as the file had them."""
        meta = self.meta
        versions = meta.get("versions")
        dynamics = meta.get("dynamics")
        return RunResult(self.config, self.status or "loaded", str(meta.get("message") or ""), self.log,
                         str(meta.get("started_at") or ""), self.device_name,
                         versions if isinstance(versions, dict) else {},
                         extra={"dynamics": dynamics} if isinstance(dynamics, dict) else {})


def export_format(path: str | os.PathLike) -> str:
    if not os.fspath(path):
        raise ExportError("the export file name is empty; give a .csv or .json file name")
    suffix = Path(path).suffix.lower()
    if suffix not in (".csv", ".json"):
        raise ExportError(f"{path}: unknown export format {suffix or '(none)'!r}; use a .csv or .json file name")
    return suffix[1:]


def check_writable(path: str | os.PathLike) -> None:
    """Refuse, before a run, a path that cannot be written (missing folder, no permission, a folder)."""
    export_format(path)
    target = Path(path)
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
    except ExportError:  # (an OSError too) already names the path and the reason
        raise
    except OSError as exc:  # a name too long for stat, a folder we may not look into, ...
        raise ExportError(f"{_cut(str(path))}: {exc.strerror or exc}") from None


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_umask_lock = threading.Lock()


def _file_mode() -> int:
    """The mode a new file gets from this process's umask: read from /proc (Linux), else by setting and restoring
    it (os.umask can only be read that way; the lock keeps this module's own threads from racing it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
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
        "config": result.config.to_dict() if result.config is not None else None,  # None: a CSV had none
        "device_name": result.device_name,
        "versions": result.versions,
        "started_at": result.started_at,
        "status": result.status,
        "message": result.message,
        "steps": len(log),
        "final_loss": _json_list(np.array([result.final_loss]))[0] if len(log) else None,
        "steps_per_second": result.steps_per_second if math.isfinite(result.steps_per_second) else None,
        "nonfinite_loss": nonfinite,
        **({"dynamics": result.extra["dynamics"]} if result.extra.get("dynamics") else {}),
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


def export(result: RunResult | LoadedLog, path: str | os.PathLike) -> Path:
    """Write a run's log (or a log that was opened: it can be written again, as CSV or JSON)."""
    fmt = export_format(path)
    if isinstance(result, LoadedLog):
        result = result.as_result()
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
    what = result.config.recipe if result.config is not None else "script"
    path = folder / f"run-{saved_at}-{what}-{uuid.uuid4().hex[:8]}.json"
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


class LoadCancelled(Exception):
    """The reading of a log was cancelled (``load``'s ``cancelled`` said so)."""


class _Reader(io.RawIOBase):
    """A file's bytes, counted for the progress and checked for a cancel at every read."""

    def __init__(self, fh, size: int, progress, cancelled):
        self.fh, self.size, self.done = fh, max(size, 1), 0
        self.progress, self.cancelled = progress, cancelled

    def readable(self):
        return True

    def readinto(self, buffer):
        if self.cancelled is not None and self.cancelled():
            raise LoadCancelled()
        n = self.fh.readinto(buffer)
        self.done += n or 0
        if self.progress is not None:
            self.progress(min(1.0, self.done / self.size))
        return n


def _open_regular(path: str | os.PathLike):
    """(binary file, size) of a regular file; ExportError for anything else (a folder, a device or a pipe would
    read without end or block for ever)."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ExportError(f"could not read {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ExportError(f"{path} is not a regular file (a folder, a device or a pipe); a loss log is a .csv or "
                          ".json file")
    try:
        return open(path, "rb"), info.st_size
    except OSError as exc:
        raise ExportError(f"could not read {path}: {exc.strerror or exc}") from None


def _numbers(values, name: str, n: int | None, integer: bool = False) -> np.ndarray:
    """A JSON array of numbers (null: NaN) as a NumPy array; ValueError naming what is wrong."""
    if not isinstance(values, list) or (n is not None and len(values) != n):
        raise ValueError(f"{name!r} must be a list of {n if n is not None else 'the'} numbers")
    kinds = (int,) if integer else (int, float, type(None))
    bad = next((v for v in values if isinstance(v, bool) or not isinstance(v, kinds)), "ok")
    if bad != "ok":
        raise ValueError(f"{name!r} holds {bad!r}, not a{'' if integer else ' number or'} "
                         f"{'whole number' if integer else 'null'}")
    if integer:
        return np.array(values, dtype=np.int64)
    return np.array([math.nan if v is None else v for v in values], dtype=np.float64)


def _load_csv(fh) -> LossLog:
    text = io.TextIOWrapper(fh, encoding="utf-8", newline="")
    rows = csv.reader(text)
    if next(rows, None) != CSV_HEADER:
        raise ValueError(f"the first line must be {','.join(CSV_HEADER)}")
    log = LossLog()
    chunk: list = []

    def flush():
        if chunk:
            cols = list(zip(*chunk))
            log.extend(np.array([int(v) for v in cols[0]], np.int64), [_float(v) for v in cols[1]],
                       [_float(v) for v in cols[2]], [_float(v) for v in cols[3]])
            chunk.clear()

    for line, row in enumerate(rows, start=2):
        if not row:
            continue
        if len(row) != len(CSV_HEADER):
            raise ValueError(f"line {line} has {len(row)} fields, not {len(CSV_HEADER)}")
        chunk.append(row)
        if len(chunk) >= CHUNK:
            flush()
    flush()
    return log


MAX_DEPTH = 64  # a log nests three levels; far deeper is not a log (and deep nesting costs a parser dearly)


def _json_value(events, event, value, depth: int):
    """One JSON value from ijson's basic events, built as Python objects."""
    if depth > MAX_DEPTH:
        raise ValueError(f"nested too deeply (more than {MAX_DEPTH} levels)")
    if event == "start_map":
        obj = {}
        for ev, key in events:
            if ev == "end_map":
                return obj
            obj[key] = _json_value(events, *next(events), depth + 1)
    if event == "start_array":
        items = []
        for ev, val in events:
            if ev == "end_array":
                return items
            items.append(_json_value(events, ev, val, depth + 1))
    return value


def _load_json(path, fh) -> LoadedLog:
    """The JSON log read one top-level field at a time (ijson): each array becomes a NumPy array before the next
    is read, so memory holds the data and one array's list, not the whole document as Python objects."""
    events = ijson.basic_parse(fh, use_float=True)
    first = next(events, (None, None))
    if first[0] != "start_map":
        kind = {"start_array": "list", "string": "string", "number": "number", "boolean": "boolean",
                "null": "null"}.get(first[0], "nothing")
        raise ValueError(f"the file holds a JSON {kind}, not a log's object")
    fields: dict = {}
    arrays: dict = {}
    for event, key in events:
        if event == "end_map":
            break
        value = _json_value(events, *next(events), depth=1)
        if key in ("step", "loss", "elapsed_s", "step_ms"):
            n = len(arrays["step"]) if key != "step" and "step" in arrays else None
            arrays[key] = _numbers(value, key, n, integer=key == "step")
        else:
            fields[key] = value
        del value
    if fields.get("format") != "gradscope-loss-log":
        raise ValueError("not a gradscope loss log (no \"format\": \"gradscope-loss-log\")")
    missing = [k for k in ("step", "loss", "elapsed_s", "step_ms") if k not in arrays]
    if missing:
        raise ValueError(f"no {missing[0]!r} array")
    steps, loss = arrays["step"], arrays["loss"]
    if not (len(steps) == len(loss) == len(arrays["elapsed_s"]) == len(arrays["step_ms"])):
        raise ValueError("the arrays step, loss, elapsed_s and step_ms differ in length")
    nonfinite = fields.get("nonfinite_loss", {})
    if not isinstance(nonfinite, dict):
        raise ValueError("'nonfinite_loss' must be an object of step: 'nan' / 'inf' / '-inf'")
    for step, value in nonfinite.items():  # a few entries: each found in the steps without a step -> index table
        at = np.flatnonzero(steps == int(step)) if value in ("nan", "inf", "-inf") else ()
        if not len(at):
            raise ValueError(f"'nonfinite_loss' has {step!r}: {value!r}, not a step of the log with nan/inf")
        loss[at[0]] = float(value)
    log = LossLog.from_arrays(steps, loss, arrays["elapsed_s"], arrays["step_ms"])
    try:  # settings the app could not run are shown as unknown, not trusted, and the reason is kept
        config = None if "config" in fields and fields["config"] is None else \
            RunConfig.from_dict(fields["config"]).validated(check_device=False, check_memory=False)
    except (ConfigError, TypeError, KeyError, AttributeError, ValueError) as exc:
        config = None
        fields["settings_problem"] = _cut(str(exc) or type(exc).__name__, 160)
    status, device = fields.get("status", ""), fields.get("device_name", "")
    return LoadedLog(str(path), log, config, status if isinstance(status, str) else "",
                     device if isinstance(device, str) else "", fields)


def load(path: str | os.PathLike, progress=None, cancelled=None) -> LoadedLog:
    """Read an exported log back (to overlay it on the plot), in bounded memory: the data and a chunk, not the
    file's text as Python objects. ``progress(fraction)`` is called as it reads; ``cancelled()`` returning True
    stops it with :class:`LoadCancelled`. Anything that is not a log gives one ExportError that names the file
    and what is wrong with it."""
    fmt = export_format(path)
    fh, size = _open_regular(path)
    reader = io.BufferedReader(_Reader(fh, size, progress, cancelled), buffer_size=1 << 20)
    try:
        if fmt == "csv":
            return LoadedLog(str(path), _load_csv(reader), None, "", "", {})
        return _load_json(path, reader)
    except LoadCancelled:
        raise
    except UnicodeDecodeError as exc:
        raise ExportError(f"{path} is not a loss log this app can read: not UTF-8 text (byte {exc.start} of a "
                          "chunk); the app writes its logs as UTF-8") from None
    except ijson.IncompleteJSONError as exc:
        raise ExportError(f"{path} is not a loss log this app can read: not JSON, or not a JSON object "
                          f"({_cut(str(exc).strip(), 120)})") from None
    except (ValueError, KeyError, IndexError, TypeError, OverflowError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        if isinstance(exc, OverflowError):
            reason = f"a number too large for a step or value ({exc})"
        raise ExportError(f"{path} is not a loss log this app can read: {_cut(reason, 200)}") from None
    except OSError as exc:
        raise ExportError(f"could not read {path}: {exc.strerror or exc}") from None
    finally:
        fh.close()
