"""Facts about the machine a run ran on: the device's name, the CPU's, library versions."""

from __future__ import annotations

import platform

import numpy as np

import engine


def device_name(device: str) -> str:
    if device.startswith("cuda"):
        try:
            return engine.cuda.get_device_name(device)
        except Exception:
            return device
    return cpu_name()


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def versions() -> dict:
    out = {"engine": engine.__version__, "numpy": np.__version__, "python": platform.python_version()}
    if engine.backend._cupy is not None:
        out["cupy"] = engine.backend._cupy.__version__
    return out
