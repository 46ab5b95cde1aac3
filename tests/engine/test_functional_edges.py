"""``nn.functional`` at its edges, as PyTorch 2.13 answers: ``F.sigmoid``/``F.tanh`` of integers are float32 (they
were float64: the Function ran on the int64 array); ``cross_entropy`` reads a target of the input's shape as class
probabilities and any other as class indices, whatever its dtype (a float target of another shape was called
the wrong size, where PyTorch asks for a Long one); ``one_hot`` of nothing cannot infer its classes; ``relu`` of a
bool refuses. Answers printed by torch 2.13.0, and held to the torch installed where there is one."""

from __future__ import annotations

from tests.engine.helpers import table_tests

CASES = [
    ("F.sigmoid(y)", ((2,), "float32", [0.880797, 0.5])),
    ("F.tanh(y)", ((2,), "float32", [0.9640276, 0.0])),
    ("F.sigmoid(x).dtype == engine.float32", ((), "bool", [True])),
    ("F.cross_entropy(x, y.float())", ("RuntimeError", "expected target dtype to be Long or Byte, but got Float")),
    ("F.cross_entropy(x, engine.ones(2, 3, dtype=engine.long))",
     ("RuntimeError", "Expected floating point type for target with class probabilities, got Long")),
    ("F.cross_entropy(x, yf)", ((), "float32", [1.7738335])),
    ("F.cross_entropy(x, y)", ((), "float32", [0.2738336])),
    ("F.cross_entropy(x[0], yf[0])", ((), "float32", [3.2413113])),
    ("F.one_hot(engine.zeros(0, dtype=engine.long))",
     ("RuntimeError", "Can not infer total number of classes from empty tensor.")),
    ("F.one_hot(engine.zeros(0, dtype=engine.long), 3)", ((0, 3), "int64", [])),
    ("F.relu(y.bool())", ("RuntimeError", "Boolean inputs not supported for relu")),
    ("y.bool().relu()", ("RuntimeError", "Boolean inputs not supported for relu")),
    ("y.bool().relu_()", ("RuntimeError", "Boolean inputs not supported for relu")),
    ("F.relu(y)", ((2,), "int64", [2, 0])),
]


def _env(lib):
    return {"engine": lib, "F": lib.nn.functional, "x": lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]]),
            "y": lib.tensor([2, 0]), "yf": lib.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])}


test_the_engine_answers_as_pytorch, test_the_table_is_pytorchs = table_tests(CASES, _env)
