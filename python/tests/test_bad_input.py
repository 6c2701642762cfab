"""Bad input from Python raises ValueError / TypeError / OSError with a clear message:
never a Rust panic, never an abort of the interpreter."""

import inspect

import numpy as np
import pytest
from conftest import SMALL

import ant


@pytest.fixture(scope="module")
def fitted(iris):
    X, y = iris
    return ant.ANTClassifier(**SMALL).fit(X, y)


def test_strings_and_objects_are_refused(iris):
    X, y = iris
    with pytest.raises(ValueError, match="could not convert string to float"):
        ant.ANTClassifier(**SMALL).fit(np.array([["a", "b"]] * 20), y[:20])
    with pytest.raises((TypeError, ValueError)):
        ant.ANTClassifier(**SMALL).fit(np.array([[{}, None]] * 20, dtype=object), y[:20])
    with pytest.raises(ValueError, match="Complex data not supported"):
        ant.ANTClassifier(**SMALL).fit(X.astype(complex), y)


@pytest.mark.parametrize("shape", [(150,), (150, 2, 2, 1, 1), (150, 0)])
def test_wrong_ndim_or_empty_samples(iris, shape):
    X, y = iris
    with pytest.raises(ValueError):
        ant.ANTClassifier(**SMALL).fit(np.zeros(shape), y)


