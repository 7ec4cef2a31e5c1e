"""Pausing the cyclic garbage collector around bulk builds that make no reference cycles."""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector during a bulk build that makes no cycles.

    Resolving 10,000 notes allocates tens of thousands of long-lived objects, which
    would otherwise trigger repeated full collections over the whole parsed vault
    (about half the resolution time).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
