"""One member of an ensemble, fitted alone: what ``ANTEnsemble*.fit`` and ``ant.ray``
both run, so members trained in one process, in others or as Ray tasks are the same."""

import numpy as np
from sklearn.base import clone


def fit_member(estimator, X, y, member, n_members, callback=None):
    """A fitted copy of ``estimator``: member ``member`` (0 to ``n_members - 1``) of the
    ensemble of ``n_members`` seeded with ``estimator.seed``. It depends only on the
    estimator's parameters, the data and the member, so members trained one after the
    other, in other processes or on other machines make the same ensemble."""
    # Whole numbers only: 1.7 had trained member 1, and -1 raised a bare OverflowError.
    for name, v in (("member", member), ("n_members", n_members)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {v!r}")
    est = clone(estimator)
    return est._fit_atomically(lambda: est._fit(X, y, member=(int(member), int(n_members)), callback=callback))
