"""Ensemble members trained in parallel as Ray tasks (https://www.ray.io), on one
machine or a cluster.

Member K of an ensemble depends only on the estimator's parameters, the data and K
(``ant.fit_member``), so members trained as Ray tasks are the members trained one after
the other: the same trees, bit for bit with the same thread count per task.
``ray.init()`` (or ``ray.init(address=...)`` for a cluster) first; every node needs the
``ant`` package installed. See ``python/examples/ray_cluster.py``.
"""

import ray

from ant._member import fit_member


def _fit_member_task(estimator, X, y, member, n_members):
    return fit_member(estimator, X, y, member, n_members)


def fit_members(estimator, X, y, n_members, members=None, num_cpus=1, **ray_options):
    """Fits ``members`` (default: all of ``0 .. n_members - 1``) of the ensemble of
    ``n_members`` seeded with ``estimator.seed``, one Ray task each (``num_cpus`` CPUs
    each, and any other ``ray.remote`` option), and returns them, fitted, in order.

    Each training uses the threads of its machine (burn-flex); with several members per
    machine, set ``RAYON_NUM_THREADS`` on the workers (``runtime_env``) to share cores."""
    if not ray.is_initialized():
        ray.init()
    members = range(n_members) if members is None else members
    task = ray.remote(_fit_member_task).options(num_cpus=num_cpus, **ray_options)
    X_ref, y_ref = ray.put(X), ray.put(y)
    return ray.get([task.remote(estimator, X_ref, y_ref, k, n_members) for k in members])
