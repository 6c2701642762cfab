"""scikit-learn estimators over the Rust ``ant`` crate: ``ANTClassifier``, ``ANTRegressor``.

Training, prediction and model files are the crate's (``ant._ant``); this module checks
and converts the inputs as scikit-learn estimators do, and exposes the fitted tree.
"""

import inspect
import json
import math
import os
import unicodedata
from collections import Counter

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ant import _ant
from ant._checks import check_bool, check_bool_params
from ant._events import dispatcher

#: The defaults of ``ant train`` (read from the Rust crate, not copied here).
DEFAULTS = _ant.defaults()
#: The names each named option accepts.
CHOICES = _ant.choices()
#: The training options, named as ``ant train``'s flags (``epochs_node``: ``--epochs-node``).
TRAIN_PARAMS = tuple(DEFAULTS)
#: Every parameter of the estimators (name: default): the training options, then those
#: of this package (a bool default: a yes/no option, which takes a bool only).
PARAMS = {**DEFAULTS, "device": "cpu", "single_path": False}

_DTYPES = (np.float32, np.float64)


def _floats(X):
    """``X`` as a C-contiguous float32 or float64 array, as given: the crate narrows each
    value to float32 and refuses those float32 cannot hold (as it refuses a table's)."""
    dtype = X.dtype if X.dtype in _DTYPES else np.float64
    return np.ascontiguousarray(X, dtype=dtype)


def _is_images(X):
    """Whether ``X`` is an array of images, ``(n, h, w)`` or ``(n, c, h, w)``."""
    if sp.issparse(X) or hasattr(X, "columns"):
        return False
    try:
        return np.ndim(X) >= 3
    except (TypeError, ValueError):
        return False


def _init_taking(params):
    """An ``__init__`` that stores each of ``params`` (name: default) as an attribute, as
    scikit-learn asks, with the signature scikit-learn reads them from: the parameters
    are declared once, in the Rust crate."""

    def __init__(self, **kwargs):
        unknown = set(kwargs) - set(params)
        if unknown:
            raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(unknown))}")
        for name, default in params.items():
            setattr(self, name, kwargs.get(name, default))

    keyword = inspect.Parameter.KEYWORD_ONLY
    self_ = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    rest = [inspect.Parameter(k, keyword, default=v) for k, v in params.items()]
    __init__.__signature__ = inspect.Signature([self_, *rest])
    return __init__


