"""A finished `vaultkit check` leaves with os._exit (no interpreter teardown of the parsed
vault), but only once nothing can be lost: atexit handlers ran, output is flushed, the exit
code is main()'s, and no non-daemon thread is still running."""

import gc
import json
import subprocess
import sys
import threading

import pytest

import vaultkit.cli as cli


class _Exited(Exception):
    def __init__(self, code):
        self.code = code


class _Recorder:
    def __init__(self, events, name):
        self.events, self.name = events, name

    def write(self, text):
        self.events.append((self.name, "write", text))
        return len(text)

    def flush(self):
        self.events.append((self.name, "flush"))


@pytest.fixture(autouse=True)
def _collector_back_on():
    # (console() turns the collector off for a check; a fake os._exit returns here with it
    # off: the rest of the session runs with it on, as it began)
    yield
    gc.enable()


@pytest.fixture
def exiting(monkeypatch):
    events = []

    def fake_exit(code):
        events.append(("os._exit", code))
        raise _Exited(code)

    monkeypatch.setattr("os._exit", fake_exit)
    monkeypatch.setattr("atexit._run_exitfuncs", lambda: events.append(("atexit",)))
    return events


def _record_streams(monkeypatch, events):
    # (in the test itself: pytest's capturing sets sys.stdout again for each phase)
    monkeypatch.setattr(sys, "stdout", _Recorder(events, "stdout"))
    monkeypatch.setattr(sys, "stderr", _Recorder(events, "stderr"))


def _main_returning(code):
    def main(argv=None):
        print("finding")
        return code
    return main


def test_a_finished_check_exits_at_once_with_its_code_after_atexit_and_flushing(monkeypatch,
                                                                                exiting):
    monkeypatch.setattr(cli, "main", _main_returning(3))
    monkeypatch.setattr(sys, "argv", ["vaultkit", "check", "--hook", "memory/a.md"])
    _record_streams(monkeypatch, exiting)
    with pytest.raises(_Exited) as exc:
        cli.console()
    assert exc.value.code == 3
    names = [e[0] if len(e) < 2 or e[0] != "stdout" else f"stdout.{e[1]}" for e in exiting]
    assert names.index("atexit") < names.index("stdout.flush") < names.index("os._exit")
    assert ("stderr", "flush") in exiting
    assert exiting[-1] == ("os._exit", 3)


def test_another_command_exits_the_ordinary_way(monkeypatch, exiting):
    monkeypatch.setattr(cli, "main", _main_returning(0))
    monkeypatch.setattr(sys, "argv", ["vaultkit", "snapshot"])
    with pytest.raises(SystemExit) as exc:
        cli.console()
    assert exc.value.code == 0
    assert not [e for e in exiting if e[0] in ("os._exit", "atexit")]


def test_a_running_non_daemon_thread_gets_the_ordinary_exit(monkeypatch, exiting):
    monkeypatch.setattr(cli, "main", _main_returning(1))
    monkeypatch.setattr(sys, "argv", ["vaultkit", "check"])
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, daemon=False)
    worker.start()
    try:
        with pytest.raises(SystemExit) as exc:
            cli.console()
    finally:
        stop.set()
        worker.join()
    assert exc.value.code == 1
    assert not [e for e in exiting if e[0] in ("os._exit", "atexit")]
    assert gc.isenabled()  # (the ordinary exit, with the collector as main() left it)


def test_a_failed_flush_gets_the_ordinary_exit(monkeypatch, exiting):
    monkeypatch.setattr(cli, "main", _main_returning(0))
    monkeypatch.setattr(sys, "argv", ["vaultkit", "check"])
    _record_streams(monkeypatch, exiting)

    def broken():
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys.stdout, "flush", broken)
    with pytest.raises(SystemExit):
        cli.console()
    assert not [e for e in exiting if e[0] == "os._exit"]


_RUN = """
import atexit, sys
mark = sys.argv[1]
atexit.register(lambda: open(mark, "w").write("ran"))
sys.argv = ["vaultkit", *sys.argv[2:]]
from vaultkit.cli import console
console()
"""


def test_the_real_process_keeps_output_exit_code_atexit_and_the_cache(make_vault, tmp_path):
    root = make_vault({"memory/semantic/a.md": "# A\n\n[[missing]]\n"})
    ran = tmp_path / "atexit-ran"
    done = subprocess.run([sys.executable, "-c", _RUN, str(ran), "check", "--format", "json", "--fail-on", "warning",
                           "--root", str(root)], capture_output=True, text=True, cwd=root)
    assert done.returncode == 1, done.stderr  # (a broken link: a warning)
    findings = json.loads(done.stdout)
    assert any("missing" in json.dumps(f) for f in findings)
    assert ran.read_text() == "ran"
    assert (root / ".vaultkit" / "cache").is_dir()  # written before the exit
    again = subprocess.run([sys.executable, "-m", "vaultkit", "check", "--format", "json", "--fail-on", "warning",
                            "--root", str(root)], capture_output=True, text=True, cwd=root)
    assert again.returncode == 1
    assert again.stdout == done.stdout  # the cached answer, the same bytes


_NO_COLLECTION = """
import gc, os, sys
import vaultkit.cli as cli
returned = []

def collected(phase, info):
    if returned and phase == "start":
        os.write(2, b"collected after main\\n")

gc.callbacks.append(collected)
real_main = cli.main

def main(argv=None):
    code = real_main(argv)
    returned.append(code)  # (no object the collector counts: none triggered here)
    return code

cli.main = main
sys.argv = ["vaultkit", *sys.argv[1:]]
cli.console()
"""


def test_a_finished_check_leaves_without_a_collection_pass(make_vault):
    # main() turns the collector back on as it found it; its first pass then walked every
    # object a cold check made (0.2-0.3 s of CPU at 10,000 notes) just before os._exit
    root = make_vault({f"memory/semantic/n{i}.md": f"# N{i}\n\n[[n{i + 1}]] #tag\n"
                       for i in range(30)})
    done = subprocess.run([sys.executable, "-c", _NO_COLLECTION, "check", "--no-cache",
                           "--root", str(root)], capture_output=True, text=True, cwd=root)
    assert "internal error" not in done.stderr, done.stderr
    assert "collected after main" not in done.stderr
    again = subprocess.run([sys.executable, "-m", "vaultkit", "check", "--no-cache",
                            "--root", str(root)], capture_output=True, text=True, cwd=root)
    assert (again.returncode, again.stdout) == (done.returncode, done.stdout)
