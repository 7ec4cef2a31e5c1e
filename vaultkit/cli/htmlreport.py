"""The vault health report: one self-contained HTML page (``vaultkit report``).

The page holds everything inline: the charts are SVG drawn by matplotlib (Agg, no
display; glyphs as paths, so no font is needed), the style is one ``<style>`` block, and
there is no script, no font, no image and no link the browser would fetch: it works
offline and prints (charts never split across pages). Markdown from the vault (the head
of MEMORY.md, the lines around the top findings) is rendered with mistune with raw HTML
escaped and images shown as their alt text, so a note cannot make the page load
anything or run anything.

Charts, in order (each a ``<figure class="chart">`` with an id):

``chart-sizes``
    MEMORY.md and the whole bootstrap set, in bytes, after every commit that changed
    them, against their budgets (``budgets.memory_md_bytes``, ``bootstrap_guideline_chars``),
    with the loss events marked on the timeline.
``chart-layers``
    Notes per layer over the history (journal, archive, structured, knowledge, bootstrap).
``chart-losses``
    The loss events on the timeline, one row per kind; recovered ones hollow.
``chart-journal``
    Journal activity per day as a calendar (lines added to journals, the last year of
    history).
``chart-footprint``
    What each runtime present loads at session start (``vaultkit context``): one bar per
    runtime, a segment per file, in the runtime's unit, with its total limit, the part it
    cuts hatched, and OpenClaw's bootstrap guideline.
``chart-findings``
    Today's findings per rule, coloured by severity.

Credential-looking strings in what the page quotes (MEMORY.md, finding context, messages,
commit subjects) are masked: a report gets shared. The matplotlib and mistune imports
happen only here: they are the ``report`` extra.
"""

from __future__ import annotations

import datetime as dt
import html
import io
import re
from collections import Counter
from dataclasses import dataclass

from vaultkit.core.errors import VaultkitError

CHART_IDS = ("chart-sizes", "chart-layers", "chart-losses", "chart-journal", "chart-footprint",
             "chart-findings")
LAYER_ORDER = ("journal", "session", "dated", "archive", "structured", "knowledge", "topics",
               "dreaming", "bootstrap", "working")
LAYER_COLOURS = {"journal": "#868e96", "session": "#adb5bd", "dated": "#5c940d",
                 "archive": "#ced4da", "structured": "#1971c2", "knowledge": "#0c8599",
                 "topics": "#66d9e8", "dreaming": "#9775fa", "bootstrap": "#f76707",
                 "working": "#ffd43b"}
# layers a profile or vaultkit.toml adds: drawn after the known ones, in these colours
OTHER_COLOURS = ("#e64980", "#74b816", "#4263eb", "#f59f00", "#495057")
KIND_COLOURS = {"journal-rewrite": "#c92a2a", "memory-shrink": "#e8590c",
                "memory-pruned": "#868e96", "journal-edit": "#adb5bd",
                "mass-deletion": "#f08c00", "note-deleted": "#862e9c",
                "bootstrap-truncated": "#1864ab"}
SEVERITY_COLOURS = {"error": "#c92a2a", "warning": "#f08c00", "info": "#1971c2"}
MEMORY_HEAD_LINES = 60
TOP_FINDINGS = 10
MAX_POINTS = 600  # per series in the layer chart
MAX_EVENT_ROWS = 200  # loss events listed in the table


@dataclass
class ReportData:
    """Everything the page shows (built by :func:`collect`)."""

    vault: object
    history: object | None  # None outside git
    history_error: str | None
    diagnostics: list
    checks: list
    generated: dt.datetime


def _need_extra():
    try:
        import matplotlib
        import mistune  # noqa: F401
    except ImportError as exc:
        raise VaultkitError(f"vaultkit report needs the report extra ({exc.name} is missing): "
                            "pip install 'vaultkit-lint[report]'") from None
    matplotlib.use("Agg", force=True)
    return matplotlib


