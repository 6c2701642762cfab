"""Ensemble members trained as Ray tasks on a local Ray cluster equal the same members
trained one after the other."""

import pytest
import ray
from conftest import SMALL, same_bits

import ant
import ant.ray


@pytest.fixture(scope="module")
def local_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_members_as_ray_tasks_equal_members_trained_in_turn(local_cluster, iris):
    X, y = iris
    est = ant.ANTClassifier(**SMALL, seed=11)
    parallel = ant.ray.fit_members(est, X, y, n_members=2)
    in_turn = [ant.fit_member(est, X, y, k, 2) for k in range(2)]
    for a, b in zip(parallel, in_turn):
        assert a.decisions_ == b.decisions_
        assert a.tree_summary_ == b.tree_summary_
        assert same_bits(a.predict_proba(X), b.predict_proba(X))
    assert not same_bits(parallel[0].predict_proba(X), parallel[1].predict_proba(X))
    ens = ant.ANTEnsembleClassifier(est, n_members=2, backend="ray").fit(X, y)
    seq = ant.ANTEnsembleClassifier(est, n_members=2).fit(X, y)
    assert same_bits(ens.predict_proba(X), seq.predict_proba(X))
