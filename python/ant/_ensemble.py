"""Ensembles of ANTs (the paper's Tables 7 and 8): N members, member K trained with its
own seed on its own order of the training rows (so its own validation rows), exactly as
``ant train --ensemble N --member K``; predictions are the mean of the members'."""

import json
import os

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted

from ant import _ant
from ant._checks import check_bool_params
from ant._estimators import ANTClassifier, ANTRegressor
from ant._member import fit_member

# The most members an ensemble may have: `ant train --ensemble` and `ensemble.json` allow
# no more.
MAX_MEMBERS = 1000


def _check_same_training(members):
    """Members must have been trained with the same parameters: ``ensemble.json`` records
    one value of each for all (member 0's), and each member's own seed. A ``ValueError``
    names the first that differs, and its two values."""
    configs = [json.loads(m.model_.meta_json())["config"] for m in members]
    first = configs[0]
    for k, config in enumerate(configs[1:], start=1):
        for name in sorted(set(first) | set(config)):
            if name == "seed":
                continue  # each member's own (the run's seed is checked by the crate)
            a, b = first.get(name), config.get(name)
            if a != b:
                raise ValueError(
                    f"member {k} was trained with {name}={b!r}, member 0 with {name}={a!r}: "
                    "the members of an ensemble are trained with the same parameters "
                    "(its ensemble.json records one value of each for all)"
                )


class _ANTEnsembleBase(BaseEstimator):
    def __init__(self, estimator=None, n_members=8, backend="sequential"):
        self.estimator = estimator
        self.n_members = n_members
        self.backend = backend

    def _member_estimator(self):
        if self.estimator is None:
            return self._default_estimator()
        self._check_member_kind(self.estimator, "estimator")
        return clone(self.estimator)

    def _check_member_kind(self, member, what):
        """A member of this ensemble's kind (an ``ANTClassifier`` for a classifier
        ensemble): another raised a bare ``AttributeError`` after all of training."""
        kind = type(self._default_estimator())
        if not isinstance(member, kind):
            raise TypeError(f"{what} must be an {kind.__name__} for {type(self).__name__}, got {type(member).__name__}")

    def fit(self, X, y, callback=None):
        """Trains the members: one after the other (``backend="sequential"``), or as
        Ray tasks on the cluster this process is connected to (``backend="ray"``). If
        that fails (or Ctrl-C), the ensemble is left as it was."""
        members = self._fit_members(X, y, callback)
        self._set_members(members)
        return self

    def _fit_members(self, X, y, callback):
        check_bool_params(self)
        n = self.n_members
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_MEMBERS:
            raise ValueError(
                f"n_members must be an integer from 1 to {MAX_MEMBERS} (as the CLI's "
                f"--ensemble; an ensemble saves at most that many), got {n!r}"
            )
        est = self._member_estimator()
        if self.backend == "ray":
            from ant.ray import fit_members

            members = fit_members(est, X, y, int(n))
        elif self.backend == "sequential":
            members = [fit_member(est, X, y, k, n, callback) for k in range(n)]
        else:
            raise ValueError(f"backend must be 'sequential' or 'ray', got {self.backend!r}")
        return members

    @classmethod
    def from_members(cls, members):
        """The fitted ensemble of ``members``: members 0 to n-1 of one ensemble, as
        ``fit_member`` or ``ant.ray.fit_members`` fit them."""
        members = list(members)
        if not members:
            raise ValueError("from_members needs the fitted members of an ensemble, got none")
        ens = cls(n_members=len(members))
        for k, m in enumerate(members):
            ens._check_member_kind(m, f"member {k}")
            check_is_fitted(m)
        ens.estimator = clone(members[0])
        ens._set_members(members)
        return ens

    def _set_members(self, members):
        # The crate's check of what loading the saved ensemble asks (members 0 to n-1
        # of one ensemble, one task, input, classes): refused here, not after saving.
        _ant.check_ensemble([m.model_ for m in members])
        _check_same_training(members)
        first = members[0]
        self.members_ = list(members)
        self.n_features_in_ = first.n_features_in_
        self.input_shape_ = first.input_shape_
        # The names of this fit's columns, or none (not those of an earlier fit).
        self.__dict__.pop("feature_names_in_", None)
        if hasattr(first, "feature_names_in_"):
            self.feature_names_in_ = first.feature_names_in_

    def _mean_values(self, X):
        """The mean of the members' raw predictions, in float32 as ``ant eval`` takes it."""
        check_is_fitted(self)
        total = None
        for m in self.members_:
            v = m._values(X)
            total = v.copy() if total is None else total + v
        return total / np.float32(len(self.members_))

    def save(self, path):
        """Writes ``ensemble.json`` and ``member-K/`` into ``path``, as ``ant train
        --ensemble N`` does (``ant eval`` and ``ant.load`` read it). As the command line,
        it refuses a directory that holds a model, an ensemble or a run: an ensemble is
        not replaced in place (delete it first)."""
        check_is_fitted(self)
        _ant.save_ensemble(os.fspath(path), [m.model_ for m in self.members_])
        return self


class ANTEnsembleClassifier(ClassifierMixin, _ANTEnsembleBase):
    """An ensemble of ``n_members`` ``ANTClassifier`` (``estimator``, default
    ``ANTClassifier()``): mean class probabilities."""

    def _default_estimator(self):
        return ANTClassifier()

    def _set_members(self, members):
        super()._set_members(members)
        self.classes_ = members[0].classes_

    def predict_proba(self, X):
        return self._mean_values(X).astype(np.float64)

    def predict(self, X):
        values = self._mean_values(X)
        return self.classes_[np.argmax(values, axis=1)]


class ANTEnsembleRegressor(RegressorMixin, _ANTEnsembleBase):
    """An ensemble of ``n_members`` ``ANTRegressor`` (``estimator``, default
    ``ANTRegressor()``): the mean of the members' predictions."""

    def _default_estimator(self):
        return ANTRegressor()

    def _set_members(self, members):
        super()._set_members(members)
        self.n_outputs_ = members[0].n_outputs_
        self._y_ndim = getattr(members[0], "_y_ndim", 1)

    def predict(self, X):
        values = self._mean_values(X).astype(np.float64)
        return values.ravel() if self._y_ndim == 1 and values.shape[1] == 1 else values
