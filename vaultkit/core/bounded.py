"""Read files and parse YAML, JSON, JSON5 and TOML with every size, depth and count bounded.

Everything vaultkit reads may come from a cloned repository or from text an agent was
given, so no input may hang a command or grow its memory without limit:

- :func:`read_regular` is the one way a file is read. It refuses anything that is not a
  regular file *before* opening it (a FIFO named ``*.md`` would block the open forever,
  ``/dev/zero`` would fill memory), opens non-blocking, checks again on the open
  descriptor (the path may have been swapped meanwhile) and reads at most the limit plus
  one byte, so an oversized file is told apart without being read whole.
- :func:`load_yaml` composes the document first and counts its nodes with every alias
  expanded, and its nesting depth, before anything is constructed: a 394-byte "billion
  laughs" document is refused in microseconds.
- :func:`load_json` and :func:`load_json5` refuse deep nesting (Python's parsers recurse),
  integers of more digits than Python converts, and strings that are not encodable
  (lone surrogates from ``\\ud800`` escapes would fail when written back). JSON5 is parsed
  by a pure-Python parser at about 30 µs per byte, so it only sees small inputs; a config
  that is plain JSON takes the fast standard parser whatever its (bounded) size.
- :func:`load_toml` bounds size and depth the same way.

Bounds are refusals with a message that names the limit (:class:`LimitError`), never a
truncation: a half-read config would silently mean something else.
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:  # (names for annotations only)
    from typing import Any

MAX_DEPTH = 100  # nesting of any YAML/JSON/TOML value; real configs and properties use < 10
MAX_YAML_NODES = 20_000  # alias expansion above this is a "billion laughs" document
MAX_INT_DIGITS = 100  # Python refuses to convert more than 4,300; no setting needs 100
MAX_CONFIG_BYTES = 1024 * 1024  # vaultkit.toml, rule packs, graph.json, openclaw.json
MAX_JSON5_BYTES = 64 * 1024  # the pure-Python JSON5 parser takes ~2 s for this much


class LimitError(ValueError):
    """An input over one of the bounds above; the message says which."""


class ReadRefused(OSError):
    """A file that is not read: not a regular file, or over the size limit.

    An :class:`OSError` so that every reader's existing ``except OSError`` reports it with
    its ``strerror`` like any other unreadable file.
    """


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def not_regular(mode: int) -> str | None:
    """Why a file of this ``st_mode`` is not read, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return f"not a regular file ({_kind(mode)}); not read"


def linked_elsewhere(st) -> str | None:
    """Why a file of this ``os.stat`` result is neither appended to nor served, or None.

    A regular file with more than one hard link has another name that may lie anywhere on
    the same file system (``~/.ssh/``, ``~/.openclaw/credentials``): appending to it
    would write there, serving it would show what is there. Nothing about the vault's copy
    tells where the other name is, so every such file is refused.
    """
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        return (f"has {st.st_nlink} hard links (another name for it may lie outside the "
                "vault); vaultkit neither appends to nor serves such a file (copy it to a "
                "file of its own)")
    return None


