"""vaultkit.core.plain: the record classes' shared methods behave as the ``dataclasses``
ones they replace (equality, hashing, frozen objects, replace, asdict)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from vaultkit.core import plain
from vaultkit.lint.diagnostics import Diagnostic, Fix
from vaultkit.vault import profile
from vaultkit.vault.model import Link, Note
from vaultkit.vault.secretscan import Finding


def test_equality_compares_the_compared_fields_of_the_same_class():
    a = Diagnostic("r", "VK1", "error", "a.md", 1, 2, "m")
    b = Diagnostic("r", "VK1", "error", "a.md", 1, 2, "m", fix=Fix("x", []))
    assert a == b  # (``fix`` is not compared, as field(compare=False) left it)
    assert a != Diagnostic("r", "VK1", "error", "a.md", 1, 3, "m")
    assert Link("wiki", "t", "", None, 1, 1, False, "[[t]]") != ("wiki", "t")
    with pytest.raises(TypeError):
        hash(a)  # (compared, not frozen: unhashable, as eq=True made it)


def test_a_note_compares_its_parse_not_where_it_came_from_nor_its_text():
    a = Note("a.md", size=3, text="abc", file="/x/a.md")
    b = Note("a.md", size=3, text="xyz", file="/y/a.md")
    assert a == b and a != Note("a.md", size=4, text="abc")
    assert a.headings == [] and a.headings is not b.headings  # (made afresh)


def test_a_frozen_record_is_a_value():
    f = Finding(3, 5, "password", "…ab", "pw", 9)
    g = Finding(3, 5, "password", "…ab", "pw", 9)
    assert f == g and hash(f) == hash(g) and len({f, g}) == 1
    with pytest.raises(AttributeError):
        f.line = 4
    with pytest.raises(AttributeError):
        del f.kind
    for again in (copy.copy(f), copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
        assert again == f and hash(again) == hash(f)
    assert repr(f) == ("Finding(line=3, column=5, kind='password', masked='…ab', "
                       "label='pw', length=9)")


def test_replace_makes_a_new_object_with_the_changes():
    d = Diagnostic("r", "VK1", "error", "a.md", 1, 2, "m", True, Fix("x", []))
    w = plain.replace(d, severity="warning")
    assert w is not d and w.severity == "warning" and d.severity == "error"
    assert (w.rule, w.fixable, w.fix) == ("r", True, d.fix)
    n = Note("a.md", size=3, text="abc", file="/x/a.md")
    moved = plain.replace(n, path="b.md", text=n.text)
    assert (moved.path, moved.text, moved.file, moved.size) == ("b.md", "abc", "/x/a.md", 3)
    with pytest.raises(TypeError):
        plain.replace(d, nonsense=1)


def test_settings_asdict_and_fields_are_what_dataclasses_gave_for_their_twins(tmp_path):
    (tmp_path / "vaultkit.toml").write_text(
        'profile = "openclaw"\nexclude = ["drafts/"]\n\n[budgets]\nmax-file-bytes = 5000\n',
        encoding="utf-8")
    (tmp_path / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    settings = profile.load_settings(tmp_path, use_cache=False)
    for obj in (settings.profile, settings.config):
        twin = profile._adapter(type(obj), None)[1]
        assert plain.fields(type(obj)) == tuple(f.name for f in dataclasses.fields(twin))
        validated = profile._adapter(type(obj), None)[0].validate_python(plain.asdict(obj))
        assert dataclasses.asdict(validated) == plain.asdict(obj)
    assert settings.profile.budgets.max_file_bytes == 5000


def test_a_settings_class_takes_defaults_and_refuses_what_it_does_not_know():
    spec = profile.LayerSpec("notes", ["notes/**"])
    assert (spec.description, spec.exclude, spec.fallback) == ("", [], False)
    assert spec.exclude is not profile.LayerSpec("x", []).exclude  # (made afresh)
    with pytest.raises(TypeError):
        profile.LayerSpec(paths=[])  # (name missing)
    with pytest.raises(TypeError):
        profile.LayerSpec("notes", [], colour="red")
    with pytest.raises(ValueError):
        profile.LayerSpec("notes", ["../out"])  # (__post_init__ runs, as before)


def test_config_errors_name_the_key_as_before(tmp_path):
    config = tmp_path / "vaultkit.toml"
    for text, message in (
            ('[[layers]]\nname = "x"\npaths = ["a/**"]\nexlude = []\n',
             "unknown key 'layers.0.exlude' (did you mean 'exclude'?)"),
            ('[types.lesson]\nfolder = "../x"\n',
             "types.lesson.folder: path '../x' leaves the vault; give a path relative to the "
             "vault root without '..'"),
            ('[budgets]\nmax-file-bytes = "big"\n', "budgets.max-file-bytes: Input should be "
             "a valid integer, unable to parse string as an integer"),
            ('layers = 3\n', "layers: Input should be a valid list")):
        config.write_text(text, encoding="utf-8")
        with pytest.raises(profile.ConfigError) as err:
            profile.load_config(config)
        assert str(err.value) == f"vaultkit.toml: {message}"
