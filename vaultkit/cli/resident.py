"""``vaultkit check`` answered by a running ``vaultkit watch``: the commit hook without a
new process's start and a walk of the whole vault. This module is the asking side, kept
small because every ``vaultkit check`` imports it; the answering side is
:mod:`vaultkit.cli.commands._check_server`.

While ``vaultkit watch`` runs it listens on ``.vaultkit/check.sock`` (a Unix socket at the
vault root, Linux only). ``vaultkit check`` (the hook included) first looks for that
socket from the current folder up (:func:`find_socket`); when a watcher answers, it runs
the check in its own process, exactly as the command would (the same code, the caller's arguments, folder and
environment, ``GIT_INDEX_FILE`` included), and the caller prints what it sends back and
exits with its code. What makes it faster is what the watcher keeps: the imports done,
and the vault's listing kept current by file events (vaultkit.vault.freshness), so only
the files that changed are stat'ed again.

Anything else runs the command itself, as without a watcher: no socket, a socket that
does not answer (a watcher killed) or belongs to another user, a watcher that does not
take the request within :data:`FIRST_REPLY_S` (stopped with Ctrl-Z: its socket still
accepts, nothing reads it) or whose check is stopped while the caller waits, a watcher of another
vaultkit release or whose code changed since it started (an upgrade under it), and every
``check`` option that writes (``--fix``, ``--write-baseline``, ``-o`` ...) or waits
(``--watch``). The release is what must match, not the install: pre-commit runs the hook
from its own copy of vaultkit, and a watcher of the same release answers it.
``VAULTKIT_RESIDENT=0`` turns it off.

Safety: the socket is the owner's only (mode 0600, and the watcher checks each caller's
user id with ``SO_PEERCRED``); the client connects only to a socket its own user owns.
So a request and its answer are only ever read from a process of the same user, which
could as well change the vault or vaultkit itself: they are ``marshal``-led (a client
importing no ``json``), and one that does not decode is declined, or run here.
Each request runs in a child process forked from the watcher, so the caller's folder,
environment and output, and whatever the check reads, are that child's alone.
"""

from __future__ import annotations

import os
import sys

SOCKET = os.path.join(".vaultkit", "check.sock")
# the asking process's parent, for the answering one (vaultkit.vault.gitstate.CALLER_PARENT,
# spelled out here: the asking process imports nothing it does not need)
CALLER_PARENT = "VAULTKIT_CALLER_PARENT"
# the options of `vaultkit check` that only read (any other option runs the command here)
READ_ONLY = frozenset({
    "--hook", "--staged", "--select", "--ignore", "--extend-select", "--fail-on", "--format",
    "--output-format", "--json", "--statistics", "--baseline", "--no-baseline",
    "--exit-zero", "-q", "--quiet", "--root", "--profile", "--no-cache", "--diff"})
_MAX_ANSWER = 256 << 20
WIRE = 4  # the marshal format of a request and its answer
# The child that runs a request first sends ACK and its process id (4 bytes, little
# endian), then the answer (a marshalled dict, which never starts with a NUL byte).
ACK = b"\0"
CONNECT_S = 2.0  # to connect (a stopped watcher's full backlog blocks a connect)
# For that first reply: taking a request waits for the check before it (answered one at a
# time) and the listing's freshness check; a warm check of 100,000 notes answered in 0.8 s
# (docs/performance.md), so a live watcher replies well within this, and a stopped one
# costs a commit this long, then the check runs here.
FIRST_REPLY_S = 3.0
_STOPPED_POLL_S = 0.25  # while the check runs: how often its process is looked at


def delegable(argv) -> bool:
    if not argv or argv[0] != "check":
        return False
    for arg in argv[1:]:
        if arg.startswith("-") and arg.split("=", 1)[0] not in READ_ONLY:
            return False
    return True


# the read-only options that take a value (the next argument, unless given with "=")
_VALUED = frozenset({"--select", "--ignore", "--extend-select", "--fail-on", "--format",
                     "--output-format", "--baseline", "--root", "--profile"})


def find_socket(argv) -> str | None:
    """The socket of the nearest folder up from ``--root``, else from here, that has one;
    else from the first path named (a vault in a subfolder of the repository: the hook
    runs at the repository's top and names the vault's files)."""
    here = os.getcwd()
    root, first = None, None
    args = iter(argv[1:])
    for arg in args:
        name = arg.split("=", 1)[0]
        if name == "--root":
            root = arg.split("=", 1)[1] if "=" in arg else next(args, None)
        elif name in _VALUED:
            if "=" not in arg:
                next(args, None)
        elif not arg.startswith("-") and first is None:
            first = arg
    starts = [root] if root is not None else \
        [here] + ([os.path.dirname(os.path.join(here, first))] if first else [])
    for start in starts:
        found = _socket_above(os.path.abspath(os.path.join(here, start)))
        if found is not None:
            return found or None
    return None


