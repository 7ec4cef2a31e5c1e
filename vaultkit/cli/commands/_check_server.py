"""The answering side of :mod:`vaultkit.cli.resident`: ``vaultkit watch`` runs a
:class:`CheckServer` that answers ``vaultkit check`` on the vault's socket (that module's
docstring says when and how)."""

from __future__ import annotations

import io
import os
import sys

from vaultkit.cli import resident
from vaultkit.cli.resident import SOCKET, at_socket, delegable, received, release


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


SEND_TIMEOUT_S = 30.0


def _learned(workspace) -> bytes:
    """In a child, after its check: the modules it imported, the regular expressions it
    compiled (``re``'s own cache), the cache files and the entries of the ``workspace``'s
    store it parsed and the snapshots' objects it read from git (into the ``workspace``'s
    memo), marshalled for the answering process."""
    import marshal
    import re

    patterns = [(key[1], key[2]) for key in getattr(re, "_cache", {})
                if isinstance(key, tuple) and len(key) == 3
                and isinstance(key[1], (str, bytes)) and isinstance(key[2], int)]
    blobs = workspace.blobs.read_since()
    # (the newest snapshot each chain it read ends at: see CheckServer._prepare)
    heads = workspace.blobs.heads_read()
    files = workspace.blobs.files.read_names()  # (the snapshot store's memo files)
    return marshal.dumps((list(sys.modules), patterns, files, blobs, heads,
                          workspace.store.read_names()))


def _learn(data: bytes, workspace) -> list[str]:
    """In the answering process: import and compile what its child did (:func:`_learned`),
    every pattern of :mod:`vaultkit.core.lazyre`, parse the cache files and the entries of
    the ``workspace``'s store it parsed as they are now (the child may have written them
    since; the store is the one the workspace hands each child with its listing) and hold
    the objects it read in the ``workspace``'s memo, so the next child does not. Returns
    the newest snapshots the child read the chain up to."""
    import importlib
    import marshal
    import re

    from vaultkit.core import lazyre

    try:
        names, patterns, cache_files, blobs, heads, entries = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return []  # (a child that died before telling)
    workspace.blobs.files.keep(cache_files)
    workspace.store.keep(entries)
    if blobs:
        workspace.blobs.remember(blobs)
    for name in names:
        if name and name not in sys.modules and not name.startswith("__"):
            try:
                importlib.import_module(name)
            except Exception:  # (a private or platform module not importable by name)
                pass
    for pattern, flags in patterns:
        try:
            re.compile(pattern, flags)
        except (re.error, TypeError, ValueError):
            pass
    lazyre.compile_all()
    return heads


class _Collected(io.StringIO):
    """A command's standard output or error, collected to send back; ``isatty`` answers
    as the caller's own stream would."""

    def __init__(self, tty: bool = False):
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


