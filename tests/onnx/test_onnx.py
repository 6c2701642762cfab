"""`ant export --format onnx`, checked by onnx.checker and run in onnxruntime against
`ant predict` on 1,000 samples: a mnist-c tree with splits, a SARCOS regression tree
and a tabular classifier. Multi-path and single-path predictions within 1e-4, the same
single-path leaves, and routing outputs that agree with the predictions.

Run: `pytest tests/onnx` with numpy, onnx, onnxruntime and pytest installed and the
CLI built (`cargo build --release`; ANT_BIN names another binary).
"""

import gzip
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

REPO = Path(__file__).resolve().parents[2]
ANT = os.environ.get("ANT_BIN", str(REPO / "target" / "release" / "ant"))
TOL = 1e-4


def ant(*args):
    r = subprocess.run([ANT, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def predictions(model, inputs, out, single):
    """`ant predict`'s values, leaves and every node's reach probability."""
    path = out / ("single.jsonl" if single else "multi.jsonl")
    ant("predict", "--model", model, "--input", inputs, "--output", path, "--reach",
        *(["--single-path"] if single else []))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    key = "probabilities" if "probabilities" in rows[0] else "prediction"
    values = np.array([np.atleast_1d(r[key]) for r in rows], dtype=np.float64)
    reach = np.array([r["reach"] for r in rows], dtype=np.float64)
    return values, np.array([r["leaf"] for r in rows]), reach


def run_onnx(model_dir, x, out):
    path = out / "model.onnx"
    ant("export", "--model", model_dir, "--format", "onnx", "--out", path)
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto, full_check=True)
    assert proto.opset_import[0].version >= 17
    meta = {p.key: json.loads(p.value) for p in proto.metadata_props}
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, {"input": x.astype(np.float32)}))), meta


def compare(model_dir, inputs, x, out):
    got, meta = run_onnx(model_dir, x, out)
    multi, leaf, reach = predictions(model_dir, inputs, out, single=False)
    single, single_leaf, _ = predictions(model_dir, inputs, out, single=True)
    assert got["prediction"].shape == multi.shape
    assert np.abs(got["prediction"] - multi).max() <= TOL
    assert np.abs(got["single_path_prediction"] - single).max() <= TOL
    np.testing.assert_array_equal(got["single_path_leaf"], single_leaf)
    np.testing.assert_array_equal(leaf, single_leaf)
    # Routing: reach sums to 1 over the leaves, and the greedy leaf follows P(left).
    assert got["reach"].shape == (len(x), len(meta["ant.leaves"]))
    np.testing.assert_allclose(got["reach"].sum(axis=1), 1.0, atol=1e-5)
    assert np.abs(got["reach"] - reach[:, meta["ant.leaves"]]).max() <= TOL
    routers = meta["ant.routers"]
    if routers:
        assert got["p_left"].shape == (len(x), len(routers))
        # P(left) = reach(left child) / reach(router), where the router is reached.
        nodes = json.loads((Path(model_dir) / "tree.json").read_text())["topology"]["nodes"]
        for j, r in enumerate(routers):
            seen = reach[:, r] > 1e-3
            p = reach[seen, nodes[r]["children"][0]] / reach[seen, r]
            assert np.abs(got["p_left"][seen, j] - p).max() <= 1e-3
    return got, meta


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx")


def test_mnist_c_tree_with_splits(out):
    model = out / "mnist"
    ant("train", "--preset", "mnist-c", "--data", REPO / "data" / "mnist", "--out", model,
        "--train-limit", 1000, "--epochs-node", 2, "--refine-epochs", 1, "--seed", 0,
        # Routers that start by splitting their samples: test images reach several leaves.
        "--router-init", "centred")
    tree = json.loads((model / "tree.json").read_text())
    assert any("router" in n for n in tree["topology"]["nodes"]), "the tree must split"
    raw = gzip.open(REPO / "data" / "mnist" / "t10k-images-idx3-ubyte.gz").read()
    n = 1000
    header = bytearray(raw[:16])
    header[4:8] = n.to_bytes(4, "big")
    images = out / "images.idx"
    images.write_bytes(bytes(header) + raw[16:16 + n * 784])
    x = np.frombuffer(raw[16:16 + n * 784], dtype=np.uint8).reshape(n, 1, 28, 28) / 255.0
    got, meta = compare(model, images, x, out)
    assert len(meta["ant.routers"]) >= 1
    assert len(set(got["single_path_leaf"])) >= 2, "single paths end in one leaf only"
    np.testing.assert_array_equal(got["label"], got["prediction"].argmax(axis=1))


def test_sarcos_regression_tree(out):
    model = out / "sarcos"
    ant("train", "--preset", "sarcos", "--data", REPO / "data" / "sarcos_inv_test.mat",
        "--out", model, "--test-fraction", 0.2, "--epochs-node", 3, "--refine-epochs", 2,
        "--seed", 0)
    # 1,000 rows as CSV: 21 inputs (the 7 targets left out).
    csv = out / "sarcos.csv"
    x = sarcos_inputs(REPO / "data" / "sarcos_inv_test.mat")[:1000]
    np.savetxt(csv, x, delimiter=",", fmt="%.9g",
               header=",".join(f"x{i}" for i in range(21)), comments="")
    x = np.loadtxt(csv, delimiter=",", skiprows=1)
    got, _ = compare(model, csv, x, out)
    assert got["prediction"].shape == (1000, 7)


def sarcos_inputs(path):
    """The 21 input columns of the SARCOS test file."""
    from scipy.io import loadmat  # noqa: PLC0415

    return loadmat(path)["sarcos_inv_test"][:, :21].astype(np.float64)


def test_tabular_classifier(out):
    # scikit-learn's breast cancer table (first line: its sizes and class names).
    lines = (REPO / "data" / "small" / "breast_cancer.csv").read_text().splitlines()[1:]
    values = np.array([[float(v) for v in line.split(",")] for line in lines])
    x, y = values[:, :-1], values[:, -1].astype(int)
    names = [f"f{i}" for i in range(x.shape[1])]
    data = out / "cancer.csv"
    with data.open("w") as f:
        f.write(",".join(names + ["target"]) + "\n")
        for row, label in zip(x, y):
            f.write(",".join(f"{v:.9g}" for v in row) + f",{label}\n")
    model = out / "cancer"
    ant("train", "--preset", "tabular", "--data", data, "--target", "target", "--task",
        "classification", "--out", model, "--epochs-node", 3, "--refine-epochs", 2,
        "--test-fraction", 0.2, "--seed", 0)
    # 1,000 samples: the rows again and again, each copy nudged.
    rng = np.random.default_rng(0)
    x = np.tile(x, (2, 1))[:1000] * rng.uniform(0.9, 1.1, size=(1000, x.shape[1]))
    csv = out / "cancer_inputs.csv"
    np.savetxt(csv, x, delimiter=",", fmt="%.9g", header=",".join(names), comments="")
    x = np.loadtxt(csv, delimiter=",", skiprows=1)
    got, _ = compare(model, csv, x, out)
    np.testing.assert_array_equal(got["label"], got["prediction"].argmax(axis=1))