class _ANTBase(BaseEstimator):
    """What the classifier and the regressor share: parameters, inputs, the fitted tree.

    Parameters: every training parameter of ``ant train`` (``DEFAULTS``), then
    ``device`` (``"cpu"``, ``"torch"``, ``"cuda:N"``) and ``single_path``."""

    __init__ = _init_taking(PARAMS)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags

    def _train_params(self):
        """The training parameters for the crate, which checks them; first, this
        package's own: every fit goes through here."""
        check_bool_params(self)
        return {k: getattr(self, k) for k in TRAIN_PARAMS}

    # --- inputs ------------------------------------------------------------------

    def _inputs(self, X, y=None, *, reset, y_kwargs=None):
        """``X`` (and ``y``) checked and converted as scikit-learn does; images too.
        A fit (``reset``) forgets the feature names of the last: only a DataFrame's
        columns name the new features (as scikit-learn's ``validate_data``)."""
        if reset:
            self.__dict__.pop("feature_names_in_", None)
        if _is_images(X):
            return self._image_inputs(X, y, reset=reset, y_kwargs=y_kwargs or {})
        kwargs = dict(dtype=_DTYPES, reset=reset)
        X = self._by_feature_names(X, reset)
        if y is None and not reset:
            X = validate_data(self, X, **kwargs)
        else:
            X, y = validate_data(self, X, y, **kwargs, **(y_kwargs or {}))
        if reset:
            self.input_shape_ = (X.shape[1],)
            _check_unique_names(getattr(self, "feature_names_in_", None))
        return X, y

    def _by_feature_names(self, X, reset):
        """A DataFrame whose columns are the fitted names, in any order, as a frame of
        those names in their order: a model reads its columns by name, as ``ant`` reads
        a table's. Columns are matched by their text (``str``), as a table's header
        names them: columns ``0..n-1`` of ``pd.DataFrame(X)`` are a CSV's header
        ``0,1,...``. Columns that are not the fitted names raise a ``ValueError``
        naming those missing and those not fitted."""
        names = getattr(self, "feature_names_in_", None)
        columns = getattr(X, "columns", None)
        if reset or names is None or columns is None:
            return X
        names = [str(n) for n in names]
        columns = list(columns)
        if columns == names:
            return X
        given = [str(c) for c in columns]
        all_text = all(isinstance(c, str) for c in columns)
        if len(set(given)) == len(given) and set(given) == set(names):
            if all_text:
                return X[names]
            # Columns of other types (ints): picked by position, then named as fitted,
            # so that scikit-learn's check of the names finds them.
            at = {c: j for j, c in enumerate(given)}
            return X.iloc[:, [at[n] for n in names]].set_axis(names, axis=1)
        if all_text:
            # scikit-learn's own ValueError names the columns unseen and missing.
            return X
        missing = [n for n in names if n not in set(given)]
        unseen = [c for c in given if c not in set(names)]
        repeated = sorted(c for c, k in Counter(given).items() if k > 1)
        what = "; ".join(
            f"{label}: {', '.join(map(repr, cols))}"
            for label, cols in (("missing", missing), ("not seen at fit", unseen), ("repeated", repeated))
            if cols
        )
        raise ValueError(
            f"X's columns must be the feature names {type(self).__name__} was fitted with "
            f"(compared as text: {', '.join(map(repr, names))}); {what}"
        )

    def _image_inputs(self, X, y, *, reset, y_kwargs):
        # Integer pixels (uint8, int64, a list of ints) are bytes of 0..255, read as ``ant``
        # reads IDX and CIFAR-10 files: divided by 255, so that a model fitted here and one
        # trained by the command line take the same images the same way, whatever the
        # integer type. Floats are taken as they are (0..1 for such a model).
        kind = (X.dtype if hasattr(X, "dtype") else np.asarray(X).dtype).kind
        X = check_array(X, allow_nd=True, dtype=_DTYPES, estimator=self)
        if kind in "iu":
            X = X / 255.0
        if X.ndim > 4:
            raise ValueError(
                f"X must be (n, height, width) or (n, channels, height, width) images, got shape {X.shape}"
            )
        shape = (1,) + X.shape[1:] if X.ndim == 3 else X.shape[1:]
        if reset:
            if y is None:
                raise ValueError(
                    f"This {type(self).__name__} estimator requires y to be passed, but the target y is None."
                )
            multi = y_kwargs.get("multi_output", False)
            y = check_array(y, ensure_2d=False, dtype=None if not multi else np.float64)
            if not multi:
                y = column_or_1d(y, warn=True)
            check_consistent_length(X, y)
            self.n_features_in_ = math.prod(shape)
            self.input_shape_ = shape
        else:
            check_is_fitted(self)
            if shape != tuple(self.input_shape_):
                raise ValueError(
                    f"X holds samples of shape {shape}, but {type(self).__name__} was fitted on {tuple(self.input_shape_)}"
                )
        return X, y

    def _X32(self, X):
        check_is_fitted(self)
        X, _ = self._inputs(X, reset=False)
        return _floats(X)

    # --- fitting -----------------------------------------------------------------

    def _fit_atomically(self, fit):
        """Runs ``fit()``; if it fails (bad input, Ctrl-C), the estimator is left as it
        was before, fitted or not."""
        before = dict(self.__dict__)
        try:
            return fit()
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _record(self, labels=None, y_2d=False, dtype=None):
        """What a model directory keeps of this fit beyond the model (``pickle`` keeps it
        all): the labels' kind and NumPy dtype, the DataFrame's column names, a 2-D
        ``y``."""
        names = getattr(self, "feature_names_in_", None)
        return {
            "labels": labels,
            "feature_names": None if names is None else [str(n) for n in names],
            "y_2d": bool(y_2d),
            "dtype": dtype,
        }

    def _set_model(self, model):
        """The fitted tree and what is known of it."""
        meta = json.loads(model.meta_json())
        summary = model.summary()
        self.model_ = model
        self.decisions_ = meta["decisions"]
        self.tree_summary_ = model.outline()
        self.leaves_ = np.asarray(model.leaves(), dtype=np.int64)
        self.n_nodes_ = summary["nodes"]
        self.n_leaves_ = summary["leaves"]
        self.depth_ = summary["depth"]
        self.n_params_ = summary["params_total"]
        self.flops_multi_path_ = summary["flops_multi_path"]
        self.valid_nll_ = meta["valid_nll"]
        self.valid_metric_ = meta["valid_metric"]

    # --- the tree ----------------------------------------------------------------

    def apply(self, X):
        """The leaf (node index) each sample's greedy path reaches, ``(n,)``."""
        X32 = self._X32(X)
        _, leaf = self.model_.predict(X32, True)
        return leaf.astype(np.int64)

    def path_proba(self, X):
        """The probability of each sample reaching each node, ``(n, n_nodes_)``: 1 at
        the root; at a router, its probability splits between the two children."""
        X32 = self._X32(X)
        return self.model_.node_reach(X32).astype(np.float64)

    def leaf_proba(self, X):
        """The probability of each sample reaching each leaf, ``(n, n_leaves_)`` in the
        order of ``leaves_``: the weights of the leaves' predictions (rows sum to 1)."""
        return self.path_proba(X)[:, self.leaves_]

    def decision_path(self, X):
        """The nodes of each sample's greedy path as a sparse indicator matrix
        ``(n, n_nodes_)`` (as scikit-learn's trees)."""
        leaves = self.apply(X)
        paths = {int(leaf): self.model_.path(int(leaf)) for leaf in np.unique(leaves)}
        indices = [paths[int(leaf)] for leaf in leaves]
        indptr = np.cumsum([0] + [len(p) for p in indices])
        flat = np.concatenate([np.asarray(p, dtype=np.int64) for p in indices]) if indices else np.zeros(0, np.int64)
        data = np.ones(len(flat), dtype=np.int64)
        return sp.csr_matrix((data, flat, indptr), shape=(len(leaves), self.n_nodes_))

    def cost(self, X):
        """The accounting of ``ant eval`` on ``X``: parameters and FLOPs per sample,
        multi-path and single-path (on the path each sample takes, averaged)."""
        leaves = self.apply(X)
        costs = {leaf: (params, flops) for leaf, params, flops in self.model_.leaf_costs()}
        path = np.array([costs[int(leaf)] for leaf in leaves], dtype=np.float64).reshape(-1, 2)
        return {
            "params_total": self.n_params_,
            "params_single_path_avg": float(path[:, 0].mean()) if len(path) else 0.0,
            "flops_multi_path": float(self.flops_multi_path_),
            "flops_single_path": float(path[:, 1].mean()) if len(path) else 0.0,
        }

    def save(self, path, overwrite=False):
        """Writes the model into the directory ``path`` as ``ant train --out`` does
        (``tree.json`` and the weights): ``ant eval``, ``ant predict``, ``ant plot`` and
        ``ant.load`` read it. A directory that holds a model is replaced only with
        ``overwrite=True`` (the command line's ``--force``)."""
        check_is_fitted(self)
        overwrite = check_bool(overwrite, "overwrite")
        self.model_.save(os.fspath(path), overwrite)
        return self

    def _values(self, X):
        """Raw predictions (class probabilities or values), float32 ``(n, outputs)``."""
        X32 = self._X32(X)
        values, _ = self.model_.predict(X32, check_bool(self.single_path, "single_path"))
        return values


