"""Regular expressions compiled on first use, not when their module is imported.

A module-level ``re.compile`` costs its compile in every process that imports the module,
used or not: the commit hook imports every rule to select them and runs a few on one note.
``lazy_re(pattern, flags)`` stands for ``re.compile(pattern, flags)``: its first use
compiles it, and from then on its methods are the compiled pattern's own (looked up in
the instance, so a hot loop pays nothing more than with the pattern itself).
"""

from __future__ import annotations

import re

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split",
            "scanner", "pattern", "flags", "groups", "groupindex")


class LazyPattern:
    """``re.compile(pattern, flags)``, compiled when first used (see the module)."""

    def __init__(self, pattern: str, flags: int = 0, *, listed: bool = True):
        self._args = (pattern, flags)
        if listed:  # (one a settings object makes is not: it goes with the settings)
            _MADE.append(self)

    @property
    def compiled(self) -> re.Pattern:
        """The compiled pattern (compiling it now if it was not yet)."""
        pattern = self.__dict__.get("_compiled")
        if pattern is None:
            pattern = re.compile(*self._args)
            self.__dict__["_compiled"] = pattern
            for name in _METHODS:
                self.__dict__[name] = getattr(pattern, name)
        return pattern

    def __getattr__(self, name: str):
        # only reached before the first use: the methods are set on the instance then
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"lazy_re({self._args[0]!r}, {self._args[1]!r})"


def lazy_re(pattern: str, flags: int = 0, *, listed: bool = True) -> LazyPattern:
    """``listed=False``: not among the patterns :func:`compile_all` compiles (one made per
    settings object, which a long-running process makes again and again)."""
    return LazyPattern(pattern, flags, listed=listed)


_MADE: list[LazyPattern] = []  # every pattern made (module-level ones: a few hundred)


def compile_all() -> None:
    """Compile every pattern made so far: a process that forks a child per request (the
    watcher answering checks) compiles once, and each child starts with them compiled."""
    for pattern in _MADE:
        pattern.compiled
