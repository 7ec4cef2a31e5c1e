"""``vaultkit check`` answered by a running ``vaultkit watch``: the commit hook without a
new process's start and a walk of the whole vault. This module is the asking side, kept
small because every ``vaultkit check`` imports it; the answering side is
:mod:`vaultkit.cli.commands._check_server`.

While ``vaultkit watch`` runs it listens on ``.vaultkit/check.sock`` (a Unix socket at the
vault root, Linux only). ``vaultkit check`` (the hook included) first looks for that
socket from the current folder up; when a watcher answers, it runs the check in its own
process, exactly as the command would (the same code, the caller's arguments, folder and
environment, ``GIT_INDEX_FILE`` included), and the caller prints what it sends back and
exits with its code. What makes it faster is what the watcher keeps: the imports done,
and the vault's listing kept current by file events (vaultkit.vault.freshness), so only
the files that changed are stat'ed again.

Anything else runs the command itself, as without a watcher: no socket, a socket that
does not answer (a watcher killed) or belongs to another user, a watcher of another
vaultkit release or whose code changed since it started (an upgrade under it), and every
``check`` option that writes (``--fix``, ``--write-baseline``, ``-o`` ...) or waits
(``--watch``). The release is what must match, not the install: pre-commit runs the hook
from its own copy of vaultkit, and a watcher of the same release answers it.
``VAULTKIT_RESIDENT=0`` turns it off.

Safety: the socket is the owner's only (mode 0600, and the watcher checks each caller's
user id with ``SO_PEERCRED``); the client connects only to a socket its own user owns.
Each request runs in a child process forked from the watcher, so the caller's folder,
environment and output, and whatever the check reads, are that child's alone.
"""

from __future__ import annotations

import os
import sys

SOCKET = os.path.join(".vaultkit", "check.sock")
# the options of `vaultkit check` that only read (any other option runs the command here)
READ_ONLY = frozenset({
    "--hook", "--staged", "--select", "--ignore", "--extend-select", "--fail-on", "--format",
    "--output-format", "--json", "--statistics", "--baseline", "--no-baseline",
    "--exit-zero", "-q", "--quiet", "--root", "--profile", "--no-cache", "--diff"})
_MAX_ANSWER = 256 << 20


def delegable(argv) -> bool:
    if not argv or argv[0] != "check":
        return False
    for arg in argv[1:]:
        if arg.startswith("-") and arg.split("=", 1)[0] not in READ_ONLY:
            return False
    return True


def find_socket(argv) -> str | None:
    """The socket of the nearest folder up from here (or from ``--root``) that has one."""
    folder = os.getcwd()
    for i, arg in enumerate(argv):
        if arg == "--root" and i + 1 < len(argv):
            folder = os.path.join(folder, argv[i + 1])
        elif arg.startswith("--root="):
            folder = os.path.join(folder, arg.split("=", 1)[1])
    folder = os.path.abspath(folder)
    while True:
        path = os.path.join(folder, SOCKET)
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is not None:
            import stat

            # only a socket of this user (another user's could forge the answer)
            return path if stat.S_ISSOCK(st.st_mode) and st.st_uid == os.getuid() else None
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
    path = find_socket(argv)
    if path is None:
        return None
    import json
    import socket

    request = {"version": release(), "argv": list(argv),
               "cwd": os.getcwd(), "env": dict(os.environ),
               "tty": isatty(sys.stdout)}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(2.0)  # to connect; the check itself may take long
            conn.connect(os.path.relpath(path))  # (relative: a long path fits the limit)
            conn.settimeout(None)
            conn.sendall(json.dumps(request).encode("utf-8", "surrogateescape") + b"\n")
            conn.shutdown(socket.SHUT_WR)
            chunks, size = [], 0
            while size <= _MAX_ANSWER:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        answer = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None  # a watcher stopped or killed: run here
    if not isinstance(answer, dict) or not isinstance(answer.get("code"), int):
        return None  # declined (another version, its code changed): run here
    # (this text passed the output boundary in the watcher, the same code as here)
    sys.stdout.write(answer.get("out", ""))
    sys.stdout.flush()
    sys.stderr.write(answer.get("err", ""))
    sys.stderr.flush()
    return answer["code"]


def release() -> str:
    from vaultkit import __version__

    return __version__


def isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


SERVING = False  # this process answers requests: its own commands never ask
