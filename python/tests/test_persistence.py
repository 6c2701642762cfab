"""Model directories shared with the CLI (both ways), pickling, and the same tree from
Python and from `ant train` on the same data and seed."""

import json
import pickle

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from conftest import REPO, SMALL, run_cli, same_bits, write_table

import ant


@pytest.fixture(scope="module")
def fitted(iris):
    X, y = iris
    return ant.ANTClassifier(**SMALL).fit(X, y)


def test_save_then_load_predicts_the_same(fitted, iris, tmp_path):
    X, _ = iris
    fitted.save(tmp_path / "m")
    back = ant.load(tmp_path / "m")
    assert isinstance(back, ant.ANTClassifier)
    assert same_bits(back.predict_proba(X), fitted.predict_proba(X))
    assert np.array_equal(back.apply(X), fitted.apply(X))
    assert list(back.classes_) == list(fitted.classes_)
    assert back.decisions_ == fitted.decisions_
    # The parameters it was trained with (the preset's choices made explicit) train it again.
    assert back.get_params() == dict(fitted.get_params(), augment="none")
    again = clone(back).fit(*iris)
    assert same_bits(again.predict_proba(X), fitted.predict_proba(X))


def test_regressor_save_then_load(tmp_path):
    rng = np.random.RandomState(1)
    X = rng.normal(size=(200, 4))
    y = X[:, 0] - 2 * X[:, 1]
    reg = ant.ANTRegressor(**SMALL).fit(X, y)
    reg.save(tmp_path)
    back = ant.load(tmp_path)
    assert isinstance(back, ant.ANTRegressor)
    assert same_bits(back.predict(X), reg.predict(X))


@pytest.mark.parametrize("dump, load", [(pickle.dumps, pickle.loads), (None, None)])
def test_pickle_and_joblib(fitted, iris, tmp_path, dump, load):
    X, _ = iris
    if dump is None:
        joblib.dump(fitted, tmp_path / "m.joblib")
        back = joblib.load(tmp_path / "m.joblib")
    else:
        back = load(dump(fitted))
    assert same_bits(back.predict_proba(X), fitted.predict_proba(X))
    assert back.decisions_ == fitted.decisions_ and back.n_params_ == fitted.n_params_
    # The copy is a model of its own: fitting it again leaves the original as it was.
    before = fitted.predict_proba(X)
    back.set_params(seed=5).fit(*iris)
    assert same_bits(fitted.predict_proba(X), before)


def test_python_model_in_the_cli(fitted, iris, tmp_path):
    """A model saved from Python is read by `ant eval` and `ant predict`."""
    X, y = iris
    fitted.save(tmp_path / "m")
    table = write_table(tmp_path / "iris.csv", X, y)
    report = json.loads(run_cli("eval", "--model", tmp_path / "m", "--data", table, "--json"))
    wrong = int(np.sum(fitted.predict(X.astype(np.float32)) != y))
    assert report["test_samples"] == 150
    assert report["multi_path_error"] == pytest.approx(100 * wrong / 150)
    assert report["params_total"] == fitted.n_params_
    run_cli("predict", "--model", tmp_path / "m", "--input", table, "--output", tmp_path / "p.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    proba = np.array([line["probabilities"] for line in lines])
    np.testing.assert_allclose(proba, fitted.predict_proba(X.astype(np.float32)), rtol=0, atol=1e-6)
    assert [line["leaf"] for line in lines] == list(fitted.apply(X.astype(np.float32)))
    # scikit-learn's own iris table (features, then the label) reads the same way.
    run_cli("eval", "--model", tmp_path / "m", "--data", REPO / "data/small/iris.csv")


def test_labels_cross_to_the_cli_by_value(iris, tmp_path):
    """A model fitted on the float labels 0.0, 1.0, 2.0 must take a table's 0, 1, 2 (not
    "not one of the model's classes [0.0, 1.0, 2.0]"), and integer labels past 2^53 must
    not be scored against merged classes."""
    X, y = iris
    for labels in (np.array([0.0, 1.0, 2.0]), np.array([9007199254740993, 9007199254740992, 5])):
        clf = ant.ANTClassifier(**SMALL).fit(X, labels[y])
        clf.save(tmp_path / str(labels.dtype))
        table = write_table(tmp_path / "t.csv", X, [int(v) for v in labels[y]])
        report = json.loads(run_cli("eval", "--model", tmp_path / str(labels.dtype), "--data", table, "--json"))
        wrong = int(np.sum(clf.predict(X.astype(np.float32)) != labels[y]))
        assert report["multi_path_error"] == pytest.approx(100 * wrong / 150)


def test_byte_images_are_read_as_the_cli_reads_idx_bytes(digits, tmp_path):
    """uint8 images would train on 0..255 in Python, while `ant` divides IDX bytes by
    255, so a model crossing between them would predict one class for every image.
    Bytes mean pixels / 255 on both sides."""
    X, y = digits
    X8 = np.round(X[:200] * 255).astype(np.uint8)
    F = dict(preset="mnist-c", epochs_node=1, refine_epochs=1, max_depth=1, batch_size=64, augment="none")
    from_bytes = ant.ANTClassifier(**F).fit(X8, y[:200])
    from_floats = ant.ANTClassifier(**F).fit(X8 / 255.0, y[:200])
    assert same_bits(from_bytes.predict_proba(X8), from_floats.predict_proba(X8 / 255.0))
    # Any integer type is bytes (int64 and lists are not read raw).
    for same in (X8.astype(np.int64), X8.tolist()):
        assert same_bits(from_bytes.predict_proba(same), from_bytes.predict_proba(X8))


def train_in_the_cli(out, table, test, seed, **params):
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in params.items()]
    run_cli(
        "train",
        "--preset",
        "tabular",
        "--data",
        table,
        "--test-data",
        test,
        "--target",
        "label",
        "--task",
        "classification",
        "--seed",
        seed,
        "--out",
        out,
        *flags,
    )


