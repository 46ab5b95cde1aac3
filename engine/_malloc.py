"""glibc's malloc, told to keep the memory of a training step's arrays between steps.

Each step makes and frees the same arrays (the tutorial's: 250 KB of input, 400 KB of gradient). glibc hands out
such sizes from the top of its heap and, when they are freed, may give the top back to the system (trimming, once
more than twice its mmap threshold is free there) only to ask for it again at the next step: every page is then
faulted in and zeroed anew, and every shrink of the heap interrupts the BLAS's helper thread on the other core to
flush its TLB. Whether a process falls into that depends on where its objects happen to lie, so the same step took
300 or 415 us (2026-11-24, the tutorial's autograd step on the 2-core machine, flipping with unrelated changes to the
code; one BLAS thread: 420 either way). Fixing the thresholds at the values glibc's own dynamic threshold grows to
for large arrays (mmap from 32 MiB; trim past 64 MiB free) removes the flip: 300 us each time. Done once, at import,
on glibc only; ``GRADSCOPE_MALLOC=system`` leaves malloc as it is.
"""

from __future__ import annotations

import ctypes
import os
import platform

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>
MMAP_FROM = 32 * 1024 * 1024  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
TRIM_PAST = 2 * MMAP_FROM  # what glibc's dynamic threshold sets beside it

applied = False  # whether the thresholds were set in this process


def keep_step_memory() -> bool:
    """Sets the thresholds (once); True where they are set."""
    global applied
    if applied:
        return True
    if os.environ.get("GRADSCOPE_MALLOC", "").strip().lower() == "system":
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    applied = bool(mallopt(M_MMAP_THRESHOLD, MMAP_FROM)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_PAST))
    return applied
