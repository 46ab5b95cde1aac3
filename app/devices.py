"""What the device panel shows: CUDA devices (through the engine, and NVML when installed) and the CPU.

Every field that cannot be read is None (the panel shows "n/a"); nothing here raises to the caller.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass, field

import numpy as np

import engine

from .system import cpu_name


@dataclass
class CudaDeviceInfo:
    index: int
    name: str
    capability: str | None = None
    multiprocessors: int | None = None
    total_bytes: int | None = None
    free_bytes: int | None = None
    allocated_bytes: int | None = None  # held by the engine's live arrays
    reserved_bytes: int | None = None  # held by the engine's pool (live + cached)
    driver: str | None = None
    runtime: str | None = None
    utilization_pct: float | None = None  # NVML
    temperature_c: float | None = None  # NVML
    power_w: float | None = None  # NVML
    power_limit_w: float | None = None  # NVML
    nvml_note: str | None = None


@dataclass
class CpuInfo:
    name: str
    cores: int | None
    blas: str
    numpy: str = np.__version__
    python: str = platform.python_version()


@dataclass
class DeviceSnapshot:
    cuda_available: bool
    reason: str  # why not, when not
    cuda: list = field(default_factory=list)
    cpu: CpuInfo | None = None


def blas_name() -> str:
    """The BLAS NumPy was built with, e.g. 'scipy-openblas 0.3.29'."""
    try:
        config = np.show_config(mode="dicts")
        blas = config.get("Build Dependencies", {}).get("blas", {})
        name = blas.get("name") or "unknown"
        version = blas.get("version")
        return f"{name} {version}" if version else name
    except Exception:
        return "unknown"


_cpu_cache: CpuInfo | None = None


def cpu_info() -> CpuInfo:
    global _cpu_cache
    if _cpu_cache is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        _cpu_cache = CpuInfo(name=cpu_name(), cores=cores, blas=blas_name())
    return _cpu_cache


def _safe(fn, default=None):
    try:
        return fn()
    except Exception:
        return default


def _nvml_fill(infos: list[CudaDeviceInfo]) -> None:
    try:
        import pynvml
    except ImportError:
        for info in infos:
            info.nvml_note = "install nvidia-ml-py (the `nvml` extra) for utilization, temperature and power"
        return
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        for info in infos:
            info.nvml_note = f"NVML could not start: {exc}"
        return
    try:
        for info in infos:
            handle = _safe(lambda i=info: pynvml.nvmlDeviceGetHandleByIndex(i.index))
            if handle is None:
                continue
            util = _safe(lambda h=handle: pynvml.nvmlDeviceGetUtilizationRates(h))
            info.utilization_pct = float(util.gpu) if util is not None else None
            info.temperature_c = _safe(lambda h=handle: float(pynvml.nvmlDeviceGetTemperature(h, 0)))
            info.power_w = _safe(lambda h=handle: pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0)
            info.power_limit_w = _safe(lambda h=handle: pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0)
    finally:
        _safe(pynvml.nvmlShutdown)


def snapshot(with_nvml: bool = True) -> DeviceSnapshot:
    """Everything the panel shows, read now."""
    if not engine.cuda.is_available():
        return DeviceSnapshot(False, engine.cuda.unavailable_reason(), [], cpu_info())
    versions = _safe(engine.cuda.runtime_versions, {}) or {}
    infos = []
    for i in range(engine.cuda.device_count()):
        props = _safe(lambda i=i: engine.cuda.get_device_properties(i))
        info = CudaDeviceInfo(index=i, name=props.name if props else f"cuda:{i}")
        if props:
            info.capability = f"{props.major}.{props.minor}"
            info.multiprocessors = props.multi_processor_count
            info.total_bytes = props.total_memory
        mem = _safe(lambda i=i: engine.cuda.mem_get_info(i))
        if mem:
            info.free_bytes, info.total_bytes = mem
        info.allocated_bytes = _safe(lambda i=i: engine.cuda.memory_allocated(i))
        info.reserved_bytes = _safe(lambda i=i: engine.cuda.memory_reserved(i))
        info.driver = versions.get("driver")
        info.runtime = versions.get("runtime")
        infos.append(info)
    if with_nvml:
        _nvml_fill(infos)
    return DeviceSnapshot(True, "", infos, cpu_info())


def device_choices() -> list[tuple[str, str, bool, str]]:
    """(device string, label, enabled, tooltip) for the device selector."""
    choices = [("cpu", f"CPU — {cpu_info().name}", True, "NumPy on the CPU")]
    if engine.cuda.is_available():
        for i in range(engine.cuda.device_count()):
            name = _safe(lambda i=i: engine.cuda.get_device_name(i), f"cuda:{i}")
            choices.append((f"cuda:{i}", f"cuda:{i} — {name}", True, "CuPy on this GPU"))
    else:
        reason = engine.cuda.unavailable_reason()
        choices.append(("cuda", "CUDA — unavailable", False, reason))
    return choices


def empty_cache() -> int:
    """Give the engine's cached GPU memory back to the driver; returns the bytes given back (0 without CUDA)."""
    if not engine.cuda.is_available():
        return 0
    before = sum(_safe(lambda i=i: engine.cuda.memory_reserved(i), 0) for i in range(engine.cuda.device_count()))
    engine.cuda.empty_cache()
    after = sum(_safe(lambda i=i: engine.cuda.memory_reserved(i), 0) for i in range(engine.cuda.device_count()))
    return max(0, before - after)