def test_cli_model_in_python_and_the_same_tree_from_both(tmp_path):
    """`ant train` and `ANTClassifier.fit` on the same rows and seed grow the same tree
    and give the same scores; the CLI's model loads in Python and predicts the same."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    rng = np.random.RandomState(0)
    order = rng.permutation(len(y))
    train, test = order[:140], order[140:]
    X32 = X.astype(np.float32)
    table = write_table(tmp_path / "train.csv", X32[train], y[train])
    test_table = write_table(tmp_path / "test.csv", X32[test], y[test])
    params = dict(SMALL, max_depth=2)
    train_in_the_cli(tmp_path / "cli", table, test_table, 7, **params)
    ours = ant.ANTClassifier(**params, seed=7).fit(X32[train], y[train])
    cli = ant.load(tmp_path / "cli")
    assert cli.decisions_ == ours.decisions_
    assert cli.tree_summary_ == ours.tree_summary_
    assert same_bits(cli.predict_proba(X32), ours.predict_proba(X32))
    report = json.loads((tmp_path / "cli" / "report.json").read_text())
    wrong = int(np.sum(ours.predict(X32[test]) != y[test]))
    assert report["multi_path_error"] == pytest.approx(100 * wrong / len(test))
    assert report["valid_nll"] == ours.valid_nll_


def test_an_ensemble_member_is_the_same_from_the_cli_and_python(tmp_path):
    (Xtr, Xte), (ytr, yte) = load_wine_split()
    table = write_table(tmp_path / "train.csv", Xtr, ytr)
    test_table = write_table(tmp_path / "test.csv", Xte, yte)
    run_cli(
        "train",
        "--preset",
        "tabular",
        "--data",
        table,
        "--test-data",
        test_table,
        "--target",
        "label",
        "--task",
        "classification",
        "--seed",
        4,
        "--ensemble",
        2,
        "--member",
        1,
        "--out",
        tmp_path / "ens",
        *[f"--{k.replace('_', '-')}={v}" for k, v in SMALL.items()],
    )
    cli = ant.load(tmp_path / "ens" / "member-1")
    ours = ant.fit_member(ant.ANTClassifier(**SMALL, seed=4), Xtr, ytr, 1, 2)
    assert cli.decisions_ == ours.decisions_
    assert same_bits(cli.predict_proba(Xte), ours.predict_proba(Xte))


def load_wine_split():
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    order = np.random.RandomState(0).permutation(len(y))
    X = X.astype(np.float32)
    return (X[order[:140]], X[order[140:]]), (y[order[:140]], y[order[140:]])


def test_ensembles_cross_between_python_and_the_cli(iris, tmp_path):
    X, y = iris
    ens = ant.ANTEnsembleClassifier(ant.ANTClassifier(**SMALL, seed=3), n_members=2).fit(X, y)
    ens.save(tmp_path / "ens")
    table = write_table(tmp_path / "iris.csv", X, y)
    report = json.loads(run_cli("eval", "--model", tmp_path / "ens", "--data", table, "--json"))
    assert report["ensemble_size"] == 2
    wrong = int(np.sum(ens.predict(X.astype(np.float32)) != y))
    assert report["multi_path_error"] == pytest.approx(100 * wrong / 150)
    back = ant.load(tmp_path / "ens")
    assert isinstance(back, ant.ANTEnsembleClassifier) and back.estimator.seed == 3
    assert same_bits(back.predict_proba(X), ens.predict_proba(X))
    # A second save would replace the ensemble member by member, and one over a single
    # model would hide it; both are refused, as the command line does.
    before = (tmp_path / "ens" / "ensemble.json").read_bytes()
    with pytest.raises(ValueError, match="holds an ensemble"):
        ens.save(tmp_path / "ens")
    assert (tmp_path / "ens" / "ensemble.json").read_bytes() == before
    ant.ANTClassifier(**SMALL).fit(X, y).save(tmp_path / "one")
    with pytest.raises(ValueError, match="holds a single model"):
        ens.save(tmp_path / "one")
    # A model saved over a member would break the ensemble.
    member = (tmp_path / "ens" / "member-1" / "tree.json").read_bytes()
    with pytest.raises(ValueError, match="is part of the ant directory"):
        ant.ANTClassifier(**SMALL).fit(X, y).save(tmp_path / "ens" / "member-1", overwrite=True)
    assert (tmp_path / "ens" / "member-1" / "tree.json").read_bytes() == member


def test_an_ensemble_of_members_of_other_classes_is_refused(iris):
    """`from_members` must not average members trained on other classes under member
    0's names: its saved ensemble would not load."""
    X, y = iris
    est = ant.ANTClassifier(**SMALL)
    a = ant.fit_member(est, X, np.array(["a", "b", "c"])[y], 0, 2)
    b = ant.fit_member(est, X, np.array(["x", "y", "z"])[y], 1, 2)
    with pytest.raises(ValueError, match="classes"):
        ant.ANTEnsembleClassifier.from_members([a, b])