def collect(vault, *, now: dt.datetime | None = None) -> ReportData:
    """Run the history scan, the rules and the audit over ``vault``."""
    from vaultkit.audit import run_audit
    from vaultkit.lint.engine import run_rules, select_rules
    from vaultkit.audit.history import history_check
    from vaultkit.cli.commands.history import scan_all
    from vaultkit.lint.rule import Context

    now = now or dt.datetime.now().astimezone()
    history, error = None, None
    try:
        # the events `vaultkit history` lists: the commits' and those between commits
        # that the snapshots hold (read as they are: the report records no snapshot)
        history = scan_all(vault.root, vault.settings, record=False)
    except VaultkitError as exc:
        error = str(exc)
    diagnostics = run_rules(Context(vault), select_rules(vault.settings))
    read = history is not None and not history.outside_git  # (else the audit reads it)
    checks = run_audit(vault, skip={"history"} if read else set(), now=now)
    if read:
        import dataclasses

        from vaultkit.audit import CHECK_IDS

        # the audit's history check on the history read above, in the checklist's place
        # (it judges the commits; the snapshots check judges the rest)
        check = history_check(dataclasses.replace(
            history, events=[e for e in history.events if e.source == "commit"]), now)
        check.id = "history"
        at = CHECK_IDS.index("history")
        place = next((i for i, c in enumerate(checks) if CHECK_IDS.index(c.id) > at),
                     len(checks))
        checks.insert(place, check)
    return ReportData(vault, history, error, diagnostics, checks, now)


# -- charts ------------------------------------------------------------------------------------

def _figure(height: float = 3.0):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.6, height), dpi=96, layout="constrained")
    return fig, fig.subplots()


def _svg(fig, label: str) -> str:
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "vaultkit", "svg.fonttype": "path"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]  # drop the XML declaration and the DOCTYPE (a URL)
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.S)
    return text.replace("<svg ", f'<svg role="img" aria-label="{html.escape(label)}" ', 1)


def _times(stamps):
    return [dt.datetime.fromtimestamp(s, dt.timezone.utc) for s in stamps]


def _empty(ax, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes,
            color="#868e96", fontsize=12)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)


def _style(ax) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", color="#e9ecef", linewidth=0.8)
    ax.set_axisbelow(True)


def _dates_axis(ax) -> None:
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def chart_sizes(data: ReportData) -> str:
    fig, ax = _figure(3.2)
    history = data.history
    budgets = data.vault.profile.budgets
    if history is None or not (history.memory_bytes or history.bootstrap_bytes):
        _empty(ax, "no git history of the bootstrap files")
        return _svg(fig, "MEMORY.md and bootstrap sizes: no history")
    end = data.generated
    for series, budget, colour, label in (
            (history.bootstrap_bytes, budgets.bootstrap_guideline_chars, "#f76707",
             "bootstrap set"),
            (history.memory_bytes, budgets.memory_md_bytes, "#1971c2", "MEMORY.md")):
        if not series:
            continue
        times = _times(t for t, _ in series) + [end]
        values = [v / 1024 for _, v in series]
        ax.step(times, values + values[-1:], where="post", color=colour, linewidth=2,
                label=f"{label} (now {values[-1]:.1f} KB)")
        ax.axhline(budget / 1024, color=colour, linestyle="--", linewidth=1)
        ax.annotate(f"{label} budget {budget / 1024:.0f} KB", (0.005, budget / 1024),
                    xycoords=("axes fraction", "data"), xytext=(0, 3),
                    textcoords="offset points", color=colour, fontsize=8)
    for event in history.events:
        if event.kind != "bootstrap-truncated":
            ax.axvline(_times([event.timestamp])[0], color=KIND_COLOURS[event.kind],
                       linewidth=1, alpha=0.7)
    ax.set_ylabel("KB")
    ax.set_ylim(bottom=0)
    _dates_axis(ax)
    _style(ax)
    ax.legend(loc="upper left", bbox_to_anchor=(0, -0.12), ncol=2, frameon=False, fontsize=9)
    return _svg(fig, "MEMORY.md and the bootstrap set over time against their budgets")


