"""Plain data classes without the ``dataclasses`` module.

Importing ``dataclasses`` imports ``inspect`` (with ``ast``, ``dis``, ``tokenize``), and
each ``@dataclass`` compiles generated source for its methods when its module is imported:
together some 9 % of a commit hook's work, for classes whose methods are a few lines
(docs/performance.md, "No `dataclasses` on the hook's path"). So the record classes a
commit hook and a warm check import are plain classes:

- a class with a few fields made often (a note, a link, a finding) writes its own
  ``__init__`` and lists its fields in ``_fields`` (the order of its arguments);
  deriving from :class:`Plain` gives it ``__eq__`` and ``__repr__`` over them (what
  ``@dataclass`` gave: fields compared as one tuple, ``_compare`` when some are left out);
- a class with many fields made a few times per run (the settings) derives from
  :class:`Declared`: its annotations, in order, are its fields, the class attribute of
  the same name each one's default (a :class:`Factory`: made afresh for each instance);
  its fields are found on first use, not when the class is created.

:func:`fields`, :func:`replace` and :func:`asdict` are ``dataclasses``' equivalents.
Nothing here runs when a class is created.
"""

from __future__ import annotations


# the default of an argument whose value is made afresh for each object (an empty list or
# mapping): ``[] if items is FRESH else items``, as ``field(default_factory=list)`` did
FRESH = object()


class Plain:
    """``__eq__`` and ``__repr__`` from the class's ``_fields`` (``_compare``: the fields
    compared, when not all are). Equal objects are of the same class; like a dataclass
    with ``eq=True``, an instance is unhashable unless its class says ``__hash__ =
    Plain.field_hash`` (a frozen one)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _compare: tuple[str, ...] | None = None

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = self._compare if self._compare is not None else self._fields
        return tuple([getattr(self, n) for n in names]) == \
            tuple([getattr(other, n) for n in names])

    def field_hash(self) -> int:
        names = self._compare if self._compare is not None else self._fields
        return hash(tuple([getattr(self, n) for n in names]))

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__qualname__}({shown})"


class Frozen:
    """Mixin refusing assignment after ``__init__`` (which sets with
    ``object.__setattr__``): an instance is a value, safe as a dict key."""

    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}")

    def __setstate__(self, state):
        # (copy and pickle set what they saved as __init__ does, not by assignment)
        if isinstance(state, tuple):  # (the instance's __dict__ or None, its slots)
            state = {**(state[0] or {}), **state[1]}
        for name, value in state.items():
            object.__setattr__(self, name, value)


class Factory:
    """A :class:`Declared` field's default made afresh for each instance (a list, a
    mapping, a settings object): ``dataclasses.field(default_factory=...)``."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


_NO_DEFAULT = object()


class Declared:
    """Base of a class whose fields are its annotations (see the module's docstring):
    keyword or positional arguments, then ``__post_init__`` if the class has one."""

    def __init__(self, *args, **kwargs):
        cls = type(self)
        names = cls.__dict__.get("_fields") or fields(cls)
        if args:
            if len(args) > len(names):
                raise TypeError(f"{cls.__name__}() takes {len(names)} arguments, "
                                f"{len(args)} given")
            for name, value in zip(names, args):
                if name in kwargs:
                    raise TypeError(f"{cls.__name__}() got {name!r} twice")
                kwargs[name] = value
        held = self.__dict__  # (the fields are plain values: no descriptor to go through)
        for name in names:
            if name in kwargs:
                held[name] = kwargs.pop(name)
                continue
            value = getattr(cls, name, _NO_DEFAULT)
            if value is _NO_DEFAULT:
                raise TypeError(f"{cls.__name__}() missing argument {name!r}")
            held[name] = value.make() if type(value) is Factory else value
        if kwargs:
            raise TypeError(f"{cls.__name__}() got an unexpected argument "
                            f"{next(iter(kwargs))!r}")
        post = getattr(cls, "__post_init__", None)
        if post is not None:
            post(self)


def made(cls, values: dict):
    """An object of ``cls`` (a :class:`Declared`) holding ``values``, validated before:
    the fields not given take their defaults, and ``__post_init__``, which only refuses
    bad values, is not run again (it compiles regexes and reads time zones)."""
    obj = cls.__new__(cls)
    held = obj.__dict__
    for name in cls.__dict__.get("_fields") or fields(cls):
        if name in values:
            held[name] = values[name]
            continue
        value = getattr(cls, name, _NO_DEFAULT)
        if value is _NO_DEFAULT:
            raise TypeError(f"{cls.__name__}() missing argument {name!r}")
        held[name] = value.make() if type(value) is Factory else value
    return obj


def fields(cls) -> tuple[str, ...]:
    """The names of a plain class's fields, in the order of its ``__init__`` arguments."""
    found = cls.__dict__.get("_fields")
    if found is None:  # (a Declared class: its own annotations, found once)
        found = tuple(cls.__dict__.get("__annotations__", ()))
        cls._fields = found
    return found


def replace(obj, **changes):
    """A new object of ``obj``'s class with its fields, ``changes`` put in
    (``dataclasses.replace``)."""
    for name in fields(type(obj)):
        if name not in changes:
            changes[name] = getattr(obj, name)
    return type(obj)(**changes)


def is_plain(value) -> bool:
    """Whether ``value`` is a class with fields (or an instance of one)."""
    cls = value if isinstance(value, type) else type(value)
    return issubclass(cls, (Plain, Declared))


def asdict(obj) -> dict:
    """``obj``'s fields as a dict, recursively into lists, tuples, mappings and plain
    objects, each copied (``dataclasses.asdict``)."""
    return {name: _plain_value(getattr(obj, name)) for name in fields(type(obj))}


def _plain_value(value):
    if isinstance(value, (Plain, Declared)):
        return asdict(value)
    if isinstance(value, list):
        return [_plain_value(v) for v in value]
    if isinstance(value, tuple):
        return type(value)(_plain_value(v) for v in value)
    if isinstance(value, dict):
        return {_plain_value(k): _plain_value(v) for k, v in value.items()}
    return value