def _socket_above(folder: str) -> str | bool | None:
    """The socket in ``folder`` or the nearest folder above with one; False when the
    nearest is not usable (not a socket, another user's: its answer could be forged);
    None when there is none."""
    while True:
        path = os.path.join(folder, SOCKET)
        try:
            st = os.stat(path, follow_symlinks=False)  # (never a socket a symlink names)
        except OSError:
            st = None
        if st is not None:
            import stat

            return path if stat.S_ISSOCK(st.st_mode) and st.st_uid == os.getuid() else False
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def ask(argv) -> int | None:
    """Run ``vaultkit`` with ``argv`` in a running watcher; its exit code, or None when
    this process should run the command itself."""
    if SERVING or os.environ.get("VAULTKIT_RESIDENT") == "0" or not delegable(argv) \
            or not sys.platform.startswith("linux"):
        return None
    try:
        path = find_socket(argv)
    except OSError:  # (the current folder was deleted: the command itself says so)
        return None
    if path is None:
        return None
    # (marshal and the C socket module: `json` and `socket` import `re` and `enum`, half of
    # what this process would import; both ends are the same user's, see the docstring)
    import _socket
    import marshal

    env = dict(os.environ)
    # the process that started this one (pre-commit, whose patch of the unstaged lines the
    # hook reads: vaultkit.vault.gitstate), which the answering process is not the child of
    env.setdefault(CALLER_PARENT, str(os.getppid()))
    request = {"version": release(), "argv": list(argv),
               "cwd": os.getcwd(), "env": env,
               "tty": isatty(sys.stdout)}
    try:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            conn.settimeout(CONNECT_S)
            at_socket(conn.connect, path)
            conn.sendall(marshal.dumps(request, WIRE))
            conn.shutdown(_socket.SHUT_WR)
            answer = marshal.loads(_answer(conn))
        finally:
            conn.close()
    except (OSError, ValueError, EOFError, TypeError):
        # a watcher stopped, killed or too slow to take it, or of another format: run here
        # (nothing was printed: the output is the command's own)
        return None
    if not isinstance(answer, dict) or not isinstance(answer.get("code"), int):
        return None  # declined (another version, its code changed): run here
    # (this text passed the output boundary in the watcher, the same code as here)
    try:
        sys.stdout.write(answer.get("out", ""))
        sys.stdout.flush()
        sys.stderr.write(answer.get("err", ""))
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away (`| head`): quietly, as a run here
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return answer["code"]


def _answer(conn) -> bytes:
    """The answer to the request sent on ``conn``: the first reply within FIRST_REPLY_S,
    then the rest for as long as the check's process runs (not while it is stopped).
    Raises TimeoutError (an OSError) when the watcher gives neither."""
    import time

    deadline = time.monotonic() + FIRST_REPLY_S
    data = b""
    while len(data) < 1 + 4 and (not data or data[:1] == ACK):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no reply")
        conn.settimeout(left)
        chunk = conn.recv(1 << 16)
        if not chunk:
            return data  # (a declined request's answer, whole)
        data += chunk
    if data[:1] != ACK:
        conn.settimeout(FIRST_REPLY_S)
        return data + received(conn, _MAX_ANSWER)  # (declined: a few bytes, sent at once)
    pid, chunks, size = int.from_bytes(data[1:5], "little"), [data[5:]], len(data) - 5
    conn.settimeout(_STOPPED_POLL_S)
    while size <= _MAX_ANSWER:
        try:
            chunk = conn.recv(1 << 16)
        except TimeoutError:
            if _stopped(pid):
                raise
            continue
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (``T``: SIGSTOP, Ctrl-Z; ``t``: traced), from
    /proc/PID/stat (its state is the field after the command name's closing parenthesis)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False  # (gone: what it sent is read to the end)
    state = stat[stat.rfind(b")") + 2:][:1]
    return state in (b"T", b"t")


def received(conn, most: int) -> bytes:
    """What the other end sent until it closed its side (at most about ``most`` bytes)."""
    chunks, size = [], 0
    while size <= most:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def at_socket(call, path: str):
    """``call`` (a socket's ``bind`` or ``connect``) on ``path`` by a name that fits
    AF_UNIX's limit of about 100 bytes: relative to here, else from inside its folder (a
    vault deep in the file system; only where nothing else runs meanwhile)."""
    rel = os.path.relpath(path)
    if len(os.fsencode(rel)) < 100:
        return call(rel)
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(os.path.dirname(path))
        return call(os.path.basename(path))
    finally:
        os.fchdir(here)
        os.close(here)


def release() -> str:
    from vaultkit import __version__

    return __version__


def isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


SERVING = False  # this process answers requests: its own commands never ask
