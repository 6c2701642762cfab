"""Shared data and settings. Everything here is small: the whole suite runs in a few
minutes on 2 cores."""

import os
import pathlib
import subprocess

# Lets scikit-learn's check_array_api_input run (with numpy's namespace: the estimators
# take numpy arrays only); it must be set before scipy is first imported.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris

REPO = pathlib.Path(__file__).resolve().parents[2]

#: Small training settings: a few epochs per candidate, a small tree.
SMALL = dict(width=16, epochs_node=4, refine_epochs=2, max_depth=2, batch_size=32, lr=0.02, patience=2)


@pytest.fixture(scope="session")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


@pytest.fixture(scope="session")
def digits():
    """600 digits as (n, 8, 8) images, values in [0, 1]."""
    X, y = load_digits(return_X_y=True)
    return (X[:600] / 16.0).reshape(-1, 8, 8), y[:600]


def ant_binary():
    """The `ant` command line of this checkout (built by `cargo build --release` or
    `cargo test --release`; ANT_BIN overrides)."""
    path = pathlib.Path(os.environ.get("ANT_BIN", REPO / "target" / "release" / "ant"))
    if not path.is_file():
        raise FileNotFoundError(f"{path}: build the CLI first (cargo build --release)")
    return path


def run_cli(*args):
    """Runs `ant ARGS...`, returns its stdout; a failure fails the test with its stderr."""
    out = subprocess.run([str(ant_binary()), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, f"ant {' '.join(map(str, args))}: {out.stderr}"
    return out.stdout


def write_table(path, X, y):
    """A CSV file with a header, the features then the label (as scikit-learn's)."""
    header = ",".join([f"x{j}" for j in range(X.shape[1])] + ["label"])
    # float32 values written exactly: the CLI reads the same numbers Python trains on.
    rows = [",".join([repr(float(np.float32(v))) for v in row] + [str(label)]) for row, label in zip(X, y)]
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
