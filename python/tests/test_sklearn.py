"""scikit-learn conformance: check_estimator's checks, and use inside Pipeline,
GridSearchCV and cross_val_score."""

import numpy as np
from conftest import SMALL
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import ant

#: Settings that still learn scikit-learn's check data sets well (300 blobs in 3 classes:
#: accuracy > 0.83; a 200-row regression: R2 > 0.5).
CHECK = dict(SMALL, epochs_node=6, refine_epochs=3, max_depth=1, batch_size=32, lr=0.05)

#: Checks that cannot pass, with the reason (none so far).
EXPECTED_FAILED = {}


@parametrize_with_checks(
    [ant.ANTClassifier(**CHECK), ant.ANTRegressor(**CHECK)],
    expected_failed_checks=lambda est: EXPECTED_FAILED.get(type(est).__name__, {}),
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_in_a_pipeline_and_cross_validation(iris):
    X, y = iris
    pipe = make_pipeline(StandardScaler(), ant.ANTClassifier(**SMALL))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and scores.mean() > 0.7


def test_grid_search(iris):
    X, y = iris
    grid = GridSearchCV(ant.ANTClassifier(**SMALL), {"width": [8, 16], "max_depth": [1, 2]}, cv=2)
    grid.fit(X, y)
    assert grid.best_params_["width"] in (8, 16)
    assert grid.best_estimator_.score(X, y) > 0.7
    assert len(grid.cv_results_["mean_test_score"]) == 4


def test_grid_search_over_an_ensemble(iris):
    X, y = iris
    ens = ant.ANTEnsembleClassifier(ant.ANTClassifier(**SMALL), n_members=2)
    grid = GridSearchCV(ens, {"estimator__width": [8, 16]}, cv=2).fit(X, y)
    assert np.isfinite(grid.best_score_)
