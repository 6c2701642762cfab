"""Ctrl-C during training raises KeyboardInterrupt promptly and leaves the estimator
usable; training releases the GIL."""

import os
import signal
import threading
import time

import numpy as np
import pytest
from conftest import SMALL

import ant

#: Long enough to be interrupted (minutes if it were not).
LONG = dict(width=64, epochs_node=100000, patience=100000, max_depth=1, batch_size=16)


def big_problem():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(2000, 8))
    return X, (X[:, 0] > 0).astype(int)


@pytest.fixture
def ctrl_c_handled():
    """Python's own SIGINT handler for the test. A process started with SIGINT ignored
    (a background job of a script: `cmd &` without job control) keeps it ignored, and
    then neither a SIGINT nor `interrupt_main` reaches Python: the test would train on
    for ever."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.mark.parametrize("how", ["sigint", "interrupt_main"])
def test_ctrl_c_stops_training(iris, how, ctrl_c_handled):
    X, y = big_problem()
    fitted = ant.ANTClassifier(**SMALL).fit(*iris)
    before = fitted.predict_proba(iris[0])
    clf = fitted.set_params(**LONG)

    def interrupt():
        if how == "sigint":
            os.kill(os.getpid(), signal.SIGINT)
        else:
            import _thread

            _thread.interrupt_main()

    timer = threading.Timer(1.0, interrupt)
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    elapsed = time.monotonic() - start
    timer.join()
    assert elapsed < 3.0, f"KeyboardInterrupt after {elapsed:.1f} s"
    # The estimator kept its earlier model, and trains again.
    assert np.array_equal(clf.predict_proba(iris[0]), before)
    clf.set_params(**SMALL).fit(*iris)
    assert clf.score(*iris) > 0.8


def test_training_releases_the_gil():
    """A Python thread keeps running while a tree trains (about a second here)."""
    X, y = big_problem()
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    t = threading.Thread(target=count)
    t.start()
    try:
        start = time.monotonic()
        ant.ANTClassifier(width=64, epochs_node=20, patience=20, refine_epochs=80, max_depth=1, batch_size=32).fit(X, y)
        end = time.monotonic()
    finally:
        stop.set()
        t.join()
    took = end - start
    during = [tick for tick in ticks if start <= tick <= end]
    assert took > 0.3, f"training took only {took:.2f} s: nothing measured"
    # With the GIL held, the thread would not tick at all until training ended.
    assert len(during) > 0.25 * took / 0.005, (len(during), took)


def test_fits_in_threads_give_the_models_of_fits_one_after_the_other(iris):
    X, y = iris
    seeds = [0, 1, 2]
    alone = [ant.ANTClassifier(**SMALL, seed=s).fit(X, y).predict_proba(X) for s in seeds]
    models = [ant.ANTClassifier(**SMALL, seed=s) for s in seeds]
    threads = [threading.Thread(target=m.fit, args=(X, y)) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for m, p in zip(models, alone):
        assert np.array_equal(m.predict_proba(X), p)
