"""Model directories (``ant train --out``, ``save``) as fitted estimators: ``ant.load``."""

import json
import math
import os
import re
from decimal import Decimal

import numpy as np

from ant import _ant
from ant._ensemble import ANTEnsembleClassifier, ANTEnsembleRegressor
from ant._estimators import DEFAULTS, TRAIN_PARAMS, ANTClassifier, ANTRegressor


# The spellings of numbers, in ASCII only (Python's int() and float() also take '1_000',
# full-width and other Unicode digits, and surrounding spaces, which ant reads as text).
# A canonical integer is how the crate writes one (src/data/labels.rs): no sign but '-',
# no leading zeros, '0' for zero.
_CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]*")
_INT = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _ints(names, spelling=_INT):
    """The names as Python ints when each is an integer spelled so, else ``None``."""
    if all(spelling.fullmatch(n) for n in names):
        return [int(n) for n in names]
    return None


def _floats(names):
    """The names as floats when each is a decimal number that a float holds exactly as
    written (its ``repr`` is the same number: ``0.1``, ``2.5``, ``1e-20``, not
    ``0.10000000000000001``, which is ``0.1`` once a float), else ``None``."""
    if not all(_DECIMAL.fullmatch(n) for n in names):
        return None
    values = [float(n) for n in names]
    exact = all(math.isfinite(v) and Decimal(repr(v)) == Decimal(n) for v, n in zip(values, names))
    return values if exact else None


def _distinct(values, names):
    """``values`` (a class per name) when they are as many classes as the names, else the
    names themselves: two classes are never merged into one label."""
    if values is not None and len(np.unique(values)) == len(names):
        return values
    return np.array(names)


def _bools(names):
    if all(n in ("True", "False") for n in names):
        return [n == "True" for n in names]
    return None


def _classes(names, n_classes, kind=None):
    """``classes_`` from the class names a model stores, as the labels' ``kind`` says
    (a model saved from Python records it); else ints when every name is an integer as
    ``ant`` writes one, floats when every name is a decimal number a float holds
    exactly, else strings; ``0..n-1`` without names. Names that would become one value
    (``1_000`` and ``1000``, ``0.1`` and ``0.10000000000000001``, which ``ant`` keeps
    apart) stay strings: classes are never merged."""
    if names is None:
        return np.arange(n_classes)
    names = list(names)
    if kind == "bool":
        values = _bools(names)
    elif kind == "int":
        values = _ints(names)
    elif kind == "float":
        values = _floats(names)
    elif kind == "text":
        values = None
    else:
        values = _ints(names, _CANONICAL_INT)
        if values is None:
            values = _floats(names)
    return _distinct(None if values is None else np.array(values), names)


def _classes_of_dtype(names, dtype):
    """``classes_`` from their names in the labels' own NumPy dtype (uint8, float32,
    object, ...): they read back as they went in. Integers go through Python's ints, so
    uint64's top values hold. Names that are not of that dtype, or that would become one
    value, stay strings (as ``_classes``)."""
    names = list(names)
    if dtype.kind in "biuf":
        values = {"b": _bools, "i": _ints, "u": _ints, "f": _float_spellings}[dtype.kind](names)
        try:
            values = None if values is None else np.array(values, dtype=dtype)
        except (OverflowError, ValueError):
            values = None
        return _distinct(values, names)
    return np.array(names, dtype=dtype)


def _float_spellings(names):
    """The names as floats when each is a decimal number in ASCII (no precision asked:
    they were written from floats of the recorded dtype)."""
    if all(_DECIMAL.fullmatch(n) for n in names):
        return [float(n) for n in names]
    return None


def estimator_from_model(model, device, params=None):
    """The fitted ``ANTClassifier`` / ``ANTRegressor`` of a loaded ``_ant.Model``, with
    the parameters it was trained with (``params`` overrides some)."""
    meta = json.loads(model.meta_json())
    summary = model.summary()
    config = meta["config"]
    kwargs = {k: config.get(k, DEFAULTS[k]) for k in TRAIN_PARAMS}
    kwargs.update(params or {})
    record = meta.get("estimator") or {}
    if summary["task"] == "classification":
        est = ANTClassifier(**kwargs, device=device)
        est.classes_ = _classes(meta["class_names"], summary["outputs"], record.get("labels"))
        if record.get("dtype") is not None and meta["class_names"] is not None:
            est.classes_ = _classes_of_dtype(meta["class_names"], np.dtype(record["dtype"]))
    else:
        est = ANTRegressor(**kwargs, device=device)
        est.n_outputs_ = summary["outputs"]
        est._y_ndim = 2 if record.get("y_2d") else 1
    target = (meta.get("provenance") or {}).get("target") or {}
    if record.get("feature_names") is not None:
        est.feature_names_in_ = np.array(record["feature_names"], dtype=object)
    elif target.get("columns") is not None and target.get("index") is not None:
        # A model of a headed table (`ant train --target`): its features are the header's
        # other columns, which DataFrames are then matched by, as the CLI reads tables.
        columns = list(target["columns"])
        del columns[target["index"]]
        est.feature_names_in_ = np.array(columns, dtype=object)
    est.input_shape_ = tuple(summary["input_shape"])
    est.n_features_in_ = math.prod(est.input_shape_)
    est._set_model(model)
    return est


def load(path, device="cpu"):
    """The model (or ensemble) saved in the directory ``path`` by ``ant train --out``,
    ``save`` or ``ant train --ensemble``, as a fitted estimator on ``device``.

    Anything wrong with the directory (missing, not a model, damaged, weights that do
    not belong with its ``tree.json``) raises ``OSError`` naming the file."""
    path = os.fspath(path)
    if _ant.is_ensemble(path):
        return ensemble_from_models(_ant.load_ensemble(path, device), device)
    return estimator_from_model(_ant.Model.load(path, device), device)


def ensemble_from_models(models, device):
    """The fitted ensemble of loaded members (``ant.load`` of an ensemble directory)."""
    run_seed = json.loads(models[0].meta_json())["provenance"]["member"]["run_seed"]
    members = [estimator_from_model(m, device, {"seed": run_seed}) for m in models]
    cls = ANTEnsembleClassifier if isinstance(members[0], ANTClassifier) else ANTEnsembleRegressor
    return cls.from_members(members)
