"""engine/_malloc.py: glibc's mmap and trim thresholds fixed at import (benchmarks/malloc_layout.py shows why),
and left alone when asked."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

import engine
from engine import _malloc

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


def _applied_in_a_fresh_process(**env) -> str:
    done = subprocess.run([sys.executable, "-c", "import engine; print(engine._malloc.applied)"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **env}, check=True)
    return done.stdout.strip()


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_the_thresholds_are_set_at_import_on_glibc():
    assert _applied_in_a_fresh_process() == "True"
    assert _malloc.keep_step_memory() is True  # once is enough; a second call changes nothing
    assert (_malloc.MMAP_FROM, _malloc.TRIM_PAST) == (32 * 2**20, 64 * 2**20)


def test_gradscope_malloc_system_leaves_malloc_as_it_comes():
    assert _applied_in_a_fresh_process(GRADSCOPE_MALLOC="system") == "False"


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_memory_freed_and_made_again_still_holds_what_is_written():
    """The thresholds change where arrays come from, not what they hold: a step's arrays made and freed many
    times over give the same losses as the first time."""
    engine.manual_seed(0)
    x, w = engine.randn(64, 1000), engine.randn(1000, 100, requires_grad=True)
    losses = []
    for _ in range(30):
        loss = x.mm(w).clamp(min=0).pow(2).sum()
        loss.backward()
        losses.append((loss.item(), float(w.grad.sum())))
        w.grad = None
    assert len(set(losses)) == 1
