"""Renderers of the one list of diagnostics: text, json, github, sarif."""

from __future__ import annotations

import sys
from collections import Counter

from vaultkit import __version__
from vaultkit.lint.diagnostics import Diagnostic
from vaultkit.vault import outbound

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:  # (names for annotations only)
    from typing import Sequence

FORMATS = ("text", "json", "github", "sarif")

_COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[34m", "bold": "\033[1m", "dim": "\033[2m",
            "cyan": "\033[36m", "reset": "\033[0m"}


def use_colour(stream=None) -> bool:
    import os

    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def _vault_path(d: Diagnostic) -> str:
    return d.path


def render(diags: Sequence[Diagnostic], fmt: str, *, colour: bool = False,
           root: str | None = None, where=_vault_path) -> str:
    """``where(d)`` names the file in text and github output (machine formats keep the
    vault-relative path).

    Every format passes the output boundary (:mod:`vaultkit.vault.outbound`): each cell is
    one line without control characters, and credentials are masked in one pass over the
    whole output (JSON formats: over every string before serialising)."""
    if fmt == "json":
        return outbound.dumps([d.to_dict() for d in diags], indent=2) + "\n"
    if fmt == "sarif":
        return outbound.dumps(sarif(diags, root), indent=2) + "\n"
    if fmt == "github":
        out = "".join(_github(d, _cell(where(d))) + "\n" for d in diags)
        # its annotations are the workflow commands the output boundary lets through
        return outbound.own_commands(outbound.mask_output(out))
    out = "".join(_text(d, colour, _editor_path(_cell(where(d)))) + "\n" for d in diags)
    return outbound.mask_output(out)


def _editor_path(path: str) -> str:
    """A path that would start its line with ``::`` (a note named ``::error …::x.md``)
    written ``./::error …::x.md``: the same file, to an editor too, and no workflow command
    (the output boundary would otherwise escape its second colon)."""
    return "./" + path if path.lstrip().startswith("::") else path


def _cell(text: str) -> str:
    return outbound.one_line(text)


def _text(d: Diagnostic, colour: bool, path: str | None = None) -> str:
    """``path:line:col: CODE rule severity: message``: the severity is written out, so the
    errors (which fail the run) are told from the warnings without colour too."""
    where = f"{path or _editor_path(_cell(d.path))}:{d.line or 1}:{d.column or 1}:"
    message = _cell(d.message)
    level = d.severity if d.severity in ("error", "info") else "warning"
    if not colour:
        return f"{where} {d.code} {d.rule} {level}: {message}"
    c = _COLOURS
    sev = c[level]
    fix = f" {c['cyan']}[*]{c['reset']}" if d.fixable else ""
    return (f"{c['bold']}{where}{c['reset']} {sev}{c['bold']}{d.code}{c['reset']} "
            f"{c['dim']}{d.rule}{c['reset']} {sev}{level}:{c['reset']}{fix} {message}")


def summary(diags: Sequence[Diagnostic], missing: int = 0) -> str:
    """The closing lines: how many findings, and how many of them ``--fix`` fixes (the
    ``fixable`` flag they carry; no rule is run again to count them). ``missing``: how
    many paths named on the command line do not exist (each already reported as an
    error), so a run that checked less than it was asked to never says all passed."""
    if not diags:
        if missing:
            return (f"No findings in what was checked; {missing} path"
                    f"{'s' * (missing != 1)} not found.")
        return "All checks passed!"
    errors = sum(1 for d in diags if d.severity == "error")
    infos = sum(1 for d in diags if d.severity == "info")
    warnings = len(diags) - errors - infos
    fixable = sum(1 for d in diags if d.fixable)
    noun = "finding" if len(diags) == 1 else "findings"
    text = f"Found {len(diags)} {noun} ({errors} error{'s' * (errors != 1)}, " \
           f"{warnings} warning{'s' * (warnings != 1)}" \
           + (f", {infos} info" if infos else "") + ")."
    if fixable:
        text += f"\n[*] {fixable} fixable with `vaultkit check --fix`."
    return text


def statistics(diags: Sequence[Diagnostic], fmt: str = "text") -> str:
    """Findings per rule, most first; ``fmt`` json: a list of ``{code, rule, count,
    fixable}`` (a script reading `--statistics --format json` gets JSON, as ruff gives)."""
    counts = Counter((d.code, d.rule) for d in diags)
    fixable = {(d.code, d.rule) for d in diags if d.fixable}
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if fmt == "json":
        return outbound.dumps([{"code": code, "rule": rule, "count": n,
                                "fixable": (code, rule) in fixable}
                               for (code, rule), n in ranked], indent=2) + "\n"
    lines = []
    for (code, rule), n in ranked:
        mark = "[*]" if (code, rule) in fixable else "   "
        lines.append(f"{n:5d}\t{code}\t{mark} {rule}")
    return "\n".join(lines) + ("\n" if lines else "")


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _github(d: Diagnostic, path: str | None = None) -> str:
    level = {"error": "error", "info": "notice"}.get(d.severity, "warning")
    props = [f"file={_escape_prop(path or d.path)}"]
    if d.line:
        props.append(f"line={d.line}")
    if d.column:
        props.append(f"col={d.column}")
    props.append(f"title={_escape_prop(f'{d.code} {d.rule}')}")
    message = _cell(d.message)
    return f"::{level} {','.join(props)}::{_escape_data(f'{d.code} {d.rule}: {message}')}"


_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def sarif(diags: Sequence[Diagnostic], root: str | None = None) -> dict:
    """A SARIF 2.1.0 log with one run; rules carry their docs' summary and help text."""
    from vaultkit.lint.rules import all_rules

    used = {d.rule for d in diags}
    rules = [r for r in all_rules() if r.name in used]
    index = {r.name: i for i, r in enumerate(rules)}
    results = []
    for d in diags:
        region = {}
        if d.line:
            region["startLine"] = d.line
            if d.column:
                region["startColumn"] = d.column
        location = {"physicalLocation": {"artifactLocation": {"uri": d.path,
                                                              "uriBaseId": "VAULTROOT"}}}
        if region:
            location["physicalLocation"]["region"] = region
        result = {
            "ruleId": d.code,
            "level": _SARIF_LEVEL.get(d.severity, "warning"),
            "message": {"text": d.message},
            "locations": [location],
        }
        if d.rule in index:
            result["ruleIndex"] = index[d.rule]
        results.append(result)
    run = {
        "tool": {"driver": {
            "name": "vaultkit",
            "version": __version__,
            "informationUri": "https://pypi.org/project/vaultkit-lint/",
            "rules": [{
                "id": r.code,
                "name": r.name,
                "shortDescription": {"text": r.summary()},
                "fullDescription": {"text": r.summary()},
                "help": {"text": r.doc(), "markdown": r.doc()},
                "defaultConfiguration": {"level": _SARIF_LEVEL.get(r.severity, "warning")},
                "properties": {"fixable": r.fixable},
            } for r in rules],
        }},
        "results": results,
    }
    if root:
        from pathlib import Path

        run["originalUriBaseIds"] = {"VAULTROOT": {"uri": Path(root).resolve().as_uri() + "/"}}
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    }