def test_save_over_a_model_needs_overwrite(fitted, iris, tmp_path):
    """`save` into a directory holding a model must not replace it silently: as the
    CLI's --force, it is refused unless asked, and then replaces it whole."""
    X, y = iris
    fitted.save(tmp_path / "m")
    before = (tmp_path / "m" / "tree.json").read_bytes()
    other = ant.ANTClassifier(**dict(SMALL, seed=3)).fit(X, y)
    with pytest.raises(Exception, match="holds a trained model") as refused:
        other.save(tmp_path / "m")
    # In Python's terms (not `--force`), paths as they are.
    assert "overwrite=True" in str(refused.value) and "--force" not in str(refused.value)
    fitted.save(tmp_path / "--seed")
    with pytest.raises(ValueError) as refused:
        fitted.save(tmp_path / "--seed")
    assert str(refused.value).startswith(str(tmp_path / "--seed") + ":"), refused.value
    assert (tmp_path / "m" / "tree.json").read_bytes() == before
    other.save(tmp_path / "m", overwrite=True)
    back = ant.load(tmp_path / "m")
    assert same_bits(back.predict_proba(X), other.predict_proba(X))


@pytest.mark.parametrize("name", ["report.json", "records.jsonl", "prune.json", "tree.json"])
def test_save_never_replaces_a_file_ant_did_not_write(fitted, iris, tmp_path, name):
    """A user's report.json (or records, pruning summary) beside a model must not be
    deleted by a save over it. Only files whose bytes the directory's manifest
    names are replaced: `overwrite=True` refuses the user's, naming it, and keeps it."""
    X, y = iris
    fitted.save(tmp_path / "m")
    (tmp_path / "m" / name).write_text("the user's own\n")
    other = ant.ANTClassifier(**dict(SMALL, seed=3)).fit(X, y)
    with pytest.raises(Exception, match=name.replace(".", r"\.")):
        other.save(tmp_path / "m", overwrite=True)
    assert (tmp_path / "m" / name).read_text() == "the user's own\n"


@pytest.mark.parametrize(
    "labels",
    [
        np.array([False, True]),
        np.array(["01", "02", "03"]),
        np.array([1.0, 2.0, 3.0]),
        # Dtypes must not change (uint8 -> int64, float32 -> float64, object -> <U), nor
        # uint64's top value come back as a float.
        np.array([2**64 - 1, 0, 1], dtype=np.uint64),
        np.array([0, 1, 2], dtype=np.uint8),
        np.array([-1, 0, 1], dtype=np.int8),
        np.array([-1.0, 1.0, 3.0], dtype=np.float32),
        np.array(["setosa", "versi", "virg"], dtype=object),
    ],
    ids=["bool", "text-digits", "float", "uint64-top", "uint8", "int8", "float32", "object"],
)
def test_labels_come_back_as_they_went_in(iris, tmp_path, labels):
    """Bool labels must not come back as 'False'/'True', nor '01', '02', '03' as the ints
    1, 2, 3 (`score` would then raise "Mix of label input types")."""
    X, y = iris
    y = labels[np.asarray(y) % len(labels)]
    clf = ant.ANTClassifier(**SMALL).fit(X, y)
    clf.save(tmp_path / "m")
    back = ant.load(tmp_path / "m")
    assert list(back.classes_) == list(clf.classes_)
    assert back.classes_.dtype == clf.classes_.dtype
    assert back.score(X, y) == clf.score(X, y)