def read_regular(path: str | os.PathLike, limit: int, *, follow_symlinks: bool = True,
                 sole_link: bool = False) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    Raises :class:`ReadRefused` (an OSError) for a FIFO, device, socket or folder, and for
    a file over ``limit`` bytes; other OSErrors (missing, permission) pass through.
    ``follow_symlinks=False`` refuses a symlink at ``path`` itself (ELOOP).
    ``sole_link=True`` (what is served: ``get``, MCP resources) refuses a file with more
    than one hard link (EMLINK): its other name may be outside the vault.
    """
    return read_regular_stat(path, limit, follow_symlinks=follow_symlinks,
                             sole_link=sole_link)[0]


def read_regular_stat(path: str | os.PathLike, limit: int, *, follow_symlinks: bool = True,
                      sole_link: bool = False) -> tuple[bytes, os.stat_result]:
    """:func:`read_regular`, with the ``fstat`` of the descriptor the bytes were read from
    (the file's size, times and inode as read: no second ``stat`` of the path, which a
    cold check made for each of its notes, and which another name could have moved to
    another file meanwhile)."""
    st = os.stat(path, follow_symlinks=follow_symlinks)
    if stat.S_ISLNK(st.st_mode):
        raise ReadRefused(errno.ELOOP, "a symlink; not followed", os.fspath(path))
    why = not_regular(st.st_mode)
    if why:  # never even opened: opening a FIFO blocks, opening some devices acts
        raise ReadRefused(errno.EINVAL, why, os.fspath(path))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)  # the path may have been replaced since the stat above
        why = not_regular(st.st_mode)
        if why:
            raise ReadRefused(errno.EINVAL, why, os.fspath(path))
        if sole_link:
            linked = linked_elsewhere(st)
            if linked:
                raise ReadRefused(errno.EMLINK, linked + "; not read", os.fspath(path))
        if st.st_size > limit:
            raise ReadRefused(errno.EFBIG, too_big(st.st_size, limit), os.fspath(path))
        data = read_open(fd, limit + 1)  # one byte more tells a file that grew past the limit
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ReadRefused(errno.EFBIG, too_big(None, limit), os.fspath(path))
    return data, st


class Beneath:
    """Files read below one folder without following a symlink anywhere on the way.

    :meth:`read` opens each folder step of a relative path from the descriptor of the one
    before it (``openat`` with ``O_NOFOLLOW | O_DIRECTORY``) and the file itself with
    ``O_NOFOLLOW``, then checks and reads that one descriptor: a step or the file swapped
    for a symlink after a listing's ``lstat`` is refused (ELOOP or ENOTDIR), never followed
    out of the folder, and what is read is what ``fstat`` judged. Folder descriptors are
    kept for the next file in the same folder until :meth:`close`."""

    _DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) \
        | getattr(os, "O_CLOEXEC", 0)
    _FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
        | getattr(os, "O_CLOEXEC", 0)

    def __init__(self, root: str | os.PathLike):
        self.root = os.fspath(root)
        self._dirs: dict[str, int] = {}

    def __enter__(self) -> "Beneath":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()

    def _folder(self, rel: str) -> int:
        fd = self._dirs.get(rel)
        if fd is not None:
            return fd
        if not rel:  # the folder itself, as the caller named it
            fd = os.open(self.root, self._DIR & ~getattr(os, "O_NOFOLLOW", 0))
        else:
            parent, _, name = rel.rpartition("/")
            if name in ("", ".", ".."):
                raise ReadRefused(errno.EINVAL, "not a plain relative path; not read", rel)
            fd = os.open(name, self._DIR, dir_fd=self._folder(parent))
        self._dirs[rel] = fd
        return fd

    def read(self, rel: str, limit: int) -> tuple[bytes, os.stat_result]:
        """``(bytes, fstat)`` of the regular file at ``rel`` (``/``-separated, below the
        folder), at most ``limit`` bytes. Raises :class:`ReadRefused` for what is not a
        regular file or is over ``limit``, OSError (ELOOP, ENOTDIR, ENOENT) for a symlink
        on the way or a file gone."""
        parent, _, name = rel.rpartition("/")
        if name in ("", ".", ".."):
            raise ReadRefused(errno.EINVAL, "not a plain relative path; not read", rel)
        if os.open not in os.supports_dir_fd:  # (no openat: the last step is still not
            # followed, and the descriptor is still the one judged)
            data = read_regular(os.path.join(self.root, rel), limit, follow_symlinks=False)
            return data, os.stat(os.path.join(self.root, rel), follow_symlinks=False)
        fd = os.open(name, self._FILE, dir_fd=self._folder(parent))
        try:
            st = os.fstat(fd)
            why = not_regular(st.st_mode)  # (a FIFO opened O_NONBLOCK: refused, not read)
            if why:
                raise ReadRefused(errno.EINVAL, why, rel)
            if st.st_size > limit:
                raise ReadRefused(errno.EFBIG, too_big(st.st_size, limit), rel)
            data = read_open(fd, limit + 1)
        finally:
            os.close(fd)
        if len(data) > limit:
            raise ReadRefused(errno.EFBIG, too_big(None, limit), rel)
        return data, st


def read_open(fd: int, most: int | None = None) -> bytes:
    """The bytes of the open file ``fd`` from where it is to its end (at most ``most``),
    read a MiB at a time."""
    chunks = []
    left = most
    while left is None or left > 0:
        chunk = os.read(fd, 1 << 20 if left is None else min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        if left is not None:
            left -= len(chunk)
    return b"".join(chunks)


def too_big(size: int | None, limit: int) -> str:
    what = f"{size:,} bytes, over" if size is not None else "over"
    return f"{what} the {limit:,}-byte limit; not read"


def read_text(path: str | os.PathLike, limit: int = MAX_CONFIG_BYTES) -> str:
    """:func:`read_regular` decoded as UTF-8 (a BOM dropped); UnicodeDecodeError passes."""
    return read_regular(path, limit).decode("utf-8-sig")


# -- YAML -------------------------------------------------------------------------------

def yaml_problem(node, max_nodes: int = MAX_YAML_NODES,
                 max_depth: int = MAX_DEPTH) -> str | None:
    """Why a composed YAML node is not constructed (too many nodes once aliases are
    expanded, or nested too deeply), or None. Stops as soon as a bound is passed."""
    import yaml

    count = 0
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        count += 1
        if count > max_nodes:
            return f"expands to more than {max_nodes:,} YAML nodes (alias bomb?)"
        if depth > max_depth:
            return f"nested more than {max_depth} levels deep"
        if isinstance(current, yaml.SequenceNode):
            stack.extend((v, depth + 1) for v in current.value)
        elif isinstance(current, yaml.MappingNode):
            for k, v in current.value:
                stack.append((k, depth + 1))
                stack.append((v, depth + 1))
    return None


def load_yaml(text: str, *, max_chars: int = MAX_CONFIG_BYTES,
              max_nodes: int = MAX_YAML_NODES, max_depth: int = MAX_DEPTH) -> Any:
    """``yaml.safe_load`` with bounds: safe tags only, size, alias expansion and depth.

    Raises :class:`LimitError` for a bound, ``yaml.YAMLError`` for invalid YAML.
    """
    import yaml

    if len(text) > max_chars:
        raise LimitError(f"{len(text):,} characters, over the {max_chars:,} that are read")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        problem = yaml_problem(node, max_nodes, max_depth)
        if problem:
            raise LimitError(problem + "; not read")
        try:
            return loader.construct_document(node)
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            if isinstance(exc, LimitError):
                raise
            # a timestamp out of range, an unhashable key, a huge integer
            raise LimitError(f"a value cannot be read: {exc}") from None
    finally:
        loader.dispose()


# -- JSON and JSON5 ----------------------------------------------------------------------

def _parse_int(text: str) -> int:
    digits = len(text.lstrip("+-"))
    if digits > MAX_INT_DIGITS:
        raise LimitError(f"an integer of {digits:,} digits (at most {MAX_INT_DIGITS} are read)")
    return int(text)


_MAX_INT_BITS = int(MAX_INT_DIGITS * 3.33)  # 10**100 is 333 bits long


def check_tree(value: Any, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`LimitError` if ``value`` nests deeper than ``max_depth`` or holds a
    string (or key) that is not valid Unicode (a lone surrogate). Iterative."""
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > max_depth:
            raise LimitError(f"nested more than {max_depth} levels deep")
        if isinstance(current, str):
            _check_string(current)
        elif isinstance(current, int) and current.bit_length() > _MAX_INT_BITS:
            raise LimitError(f"an integer of more than {MAX_INT_DIGITS} digits")
        elif isinstance(current, dict):
            for k, v in current.items():
                if isinstance(k, str):
                    _check_string(k)
                stack.append((v, depth + 1))
        elif isinstance(current, (list, tuple)):
            stack.extend((v, depth + 1) for v in current)