def _check_unique_names(names, what="X names the column"):
    """Column names compared as ``ant`` compares a table's header (trimmed, in Unicode's
    NFC) must each be given once: a saved model reads tables by its column names. (Labels
    are checked in the crate, as ``ant`` reads a table's labels.)"""
    if names is None:
        return
    seen = {}
    for j, name in enumerate(names):
        key = unicodedata.normalize("NFC", str(name).strip())
        if key in seen:
            raise ValueError(
                f"{what} {str(name)!r} twice ({seen[key]} and {j}, the same name in "
                "Unicode's NFC): ant reads tables and writes predictions by these names"
            )
        seen[key] = j


def _label_kind(classes):
    """How class names (text in ``tree.json``) read back: the labels' kind."""
    kind = np.asarray(classes).dtype.kind
    return {"b": "bool", "i": "int", "u": "int", "f": "float"}.get(kind, "text")


class ANTClassifier(ClassifierMixin, _ANTBase):
    """An Adaptive Neural Tree classifier (Tanno et al., ICML 2019).

    The parameters are ``ant train``'s options, with its defaults (the paper's
    protocol): ``preset`` (module families: ``tabular`` for rows; ``mnist-a/b/c``,
    ``cifar10-a/b/c`` for images), ``ablation``, ``init``, ``epochs_node``, ``patience``
    (``None``: the paper's 5), ``refine_epochs`` (``None``: the preset's), ``max_depth``,
    ``width``, ``batch_size``, ``lr``, ``seed``, ``valid_fraction``, ``augment``
    (``None``: the preset's, images only), ``router_init``, ``router_balance``,
    ``router_confidence``, ``baseline``, ``image_norm``, ``select``, ``valid_rows``,
    ``pool_rule``, ``accept``, ``init_from`` (a model directory of a single-path CNN to
    start from), and ``device`` (``cpu``; ``torch`` / ``cuda:N`` in a build with
    LibTorch). ``single_path=True`` predicts with each sample's most likely leaf alone
    instead of the mixture of all leaves.

    ``X``: rows ``(n, d)`` or images ``(n, h, w)`` / ``(n, c, h, w)``, float32 or float64
    (computed in float32). A seeded 10% of each class is held out for validation
    (``valid_rows="last"``: the last 10% of the rows).
    """

    def fit(self, X, y, callback=None):
        """Grows and refines the tree on ``X``, ``y``. ``callback(event)``, if given,
        receives each training event as a dict (see ``ant._events``)."""
        return self._fit_atomically(lambda: self._fit(X, y, callback=callback))

    def _fit(self, X, y, member=None, callback=None):
        X, y = self._inputs(X, y, reset=True)
        check_classification_targets(y)
        classes, labels = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            # A numpy scalar as Python's own value: 0.0, not np.float64(0.0).
            one = classes[0].item() if hasattr(classes[0], "item") else classes[0]
            raise ValueError(f"y has only one class ({one!r}): a classifier needs samples of at least 2 classes")
        model = _ant.fit_classifier(
            self._train_params(),
            self.device,
            _floats(X),
            labels.astype(np.int64).ravel(),
            [str(c) for c in classes],
            member,
            dispatcher(callback, classification=True),
            json.dumps(self._record(labels=_label_kind(classes), dtype=np.asarray(classes).dtype.str if np.asarray(classes).dtype.kind != "O" else "object")),
        )
        self.classes_ = classes
        self._set_model(model)
        return self

    def predict_proba(self, X):
        """Class probabilities ``(n, n_classes)``, in the order of ``classes_``."""
        return self._values(X).astype(np.float64)

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        values = self._values(X)
        return self.classes_[np.argmax(values, axis=1)]