def test_a_2d_target_and_feature_names_come_back(tmp_path):
    """A regressor fitted on y of shape (n, 1) must not predict (n,) after `ant.load`,
    nor lose `feature_names_in_`: pickle keeps both, so does `save`."""
    rng = np.random.RandomState(2)
    X = rng.normal(size=(120, 3))
    y = (X[:, :1] * 2).reshape(-1, 1)
    reg = ant.ANTRegressor(**SMALL).fit(X, y)
    reg.save(tmp_path / "r")
    back = ant.load(tmp_path / "r")
    assert back.predict(X).shape == reg.predict(X).shape == (120, 1)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    reg = ant.ANTRegressor(**SMALL).fit(frame, y[:, 0])
    reg.save(tmp_path / "f")
    back = ant.load(tmp_path / "f")
    assert list(back.feature_names_in_) == ["a", "b", "c"]
    assert back.predict(frame).shape == (120,)


def test_a_cli_model_reads_dataframes_by_column_name(iris, tmp_path):
    """A model of a headed table (`ant train`) loaded in Python has `feature_names_in_`,
    so a DataFrame with its columns in another order is not read by position (to give
    other probabilities); the CLI reads a table's columns by name."""
    pd = pytest.importorskip("pandas")
    X, y = iris
    names = ["sl", "sw", "pl", "pw"]
    rows = "".join(",".join(map(str, x)) + f",c{t}\n" for x, t in zip(X, y))
    (tmp_path / "t.csv").write_text(",".join(names) + ",species\n" + rows)
    run_cli(
        "train", "--preset", "tabular", "--target", "species", "--task", "classification",
        "--epochs-node", "2", "--refine-epochs", "1", "--max-depth", "1", "--width", "8",
        "--data", tmp_path / "t.csv", "--out", tmp_path / "m",
    )
    back = ant.load(tmp_path / "m")
    assert list(back.feature_names_in_) == names
    df = pd.DataFrame(X, columns=names)
    shuffled = df[["pw", "sl", "pl", "sw"]]
    assert same_bits(back.predict_proba(shuffled), back.predict_proba(df))


def test_labels_equal_in_nfc_are_refused(iris):
    """Labels 'café' composed and decomposed would become two classes, and `ant predict`
    then head two columns 'p_café'."""
    X, y = iris
    labels = np.array(["caf\u00e9", "cafe\u0301", "x"], dtype=object)[y]
    with pytest.raises(ValueError, match="one class"):
        ant.ANTClassifier(**SMALL).fit(X, labels)


@pytest.mark.parametrize(
    "names, want",
    [
        (["0.1", "0.10000000000000001", "2"], None),
        (["1000", "1_000", "2000"], None),
        (["1", "2", "\uff11"], None),
        (["1", " 2", "3"], None),
        (["9007199254740992", "9007199254740993"], [9007199254740992, 9007199254740993]),
        (["-1", "0", "10"], [-1, 0, 10]),
        (["-1.5", "0.1", "2.5", "1e-20"], [-1.5, 0.1, 2.5, 1e-20]),
        (["a", "1"], None),
    ],
    ids=["decimal", "underscore", "fullwidth", "space", "beyond-float", "ints", "floats", "text"],
)
def test_class_names_become_numbers_only_when_no_two_merge(names, want):
    """`ant.load` must not read a CLI model's class names with Python's int() and
    float(), which take '1_000', full-width digits and spaces, and round
    0.10000000000000001 to 0.1: two classes the CLI keeps apart would become one label.
    Names become numbers only when each is one in ASCII that Python holds exactly;
    else they stay the CLI's strings (`want` None)."""
    from ant._io import _classes, _classes_of_dtype

    got = _classes(names, len(names))
    if want is None:
        assert got.dtype.kind == "U" and list(got) == names
    else:
        assert got.dtype.kind in "if" and list(got) == want
    # A recorded kind or dtype (a model saved from Python) never merges two names either.
    for kind in ["int", "float", "bool"]:
        assert len(set(_classes(names, len(names), kind).tolist())) == len(names), kind
    for dtype in ["uint8", "int64", "float32", "float64", "bool"]:
        assert len(set(_classes_of_dtype(names, np.dtype(dtype)).tolist())) == len(names), dtype


