"""A commit hook reads its settings from the vault's store without evaluating the
annotations of the settings classes (each evaluated annotation is compiled, and names
typing): only a field holding a list or a mapping has its annotation read, as text, for
where it holds settings objects; each reading is what typing.get_type_hints gives."""

from __future__ import annotations

import typing

import pytest

from vaultkit.core import plain
from vaultkit.vault import profile


def _vault(tmp_path):
    root = tmp_path / "v"
    (root / "memory").mkdir(parents=True)
    (root / "vaultkit.toml").write_text(
        'profile = "openclaw"\nexclude = ["drafts/"]\n\n[budgets]\nmax-file-bytes = 50000\n',
        encoding="utf-8")
    (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    (root / "memory" / "2026-11-01.md").write_text("# Day\n", encoding="utf-8")
    return root.resolve()


def _classes():
    return [v for v in vars(profile).values()
            if isinstance(v, type) and issubclass(v, plain.Declared)
            and v.__module__ == profile.__name__]


def _shape_of(hint):
    """Where a value of ``hint`` (evaluated) holds settings objects: _shape's answer."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, type) and issubclass(hint, plain.Declared):
        return hint
    if origin is list:
        return "list", _shape_of(args[0])
    if origin is dict:
        return "dict", _shape_of(args[1])
    if origin is typing.Annotated:
        return _shape_of(args[0])
    inner = [a for a in args if a is not type(None)]
    if type(None) in args and len(inner) == 1:
        return _shape_of(inner[0])
    return None


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_a_fields_shape_read_as_text_is_what_get_type_hints_gives(cls):
    hints = typing.get_type_hints(cls, localns=profile._annotation_names(),
                                  include_extras=True)
    for name in plain.fields(cls):
        assert profile._field_shape(cls, name) == _shape_of(hints[name]), name


def test_settings_from_the_store_evaluate_no_class_annotations(tmp_path, monkeypatch):
    root = _vault(tmp_path)
    fresh = profile.load_settings(root, use_cache=False)
    profile.load_settings(root)  # (validated, and written to the store)
    monkeypatch.setattr(profile, "_BUILT", {})  # (as a new process: read from the store)
    monkeypatch.setattr(profile, "_SHAPES", {})

    def refused(*args, **kwargs):
        raise AssertionError("every annotation of a settings class evaluated")

    monkeypatch.setattr(typing, "get_type_hints", refused)
    warm = profile.load_settings(root)
    assert plain.asdict(warm.profile) == plain.asdict(fresh.profile)
    assert plain.asdict(warm.config) == plain.asdict(fresh.config)
    assert warm.is_excluded("drafts/x.md") and warm.profile.budgets.max_file_bytes == 50000
    # only the fields that held a list or a mapping had their annotation read
    assert 0 < len(profile._SHAPES) < sum(len(plain.fields(c)) for c in _classes())


def test_settings_from_the_store_are_not_checked_again(tmp_path, monkeypatch):
    """The stored settings were validated when they were built: rebuilding them runs no
    ``__post_init__`` again (each compiled the pack's regexes, a time zone read its file),
    and gives what a fresh run builds; an edited vaultkit.toml is still validated."""
    root = _vault(tmp_path)
    toml = root / "vaultkit.toml"
    toml.write_text('timezone = "Asia/Shanghai"\n' + toml.read_text(encoding="utf-8"),
                    encoding="utf-8")
    fresh = profile.load_settings(root, use_cache=False)
    profile.load_settings(root)  # (validated, and written to the store)
    monkeypatch.setattr(profile, "_BUILT", {})  # (as a new process: read from the store)
    checked = []

    def check(self):
        checked.append(type(self).__name__)

    for cls in _classes():
        if "__post_init__" in vars(cls):
            monkeypatch.setattr(cls, "__post_init__", check)
    warm = profile.load_settings(root)
    assert checked == []
    assert plain.asdict(warm.profile) == plain.asdict(fresh.profile)
    assert plain.asdict(warm.config) == plain.asdict(fresh.config)
    assert warm.config.timezone == "Asia/Shanghai"
    # a list default is made afresh for each object, as its constructor makes it
    assert warm.config.ignore == [] and warm.config.ignore is not profile.ConfigFile().ignore
    monkeypatch.undo()
    (root / "vaultkit.toml").write_text('profile = "openclaw"\ntimezone = "Nowhere/Else"\n',
                                        encoding="utf-8")
    monkeypatch.setattr(profile, "_BUILT", {})
    with pytest.raises(profile.ConfigError, match="unknown time zone 'Nowhere/Else'"):
        profile.load_settings(root)


def test_stored_settings_that_would_fail_their_checks_now_are_validated_again(
        tmp_path, monkeypatch):
    """What the skipped checks read besides the files' bytes is the interpreter (whether a
    regex compiles) and the system's time-zone data: the store's entry is keyed by the
    first, and its zone looked up again, so a warm run fails as a fresh one does."""
    root = _vault(tmp_path)
    toml = root / "vaultkit.toml"
    toml.write_text('timezone = "Asia/Shanghai"\n' + toml.read_text(encoding="utf-8"),
                    encoding="utf-8")
    profile.load_settings(root)  # (validated, and written to the store)
    validated = []
    real = profile._validate
    monkeypatch.setattr(profile, "_validate",
                        lambda *a, **k: validated.append(a[0].__name__) or real(*a, **k))
    monkeypatch.setattr(profile, "_BUILT", {})
    profile.load_settings(root)
    assert validated == []  # (the stored entry)
    monkeypatch.setattr(profile.sys, "version", "another Python")
    monkeypatch.setattr(profile, "_BUILT", {})
    profile.load_settings(root)
    assert validated  # (another interpreter: validated again)
    monkeypatch.undo()

    def gone(name):
        raise profile._invalid("timezone", f"unknown time zone {name!r} (use an IANA name "
                                           "such as 'Asia/Shanghai')")

    monkeypatch.setattr(profile, "_check_timezone", gone)  # (the zone's data removed)
    monkeypatch.setattr(profile, "_BUILT", {})
    with pytest.raises(profile.ConfigError) as fresh:
        profile.load_settings(root, use_cache=False)
    with pytest.raises(profile.ConfigError) as warm:
        profile.load_settings(root)
    assert str(warm.value) == str(fresh.value) == (
        "vaultkit.toml: timezone: unknown time zone 'Asia/Shanghai' (use an IANA name such "
        "as 'Asia/Shanghai')")


def test_a_shipped_validated_pack_is_checked_under_this_python(tmp_path, monkeypatch):
    """The bundled packs' validated file was written by some Python: a pack from it has
    its checks run again, and one failing is validated afresh (and reported)."""
    from vaultkit.core.resources import rules_dir

    checked = []
    real = profile.LayerSpec.__post_init__
    monkeypatch.setattr(profile.LayerSpec, "__post_init__",
                        lambda self: checked.append(self.name) or real(self))
    pack = profile._validated_pack(rules_dir() / "openclaw.yaml")
    assert pack is not None and checked

    def failing(obj):
        raise profile._invalid("header", "regex does not compile here")

    monkeypatch.setattr(profile, "_check_again", failing)
    assert profile._validated_pack(rules_dir() / "openclaw.yaml") is None


def test_the_collector_is_off_while_a_command_imports_its_modules(tmp_path, monkeypatch):
    """The cyclic collector is off from the start of a command, not only once its modules
    are imported: the imports of a commit hook made some 18 collections, each walking
    every object made so far. It is on again after, as it was."""
    import gc

    import vaultkit.cli as cli

    root = _vault(tmp_path)
    monkeypatch.chdir(root)
    seen = []
    real = cli.build_parser

    def parser(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(cli, "build_parser", parser)
    assert gc.isenabled()
    assert cli.main(["check", "-q", "MEMORY.md"]) in (0, 1)
    assert seen == [False]
    assert gc.isenabled()


# The classes a hook creates on import whose instances are never compared or printed: they
# have no ``__eq__`` and ``__repr__`` (only ``__init__``, and ``__setattr__`` when frozen).
def _uncompared():
    from vaultkit.lint.engine import Selection
    from vaultkit.vault.gitstate import Change
    from vaultkit.vault.loader import Lent, Scan
    from vaultkit.vault.loss import Judgement
    from vaultkit.vault.promoted import PromotedBlock
    from vaultkit.vault.runtimes.base import ImportProblem, Piece, Request, RuntimeContext
    from vaultkit.vault.runtimes.workspace_set import _Cut
    from vaultkit.vault.snapshots import (
        DroppedSecrets, HeldCredential, Snapshot, SnapshotResult, SnapshotSettings)

    return [Selection, Change, Lent, Scan, Judgement, PromotedBlock, ImportProblem, Piece,
            Request, RuntimeContext, _Cut, DroppedSecrets, HeldCredential, Snapshot,
            SnapshotResult, SnapshotSettings]


@pytest.mark.parametrize("cls", _uncompared(), ids=lambda c: c.__name__)
def test_a_class_never_compared_gets_no_eq_or_repr(cls):
    assert cls.__eq__ is object.__eq__ and cls.__repr__ is object.__repr__
    assert cls.__hash__ is object.__hash__  # (an identity, as before)


def _run_imports(root, *args):
    """The modules ``vaultkit <args>`` imported, run as a process in ``root`` (as
    ``-X importtime`` lists them: the command ends with ``os._exit``, no exit hook runs)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "vaultkit", *args],
                          cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def test_the_hook_and_the_warm_check_import_no_dataclasses(tmp_path):
    """``dataclasses`` imports ``inspect`` (with ``ast``, ``dis``, ``tokenize``), and each
    ``@dataclass`` compiled generated source at import: some 9 % of a commit hook. The
    classes a hook and a warm check import are plain (vaultkit.core.plain)."""
    import subprocess

    from vaultkit.core.gitenv import git_env

    root = _vault(tmp_path)
    (root / "memory" / "notes.md").write_text("# Notes\n\n[[MEMORY]] and [[missing]]\n",
                                               encoding="utf-8")
    env = git_env()
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "v"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    # (the first check validates vaultkit.toml with pydantic, which imports dataclasses:
    # only when the config changed)
    assert "pydantic" in _run_imports(root, "check", ".")
    assert not _run_imports(root, "check", ".") & {"dataclasses", "inspect", "pydantic"}
    with open(root / "memory" / "2026-11-01.md", "a", encoding="utf-8") as f:
        f.write("\n## 09:00 Entry\n- Appended.\n")
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    for args in (["check", "--hook", "memory/2026-11-01.md"], ["check", "."]):
        found = _run_imports(root, *args)
        assert "vaultkit.lint.engine" in found  # (the check ran)
        assert not found & {"dataclasses", "inspect", "ast", "dis", "tokenize"}, args