def chart_layers(data: ReportData) -> str:
    fig, ax = _figure(3.0)
    history = data.history
    if history is None or not history.layer_counts:
        _empty(ax, "no git history")
        return _svg(fig, "notes per layer: no history")
    counts = history.layer_counts
    if len(counts) > MAX_POINTS:  # a filled area is not simplified: keep the page small
        step = len(counts) // MAX_POINTS + 1
        counts = counts[::step] + ([counts[-1]] if (len(counts) - 1) % step else [])
    times = _times(t for t, _ in counts) + [data.generated]
    present = {name for _, c in counts for name, n in c.items() if n}
    layers = [n for n in LAYER_ORDER if n in present] + sorted(present - set(LAYER_ORDER))
    if not layers:
        _empty(ax, "no notes in the history")
        return _svg(fig, "notes per layer: none")
    others = iter(OTHER_COLOURS * len(layers))
    colours = [LAYER_COLOURS.get(n) or next(others) for n in layers]
    rows = [[max(c.get(name, 0), 0) for _, c in counts] for name in layers]
    rows = [r + r[-1:] for r in rows]
    ax.stackplot(times, rows, labels=[f"{n} ({r[-1]})" for n, r in zip(layers, rows)],
                 colors=colours, step="post", alpha=0.9)
    ax.set_ylabel("notes")
    _dates_axis(ax)
    _style(ax)
    ax.legend(loc="upper left", frameon=False, fontsize=9)
    return _svg(fig, "notes per layer over time")


def chart_losses(data: ReportData) -> str:
    fig, ax = _figure(2.4)
    history = data.history
    if history is None or not history.events:
        _empty(ax, "no memory loss found in the history" if history is not None
               else "no git history")
        return _svg(fig, "memory loss timeline: nothing lost")
    from vaultkit.memory.history import KINDS

    kinds = [k for k in KINDS if any(e.kind == k for e in history.events)]
    for row, kind in enumerate(kinds):
        events = [e for e in history.events if e.kind == kind]
        times = _times(e.timestamp for e in events)
        sizes = [30 + min(e.lines or e.chars / 40, 300) for e in events]
        for t, size, e in zip(times, sizes, events):
            if kind == "bootstrap-truncated":
                end = _times([dt.datetime.fromisoformat(e.end_date).timestamp()])[0] \
                    if e.end_date else data.generated
                ax.plot([t, end], [row, row], color=KIND_COLOURS[kind], linewidth=6,
                        solid_capstyle="butt", alpha=0.8)
            ax.scatter([t], [row], s=size, color=KIND_COLOURS[kind] if not e.recovered
                       else "white", edgecolors=KIND_COLOURS[kind], linewidths=2, zorder=3)
    if history.layer_counts:  # the same span as the other timelines
        ax.set_xlim(_times([history.layer_counts[0][0]])[0], data.generated)
    ax.set_yticks(range(len(kinds)), kinds)
    ax.set_ylim(-0.6, len(kinds) - 0.4)
    _dates_axis(ax)
    _style(ax)
    ax.set_title("filled: not recovered · hollow: recovered · size: lines lost", fontsize=9,
                 color="#495057", loc="right")
    return _svg(fig, "memory loss events on the timeline")


