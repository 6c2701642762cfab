"""Fit, predict, probabilities, leaves and paths, fitted attributes; rows and images."""

import json
import logging

import numpy as np
import pytest
from conftest import SMALL, same_bits

import ant


@pytest.fixture(scope="module")
def fitted_iris(iris):
    X, y = iris
    return ant.ANTClassifier(**SMALL).fit(X, y)


def test_iris_fit_predict_score(fitted_iris, iris):
    X, y = iris
    clf = fitted_iris
    proba = clf.predict_proba(X)
    assert proba.shape == (150, 3) and proba.dtype == np.float64
    np.testing.assert_allclose(proba.sum(axis=1), 1, atol=1e-5)
    assert set(clf.predict(X)) <= {0, 1, 2}
    assert np.array_equal(clf.predict(X), clf.classes_[proba.argmax(axis=1)])
    assert clf.score(X, y) > 0.8


def test_float32_and_float64_inputs_give_the_same_model(iris):
    X, y = iris
    a = ant.ANTClassifier(**SMALL).fit(X.astype(np.float32), y)
    b = ant.ANTClassifier(**SMALL).fit(X.astype(np.float64), y)
    assert a.decisions_ == b.decisions_
    assert same_bits(a.predict_proba(X), b.predict_proba(X.astype(np.float32)))


def test_labels_of_any_kind(iris):
    X, y = iris
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = ant.ANTClassifier(**SMALL).fit(X, names)
    assert list(clf.classes_) == ["setosa", "versicolor", "virginica"]
    assert clf.predict(X[:5]).dtype.kind == "U"
    by_index = ant.ANTClassifier(**SMALL).fit(X, y)
    assert same_bits(clf.predict_proba(X), by_index.predict_proba(X))


def test_fitted_attributes(fitted_iris):
    clf = fitted_iris
    assert clf.n_features_in_ == 4 and clf.input_shape_ == (4,)
    assert list(clf.classes_) == [0, 1, 2]
    assert clf.n_params_ > 0 and clf.flops_multi_path_ > 0
    assert clf.n_leaves_ == len(clf.leaves_) >= 1 and clf.n_nodes_ >= clf.n_leaves_
    assert clf.decisions_ and {"node", "level", "action", "valid_before", "valid_after"} <= set(clf.decisions_[0])
    assert clf.decisions_[0]["action"] in ("split", "deepen", "keep")
    assert clf.tree_summary_.startswith("node 0:")
    assert np.isfinite(clf.valid_nll_) and 0 <= clf.valid_metric_ <= 100
    cost = clf.cost(np.zeros((3, 4)))
    assert cost["params_total"] == clf.n_params_ and 0 < cost["params_single_path_avg"] <= clf.n_params_


def test_leaves_and_path_probabilities(fitted_iris, iris):
    X, _ = iris
    clf = fitted_iris
    leaf = clf.apply(X)
    assert leaf.shape == (150,) and set(leaf) <= set(clf.leaves_)
    reach = clf.path_proba(X)
    assert reach.shape == (150, clf.n_nodes_)
    np.testing.assert_allclose(reach[:, 0], 1, atol=1e-5)
    leaves = clf.leaf_proba(X)
    np.testing.assert_allclose(leaves.sum(axis=1), 1, atol=1e-5)
    path = clf.decision_path(X).toarray()
    assert path.shape == (150, clf.n_nodes_) and (path[:, 0] == 1).all()
    assert (path[np.arange(150), leaf] == 1).all()


def test_single_path_prediction_follows_the_greedy_leaf(iris):
    X, y = iris
    clf = ant.ANTClassifier(**dict(SMALL, max_depth=3), single_path=True).fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1, atol=1e-5)
    assert clf.score(X, y) > 0.7