class CheckServer:
    """Answers ``vaultkit check`` for the vault at ``root`` on its socket.

    :meth:`start` forks the answering process before the watcher starts any thread, and
    that process forks a child per request: a process with one thread is safe to fork (a
    lock another thread held at the fork would stay held in the child for ever). The
    answering process is a thin door onto a
    :class:`~vaultkit.session.workspace.Workspace` of the vault, which keeps the listing
    (by file events) and the snapshot objects read; each child starts with the
    workspace's listing pinned as it was at the fork, and runs the command as the caller
    would, handed that workspace. The check's folder, environment, output and memory are
    the child's alone, gone when it exits, so a check of a whole vault never leaves
    anything behind."""

    def __init__(self, root, snapshots=None):
        from pathlib import Path

        self.root = Path(root).resolve()
        self.path = str(self.root / SOCKET)
        self._sock = None
        self._pid = None  # the answering process, in the watcher
        self._workspace = None  # the vault kept warm (in the answering process)
        # the watcher's snapshot store (none is opened here), and the newest snapshot a
        # check has read the chain up to
        self._snapshots = snapshots
        self._prepared = None
        self._package = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
        self._code = _code_state(self._package)

    def start(self) -> str | None:
        """Listen; None when listening, else why not (said once by the caller). Call it
        before the watcher starts its threads."""
        import socket

        if not sys.platform.startswith("linux"):
            return "the commit hook runs on its own (answering it needs Linux)"
        folder = os.path.dirname(self.path)
        if os.path.islink(folder):  # (as the caches: nothing is made outside the vault)
            return f"cannot answer the commit hook: {folder} is a symlink"
        os.makedirs(folder, exist_ok=True)
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
            at_socket(sock.bind, self.path)  # (before any thread: it may change folder)
            sock.listen(8)
        except OSError as exc:
            sock.close()
            return f"cannot answer the commit hook: {self.path}: {exc.strerror or exc}"
        finally:
            os.umask(old)
        sys.stdout.flush()
        sys.stderr.flush()
        watcher = os.getpid()
        pid = os.fork()
        if pid == 0:  # the answering process: serve until the watcher is gone
            code = 0
            try:
                import signal

                signal.signal(signal.SIGINT, signal.SIG_IGN)  # (Ctrl-C stops the watcher)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                sock.settimeout(0.5)  # to see the watcher gone while waiting
                self._sock = sock
                self._serve(watcher)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        sock.close()  # (the answering process has it)
        self._pid = pid
        return None

    def _answers(self) -> bool:
        import socket

        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.settimeout(1.0)
                at_socket(probe.connect, self.path)
            return True
        except OSError:
            return False

    def close(self) -> None:
        """Stop the answering process and take the socket away (in the watcher)."""
        import signal
        import time

        if self._pid is None:
            return
        try:
            os.kill(self._pid, signal.SIGTERM)
        except OSError:
            pass
        deadline = time.monotonic() + 5
        while True:
            try:
                done, _ = os.waitpid(self._pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done or time.monotonic() > deadline:
                if not done:
                    os.kill(self._pid, signal.SIGKILL)
                    os.waitpid(self._pid, 0)
                break
            time.sleep(0.02)
        self._pid = None
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def _serve(self, watcher: int) -> None:
        """The answering process's loop, until the watcher (pid ``watcher``) is gone."""
        import socket
        import struct

        from vaultkit.session.workspace import Workspace

        self._workspace = Workspace(self.root)
        while os.getppid() == watcher:
            try:
                conn, _ = self._sock.accept()
            except socket.timeout:
                try:
                    self._prepare()
                except Exception:  # (no process to be had: the next check reads it)
                    pass
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
                    conn.settimeout(10.0)  # a request is sent at once, then the end
                    data = received(conn, 16 << 20)
                    conn.settimeout(None)
                    self._answer(conn, data)
                except OSError:
                    continue  # the caller went away (Ctrl-C): nothing to tell

    def _answer(self, conn, data: bytes) -> None:
        import marshal

        from vaultkit.cli.resident import WIRE

        try:
            request = marshal.loads(data)
            argv, cwd, env = request["argv"], request["cwd"], request["env"]
            if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)
                    and isinstance(cwd, str) and isinstance(env, dict)
                    and all(isinstance(k, str) and isinstance(v, str)
                            for k, v in env.items())):
                raise TypeError("not a request")
            tty = bool(request.get("tty"))
            # (the same release, wherever installed: pre-commit's hook has its own copy)
            same = request.get("version") == release()
        except (ValueError, EOFError, KeyError, TypeError, AttributeError):
            conn.sendall(marshal.dumps({"declined": "not a request"}, WIRE))
            return
        if not same or not delegable(argv) or _code_state(self._package) != self._code:
            conn.sendall(marshal.dumps({"declined": "another vaultkit"}, WIRE))
            return
        try:
            scan = self._current()
        except Exception as exc:  # (a broken vaultkit.toml: the caller says it, as always)
            conn.sendall(marshal.dumps({"declined": f"cannot list: {exc}"}, WIRE))
            return
        self._in_child(scan, argv, cwd, env, tty, conn)

    def _in_child(self, scan, argv, cwd, env, tty: bool, conn=None) -> None:
        """Run the check in a child forked from here, its answer sent on ``conn`` (or
        dropped), and learn what it read once it is done."""
        learned_r, learned_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run the command, send its answer, exit
            code = 2
            try:
                os.close(learned_r)
                if conn is not None:  # (the caller waits a short time for this first)
                    conn.sendall(resident.ACK + os.getpid().to_bytes(4, "little"))
                self._workspace.later.hold()  # (the cache writes wait for the answer)
                self._workspace.blobs.start_telling()
                answer = self._run(scan, argv, cwd, env, tty)
                if conn is not None:
                    # (a caller that stops reading, suspended with Ctrl-Z, must not hold
                    # up the checks after it for ever: they are answered one at a time)
                    conn.settimeout(SEND_TIMEOUT_S)
                    conn.sendall(answer)
                    conn.close()
                # (the cache writes that could wait: the next check reads them)
                self._workspace.later.run()
                # what it imported and compiled, for the watcher to do too: the next child
                # starts with it done (whatever the check's code needed, by construction)
                with open(learned_w, "wb") as fh:
                    fh.write(_learned(self._workspace))
                code = 0
            finally:
                os._exit(code)
        os.close(learned_w)
        if conn is not None:
            conn.close()  # (the caller reads to the end: the child's copy alone is open)
        with open(learned_r, "rb") as fh:
            learned = fh.read()
        os.waitpid(pid, 0)
        head = self._snapshot_head()
        if head is not None and head in _learn(learned, self._workspace):
            self._prepared = head  # (what a check read is not read again: see _prepare)

    def _prepare(self) -> None:
        """While no check waits, after a snapshot no check has read: run the commit hook's
        check of the vault (``check --hook``, no file named) in a child, its output
        dropped, and learn what it read. The watcher snapshots each change a second or two
        after it is written, so the commit that follows nearly always comes after a
        snapshot the answering process has not seen: without this, that hook's child reads
        the snapshot chain's new versions and their objects from git while the caller
        waits (~10-15 ms at 10,000 notes). A check that arrives meanwhile waits for it, as
        for another check. Once per snapshot, whatever the run does."""
        head = self._snapshot_head()
        if head is None or head == self._prepared:
            return
        self._prepared = head
        try:
            scan = self._current()
        except Exception:  # (a broken vaultkit.toml: the next check says it)
            return
        self._in_child(scan, ["check", "--hook"], str(self.root), dict(os.environ), False)

    def _snapshot_head(self) -> str | None:
        """The newest snapshot, read from the ref's file (no git run every half second)."""
        return self._snapshots.loose_head() if self._snapshots is not None else None

    def _current(self):
        """The workspace's listing of the vault, brought up to date by the events, with
        what its names give worked out here (kept while no name changes), not in every
        child."""
        scan = self._workspace.scan()
        scan.names_digest()
        scan.note_numbers()
        scan.paths()
        return scan

    def _run(self, scan, argv, cwd, env, tty: bool) -> bytes:
        """In the child: the command as the caller would have run it (its folder,
        environment and arguments), its output collected; the answer, marshalled."""
        import marshal

        from vaultkit.cli import main

        resident.SERVING = True
        self._workspace.pin(scan)  # (the events are the answering process's to read)
        out, err = _Collected(tty), _Collected()
        sys.stdout, sys.stderr = out, err
        try:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(env)
            code = main(argv, workspace=self._workspace)
        except OSError as exc:  # the caller's folder is gone
            print(f"vaultkit: error: {exc}", file=err)
            code = 2
        return marshal.dumps({"out": out.getvalue(), "err": err.getvalue(), "code": code},
                             resident.WIRE)
