"""engine.testing.assert_close: PyTorch's tolerances and messages, word for word where it prints them."""

from __future__ import annotations

import pytest

import engine
from engine.testing import assert_close

MESSAGES = [  # (actual, expected, keyword arguments, torch 2.13's message)
    ([1.0, 2.0, 3.0], [1.0, 2.1, 3.5], {},
     "Tensor-likes are not close!\n\nMismatched elements: 2 / 3 (66.7%)\nGreatest absolute difference: 0.5 at index "
     "(2,) (up to 1e-05 allowed)\nGreatest relative difference: 0.1428571492433548 at index (2,) (up to 1.3e-06 "
     "allowed)"),
    ([1, 2], [1, 3], {},
     "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\nGreatest absolute difference: 1 at index "
     "(1,)\nGreatest relative difference: 0.3333333432674408 at index (1,)"),
    ([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0001]], {},
     "Tensor-likes are not close!\n\nMismatched elements: 1 / 4 (25.0%)\nGreatest absolute difference: "
     "0.00010013580322265625 at index (1, 1) (up to 1e-05 allowed)\nGreatest relative difference: "
     "2.503332325431984e-05 at index (1, 1) (up to 1.3e-06 allowed)"),
]


@pytest.mark.parametrize(("actual", "expected", "kwargs", "message"), MESSAGES)
def test_a_mismatch_is_told_in_pytorchs_words(actual, expected, kwargs, message):
    with pytest.raises(AssertionError) as caught:
        assert_close(engine.tensor(actual), engine.tensor(expected), **kwargs)
    assert str(caught.value) == message


def test_tolerances_follow_the_dtype_and_can_be_given():
    assert_close(engine.tensor([1.0]), engine.tensor([1.0 + 1e-6]))  # float32: within 1e-5 + 1.3e-6
    with pytest.raises(AssertionError):
        assert_close(engine.tensor([1.0], dtype=engine.float64), engine.tensor([1.0 + 1e-6], dtype=engine.float64))
    assert_close(engine.tensor([1.0]), engine.tensor([1.5]), rtol=0.5, atol=0.0)
    assert_close(engine.tensor([float("nan")]), engine.tensor([float("nan")]), equal_nan=True)
    with pytest.raises(AssertionError, match="not close"):
        assert_close(engine.tensor([float("nan")]), engine.tensor([float("nan")]))
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                                         "atol"):
        assert_close(engine.ones(1), engine.ones(1), rtol=0.1)


def test_shapes_dtypes_containers_and_the_message_of_ones_own():
    with pytest.raises(AssertionError, match="The values for attribute 'dtype' do not match: engine.float32 != "
                                             "engine.float64."):
        assert_close(engine.ones(2), engine.ones(2, dtype=engine.float64))
    assert_close(engine.ones(2), engine.ones(2, dtype=engine.float64), check_dtype=False)
    with pytest.raises(AssertionError, match="attribute 'shape' do not match"):
        assert_close(engine.ones(2), engine.ones(3))
    with pytest.raises(AssertionError, match=r"The failure occurred for item \['b'\]"):
        assert_close({"a": engine.ones(1), "b": engine.ones(2)}, {"a": engine.ones(1), "b": engine.zeros(2)})
    with pytest.raises(AssertionError, match=r"The failure occurred for item \[1\]"):
        assert_close([engine.ones(1), engine.ones(1)], [engine.ones(1), engine.zeros(1)])
    with pytest.raises(AssertionError, match="^the weights moved$"):
        assert_close(engine.ones(1), engine.zeros(1), msg="the weights moved")
    assert_close(2.0, 2.0 + 1e-9)