class ANTRegressor(RegressorMixin, _ANTBase):
    """An Adaptive Neural Tree regressor (Tanno et al., ICML 2019): one or several
    outputs, standardised for training. Parameters as ``ANTClassifier``'s."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def fit(self, X, y, callback=None):
        """Grows and refines the tree on ``X`` and ``y`` (``(n,)`` or ``(n, outputs)``)."""
        return self._fit_atomically(lambda: self._fit(X, y, callback=callback))

    def _fit(self, X, y, member=None, callback=None):
        X, y = self._inputs(X, y, reset=True, y_kwargs=dict(y_numeric=True, multi_output=True))
        y = np.asarray(y, dtype=np.float64)
        if y.ndim > 2:
            raise ValueError(f"y must be (n,) or (n, outputs), got shape {y.shape}")
        y2 = y.reshape(len(y), -1)
        model = _ant.fit_regressor(
            self._train_params(),
            self.device,
            _floats(X),
            _floats(y2),
            member,
            dispatcher(callback, classification=False),
            json.dumps(self._record(y_2d=y.ndim == 2)),
        )
        self.n_outputs_ = y2.shape[1]
        self._y_ndim = y.ndim
        self._set_model(model)
        return self

    def predict(self, X):
        """Predictions ``(n,)``, or ``(n, outputs)`` when fitted on a 2-D ``y``."""
        values = self._values(X).astype(np.float64)
        return values.ravel() if getattr(self, "_y_ndim", 1) == 1 and values.shape[1] == 1 else values
