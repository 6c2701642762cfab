"""Adaptive Neural Trees (Tanno et al., ICML 2019) for Python, on the Rust crate ``ant``.

- ``ANTClassifier``, ``ANTRegressor``: scikit-learn estimators (numpy in and out; rows
  or images); parameters named and defaulted as ``ant train``'s options.
- ``ANTEnsembleClassifier``, ``ANTEnsembleRegressor``, ``fit_member``: ensembles, members
  trained one after the other or as Ray tasks (``ant.ray``).
- ``load(path)``: a model or ensemble directory of ``ant train`` or ``save``.

Training progress goes to the ``ant`` logger (silent unless logging is configured) or to
a ``callback`` given to ``fit``; Ctrl-C stops training with ``KeyboardInterrupt``.
"""

from ant._ant import __version__
from ant._ensemble import ANTEnsembleClassifier, ANTEnsembleRegressor
from ant._member import fit_member
from ant._estimators import CHOICES, DEFAULTS, ANTClassifier, ANTRegressor
from ant._io import load

__all__ = [
    "ANTClassifier",
    "ANTRegressor",
    "ANTEnsembleClassifier",
    "ANTEnsembleRegressor",
    "CHOICES",
    "DEFAULTS",
    "fit_member",
    "load",
    "__version__",
]
