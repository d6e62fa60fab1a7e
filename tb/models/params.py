"""Parameter checks shared by the reference models: a model refuses what its block's generator
refuses, with the same kind of message (the parameter, its legal range, the value given)."""

from __future__ import annotations


def is_pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def check_range(obj, name: str, lo: int, hi: int, pow2: bool = False) -> None:
    """Raise ValueError unless ``obj.<name>`` is an int (not a bool) in lo..hi (a power of
    two when ``pow2``)."""
    v = getattr(obj, name)
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi or \
            (pow2 and not is_pow2(v)):
        kind = "a power of two in " if pow2 else ""
        raise ValueError(f"{name} must be {kind}{lo}..{hi}, got {v}")
