"""The answering side of :mod:`vaultkit.cli.resident`: ``vaultkit watch`` runs a
:class:`CheckServer` that answers ``vaultkit check`` on the vault's socket (that module's
docstring says when and how)."""

from __future__ import annotations

import os
import sys

from vaultkit.cli import resident
from vaultkit.cli.resident import SOCKET, delegable, isatty, release


def _code_state(package: str) -> tuple:
    """Every module file of the package, by size and mtime: a watcher whose code changed
    since it started (an upgrade, an edit) declines, and the caller runs the new code."""
    out = []
    for folder, dirs, files in os.walk(package):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                try:
                    st = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                out.append((folder, name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


class _Routed:
    """sys.stdout or sys.stderr, written per thread: a request's thread into its buffer,
    every other thread (the watcher's own messages) into the stream it had."""

    def __init__(self, stream, local, which: str):
        self._stream, self._local, self._which = stream, local, which

    def _target(self):
        return getattr(self._local, self._which, None) or self._stream

    def write(self, text):
        return self._target().write(text)

    def flush(self):
        return self._target().flush()

    def isatty(self):
        target = getattr(self._local, self._which, None)
        if target is None:
            return isatty(self._stream)
        return self._which == "out" and getattr(self._local, "tty", False)

    def __getattr__(self, name):
        return getattr(self._target(), name)


class CheckServer:
    """Answers ``vaultkit check`` for the vault at ``root`` on its socket, one request at a
    time under ``lock`` (the watcher's round holds it too)."""

    def __init__(self, root, lock):
        from pathlib import Path

        self.root = Path(root).resolve()
        self.lock = lock
        self.path = str(self.root / SOCKET)
        self._sock = None
        self._thread = None
        self._stop = False
        self._package = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
        self._code = _code_state(self._package)

    def start(self) -> str | None:
        """Listen; None when listening, else why not (said once by the caller)."""
        global _LOCAL
        import socket
        import threading

        from vaultkit.vault.loader import WarmListing
        from vaultkit.vault.loader import WARM

        if not sys.platform.startswith("linux"):
            return "the commit hook runs on its own (answering it needs Linux)"
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        if os.path.lexists(self.path):
            if self._answers():
                return (f"another watcher answers the commit hook on {SOCKET}; this one "
                        "only snapshots")
            try:
                os.unlink(self.path)  # left by a watcher that was killed
            except OSError as exc:
                return f"cannot answer the commit hook: {self.path}: {exc.strerror}"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is the owner's only
        try:
            sock.bind(os.path.relpath(self.path))
            sock.listen(8)
        except OSError as exc:
            sock.close()
            return f"cannot answer the commit hook: {self.path}: {exc.strerror or exc}"
        finally:
            os.umask(old)
        sock.settimeout(0.5)  # to see close() while waiting
        self._sock = sock
        _LOCAL = _LOCAL or threading.local()
        resident.SERVING = True
        WARM[self.root] = WarmListing()
        sys.stdout = _Routed(sys.stdout, _LOCAL, "out")
        sys.stderr = _Routed(sys.stderr, _LOCAL, "err")
        self._thread = threading.Thread(target=self._serve, name="vaultkit-check-server",
                                        daemon=True)
        self._thread.start()
        return None

    def _answers(self) -> bool:
        import socket

        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.settimeout(1.0)
                probe.connect(os.path.relpath(self.path))
            return True
        except OSError:
            return False

    def close(self) -> None:
        from vaultkit.vault.loader import WARM

        self._stop = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            try:
                os.unlink(self.path)
            except OSError:
                pass
        listing = WARM.pop(self.root, None)
        if listing is not None:
            listing.close()
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if isinstance(stream, _Routed):
                setattr(sys, name, stream._stream)

    def _serve(self) -> None:
        import socket
        import struct

        while not self._stop:
            try:
                conn, _ = self._sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with conn:
                try:
                    cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                           struct.calcsize("3i"))
                    _pid, uid, _gid = struct.unpack("3i", cred)
                    if uid != os.getuid():
                        continue
                    conn.settimeout(10.0)  # a request is one line, sent at once
                    data = b""
                    while not data.endswith(b"\n") and len(data) < (16 << 20):
                        chunk = conn.recv(1 << 16)
                        if not chunk:
                            break
                        data += chunk
                    conn.settimeout(None)
                    conn.sendall(self._answer(data))
                except OSError:
                    continue  # the caller went away (Ctrl-C): nothing to tell

    def _answer(self, data: bytes) -> bytes:
        import json

        try:
            request = json.loads(data.decode("utf-8", "surrogateescape"))
            argv, cwd, env = request["argv"], request["cwd"], request["env"]
            # (the same release, wherever installed: pre-commit's hook has its own copy)
            same = request.get("version") == release()
        except (ValueError, KeyError, TypeError):
            return b'{"declined": "not a request"}'
        if not same or not delegable(argv) or _code_state(self._package) != self._code:
            return b'{"declined": "another vaultkit"}'
        with self.lock:
            out, err, code = self._run(argv, cwd, env, bool(request.get("tty")))
        return json.dumps({"out": out, "err": err, "code": code}).encode(
            "utf-8", "surrogateescape")

    def _run(self, argv, cwd, env, tty: bool):
        """The command, as the caller would have run it: its folder, environment and
        arguments; its output collected (this thread's sys.stdout and sys.stderr)."""
        import io

        from vaultkit.cli import main

        here, environ = os.getcwd(), dict(os.environ)
        out, err = io.StringIO(), io.StringIO()
        _LOCAL.out, _LOCAL.err, _LOCAL.tty = out, err, tty
        try:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(env)
            code = main(argv)
        except OSError as exc:  # the caller's folder is gone
            print(f"vaultkit: error: {exc}", file=err)
            code = 2
        finally:
            os.environ.clear()
            os.environ.update(environ)
            os.chdir(here)
            _LOCAL.out = _LOCAL.err = None
        return out.getvalue(), err.getvalue(), code


_LOCAL = None  # a threading.local: the collected output of the request each thread runs