def test_nan_and_inf_are_refused(iris, fitted):
    X, y = iris
    for bad in (np.nan, np.inf, -np.inf):
        Xb = X.copy()
        Xb[3, 1] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            ant.ANTClassifier(**SMALL).fit(Xb, y)
        with pytest.raises(ValueError, match="NaN|infinity"):
            fitted.predict(Xb)
    with pytest.raises(ValueError, match="overflows f32"):
        ant.ANTClassifier(**SMALL).fit(X * 1e300, y)
    yb = y.astype(float)
    yb[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ant.ANTRegressor(**SMALL).fit(X, yb)


def test_images_with_nan_are_refused(digits):
    X, y = digits
    X = X.copy()
    X[7, 2, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ant.ANTClassifier(preset="mnist-c").fit(X, y)


def test_lengths_must_agree(iris):
    X, y = iris
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ant.ANTClassifier(**SMALL).fit(X, y[:-1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ant.ANTClassifier(preset="mnist-c").fit(np.zeros((20, 8, 8)), y[:19])


def test_one_class_and_too_few_samples(iris):
    X, y = iris
    with pytest.raises(ValueError, match=r"only one class \(0\.0\)"):
        ant.ANTClassifier(**SMALL).fit(X, np.zeros(150))
    with pytest.raises(ValueError, match="at least 10 training samples, got 5 samples"):
        ant.ANTRegressor(**SMALL).fit(X[:5], y[:5].astype(float))
    with pytest.raises(ValueError, match="no validation samples"):
        ant.ANTClassifier(**SMALL).fit(X[:10], np.arange(10))
    with pytest.raises(ValueError, match="Unknown label type"):
        ant.ANTClassifier(**SMALL).fit(X, X[:, 0])


def test_wrong_features_at_prediction(fitted, iris):
    X, _ = iris
    with pytest.raises(ValueError, match="X has 3 features, but ANTClassifier is expecting 4"):
        fitted.predict(X[:, :3])
    with pytest.raises(ValueError, match="fitted on"):
        fitted.predict(np.zeros((2, 2, 2)))


@pytest.mark.parametrize(
    "params, error, message",
    [
        (dict(preset="mnist-z"), ValueError, "preset must be one of sarcos, tabular"),
        (dict(preset=3), TypeError, "preset must be a string"),
        (dict(epochs_node=0), ValueError, "epochs_node must be at least 1"),
        (dict(epochs_node=-1), ValueError, "epochs_node must be an integer from 0 to 18446744073709551615, got -1"),
        (dict(seed=2**64), ValueError, "seed must be an integer from 0 to"),
        (dict(baseline="mlp-1000"), ValueError, r"1 <= K <= 100"),
        (dict(epochs_node=2.5), TypeError, "epochs_node must be an integer"),
        (dict(lr=-1.0), ValueError, "lr must be a positive number"),
        (dict(lr="fast"), TypeError, "lr must be a number"),
        (dict(width=10**6), ValueError, "width must be at most 16384"),
        (dict(baseline="mlp-x"), ValueError, "baseline"),
        (dict(device="gpu"), ValueError, "`gpu` is not a device"),
        (dict(device="cuda:0"), ValueError, "this build of the Python package has no LibTorch"),
        (dict(preset="mnist-c"), ValueError, "preset mnist-c needs images, the data has flat rows"),
    ],
)
def test_bad_parameters(iris, params, error, message):
    X, y = iris
    with pytest.raises(error, match=message):
        ant.ANTClassifier(**{**SMALL, **params}).fit(X, y)


def test_rows_for_an_image_preset_and_images_for_rows(digits):
    X, y = digits
    with pytest.raises(ValueError, match="preset tabular needs flat rows, the data has images"):
        ant.ANTClassifier(**SMALL).fit(X, y)


def test_a_directory_that_is_not_a_model(tmp_path):
    with pytest.raises(FileNotFoundError, match="tree.json"):
        ant.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        ant.load(tmp_path / "missing")
    (tmp_path / "tree.json").write_text("{not json")
    with pytest.raises(OSError, match="tree.json: not a model file"):
        ant.load(tmp_path)
    (tmp_path / "tree.json").write_text('{"format": "ant-model-1"}')
    with pytest.raises(OSError, match="tree.json"):
        ant.load(tmp_path)


def test_damaged_weights(fitted, tmp_path):
    fitted.save(tmp_path)
    weights = next(tmp_path.glob("model-*.safetensors"))
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(OSError, match="does not belong with"):
        ant.load(tmp_path)


def test_unfitted_estimators_say_so(iris):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        ant.ANTClassifier().predict(iris[0])
    with pytest.raises(NotFittedError):
        ant.ANTRegressor().save("/nonexistent")


def test_an_ensemble_of_more_members_than_can_be_saved_is_refused_before_fitting(iris):
    """n_members=10**6 would train for hours, and 1001 every member before `save` refused
    them: both are refused at once, as the CLI refuses --ensemble 1001."""
    X, y = iris
    for n in (1001, 10**6):
        ens = ant.ANTEnsembleClassifier(ant.ANTClassifier(**SMALL), n_members=n)
        with pytest.raises(ValueError, match="from 1 to 1000"):
            ens.fit(X, y)


def test_column_names_equal_in_nfc_are_refused(iris):
    """DataFrame columns 'café' (composed) and 'cafe' + combining accent would train and
    save, then `ant eval` refuse every table for the model; the CLI refuses such a header
    at training."""
    pd = pytest.importorskip("pandas")
    X, y = iris
    df = pd.DataFrame(X[:, :2], columns=["caf\u00e9", "cafe\u0301"])
    with pytest.raises(ValueError, match="twice"):
        ant.ANTClassifier(**SMALL).fit(df, y)


def test_columns_below_float32s_normal_range_are_refused(iris, fitted):
    """Features or targets in units below float32's normal range (1e-40, 1e-50) would
    train on zeros (and score 66.7%); such columns are refused as the command line
    refuses them, by the same check in the crate. A value that small among others is a 0
    like any."""
    X, y = iris
    for scale in (1e-40, 1e-50):
        with pytest.raises(ValueError, match="X: column 0: every value is below f32's smallest normal"):
            ant.ANTClassifier(**SMALL).fit(X * scale, y)
    # float32 input holding subnormals is judged the same way (1e-50 is 0 in float32
    # already: a column of zeros, which trains as any constant column).
    with pytest.raises(ValueError, match="every value is below"):
        ant.ANTClassifier(**SMALL).fit((X * 1e-40).astype(np.float32), y)
    with pytest.raises(ValueError, match="y: column 0: every value is below"):
        ant.ANTRegressor(**SMALL).fit(X, np.arange(150) * 1e-45)
    Xp = X.copy()
    Xp[7, 0] = 1e-300
    ant.ANTClassifier(**SMALL).fit(Xp, y)
    assert fitted.predict(Xp[:8]).shape == (8,)


def test_columns_whose_spread_float32_cannot_hold_are_refused(iris):
    """A feature or target of Unix times (1.7e9 plus a few hundred) is a handful of
    float32 values 128 apart, and would train on nothing. The crate refuses it, naming
    the column and an offset that rescues it."""
    X, y = iris
    with pytest.raises(ValueError, match="X: column 0: its values vary by .* finer than f32"):
        ant.ANTClassifier(**SMALL).fit(X * np.array([100, 1, 1, 1]) + np.array([1.7e9, 0, 0, 0]), y)
    with pytest.raises(ValueError, match="y: column 0: .*subtract an offset such as 1000000"):
        ant.ANTRegressor(**SMALL).fit(X, 1e9 + 100 * X[:, 0])
    ant.ANTRegressor(**SMALL).fit(X, 1e3 + 10 * X[:, 0])


def test_a_column_float32_makes_constant_is_refused_one_value_at_two_widths_is_not(iris, caplog):
    """A column whose values differ only below float32's precision is refused, as one
    float32 blurs into several values is (trained as a constant, it would be data lost);
    one float32 value written at both widths (0.3 beside float64(float32(0.3))) is one
    number, and trains without a word."""
    X, y = iris
    X = X.astype(np.float64).copy()
    X[:, 1] = 0.3 + np.where(np.arange(len(X)) % 2 == 0, 0.0, 1e-9)
    with pytest.raises(ValueError, match="X: column 1: .*subtract an offset such as"):
        ant.ANTClassifier(**SMALL).fit(X, y)
    X[:, 1] = np.where(np.arange(len(X)) % 2 == 0, 0.3, np.float64(np.float32(0.3)))
    with caplog.at_level("WARNING", logger="ant"):
        ant.ANTClassifier(**SMALL).fit(X, y)
    assert not [r for r in caplog.records if "f32" in r.getMessage()]


def test_reach_of_inputs_beyond_float32_arithmetic_is_refused(fitted):
    """A row whose prediction is not finite is refused by `path_proba` and `leaf_proba`
    as by `predict`, not returned as NaN."""
    huge = np.array([[3e38, -3e38, 3e38, -3e38]])
    for method in (fitted.predict, fitted.path_proba, fitted.leaf_proba):
        with pytest.raises(RuntimeError, match="not finite"):
            method(huge)


def test_labels_a_table_could_not_tell_apart_are_refused(iris):
    """The labels '1', '01' and '1.0' would train three classes that `ant eval` reads as
    one (73% error against Python's 40%), and 'nan' a class of its own."""
    X, y = iris
    for labels in (["1", "01", "x"], ["1", "nan", "2"]):
        with pytest.raises(ValueError, match="one class|not finite"):
            ant.ANTClassifier(**SMALL).fit(X, np.array(labels, dtype=object)[y])
    # Among text, `inf` is a grade like any.
    grades = np.array(["sup", "inf", "mid"], dtype=object)[y]
    assert set(ant.ANTClassifier(**SMALL).fit(X, grades).classes_) == {"sup", "inf", "mid"}


def small(cls):
    """A small estimator of ``cls`` (an ensemble: of one small member)."""
    if cls is ant.ANTEnsembleClassifier:
        return cls(ant.ANTClassifier(**SMALL), n_members=1)
    if cls is ant.ANTEnsembleRegressor:
        return cls(ant.ANTRegressor(**SMALL), n_members=1)
    return cls(**SMALL)


def bool_params(est):
    """The yes/no parameters of ``est``, nested ones too (``estimator__single_path``):
    those whose value, left at its default, is a bool."""
    return sorted(k for k, v in est.get_params(deep=True).items() if isinstance(v, bool))


@pytest.mark.parametrize(
    "cls", [ant.ANTClassifier, ant.ANTRegressor, ant.ANTEnsembleClassifier, ant.ANTEnsembleRegressor]
)
def test_yes_no_parameters_take_only_bools(iris, cls):
    """`single_path='False'` must not predict single-path (any truthy value counting as
    yes). Every parameter whose default is a bool takes True or False (or a NumPy bool)
    only."""
    X, y = iris
    names = bool_params(small(cls))
    assert names, f"{cls.__name__} has no yes/no parameter"
    for name in names:
        for bad in ["False", "no", 0, 1, None]:
            est = small(cls).set_params(**{name: bad})
            with pytest.raises(TypeError, match=f"{name.split('__')[-1]} must be True or False.*{bad!r}"):
                est.fit(X, y)
            assert not hasattr(est, "model_") and not hasattr(est, "members_")


def test_a_yes_no_parameter_set_after_fit_is_checked_at_prediction(iris):
    X, y = iris
    clf = ant.ANTClassifier(**SMALL, single_path=np.True_).fit(X, y)
    assert clf.predict(X[:2]).shape == (2,)
    clf.set_params(single_path="False")
    with pytest.raises(TypeError, match="single_path must be True or False"):
        clf.predict_proba(X)


def bool_arguments():
    """(owner, function, argument) for every public function and method of ``ant``
    (its own, not scikit-learn's) with an argument that defaults to a bool."""
    found = set()
    for owner_name in ant.__all__:
        owner = getattr(ant, owner_name)
        if isinstance(owner, type):
            funcs = inspect.getmembers(owner, inspect.isfunction)
        elif inspect.isfunction(owner):
            funcs = [(owner_name, owner)]
        else:
            continue
        for name, f in funcs:
            if name.startswith("_") or not f.__module__.startswith("ant"):
                continue
            for p in inspect.signature(f).parameters.values():
                if isinstance(p.default, bool):
                    found.add((owner_name, name, p.name))
    return sorted(found)


def test_yes_no_arguments_take_only_bools(fitted, iris, tmp_path):
    """`save(dir, overwrite='no')` must not replace a saved model. Every bool argument of
    the package refuses any other value, naming itself."""
    X, y = iris
    other = ant.ANTClassifier(**dict(SMALL, seed=5)).fit(X, y)
    fitted.save(tmp_path / "m")
    before = (tmp_path / "m" / "tree.json").read_bytes()
    calls = {("save", "overwrite"): lambda value: other.save(tmp_path / "m", overwrite=value)}
    found = bool_arguments()
    assert ("ANTClassifier", "save", "overwrite") in found
    for owner, method, arg in found:
        assert (method, arg) in calls, f"{owner}.{method}({arg}=...) has no case in this test"
    for (_, arg), call in calls.items():
        for bad in ["no", "False", 0, 1, None]:
            with pytest.raises(TypeError, match=f"{arg} must be True or False.*{bad!r}"):
                call(bad)
            assert (tmp_path / "m" / "tree.json").read_bytes() == before
    calls[("save", "overwrite")](np.True_)
    assert (tmp_path / "m" / "tree.json").read_bytes() != before


def test_ensemble_misuse_is_a_clear_error(iris, fitted):
    """Each misuse is said as such, not as a bare IndexError or AttributeError (after all
    of training, for a regressor in a classifier ensemble)."""
    from sklearn.exceptions import NotFittedError

    X, y = iris
    with pytest.raises(ValueError, match="got none"):
        ant.ANTEnsembleClassifier.from_members([])
    with pytest.raises(NotFittedError):
        ant.ANTEnsembleClassifier.from_members([ant.ANTClassifier()])
    with pytest.raises(TypeError, match="member 0 must be an ANTClassifier"):
        ant.ANTEnsembleClassifier.from_members([ant.ANTRegressor()])
    with pytest.raises(TypeError, match="estimator must be an ANTRegressor"):
        ant.ANTEnsembleRegressor(ant.ANTClassifier(**SMALL), n_members=2).fit(X, y)
    with pytest.raises(ValueError, match="must be members 0 to 1 of one ensemble, each once"):
        ant.ANTEnsembleClassifier.from_members([fitted, fitted])


def test_a_blank_label_is_refused(iris):
    """A class '' is refused from Python: a table reads it as a missing label (`ant eval`
    would refuse its rows, `ant predict` write empty cells)."""
    X, y = iris
    labels = np.array(["", "x", "y"])[y]
    with pytest.raises(ValueError, match="blank"):
        ant.ANTClassifier(**SMALL).fit(X, labels)


def test_a_parameter_that_does_nothing_is_said_and_pixels_on_another_scale_too(digits, caplog):
    """A parameter a fit does nothing with (`width` of a conv preset) is said, not
    refused: scikit-learn's tools set parameters in bulk. Images fitted in 0..255 and
    given in 0..1 (bytes) are not predicted without a word."""
    X, y = digits
    clf = ant.ANTClassifier(preset="mnist-c", width=16, epochs_node=1, refine_epochs=1, max_depth=1, batch_size=64)
    with caplog.at_level("WARNING", logger="ant"):
        clf.fit((X * 255).astype(np.float32), y)
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "parameter width does nothing here" in said, said
    caplog.clear()
    with caplog.at_level("WARNING", logger="ant"):
        clf.predict((X * 255).astype(np.float32))
    assert "on another scale" not in " ".join(r.getMessage() for r in caplog.records)
    with caplog.at_level("WARNING", logger="ant"):
        clf.predict((X * 255).astype(np.uint8))
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "on another scale" in said and "times less" in said, said


def test_fit_member_takes_whole_numbers(iris):
    """member=1.7 must not train member 1, nor -1 raise a bare OverflowError."""
    X, y = iris
    for member, n in ((1.7, 2), (-1, 2), (0, True)):
        with pytest.raises(ValueError, match="whole number"):
            ant.fit_member(ant.ANTClassifier(**SMALL), X, y, member, n)
