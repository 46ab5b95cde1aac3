"""The engine's BLAS threads: set around its own products only, and put back (the user's NumPy keeps its own)."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import kernels, threads

threadpoolctl = pytest.importorskip("threadpoolctl")


@pytest.fixture(autouse=True)
def _default_choice():
    before = kernels.threads()
    yield
    kernels.set_threads(before)
    threads._threads = None
    threads._threshold = 0
    threads._update()


class FakeBlas:
    """A BLAS controller that records the thread counts it was given (threadpoolctl's LibController API)."""

    def __init__(self, n):
        self.num_threads = n
        self.calls = []

    def set_num_threads(self, n):
        self.calls.append(n)
        self.num_threads = n


def blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]


def test_by_default_the_library_chooses_and_nothing_is_set(monkeypatch):
    fake = FakeBlas(4)
    monkeypatch.setattr(threads, "_blas", [fake])
    a, b = engine.randn(64, 100), engine.randn(100, 50)
    np.testing.assert_array_equal(a.mm(b).numpy(), a.numpy().dot(b.numpy()))
    assert not threads.active and fake.calls == []


def test_set_num_threads_sets_them_around_each_engine_product_and_puts_them_back(monkeypatch):
    fake = FakeBlas(4)
    monkeypatch.setattr(threads, "_blas", [fake])
    engine.set_num_threads(1)
    assert engine.get_num_threads() == 1
    a = engine.randn(64, 100, requires_grad=True)
    b = engine.randn(100, 50, requires_grad=True)
    out = a.mm(b)  # recorded: MatMul.forward
    assert fake.calls == [1, 4]
    out.sum().backward()  # two products in the backward
    assert fake.calls == [1, 4, 1, 4, 1, 4] and fake.num_threads == 4
    with engine.no_grad():
        a.mm(b)  # the tensor's fast path
    assert fake.calls[-2:] == [1, 4]
    np.testing.assert_allclose(a.grad.numpy(), np.ones((64, 50), np.float32).dot(b.detach().numpy().T), rtol=1e-5)


def test_below_the_threshold_a_product_runs_on_one_thread(monkeypatch):
    fake = FakeBlas(2)
    monkeypatch.setattr(threads, "_blas", [fake])
    threads.set_parallel_threshold(100_000)
    engine.randn(10, 10).mm(engine.randn(10, 10))  # 1,000 multiply-adds
    assert fake.calls == [1, 2]
    engine.randn(100, 100).mm(engine.randn(100, 100))  # 1,000,000: the library's own threads, untouched
    assert fake.calls == [1, 2]


def test_the_users_numpy_keeps_its_threads_with_the_real_blas():
    before = blas_threads()
    engine.set_num_threads(1)
    a, b = engine.randn(200, 300), engine.randn(300, 100)
    # one thread sums in another order than two: float32 rounding apart
    np.testing.assert_allclose(a.mm(b).numpy(), a.numpy().dot(b.numpy()), rtol=1e-4, atol=1e-4)
    assert blas_threads() == before  # put back after the engine's product


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True, None])
def test_a_bad_thread_count_is_refused_in_words(bad):
    with pytest.raises(RuntimeError, match="must be a positive integer"):
        engine.set_num_threads(bad)
    assert engine.get_num_threads() >= 1


@pytest.mark.parametrize("bad", [-1, 2.5, "many"])
def test_a_bad_threshold_is_refused_in_words(bad):
    with pytest.raises(ValueError, match="multiply-adds >= 0"):
        threads.set_parallel_threshold(bad)
