"""Training events: from the Rust training loop to Python's ``logging`` and a callback.

Training calls ``events(kind, json)`` for every event: ``phase`` (an optimisation
starts), ``epoch`` (one epoch ended: losses, validation score, seconds), ``decision``
(growth kept a split, a deepen or the leaf) and ``warning``. They go to the ``ant``
logger (epochs and decisions at INFO, phases at DEBUG, warnings at WARNING: nothing is
shown at INFO unless logging is configured, e.g. ``logging.basicConfig(level="INFO")``)
and, as dicts, to the ``callback`` given to ``fit``.
"""

import json
import logging

LOGGER = logging.getLogger("ant")


def _stage(event):
    if event.get("phase") == "refine":
        return "refine"
    return f"node {event.get('node')} {event.get('candidate')}"


def _epoch_text(event, metric):
    return (
        f"{_stage(event)} epoch {event['epoch']}: train loss {event['train_loss']:.4f}, "
        f"valid loss {event['valid_loss']:.4f}, valid {metric} {event['valid_metric']:.4f}"
        f" ({event['seconds']:.2f} s)"
    )


def _log(event, metric):
    kind = event["event"]
    if kind == "warning":
        LOGGER.warning("%s", event["message"])
    elif kind == "epoch":
        if LOGGER.isEnabledFor(logging.INFO):
            LOGGER.info("%s", _epoch_text(event, metric))
    elif kind == "decision":
        LOGGER.info("%s", event["text"])
    elif kind == "phase":
        LOGGER.debug("%s: at most %s epochs", _stage(event), event["max_epochs"])


def dispatcher(callback, classification):
    """The ``events(kind, json)`` function training calls: logs each event and passes it
    to ``callback`` (if any) as a dict with its kind under ``"event"``."""
    metric = "error %" if classification else "MSE"

    def events(kind, payload):
        body = json.loads(payload)
        event = body if isinstance(body, dict) else {"message": body}
        event["event"] = kind
        _log(event, metric)
        if callback is not None:
            callback(event)

    return events