def test_a_cli_models_classes_stay_apart_in_python(iris, tmp_path):
    """End to end: labels 0.1 and 0.10000000000000001, two classes to `ant train`, are
    two classes of `ant.load`, predicted as the CLI does."""
    X, y = iris
    labels = np.array(["0.1", "0.10000000000000001", "2"])[y]
    rows = "".join(",".join(map(str, x)) + f",{t}\n" for x, t in zip(X, labels))
    (tmp_path / "t.csv").write_text("a,b,c,d,label\n" + rows)
    run_cli(
        "train", "--preset", "tabular", "--target", "label", "--task", "classification",
        "--epochs-node", "4", "--refine-epochs", "2", "--max-depth", "1", "--width", "8", "--lr", "0.02",
        "--data", tmp_path / "t.csv", "--out", tmp_path / "m",
    )
    back = ant.load(tmp_path / "m")
    assert list(back.classes_) == ["0.1", "0.10000000000000001", "2"]
    out = run_cli("predict", "--model", tmp_path / "m", "--input", tmp_path / "t.csv").splitlines()
    cli = [line.split(",")[1] for line in out[1:]]
    pd = pytest.importorskip("pandas")
    assert list(back.predict(pd.DataFrame(X.astype(np.float32), columns=list("abcd")))) == cli
    assert len(set(cli)) > 1


def test_a_cli_model_of_a_pandas_written_csv_reads_that_dataframe(iris, tmp_path):
    """A CSV written by `pd.DataFrame(X).to_csv` has the header 0,1,2,3; the CLI's
    model, loaded, names its features '0'..'3', and predicting on that DataFrame
    (columns the ints 0..3) must not die with a pandas KeyError.
    Columns are matched to the names by their text; columns that are not the names
    raise a ValueError naming them."""
    pd = pytest.importorskip("pandas")
    X, y = iris
    frame = pd.DataFrame(X)
    frame[4] = y
    frame.to_csv(tmp_path / "t.csv", index=False)
    run_cli(
        "train", "--preset", "tabular", "--target", "4", "--task", "classification",
        "--epochs-node", "2", "--refine-epochs", "1", "--max-depth", "1", "--width", "8",
        "--data", tmp_path / "t.csv", "--out", tmp_path / "m",
    )
    back = ant.load(tmp_path / "m")
    assert list(back.feature_names_in_) == ["0", "1", "2", "3"]
    df = pd.DataFrame(X)
    want = back.predict_proba(pd.DataFrame(X, columns=["0", "1", "2", "3"]))
    assert same_bits(back.predict_proba(df), want)
    assert same_bits(back.predict_proba(df[[3, 1, 0, 2]]), want)
    with pytest.raises(ValueError, match=r"missing: '3'.*not seen at fit: '7'"):
        back.predict(df.rename(columns={3: 7}))
    with pytest.raises(ValueError, match=r"missing: '3'"):
        back.predict(df[[0, 1, 2]])
    with pytest.raises(ValueError, match=r"not seen at fit: '9'"):
        back.predict(df.assign(**{"9": 0.0}).rename(columns={"9": 9}))


@pytest.mark.parametrize("param, other", [("width", 8), ("lr", 0.05), ("max_depth", 2)])
def test_an_ensemble_of_members_trained_with_other_parameters_is_refused(iris, param, other):
    """`from_members` must not take members of other widths: the saved ensemble.json,
    which records one value of each parameter for all, would claim member 0's for every
    member."""
    X, y = iris
    small = dict(SMALL, max_depth=1, epochs_node=2, refine_epochs=1)
    a = ant.fit_member(ant.ANTClassifier(**small), X, y, 0, 2)
    b = ant.fit_member(ant.ANTClassifier(**dict(small, **{param: other})), X, y, 1, 2)
    want = rf"member 1 was trained with {param}={other!r}, member 0 with {param}={small[param]!r}"
    with pytest.raises(ValueError, match=want):
        ant.ANTEnsembleClassifier.from_members([a, b])
    c = ant.fit_member(ant.ANTClassifier(**dict(small, device="cpu")), X, y, 1, 2)
    assert len(ant.ANTEnsembleClassifier.from_members([a, c]).members_) == 2