def _check_string(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise LimitError(f"a string holds a lone surrogate (\\u{ord(text[exc.start]):04x}), "
                         "which is not text") from None


def load_json(text: str, *, max_chars: int = MAX_CONFIG_BYTES,
              max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` with bounds. Raises :class:`LimitError` or ``json.JSONDecodeError``."""
    import json

    if len(text) > max_chars:
        raise LimitError(f"{len(text):,} characters, over the {max_chars:,} that are read")
    try:
        data = json.loads(text, parse_int=_parse_int)
    except RecursionError:
        raise LimitError(f"nested more than {max_depth} levels deep") from None
    check_tree(data, max_depth)
    return data


def load_json5(text: str, *, max_chars: int = MAX_CONFIG_BYTES,
               max_json5_chars: int = MAX_JSON5_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """JSON5 with bounds: the standard JSON parser first (fast, and most files are plain
    JSON), the JSON5 parser only for inputs of at most ``max_json5_chars``.

    Raises :class:`LimitError`, or ``ValueError`` from the JSON5 parser for invalid input.
    """
    import json

    if len(text) > max_chars:
        raise LimitError(f"{len(text):,} characters, over the {max_chars:,} that are read")
    try:
        return load_json(text, max_chars=max_chars, max_depth=max_depth)
    except json.JSONDecodeError:
        pass  # comments, trailing commas, unquoted keys: JSON5 proper
    if len(text) > max_json5_chars:
        raise LimitError(f"{len(text):,} characters of JSON5 (comments, unquoted keys or "
                         f"trailing commas), over the {max_json5_chars:,} that are parsed; "
                         f"plain JSON is read up to {max_chars:,}")
    import json5

    try:
        data = json5.loads(text, parse_int=_parse_int)
    except RecursionError:
        raise LimitError(f"nested more than {max_depth} levels deep") from None
    check_tree(data, max_depth)
    return data


# -- TOML --------------------------------------------------------------------------------

def load_toml(text: str, *, max_chars: int = MAX_CONFIG_BYTES,
              max_depth: int = MAX_DEPTH) -> dict:
    """``tomllib.loads`` with bounds. Raises :class:`LimitError` or ``TOMLDecodeError``."""
    import tomllib

    if len(text) > max_chars:
        raise LimitError(f"{len(text):,} characters, over the {max_chars:,} that are read")
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise LimitError(f"nested more than {max_depth} levels deep") from None
    except tomllib.TOMLDecodeError:
        raise
    except ValueError as exc:  # an integer past Python's digit limit
        raise LimitError(f"a value cannot be read: {str(exc).split(';')[0]}") from None
    check_tree(data, max_depth)
    return data


# -- regular expressions from the configuration --------------------------------------------

def regex_problem(pattern: str, flags: int = 0) -> str | None:
    """Why a configured regex could take exponential time on some text, or None.

    Python's engine backtracks: a quantifier over something of variable length that is
    itself quantified (``(a+)+``, ``(\\w*x)*``, ``(a{1,3}){2,}``, ``(\\d\\d?)+``) or over
    an alternation whose branches can start alike (``(a|ab)+``) tries exponentially many
    ways to fail. Such patterns are refused; possessive quantifiers and atomic groups
    (which never backtrack) are allowed.
    Polynomial patterns such as ``.*a.*b`` are not refused: they run on one line or entry
    of a file that is itself bounded (``budgets.max_file_bytes``).
    """
    try:
        from re import _constants as c
        from re import _parser as sre_parse
    except ImportError:  # (the module names of 3.11+; older Pythons are not supported)
        return None
    try:
        parsed = sre_parse.parse(pattern, flags)
    except Exception:  # re.compile reports it
        return None
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT}

    def first_literal(items) -> int | None:
        items = list(items)
        if items and items[0][0] == c.LITERAL:
            return items[0][1]
        if items and items[0][0] == c.SUBPATTERN:
            return first_literal(items[0][1][3])
        return None

    def walk(items, under: bool) -> str | None:
        for op, av in items:
            if op in repeats:
                low, high, sub = av
                many = high == c.MAXREPEAT or high > 1
                if under and high != low:
                    return ("a variable quantifier inside a quantifier (like (a+)+ or (ab?)+); "
                            "write it possessive (a++) or as an atomic group (?>...)")
                found = walk(sub, under or many)
            elif op == c.POSSESSIVE_REPEAT or op == c.ATOMIC_GROUP:
                continue  # never backtracks into itself
            elif op == c.SUBPATTERN:
                found = walk(av[3], under)
            elif op == c.BRANCH:
                if under:
                    firsts = [first_literal(b) for b in av[1]]
                    folded = [chr(f).lower() for f in firsts if f is not None]
                    if None in firsts or len(set(folded)) != len(folded):
                        return "an alternation inside a quantifier whose branches can start alike"
                found = None
                for branch in av[1]:
                    found = found or walk(branch, under)
            elif op in (c.ASSERT, c.ASSERT_NOT):
                found = walk(av[1], under)
            elif op == c.GROUPREF_EXISTS:
                found = walk(av[1], under) or (walk(av[2], under) if av[2] else None)
            else:
                found = None
            if found:
                return found
        return None

    return walk(parsed, False)
