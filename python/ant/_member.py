"""One member of an ensemble, fitted alone: what ``ANTEnsemble*.fit`` and ``ant.ray``
both run, so members trained in one process, in others or as Ray tasks are the same."""

from sklearn.base import clone


def fit_member(estimator, X, y, member, n_members, callback=None):
    """A fitted copy of ``estimator``: member ``member`` (0 to ``n_members - 1``) of the
    ensemble of ``n_members`` seeded with ``estimator.seed``. It depends only on the
    estimator's parameters, the data and the member, so members trained one after the
    other, in other processes or on other machines make the same ensemble."""
    est = clone(estimator)
    return est._fit_atomically(lambda: est._fit(X, y, member=(int(member), int(n_members)), callback=callback))
