"""Patterns rewritten so ``re`` compiles them without a 65,536-entry map match exactly what
they matched before: single classes over every code point, whole patterns over every line of
the fixtures and generated lines; and the prose hint is not compiled for a note without
" is " (a commit hook's staged journal)."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkit.core.lazyre import one_of
from vaultkit.vault import entries, timeforms

FIXTURES = Path(__file__).parent / "fixtures"
EVERY_CHAR = "".join(map(chr, range(0x110000)))

# The patterns as they were written before (the reference the rewrites must equal)
_CLOCK = timeforms.CLOCK
_OLD_OPEN = r"[\s\[【(（*_~≈约]*"
OLD = {
    "TIMED_ITEM": (timeforms.TIMED_ITEM,
                   rf"^ {{0,3}}(?:[-*+]|\d{{1,9}}[.)])\s+(?:\[[ xX]\]\s+)?{_OLD_OPEN}"
                   rf"(?:{timeforms.PERIOD}\s*{_OLD_OPEN})?(?:{timeforms.DATE}[ T]?)?{_CLOCK}"
                   r"(?![\d])"),
    "_CLOCK_ANYWHERE": (timeforms._CLOCK_ANYWHERE, rf"(?<![\d:：.]){_CLOCK}(?![\d:：])"),
    "_CLOCK_RANGE": (timeforms._CLOCK_RANGE, rf"{_CLOCK}(?:\s*[-–~]\s*{_CLOCK})?"),
    "_STAMP": (entries._STAMP, rf"{timeforms.PERIOD}|{timeforms.DATE}|{_CLOCK}"
                               rf"(?:\s*[-–~]\s*{_CLOCK})?"),
}


def _chars(pattern: str, flags: int = 0) -> str:
    return "".join(re.findall(pattern, EVERY_CHAR, flags))


def test_rewritten_classes_match_the_same_code_points():
    # every code point, 0..0x10FFFF: the alternation matches exactly the class's characters
    assert _chars(one_of(r"[\s\[(*_~]", "[≈【]", "[约（]")) == _chars(r"[\s\[【(（*_~≈约]")
    assert _chars(timeforms.RANGE_DASH) == _chars("[-–~]") == "-~–"
    # a repetition of it takes the same runs as the class's
    text = "".join(random.Random(7).choice(" \t[【(（*_~≈约x") for _ in range(5000))
    assert [m.span() for m in re.finditer(timeforms._OPEN, text)] == \
        [m.span() for m in re.finditer(_OLD_OPEN, text)]


def test_split_look_behind_refuses_the_same_code_points():
    # after each code point, a "1": the look-behinds let through the same ones
    text = "1".join(EVERY_CHAR) + "1"
    old = [m.start() for m in re.finditer(r"(?<![\d:：.])1", text)]
    new = [m.start() for m in re.finditer(r"(?<![\d:.])(?<!：)1", text)]
    assert old == new and len(new) < 0x110000


def _answers(name: str, compiled, line: str):
    if name == "TIMED_ITEM":
        m = compiled.match(line)
        return m and (m.span(), m.groups())
    return [m.span() for m in compiled.finditer(line)], compiled.sub(" ", line)


def _fixture_lines():
    for path in sorted(FIXTURES.rglob("*.md")):
        yield from path.read_text(encoding="utf-8", errors="replace").splitlines()


def test_rewritten_patterns_answer_the_same_on_every_fixture_line():
    lines = list(_fixture_lines())
    assert len(lines) > 2000
    for name, (new, old_source) in OLD.items():
        old = re.compile(old_source)
        assert new.groups == old.groups, name
        hits = 0
        for line in lines:
            answer = _answers(name, new, line)
            assert answer == _answers(name, old, line), (name, line)
            hits += bool(answer if name == "TIMED_ITEM" else answer[0])
        assert hits >= 20, name  # (the lines hold what the pattern is for)


# What the patterns look at: list markers, digits, separators, the opening characters and
# the dashes, period words, the date's characters, AM/PM
_PIECES = list("-*+.) 0123456789:：[]【】(（*_~≈约xX\t\n–—T/年月日aApPmM") + [
    "凌晨", "上午", "下午", "夜", "晚上", "2026-04-27", "14:30", "23:59:01", "5:00 PM", "- ",
    "1. ", "- [ ] ", "- **", "【", "约"]


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_rewritten_patterns_answer_the_same_on_generated_lines(line):
    for name, (new, old_source) in OLD.items():
        assert _answers(name, new, line) == _answers(name, re.compile(old_source), line), name


def test_rewritten_patterns_compile_without_a_big_map(monkeypatch):
    from re import _compiler
    real = _compiler._optimize_charset
    big = []

    def watched(*args):
        out = real(*args)
        big.extend(str(args[0]) for op, _ in out[0] if op is _compiler.BIGCHARSET)
        return out

    monkeypatch.setattr(_compiler, "_optimize_charset", watched)
    for name, (new, _) in OLD.items():
        _compiler.compile(new.pattern, new.flags)
        assert not big, (name, big)


def test_prose_hint_not_compiled_for_a_note_without_is():
    # a fresh process: scanning a note without " is " leaves the prose pattern uncompiled
    code = ("from vaultkit.vault import secretscan as s\n"
            "t = '## 14:30 Deploy\\n- key: value, token: none\\n- api_key=abc\\n'\n"
            "s.scan_text(t); s.has_candidates(t)\n"
            "print('_compiled' in s._PROSE_HINT.__dict__, s.has_candidates('my password is x'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]


def test_plainly_safe_text_holds_no_control_character():
    # every code point, alone, after text, and beside a newline, tab or CR: whenever the
    # check without the pattern says safe, the pattern finds nothing
    from vaultkit.vault import outbound
    unsafe = outbound._UNSAFE_TEXT
    for ch in EVERY_CHAR:
        for text in (ch, f"ab{ch}\n", f"\t{ch}\r\n", f"{ch}\r"):
            if outbound._plainly_safe(text):
                assert unsafe.search(text) is None, hex(ord(ch))
    assert outbound._plainly_safe("memory/a.md:1:1: VK504 info: 14:30 — 中文\n\tok\n")
    assert not outbound._plainly_safe("a\r\nb") and not outbound._plainly_safe("a\u202eb")


def test_clean_output_leaves_the_control_pattern_uncompiled():
    # a fresh process: a clean output line passes the boundary without compiling the pattern
    code = ("from vaultkit.vault import outbound as o\n"
            "t = 'memory/a.md:1:1: VK504 info: 14:30 — 中文\\n'\n"
            "assert o.terminal(t) == t and o.neutralise(t) == t\n"
            "print('_compiled' in o._UNSAFE_TEXT.__dict__, o.terminal('a\\u202eb\\n'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "a\\u202eb"]