def test_the_hook_and_the_warm_check_of_a_vault_without_config_import_no_typing(tmp_path):
    """``typing`` (some 12 M instructions to import) names only annotations in the modules
    a hook imports, and the stored settings are rebuilt with their annotations read as
    text. (With a vaultkit.toml the standard library's ``tomllib``, which reads it, imports
    ``typing`` itself.)"""
    import subprocess

    from vaultkit.core.gitenv import git_env

    root = _vault(tmp_path)
    (root / "vaultkit.toml").unlink()
    (root / "memory" / "notes.md").write_text("# Notes\n\n[[MEMORY]] and [[missing]]\n",
                                               encoding="utf-8")
    env = git_env()
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "v"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    _run_imports(root, "check", ".")  # (the caches and the settings' entry written)
    with open(root / "memory" / "2026-11-01.md", "a", encoding="utf-8") as f:
        f.write("\n## 09:00 Entry\n- Appended.\n")
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    for args in (["check", "--hook", "memory/2026-11-01.md"], ["check", "."]):
        found = _run_imports(root, *args)
        assert "vaultkit.lint.engine" in found  # (the check ran)
        assert "typing" not in found, args


def test_the_walk_makes_no_python_call_per_listed_file(tmp_path):
    """Sorting the listing by path with a Python key was a call per file (10,100 in the
    bench vault); the walk's only Python call per file is the entry's ``__init__``."""
    import sys

    from vaultkit.vault.scan import walk

    for i in range(300):
        (tmp_path / f"n{i:03}.md").write_text("x", encoding="utf-8")
    calls = []

    def profiler(frame, event, arg):
        if event == "call" and frame.f_code.co_name != "__init__":
            calls.append(frame.f_code.co_name)

    sys.setprofile(profiler)
    try:
        files, problems = walk(tmp_path)
    finally:
        sys.setprofile(None)
    assert [f.rel for f in files] == [f"n{i:03}.md" for i in range(300)] and not problems
    assert len(calls) < 100, sorted(set(calls))


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_a_settings_class_has_no_generated_repr_nor_eq(cls):
    """Every process that reads settings imports these classes; a generated ``__repr__``
    and ``__eq__`` (compiled from source text at import, some 17 M instructions for the
    eleven) are never used: no code prints or compares settings, and the tests compare
    warm settings with fresh ones by ``vaultkit.core.plain.asdict``."""
    assert cls.__repr__ is object.__repr__
    assert cls.__eq__ is object.__eq__


def _records():
    from vaultkit.lint import diagnostics
    from vaultkit.vault import model, scan

    return [v for m in (model, diagnostics, scan) for v in vars(m).values()
            if isinstance(v, type) and issubclass(v, plain.Plain) and v.__module__ == m.__name__]


@pytest.mark.parametrize("cls", _records(), ids=lambda c: c.__name__)
def test_a_parsed_record_class_compares_its_fields_with_no_method_of_its_own(cls):
    """The notes' and findings' record classes, imported by every check: ``__eq__``
    compares a warm answer with a fresh one; it is the shared one (nothing made per class
    at import), and the class is slotted."""
    assert cls.__eq__ is plain.Plain.__eq__ and "__eq__" not in vars(cls)
    assert "__slots__" in vars(cls) and not hasattr(cls(*[None] * _required(cls)), "__dict__")


def _required(cls):
    code = cls.__init__.__code__
    return code.co_argcount - 1 - len(cls.__init__.__defaults__ or ())