def test_regression_one_and_several_outputs():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(300, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2
    reg = ant.ANTRegressor(**SMALL).fit(X, y)
    assert reg.predict(X).shape == (300,) and reg.n_outputs_ == 1
    assert reg.score(X, y) > 0.5
    Y = np.stack([y, -y], axis=1)
    reg2 = ant.ANTRegressor(**SMALL).fit(X, Y)
    assert reg2.predict(X).shape == (300, 2) and reg2.n_outputs_ == 2


@pytest.mark.parametrize("channels_axis", [False, True])
def test_images(digits, channels_axis):
    X, y = digits
    if channels_axis:
        X = X[:, None]  # (n, 1, 8, 8)
    # 8x8 digits, unshifted: two epochs must learn them (a 2-pixel shift is a quarter of one)
    clf = ant.ANTClassifier(preset="mnist-c", epochs_node=2, refine_epochs=1, max_depth=1, batch_size=64, lr=0.01, augment="none")
    clf.fit(X.astype(np.float32), y)
    assert clf.input_shape_ == (1, 8, 8) and clf.n_features_in_ == 64
    proba = clf.predict_proba(X)
    assert proba.shape == (600, 10)
    assert clf.score(X, y) > 0.5
    assert clf.apply(X).shape == (600,)


def test_images_with_channels(digits):
    X, y = digits
    X3 = np.repeat(X[:200, None], 3, axis=1)  # (n, 3, 8, 8)
    clf = ant.ANTClassifier(preset="mnist-c", epochs_node=2, refine_epochs=1, max_depth=1, batch_size=64)
    clf.fit(X3, y[:200])
    assert clf.input_shape_ == (3, 8, 8)
    assert clf.predict(X3).shape == (200,)
    with pytest.raises(ValueError, match=r"shape \(1, 8, 8\).*\(3, 8, 8\)"):
        clf.predict(X[:5])


def test_defaults_are_the_clis():
    clf = ant.ANTClassifier()
    assert (clf.epochs_node, clf.patience, clf.max_depth, clf.batch_size, clf.lr, clf.seed) == (
        100,
        None,
        10,
        512,
        1e-3,
        0,
    )
    assert (clf.width, clf.init, clf.ablation, clf.refine_epochs) == (256, "fresh", "none", None)
    assert (clf.router_balance, clf.router_confidence, clf.device) == (0.0, 0.0, "cpu")
    assert "mnist-c" in ant.CHOICES["preset"]


def test_progress_is_off_by_default_and_on_through_logging(iris, caplog):
    X, y = iris
    with caplog.at_level(logging.WARNING, logger="ant"):
        ant.ANTClassifier(**SMALL).fit(X, y)
    assert not [r for r in caplog.records if r.levelno < logging.WARNING]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="ant"):
        ant.ANTClassifier(**SMALL).fit(X, y)
    text = caplog.text
    assert "node 0 root epoch 1: train loss" in text and "refine epoch" in text
    assert "node 0: " in text  # a growth decision


def test_callback_receives_every_event(iris):
    X, y = iris
    events = []
    ant.ANTClassifier(**SMALL).fit(X, y, callback=events.append)
    kinds = {e["event"] for e in events}
    assert {"phase", "epoch", "decision"} <= kinds
    epoch = next(e for e in events if e["event"] == "epoch")
    assert {"phase", "epoch", "train_loss", "valid_loss", "valid_metric", "seconds"} <= set(epoch)


def test_an_exception_in_the_callback_stops_training(iris):
    X, y = iris

    def fail(event):
        if event["event"] == "epoch":
            raise RuntimeError("stop here")

    clf = ant.ANTClassifier(**SMALL)
    with pytest.raises(RuntimeError, match="stop here"):
        clf.fit(X, y, callback=fail)
    assert not hasattr(clf, "model_")
    clf.fit(X, y)
    assert clf.score(X, y) > 0.8


def test_ensembles_average_their_members(iris):
    X, y = iris
    ens = ant.ANTEnsembleClassifier(ant.ANTClassifier(**SMALL), n_members=2).fit(X, y)
    a, b = (m.predict_proba(X).astype(np.float32) for m in ens.members_)
    assert same_bits(ens.predict_proba(X), ((a + b) / np.float32(2)).astype(np.float64))
    assert ens.members_[0].decisions_ != ens.members_[1].decisions_ or not same_bits(a, b)
    member1 = ant.fit_member(ant.ANTClassifier(**SMALL), X, y, 1, 2)
    assert same_bits(member1.predict_proba(X), ens.members_[1].predict_proba(X))


def test_the_docstring_names_every_parameter():
    # The estimators take `ant train`'s parameters (ant.DEFAULTS, read from the Rust
    # declarations): each is named in the docstring a user reads.
    doc = ant.ANTClassifier.__doc__
    missing = [k for k in ant.DEFAULTS if f"``{k}``" not in doc]
    assert not missing, f"ANTClassifier's docstring does not name {missing}"
    assert "``device``" in doc and "``single_path" in doc


@pytest.mark.parametrize("cls", [ant.ANTClassifier, ant.ANTEnsembleClassifier])
def test_a_refit_forgets_the_feature_names_of_the_last(iris, digits, cls, tmp_path):
    """A refit on images after a fit on a DataFrame must not keep its 4 column names on a
    64-pixel model, for `save` to write into tree.json. Each fit names its features by
    its own X's columns, or not at all (as scikit-learn)."""
    pd = pytest.importorskip("pandas")
    X, y = iris
    tiny = dict(epochs_node=1, refine_epochs=1, max_depth=1, batch_size=64, width=8)

    def make(**params):
        if cls is ant.ANTEnsembleClassifier:
            return cls(ant.ANTClassifier(**tiny, **params), n_members=1)
        return cls(**tiny, **params)

    est = make().fit(pd.DataFrame(X, columns=list("abcd")), y)
    assert list(est.feature_names_in_) == list("abcd")
    est.fit(X, y)
    assert not hasattr(est, "feature_names_in_")
    est.fit(pd.DataFrame(X, columns=list("abcd")), y)
    images, labels = digits
    est.set_params(**({"estimator__preset": "mnist-c"} if cls is ant.ANTEnsembleClassifier else {"preset": "mnist-c"}))
    est.fit(images[:60], labels[:60])
    assert est.n_features_in_ == 64 and not hasattr(est, "feature_names_in_")
    if cls is ant.ANTClassifier:
        est.save(tmp_path / "m")
        assert json.loads((tmp_path / "m" / "tree.json").read_text())["estimator"]["feature_names"] is None
        assert not hasattr(ant.load(tmp_path / "m"), "feature_names_in_")
