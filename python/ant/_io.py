"""Model directories (``ant train --out``, ``save``) as fitted estimators: ``ant.load``."""

import json
import math
import os
import re

import numpy as np

from ant import _ant
from ant._ensemble import ANTEnsembleClassifier, ANTEnsembleRegressor
from ant._estimators import DEFAULTS, TRAIN_PARAMS, ANTClassifier, ANTRegressor


def _classes(names, n_classes, kind=None):
    """``classes_`` from the class names a model stores, as the labels' ``kind`` says
    (a model saved from Python records it); else numbers when every name is one (the
    labels of a table or of numeric ``y``), else strings; ``0..n-1`` without names."""
    if names is None:
        return np.arange(n_classes)
    if kind == "bool":
        return np.array([n == "True" for n in names])
    if kind == "int":
        return np.array([int(n) for n in names])
    if kind == "float":
        return np.array([float(n) for n in names])
    if kind == "text":
        return np.array(names)
    if all(re.fullmatch(r"[+-]?\d+", n) for n in names):
        return np.array([int(n) for n in names])
    try:
        return np.array([float(n) for n in names])
    except ValueError:
        return np.array(names)


def _classes_of_dtype(names, dtype):
    """``classes_`` from their names in the labels' own NumPy dtype (uint8, float32,
    object, ...): they read back as they went in. Integers go through Python's ints, so
    uint64's top values hold."""
    if dtype.kind == "b":
        return np.array([n == "True" for n in names], dtype=dtype)
    if dtype.kind in "iu":
        return np.array([int(n) for n in names], dtype=dtype)
    if dtype.kind == "f":
        return np.array([float(n) for n in names], dtype=dtype)
    return np.array(names, dtype=dtype)


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