def chart_journal(data: ReportData) -> str:
    import numpy as np

    fig, ax = _figure(2.0)
    history = data.history
    days = history.journal_days if history is not None else Counter()
    if not days:
        _empty(ax, "no journal activity in the history")
        return _svg(fig, "journal activity calendar: no activity")
    last = max(max(dt.date.fromisoformat(d) for d in days), data.generated.date())
    # half a year at least, so that a young vault's calendar is not a sliver
    first = min(max(min(dt.date.fromisoformat(d) for d in days), last - dt.timedelta(days=364)),
                last - dt.timedelta(weeks=26))
    first -= dt.timedelta(days=first.weekday())  # weeks start on Monday
    weeks = (last - first).days // 7 + 1
    grid = np.full((7, weeks), np.nan)
    day = first
    while day <= last:
        grid[day.weekday(), (day - first).days // 7] = days.get(day.isoformat(), 0)
        day += dt.timedelta(days=1)
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap(["#ebedf0", "#c6e48b", "#7bc96f", "#239a3b", "#196127"])
    levels = np.where(np.isnan(grid), np.nan, np.digitize(grid, [1, 5, 15, 40]))
    ax.pcolormesh(np.ma.masked_invalid(levels), cmap=cmap, vmin=0, vmax=4,
                  edgecolors="white", linewidth=1.5)
    ax.set_aspect("equal")
    ax.invert_yaxis()
    ax.set_yticks([0.5, 2.5, 4.5], ["Mon", "Wed", "Fri"], fontsize=8)
    months, seen = [], set()
    for w in range(weeks):
        d = first + dt.timedelta(weeks=w)
        if (d.year, d.month) not in seen:
            seen.add((d.year, d.month))
            months.append((w + 0.5, d.strftime("%b")))
    ax.set_xticks([m[0] for m in months], [m[1] for m in months], fontsize=8)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    active = sum(1 for v in days.values() if v)
    ax.set_title(f"{active} days with journal writes, {sum(days.values()):,} lines added",
                 fontsize=9, color="#495057", loc="left")
    return _svg(fig, "journal activity per day")


def chart_footprint(data: ReportData) -> str:
    from vaultkit.vault.runtimes import for_vault

    runtimes = for_vault(data.vault)
    fig, ax = _figure(0.9 + 0.55 * max(1, len(runtimes)))
    if not runtimes:
        _empty(ax, "no runtime detected: nothing is loaded at session start")
        return _svg(fig, "session-start footprint: no runtime")
    palette = ("#1971c2", "#f76707", "#2f9e44", "#9c36b5", "#0c8599", "#e03131", "#f59f00",
               "#5c940d")
    labels = []
    for row, rc in enumerate(runtimes):
        unit = "bytes" if rc.unit == "bytes" else "chars"
        limit = rc.total_max or 0
        scale = max([rc.total, limit, 1] + [p.length for p in rc.pieces])
        left = 0.0
        for n, piece in enumerate(p for p in rc.pieces if p.injected):
            width = piece.injected_length / scale
            ax.barh(row, width, left=left, color=palette[n % len(palette)], height=0.6,
                    edgecolor="white", linewidth=0.5)
            if width > 0.08:
                ax.text(left + width / 2, row, piece.path.rsplit("/", 1)[-1], ha="center",
                        va="center", fontsize=7, color="white")
            left += width
        lost = sum(p.lost for p in rc.pieces)
        if lost:
            ax.barh(row, min(lost / scale, 1.0 - left) if left < 1 else 0, left=left,
                    color="white", edgecolor="#c92a2a", hatch="//", height=0.6)
        if limit:
            ax.plot([limit / scale] * 2, [row - 0.4, row + 0.4], color="#c92a2a", linewidth=1.5)
        guideline = data.vault.profile.budgets.bootstrap_guideline_chars
        if rc.session == "main" and rc.unit == "utf16":
            ax.plot([guideline / scale] * 2, [row - 0.4, row + 0.4], color="#495057",
                    linewidth=1, linestyle="--")
        labels.append(f"{rc.label}: {rc.total:,} {unit}"
                      + (f", {lost:,} cut" if lost else "")
                      + f" (~{rc.tokens:,} tokens, {rc.share:.1%} of the window)")
    ax.set_yticks(range(len(runtimes)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.02)
    ax.set_xticks([])
    _style(ax)
    ax.set_title("bars to scale per runtime · red line: total limit · dashed: the 20 KB "
                 "guideline · hatched: cut", fontsize=8, color="#495057", loc="right")
    return _svg(fig, "what each runtime loads at session start")


def chart_findings(data: ReportData) -> str:
    counts = Counter((d.rule, d.severity) for d in data.diagnostics)
    rules = sorted({r for r, _ in counts}, key=lambda r: -sum(
        n for (rr, _), n in counts.items() if rr == r))[:15]
    fig, ax = _figure(max(1.4, 0.3 * len(rules) + 0.9))
    if not rules:
        _empty(ax, "no findings: the vault passes every rule")
        return _svg(fig, "findings per rule: none")
    left = [0] * len(rules)
    for severity in ("error", "warning", "info"):
        values = [counts.get((r, severity), 0) for r in rules]
        if any(values):
            ax.barh(rules, values, left=left, height=0.6, color=SEVERITY_COLOURS[severity],
                    label=severity)
            left = [a + b for a, b in zip(left, values)]
    for y, total in enumerate(left):
        ax.text(total, y, f" {total}", va="center", fontsize=8)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(0, max(left) * 1.1 + 0.5)
    ax.invert_yaxis()
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(frameon=False, fontsize=9, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(fig, "findings per rule")


# -- credentials: never shown ---------------------------------------------------------------

# Credentials of the kinds found committed in real workspaces' memory (provider keys, bot
# tokens, JWTs, private keys, password assignments). A shared report must not carry them;
# placeholders (sk-xxx, <YOUR_KEY>, ${ENV}) are too short or not of the shape to match.
_SECRET = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"
    r"|\bsk-[A-Za-z0-9_-]{16,}|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"
    r"|\bnvapi-[A-Za-z0-9_-]{20,}|\b\d{8,10}:[A-Za-z0-9_-]{35}\b|\bAKIA[0-9A-Z]{16}\b"
    r"|\bAIza[0-9A-Za-z_-]{35}|\bGOCSPX-[A-Za-z0-9_-]{20,}|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", re.S)
_ASSIGNED = re.compile(r"(?i)((?:password|passwd|secret|token|api[_ -]?key|密码)\**\s*[:=：|]"
                       r"\s*[`'\"]?)([^\s`'\"|]{6,})")


_VALUE = re.compile(r"[^\s`'\"|<>]+")


def mask_secrets(text: str) -> str:
    """``text`` with every credential the ``secret-in-memory`` detector finds masked, and
    anything of a credential's shape too (a shared page masks more than the rule reports:
    a test value is still not for sharing)."""
    from vaultkit.vault.outbound import clean
    from vaultkit.vault.secretscan import scan_text

    text = clean(text)  # the output boundary first, then the page's broader shapes
    lines = text.split("\n")
    for f in sorted(scan_text(text), key=lambda f: (f.line, -f.column)):
        line = lines[f.line - 1]
        m = _VALUE.match(line, f.column - 1)
        if m is not None and not m.group(0).startswith("-----"):  # (a PEM block: below)
            shown = "[masked]" if f.label else m.group(0)[:4] + "…[masked]"
            lines[f.line - 1] = line[:m.start()] + shown + line[m.end():]
    text = "\n".join(lines)
    text = _SECRET.sub(lambda m: m.group(0)[:4] + "…[masked]", text)
    return _ASSIGNED.sub(lambda m: m.group(1) + "[masked]", text)


# -- Markdown from the vault ----------------------------------------------------------------------

def _markdown():
    import mistune

    class InertRenderer(mistune.HTMLRenderer):
        """Raw HTML escaped; images shown as their alt text; links not followed offline."""

        def image(self, text, url, title=None):
            return f'<span class="image">[image: {text or html.escape(url)}]</span>'

        def link(self, text, url, title=None):
            return f'<span class="link" title="{html.escape(url)}">{text}</span>'

    return mistune.create_markdown(renderer=InertRenderer(escape=True),
                                   plugins=["strikethrough", "table", "task_lists"])


# -- the page ---------------------------------------------------------------------------------

CSS = """
:root { --ink:#212529; --muted:#6c757d; --line:#dee2e6; --pass:#2b8a3e; --warn:#e67700;
        --fail:#c92a2a; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
       sans-serif; color: var(--ink); margin: 0; background: #f8f9fa; }
main { max-width: 1040px; margin: 0 auto; padding: 24px; }
header { margin-bottom: 8px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 8px; border-bottom: 1px solid var(--line);
     padding-bottom: 4px; }
.sub { color: var(--muted); margin: 0; }
.tiles { display: grid; grid-template-columns: repeat(4, 1fr); gap: 12px; margin: 16px 0; }
.tile { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px; }
.tile b { display: block; font-size: 26px; }
.tile.bad b { color: var(--fail); } .tile.warn b { color: var(--warn); }
.tile.good b { color: var(--pass); }
figure.chart { background: #fff; border: 1px solid var(--line); border-radius: 8px;
               margin: 12px 0; padding: 8px 12px; break-inside: avoid; }
figure.chart svg { width: 100%; height: auto; display: block; }
figcaption { font-weight: 600; margin-bottom: 4px; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: 14px; }
th, td { border: 1px solid var(--line); padding: 5px 8px; text-align: left;
         vertical-align: top; }
th { background: #f1f3f5; }
tr { break-inside: avoid; }
td.when, td.state code { white-space: nowrap; }
.pass { color: var(--pass); font-weight: 600; } .warn { color: var(--warn); font-weight: 600; }
.fail, .error { color: var(--fail); font-weight: 600; } .warning { color: var(--warn); }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
       background: #f1f3f5; padding: 1px 4px; border-radius: 3px; }
.finding { background: #fff; border: 1px solid var(--line); border-left: 4px solid var(--warn);
           border-radius: 6px; padding: 8px 12px; margin: 10px 0; break-inside: avoid; }
.finding.error { border-left-color: var(--fail); color: inherit; font-weight: normal; }
.finding .where { font-weight: 600; }
.context, .memory { border-top: 1px dashed var(--line); margin-top: 6px; padding-top: 4px;
                    font-size: 14px; overflow-wrap: anywhere; }
.memory { background: #fff; border: 1px solid var(--line); border-radius: 8px;
          padding: 8px 16px; }
.image, .link { color: #1864ab; }
.context h1, .context h2, .context h3, .context h4 { font-size: 15px; margin: 4px 0; }
.context pre.frontmatter { background: #f8f9fa; border-radius: 4px; padding: 4px 8px;
                           margin: 4px 0; white-space: pre-wrap; font-size: 13px; }
.hint { color: var(--muted); font-size: 13px; }
footer { color: var(--muted); font-size: 12px; margin-top: 32px; }
@media print {
  body { background: #fff; font-size: 12px; }
  main { max-width: none; padding: 0; }
  h2 { break-after: avoid; }
  .tiles { grid-template-columns: repeat(4, 1fr); }
}
"""


def _n(count: int, word: str) -> str:
    return f"{count:,} {word}{'s' * (count != 1)}"


def _e(text) -> str:
    """A cell of the page: through the output boundary (credentials masked, control
    characters shown as escapes), then HTML-escaped."""
    from vaultkit.vault.outbound import clean

    return html.escape(clean(str(text)), quote=True)


def render_html(data: ReportData) -> str:
    """The page. Names from the vault (layers, rules, files) are drawn as written: matplotlib's
    mathtext is off, so a ``$…$`` in a name is text, not a formula that can fail."""
    matplotlib = _need_extra()
    with matplotlib.rc_context({"text.parse_math": False}):
        return _render_html(data)


def _render_html(data: ReportData) -> str:
    from vaultkit import __version__

    vault = data.vault
    history = data.history
    md = _markdown()
    errors = sum(1 for d in data.diagnostics if d.severity == "error")
    warnings = sum(1 for d in data.diagnostics if d.severity == "warning")
    events = history.events if history is not None else []
    open_events = [e for e in events if not e.recovered and e.is_loss]
    from vaultkit.audit import counts, counts_text

    tally = counts(data.checks)  # (the one count `vaultkit audit` prints)
    failed, warned = tally["fail"], tally["warn"]
    title = f"vaultkit report: {vault.root.name}"
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
             f"<title>{_e(title)}</title><style>{CSS}</style></head><body><main>"]
    head = (f"HEAD {history.head[:10]}, {history.commits:,} commits read"
            if history is not None and history.head else
            (data.history_error or (history.outside_git if history is not None else "")
             or "no commits"))
    parts.append(f"<header><h1>{_e(title)}</h1><p class=\"sub\">{_e(vault.root)} · profile "
                 f"{_e(vault.profile.name)} · {_e(head)} · generated "
                 f"{data.generated:%Y-%m-%d %H:%M %Z} by vaultkit {_e(__version__)}</p>"
                 "</header>")
    from vaultkit.links.graph import link_graph

    attachments = len(link_graph(vault).attachments)  # what `vaultkit graph` counts
    tiles = [
        ("notes", f"{len(vault.notes):,}", "", f"{attachments:,} attachments"),
        ("findings", f"{errors + warnings:,}", "bad" if errors else "warn" if warnings else
         "good", f"{_n(errors, 'error')}, {_n(warnings, 'warning')}"),
        ("memory lost, not recovered", f"{len(open_events)}", "bad" if open_events else "good",
         f"of {_n(len(events), 'loss event')} in the history"),
        ("audit", f"{tally['pass']}/{len(data.checks)}",
         "bad" if failed else "warn" if warned else "good",
         counts_text(data.checks).split(": ", 1)[1].rstrip(".")),
    ]
    parts.append("<section class=\"tiles\">" + "".join(
        f"<div class=\"tile {cls}\"><b>{_e(value)}</b>{_e(label)}<br>"
        f"<span class=\"hint\">{_e(note)}</span></div>" for label, value, cls, note in tiles)
        + "</section>")

    def figure(chart_id: str, caption: str, svg: str) -> str:
        return (f"<figure class=\"chart\" id=\"{chart_id}\"><figcaption>{_e(caption)}"
                f"</figcaption>{svg}</figure>")

    parts.append("<h2>Over time</h2>")
    parts.append(figure("chart-sizes", "MEMORY.md and the bootstrap set against their budgets "
                        "(vertical lines: loss events)", chart_sizes(data)))
    parts.append(figure("chart-layers", "Notes per layer", chart_layers(data)))
    parts.append(figure("chart-losses", "Memory loss events", chart_losses(data)))
    parts.append(figure("chart-journal", "Journal activity per day (lines added)",
                        chart_journal(data)))
    parts.append("<h2>Session start</h2>")
    parts.append(figure("chart-footprint", "What each runtime loads at session start "
                        "(vaultkit context)", chart_footprint(data)))
    parts.append("<h2>Findings per rule</h2>")
    parts.append(figure("chart-findings", "Findings of `vaultkit check` today",
                        chart_findings(data)))
    parts.append(_events_table(events))
    parts.append(_audit_table(data.checks))
    parts.append(_top_findings(data, md))
    parts.append(_memory_head(vault, md))
    parts.append("<footer>Self-contained: no scripts, fonts or images are loaded. Regenerate "
                 "with <code>vaultkit report -o report.html</code>.</footer></main></body>"
                 "</html>\n")
    return "".join(parts)


def _events_table(events) -> str:
    out = ["<h2 id=\"losses\">Memory loss events</h2>"]
    if not events:
        return out[0] + "<p>No memory loss found in the history.</p>"
    shown = sorted(events, key=lambda e: (e.recovered, -e.timestamp))[:MAX_EVENT_ROWS]
    if len(events) > len(shown):
        out.append(f"<p class=\"hint\">The {len(shown)} most recent of {len(events):,} events, "
                   "unrecovered first; <code>vaultkit history</code> lists them all.</p>")
    out.append("<table><tr><th>date</th><th>commit</th><th>what</th><th>file</th>"
               "<th>lost</th><th>state</th></tr>")
    for e in shown:
        if e.recovered:
            state = "<span class=\"pass\">recovered</span>"
        elif e.kind == "journal-edit":
            state = "<span class=\"pass\">an edit, not a loss</span>"
        elif not e.is_loss:  # a MEMORY.md prune within its allowance
            state = "<span class=\"pass\">pruned on purpose</span>"
        elif e.recoverable:
            state = f"<span class=\"fail\">lost</span><br><code>vaultkit recover {e.id}</code>"
        else:
            state = "<span class=\"fail\">still over the limit</span>"
        out.append(f"<tr><td class=\"when\">{_e(e.date[:10])}<br>{_e(e.date[11:16])}</td>"
                   f"<td><code>"
                   f"{_e(e.commit[:10])}</code><br><span class=\"hint\">{_e(e.author)}: "
                   f"{_e(mask_secrets(e.subject))}</span></td><td>{_e(e.kind)}</td>"
                   f"<td>{_e(e.path)}</td>"
                   f"<td>{_e(e.describe())}</td><td class=\"state\">{state}</td></tr>")
    out.append("</table>")
    return "".join(out)


def _audit_table(checks) -> str:
    out = ["<h2 id=\"audit\">Audit</h2><table><tr><th>check</th><th>status</th>"
           "<th>found</th></tr>"]
    for c in checks:
        hint = f"<br><span class=\"hint\">→ {_e(c.hint)}</span>" if c.status != "pass" \
            and c.hint else ""
        out.append(f"<tr><td>{_e(c.id)}</td><td class=\"{_e(c.status)}\">"
                   f"{_e(c.status.upper())}</td><td>{_e(c.found)}{hint}</td></tr>")
    out.append("</table>")
    return "".join(out)


def _top_findings(data: ReportData, md) -> str:
    rank = {"error": 0, "warning": 1, "info": 2}
    diags = sorted(data.diagnostics, key=lambda d: (rank.get(d.severity, 3), d.path,
                                                    d.line or 0))
    out = [f"<h2 id=\"findings\">Top findings ({min(len(diags), TOP_FINDINGS)} of "
           f"{len(diags)})</h2>"]
    if not diags:
        out.append("<p>No findings.</p>")
    for d in diags[:TOP_FINDINGS]:
        where = f"{d.path}:{d.line}" if d.line else d.path
        out.append(f"<div class=\"finding {_e(d.severity)}\"><span class=\"where\">"
                   f"{_e(where)}</span> <code>{_e(d.code)} {_e(d.rule)}</code> "
                   f"<span class=\"{_e(d.severity)}\">{_e(d.severity)}</span><br>"
                   f"{_e(mask_secrets(d.message))}")
        note = data.vault.note(d.path) or data.vault.external.get(d.path)
        if note is not None and not note.error:
            # masked as a whole note: a table's header names the column a key sits in
            lines = mask_secrets(note.text.replace("\r\n", "\n")).split("\n")
            context = _context(note, lines, (d.line or 1) - 1, md)
            if context:
                out.append(f"<div class=\"context\">{context}</div>")
        out.append("</div>")
    return "".join(out)


def _context(note, lines: list[str], at: int, md) -> str:
    """The lines around line ``at`` (0-based) as HTML: frontmatter as the YAML it is (as
    Markdown, ``key: value`` over its closing ``---`` would be a bold heading), the rest
    rendered as Markdown."""
    first, last = max(0, at - 2), min(len(lines), at + 3)
    fm_last = note.fm_span[1] if note.fm_span else 0  # 1-based line of the closing '---'
    out = []
    if first < fm_last:
        yaml = "\n".join(lines[first:min(last, fm_last)]).strip("\n")
        if yaml.strip():
            out.append(f"<pre class=\"frontmatter\"><code>{_e(yaml)}</code></pre>")
    body = "\n".join(lines[max(first, fm_last):last]).strip()
    if body:
        out.append(md(body))
    return "".join(out)


def _memory_head(vault, md) -> str:
    path = "MEMORY.md" if vault.profile.memory_prefix else "../MEMORY.md"
    note = vault.note(path) or vault.external.get(path)
    if note is None or note.error:
        return "<h2 id=\"memory\">MEMORY.md</h2><p>No MEMORY.md.</p>"
    lines = note.text.splitlines()
    shown = mask_secrets("\n".join(lines[:MEMORY_HEAD_LINES]))
    more = (f"<p class=\"hint\">… {len(lines) - MEMORY_HEAD_LINES} more lines</p>"
            if len(lines) > MEMORY_HEAD_LINES else "")
    shown = re.sub(r"\A---\n.*?\n---\n", "", shown, flags=re.S)  # frontmatter is not prose
    return (f"<h2 id=\"memory\">MEMORY.md now ({note.size:,} bytes)</h2>"
            f"<div class=\"memory\">{md(shown)}{more}</div>")


def check_output(out_path):
    """The page's path, refused at once when it cannot be written there."""
    from pathlib import Path

    from vaultkit.cli.commands._common import check_output_folder

    out = Path(out_path)
    if out.is_dir():
        raise VaultkitError(f"{out}: is a folder; give a file name such as report.html")
    check_output_folder(str(out))
    return out


def write_report(vault, out_path, *, now: dt.datetime | None = None) -> int:
    """Build the page for ``vault`` and write it (atomically, as ``-o`` files are written:
    :func:`vaultkit.core.atomic.write_output`); returns its size in bytes."""
    from vaultkit.core.atomic import write_output

    _need_extra()
    out = check_output(out_path)
    data = collect(vault, now=now)
    page = render_html(data).encode("utf-8")
    write_output(out, page)
    return len(page)
