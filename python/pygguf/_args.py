"""Checks of the integer arguments the Python layer takes before they reach the core."""

from __future__ import annotations

import operator
from typing import Any


def integer(value: Any, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an int: anything with ``__index__`` (int, numpy integers), not a float.

    Raises:
        TypeError: ``value`` is not an integer.
        ValueError: it is below ``lo`` or above ``hi`` (the message names ``name`` and the range).
    """
    if isinstance(value, float):
        raise TypeError(f"{name} must be an integer, not float")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}") from None
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        if hi is None:
            raise ValueError(f"{name} must be at least {lo}, not {n}")
        raise ValueError(f"{name} must be from {lo} to {hi}, not {n}")
    return n
