"""Build a deterministic synthetic agent-memory vault for the benchmark.

Standard library only. The same ``(size, seed)`` always gives byte-identical files
(paths, contents and, after :func:`build`, mtimes), so figures from different
machines and different days are measured on the same vault.

``size`` is the number of Markdown notes; the mix (see :data:`MIX`) is what an
OpenClaw workspace kept as an Obsidian vault holds after months of use:

- the bootstrap files (``AGENTS.md``, ``MEMORY.md``, ``NOW.md`` ...) and ``memory/INDEX.md``;
- daily journals ``memory/YYYY-MM-DD.md`` (the most recent ones) and
  ``memory/archive/YYYY/YYYY-MM-DD.md`` (older ones), each with 1–4 timed
  ``### HH:MM — Title`` entries of 3–15 lines;
- typed notes with frontmatter in ``memory/{decisions,lessons,people,projects,preferences}/``
  (decisions with Context / Decision / Alternatives Considered, lesson topic files with
  ``## Title (YYYY-MM-DD)`` entries);
- knowledge notes in ``memory/semantic/<area>/`` (Title Case names with spaces, block ids,
  a few duplicate basenames) and ``memory/procedural/<area>/`` (steps and shell snippets);
- small attachment files in ``attachments/``;
- wikilinks (plain, aliased, to headings, to block ids, path-qualified, broken),
  embeds of attachments and notes, Markdown links (URL-encoded), external links, inline
  and frontmatter tags, fenced code blocks and inline code holding link- and tag-like text
  (which must not count), and an HTML comment now and then.

Notes are 0.5–3 KB, most around 1–1.5 KB.

Usage: ``python bench/synth.py OUT_DIR --size 1000 [--seed 1]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import sys
from pathlib import Path
from urllib.parse import quote

GENERATOR_VERSION = 2
END_DATE = dt.date(2026, 11, 29)  # the newest journal
MTIME = 1_764_547_200  # 2025-12-01 00:00 UTC: every file gets this mtime (older than any cache)
RECENT_JOURNALS = 120  # journals newer than this many days stay in memory/, older go to archive/

# Share of the notes (after the fixed bootstrap files and INDEX.md) per kind.
MIX = (
    ("journal", 0.34),
    ("decision", 0.09),
    ("lesson", 0.03),
    ("person", 0.06),
    ("project", 0.05),
    ("preference", 0.03),
    ("semantic", 0.26),
    ("procedural", 0.14),
)

BOOTSTRAP = ("AGENTS.md", "SOUL.md", "USER.md", "MEMORY.md", "NOW.md", "TOOLS.md",
             "IDENTITY.md", "HEARTBEAT.md")

WORDS = """
agent memory vault journal index retry queue kafka postgres redis cache schema migration
deploy rollback release build pipeline runner container kubernetes cluster node pod ingress
latency throughput budget quota token context window session heartbeat cron backup commit
branch merge review test fixture coverage flaky timeout socket proxy gateway auth oauth
secret rotation certificate dns resolver mirror registry package wheel lockfile upgrade
incident outage alert pager dashboard metric trace span log sampling retention archive
search ranking embedding vector chunk snippet prompt summary distill compaction flush
config profile layer bootstrap template frontmatter property tag link graph orphan stale
customer invoice pricing contract renewal roadmap milestone sprint estimate scope risk
meeting standup retro planning hiring onboarding feedback mentor handover travel visa
garden recipe coffee running cycling reading music piano budget savings tax insurance
python rust golang typescript shell sqlite duckdb parquet arrow pandas numpy plotting
network firewall vpn laptop keyboard monitor printer router battery charger backup disk
""".split()

AREAS_SEMANTIC = ("infrastructure", "data", "product", "people-ops", "finance", "home",
                  "research", "security", "tooling", "writing")
AREAS_PROCEDURAL = ("deploy", "recovery", "maintenance", "onboarding", "admin")
FIRST = ("Alice", "Bao", "Carmen", "Dmitri", "Elif", "Farah", "Gustav", "Hana", "Ilya", "Jun",
         "Kofi", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quinn", "Rosa", "Sven", "Tariq",
         "Uma", "Viktor", "Wen", "Ximena", "Yusuf", "Zoe")
LAST = ("Andersen", "Bianchi", "Chen", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad",
        "Ivanova", "Jensen", "Kowalski", "Li", "Moreau", "Nakamura", "Okafor", "Petrov",
        "Quispe", "Rossi", "Schmidt", "Tanaka", "Usman", "Volkov", "Wang", "Xu", "Yilmaz",
        "Zhang")
STATUS_DECISION = ("proposed", "active", "active", "active", "superseded", "rejected")
STATUS_PROJECT = ("active", "active", "paused", "done", "abandoned")
HEAD_KNOWLEDGE = ("Overview", "Background", "Details", "How it works", "Caveats", "Examples",
                  "Open questions", "References", "History", "Related")
ATTACH_KINDS = (("png", b"\x89PNG\r\n\x1a\n" + bytes(56)), ("jpg", b"\xff\xd8\xff\xe0" + bytes(60)),
                ("pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"),
                ("svg", b'<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>\n'))


class Spec:
    """One planned note: where it goes and what can be linked to inside it."""

    __slots__ = ("kind", "path", "name", "title", "headings", "blocks", "date", "extra")

    def __init__(self, kind, path, name, title, date=None, extra=None):
        self.kind = kind
        self.path = path  # vault-relative
        self.name = name  # basename without .md, what a wikilink names
        self.title = title
        self.headings: list[str] = []
        self.blocks: list[str] = []
        self.date = date
        self.extra = extra


def counts(size: int) -> dict[str, int]:
    """How many notes of each kind a vault of ``size`` notes holds (sums to ``size``)."""
    fixed = len(BOOTSTRAP) + 1  # + memory/INDEX.md
    rest = max(0, size - fixed)
    out = {kind: int(rest * share) for kind, share in MIX}
    out["journal"] += rest - sum(out.values())
    out["bootstrap"] = min(size, len(BOOTSTRAP))
    out["index"] = 1 if size > len(BOOTSTRAP) else 0
    return out


class Generator:
    def __init__(self, size: int, seed: int = 1):
        self.size = size
        self.seed = seed
        self.rng = random.Random(f"vaultkit-bench:{seed}:{size}")
        self.specs: list[Spec] = []
        self.by_kind: dict[str, list[Spec]] = {}
        self.attachments: list[str] = []
        self._used: set[str] = set()

    # ---- words -------------------------------------------------------------------------
    def words(self, lo: int, hi: int) -> str:
        r = self.rng
        return " ".join(r.choice(WORDS) for _ in range(r.randint(lo, hi)))

    def title(self, lo=2, hi=4) -> str:
        return self.words(lo, hi).capitalize()

    def sentence(self) -> str:
        return self.words(6, 16).capitalize() + "."

    def tag(self) -> str:
        r = self.rng
        if r.random() < 0.3:
            return f"{r.choice(('project', 'area', 'topic', 'status'))}/{r.choice(WORDS)}"
        return r.choice(WORDS)

    def unique(self, base: str) -> str:
        name, i = base, 2
        while name.lower() in self._used:
            name = f"{base} {i}" if " " in base else f"{base}-{i}"
            i += 1
        self._used.add(name.lower())
        return name

    # ---- planning ----------------------------------------------------------------------
    def plan(self) -> None:
        r = self.rng
        c = counts(self.size)
        add = self._add
        for name in BOOTSTRAP[:c["bootstrap"]]:
            add(Spec("bootstrap", name, name[:-3], name[:-3]))
        if c["index"]:
            add(Spec("index", "memory/INDEX.md", "INDEX", "Memory index"))
        n_att = max(4, self.size // 100)
        for i in range(n_att):
            ext, _ = ATTACH_KINDS[i % len(ATTACH_KINDS)]
            self.attachments.append(f"attachments/{r.choice(WORDS)}-{i:05d}.{ext}")
        for i in range(c["journal"]):
            day = END_DATE - dt.timedelta(days=i)
            d = day.isoformat()
            path = f"memory/{d}.md" if i < RECENT_JOURNALS else f"memory/archive/{day.year}/{d}.md"
            self._used.add(d)
            add(Spec("journal", path, d, d, date=day))
        for kind, folder in (("decision", "decisions"), ("person", "people"),
                             ("project", "projects"), ("preference", "preferences"),
                             ("lesson", "lessons")):
            for i in range(c[kind]):
                if kind == "person":
                    base = f"{r.choice(FIRST).lower()}-{r.choice(LAST).lower()}"
                    title = base.replace("-", " ").title()
                else:
                    title = self.title(2, 4)
                    base = title.lower().replace(" ", "-")
                name = self.unique(base)
                day = END_DATE - dt.timedelta(days=r.randint(0, 900))
                add(Spec(kind, f"memory/{folder}/{name}.md", name, title, date=day))
        for kind, areas in (("semantic", AREAS_SEMANTIC), ("procedural", AREAS_PROCEDURAL)):
            for i in range(c[kind]):
                area = r.choice(areas)
                if kind == "semantic" and r.random() < 0.01:
                    name = "Overview"  # the same basename in several folders: ambiguous links
                    title = f"{area.capitalize()} overview"
                elif kind == "semantic":
                    title = self.title(2, 4).title()
                    name = self.unique(title)
                else:
                    title = "How to " + self.words(2, 3)
                    name = self.unique(title.lower().replace(" ", "-"))
                path = f"memory/{kind}/{area}/{name}.md"
                if path.lower() in self._used:  # a second Overview in the same folder
                    name = self.unique(f"{area.capitalize()} Overview")
                    path = f"memory/{kind}/{area}/{name}.md"
                self._used.add(path.lower())
                add(Spec(kind, path, name, title))
        # Headings and block ids are chosen before any text so links can point at them.
        for s in self.specs:
            if s.kind in ("semantic", "procedural", "person", "project"):
                s.headings = r.sample(HEAD_KNOWLEDGE, r.randint(2, 4))
                s.blocks = [f"{s.kind[:3]}{r.randrange(16**6):06x}" for _ in range(r.randint(0, 2))]
            elif s.kind == "decision":
                s.headings = ["Context", "Decision", "Alternatives Considered"]
            elif s.kind == "lesson":
                s.headings = []
                for _ in range(r.randint(2, 4)):
                    day = END_DATE - dt.timedelta(days=r.randint(0, 900))
                    s.headings.append(f"{self.title(2, 5)} ({day.isoformat()})")
            elif s.kind == "journal":
                s.headings = []
                minute = r.randint(6 * 60, 9 * 60)
                for _ in range(r.randint(1, 4)):
                    s.headings.append(f"{minute // 60:02d}:{minute % 60:02d} — {self.title(2, 5)}")
                    minute = min(23 * 60 + 59, minute + r.randint(20, 180))

    def _add(self, spec: Spec) -> None:
        self.specs.append(spec)
        self.by_kind.setdefault(spec.kind, []).append(spec)

    # ---- links -------------------------------------------------------------------------
    def pick(self, kinds=None) -> Spec:
        r = self.rng
        if kinds:
            pool = [self.by_kind[k] for k in kinds if self.by_kind.get(k)]
            if pool:
                return r.choice(r.choice(pool))
        return r.choice(self.specs)

    def link(self, src: Spec, kinds=None) -> str:
        r = self.rng
        t = self.pick(kinds)
        x = r.random()
        if x < 0.42:
            return f"[[{t.name}]]"
        if x < 0.55:
            return f"[[{t.name}|{self.words(1, 3)}]]"
        if x < 0.66:
            if t.headings:
                return f"[[{t.name}#{r.choice(t.headings)}]]"
            return f"[[{t.name}]]"
        if x < 0.71:
            if t.blocks:
                return f"[[{t.name}#^{r.choice(t.blocks)}]]"
            return f"[[{t.name}]]"
        if x < 0.73:
            return f"[[{t.path[:-3]}]]"  # path-qualified
        if x < 0.745:
            return f"[[{self.words(2, 3).replace(' ', '-')}-draft]]"  # broken: no such note
        if x < 0.76:
            return f"[[{t.name}#No such heading {r.randint(1, 99)}]]"  # broken heading
        if x < 0.77:
            return f"[[#{r.choice(src.headings)}]]" if src.headings else f"[[{t.name}]]"
        if x < 0.90:
            label = self.words(1, 3)
            return f"[{label}]({quote(t.path)})"  # vault-relative Markdown link, %20 for spaces
        if x < 0.93:
            return f"[{self.words(1, 2)}](https://example.com/{r.choice(WORDS)}/{r.randint(1, 999)})"
        if x < 0.98 and self.attachments:
            a = r.choice(self.attachments)
            if a.endswith((".png", ".jpg")) and r.random() < 0.3:
                return f"![[{a.rsplit('/', 1)[-1]}|{r.randint(100, 600)}]]"
            return f"![[{a.rsplit('/', 1)[-1]}]]"
        return f"![[{t.name}]]"  # a note embed

    def prose(self, src: Spec, lines: int, kinds=None, link_rate=0.35, tag_rate=0.12) -> list[str]:
        r = self.rng
        out = []
        for _ in range(lines):
            s = self.sentence()
            if r.random() < link_rate:
                words = s.split(" ")
                words.insert(r.randrange(1, len(words)), self.link(src, kinds))
                s = " ".join(words)
            if r.random() < tag_rate:
                s += f" #{self.tag()}"
            if r.random() < 0.04:
                s += f" Run `grep -rn '[[{r.choice(WORDS)}]]' memory/` first."
            out.append(s)
        return out

    def code_block(self) -> list[str]:
        r = self.rng
        lang = r.choice(("bash", "python", "yaml", "text"))
        body = {
            "bash": [f"# {self.words(2, 5)}", f"grep -rn '[[{r.choice(WORDS)}]]' memory/",
                     f"printf '%s\\n' '### 09:00 — {self.title()}' >> memory/{END_DATE}.md",
                     f"git commit -m 'backup: {END_DATE}'"],
            "python": ["import re", "WIKI = re.compile(r'\\[\\[([^\\]]+)\\]\\]')",
                       f"links = WIKI.findall(open('{r.choice(WORDS)}.md').read())",
                       "print('#not-a-tag', links)"],
            "yaml": ["tags: [#not-a-tag]", f"see: '[[{r.choice(WORDS)}]]'",
                     f"url: https://example.com/{r.choice(WORDS)}"],
            "text": [f"[[{self.words(1, 2)}]] and ![[{r.choice(WORDS)}.png]]",
                     f"[{r.choice(WORDS)}]({r.choice(WORDS)}.md) #{r.choice(WORDS)}"],
        }[lang]
        return [f"```{lang}", *body, "```"]

    # ---- rendering ---------------------------------------------------------------------
    def render(self, s: Spec) -> str:
        return getattr(self, f"render_{s.kind}")(s)

    def frontmatter(self, props: list[tuple[str, str]]) -> list[str]:
        return ["---", *(f"{k}: {v}" for k, v in props), "---"]

    def tags_list(self, lo=1, hi=4) -> str:
        tags = sorted({self.tag() for _ in range(self.rng.randint(lo, hi))})
        return "[" + ", ".join(tags) + "]"

    def render_bootstrap(self, s: Spec) -> str:
        r = self.rng
        name = s.name
        lines = [f"# {name}", ""]
        if name == "AGENTS":
            lines += ["## Memory protocol", "",
                      "- Run memory_search before acting on past context.",
                      "- Read [[INDEX]] first, then the folder, then search.",
                      "- Append to today's journal with `printf >>`; never rewrite it.",
                      "- Distil lessons into topic files in `memory/lessons/` weekly.", ""]
        sections = {"MEMORY": 12, "USER": 4, "SOUL": 3, "NOW": 3, "TOOLS": 5, "IDENTITY": 2,
                    "HEARTBEAT": 2, "AGENTS": 4}.get(name, 3)
        for _ in range(sections):
            lines += [f"## {self.words(1, 3).replace(' ', '_')}", ""]
            lines += [f"- {x}" for x in self.prose(s, r.randint(2, 6), link_rate=0.2,
                                                  tag_rate=0.03)]
            lines.append("")
        if name == "HEARTBEAT":
            lines += ["## Weekly", "", "- Distil the week's journals into lessons and MEMORY.md.", ""]
        return "\n".join(lines)

    def render_index(self, s: Spec) -> str:
        lines = ["# Memory index", "",
                 "Start here: this index, then the folders and grep, then full-text search.", ""]
        for kind, folder in (("decision", "decisions"), ("lesson", "lessons"),
                             ("project", "projects"), ("person", "people"),
                             ("preference", "preferences")):
            specs = self.by_kind.get(kind, [])
            lines += [f"## {folder.capitalize()} ({len(specs)})", ""]
            lines += [f"- [[{t.name}]]" for t in specs[:8]]
            lines.append("")
        return "\n".join(lines)

    def render_journal(self, s: Spec) -> str:
        r = self.rng
        lines = [f"# {s.name}", ""]
        for h in s.headings:
            lines += [f"### {h}"]
            x = r.random()  # mostly 3-8 lines; some long ones; a few too short
            n = r.randint(3, 8) if x < 0.85 else r.randint(9, 15) if x < 0.97 else r.randint(1, 2)
            body = self.prose(s, n, kinds=("project", "person", "decision", "semantic"),
                              link_rate=0.25)
            lines += [f"- {x}" for x in body]
            if r.random() < 0.05:
                lines += self.code_block()
            lines.append("")
        return "\n".join(lines)

    def render_decision(self, s: Spec) -> str:
        r = self.rng
        lines = self.frontmatter([("date", s.date.isoformat()), ("type", "decision"),
                                  ("status", r.choice(STATUS_DECISION)),
                                  ("tags", self.tags_list())])
        lines += ["", f"# {s.title}", ""]
        for h in s.headings:
            lines += [f"## {h}", "", *self.prose(s, r.randint(2, 6)), ""]
        if r.random() < 0.3:
            lines += ["## Consequences", "", *[f"- {x}" for x in self.prose(s, 2)], ""]
        return "\n".join(lines)

    def render_lesson(self, s: Spec) -> str:
        r = self.rng
        lines = self.frontmatter([("type", "lesson"), ("tags", self.tags_list())])
        lines += ["", f"# {s.title}", ""]
        for h in s.headings:
            lines += [f"## {h}", "", *[f"- {x}" for x in self.prose(s, r.randint(3, 5))], ""]
        return "\n".join(lines)

    def render_person(self, s: Spec) -> str:
        r = self.rng
        first = s.title.split(" ")[0]
        lines = self.frontmatter([("type", "person"), ("aliases", f"[{first}]"),
                                  ("tags", self.tags_list(1, 2)),
                                  ("company", f'"[[{self.pick(("project",)).name}]]"')])
        lines += ["", f"# {s.title}", ""]
        lines += self._sections(s, (2, 5))
        return "\n".join(lines)

    def render_project(self, s: Spec) -> str:
        r = self.rng
        lines = self.frontmatter([("type", "project"), ("status", r.choice(STATUS_PROJECT)),
                                  ("tags", self.tags_list()),
                                  ("updated", s.date.isoformat())])
        lines += ["", f"# {s.title}", ""]
        lines += self._sections(s, (3, 7))
        return "\n".join(lines)

    def render_preference(self, s: Spec) -> str:
        r = self.rng
        lines = self.frontmatter([("type", "preference"), ("tags", self.tags_list(1, 2))])
        lines += ["", f"# {s.title}", "", *self.prose(s, r.randint(4, 10)), ""]
        return "\n".join(lines)

    def render_semantic(self, s: Spec) -> str:
        r = self.rng
        lines = []
        if r.random() < 0.5:
            lines += self.frontmatter([("tags", self.tags_list()),
                                       ("description", self.sentence())])
            lines.append("")
        lines += [f"# {s.title}", ""]
        lines += self._sections(s, (2, 6))
        return "\n".join(lines)

    def render_procedural(self, s: Spec) -> str:
        r = self.rng
        lines = [f"# {s.title}", ""]
        lines += self._sections(s, (2, 4), steps=True)
        return "\n".join(lines)

    def _sections(self, s: Spec, size, steps=False) -> list[str]:
        r = self.rng
        lines: list[str] = []
        blocks = list(s.blocks)
        for i, h in enumerate(s.headings):
            lines += [f"## {h}", ""]
            body = self.prose(s, r.randint(*size))
            if steps and i == 0:
                body = [f"{k}. {x}" for k, x in enumerate(body, 1)]
            if blocks:
                body[-1] += f" ^{blocks.pop()}"
            lines += body
            lines.append("")
            if r.random() < (0.35 if steps else 0.08):
                lines += self.code_block() + [""]
            if r.random() < 0.03:
                lines += [f"<!-- {self.words(3, 6)} [[{r.choice(WORDS)}]] -->", ""]
        for b in blocks:  # any left over: a paragraph of their own
            lines += [self.sentence() + f" ^{b}", ""]
        return lines


def generate(size: int, seed: int = 1):
    """Yield ``(relpath, bytes)`` for every file of the vault, deterministically."""
    g = Generator(size, seed)
    g.plan()
    for i, a in enumerate(g.attachments):
        ext = a.rsplit(".", 1)[1]
        payload = dict(ATTACH_KINDS)[ext]
        yield a, payload + f"\n{i}\n".encode() * (ext in ("svg",))
    yield ".obsidian/app.json", b'{\n  "alwaysUpdateLinks": true\n}\n'
    for s in g.specs:
        yield s.path, (g.render(s).rstrip("\n") + "\n").encode("utf-8")


def build(out: Path, size: int, seed: int = 1) -> dict:
    """Write the vault under ``out`` (which must not exist or be empty). Returns a summary."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    made_dirs: set[str] = set()
    notes = attachments = total = 0
    kinds = counts(size)
    for rel, data in generate(size, seed):
        folder = rel.rpartition("/")[0]
        if folder and folder not in made_dirs:
            (out / folder).mkdir(parents=True, exist_ok=True)
            made_dirs.add(folder)
        path = out / rel
        with open(path, "wb") as fh:
            fh.write(data)
        os.utime(path, (MTIME, MTIME))
        if rel.endswith(".md"):
            notes += 1
            total += len(data)
        elif not rel.startswith(".obsidian/"):
            attachments += 1
    return {"notes": notes, "attachments": attachments, "markdown_bytes": total,
            "kinds": kinds, "seed": seed, "generator": GENERATOR_VERSION}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Build a deterministic synthetic memory vault.")
    p.add_argument("out", type=Path)
    p.add_argument("--size", type=int, default=1000, help="number of Markdown notes")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        print(f"synth: {args.out} is not empty", file=sys.stderr)
        return 2
    info = build(args.out, args.size, args.seed)
    print(f"{info['notes']} notes, {info['attachments']} attachments, "
          f"{info['markdown_bytes'] / 1e6:.1f} MB of Markdown in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
