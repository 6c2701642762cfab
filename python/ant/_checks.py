"""Checks of argument types shared by every module of the package."""

import inspect

import numpy as np


def check_bool(value, name):
    """``value`` as a bool when it is one (``True``, ``False`` or a NumPy bool), else a
    ``TypeError`` naming ``name``: a yes/no option takes no other value, so that
    ``'False'``, ``'no'``, ``0`` or ``None`` never count as an answer."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False (a bool), got {value!r}")


def check_bool_params(estimator):
    """Checks each yes/no parameter of ``estimator`` (one whose default in its
    constructor's signature is a bool) with ``check_bool``: at fit, as scikit-learn
    checks parameters, since ``set_params`` and grid searches set them after ``__init__``."""
    for name, param in inspect.signature(type(estimator).__init__).parameters.items():
        if isinstance(param.default, bool):
            check_bool(getattr(estimator, name), name)
