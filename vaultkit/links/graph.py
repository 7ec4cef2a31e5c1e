"""The link graph: which note links to which, built from the one resolver.

Pure Python (plain dicts), so ``check`` never imports networkx; ``to_networkx()``
builds a ``networkx.DiGraph`` on demand for export and analysis. Get the vault's
graph with :func:`link_graph` (built once per vault and cached).

- Nodes are notes and the attachments some note links to or embeds.
- ``attachments`` are the files Obsidian shows beside notes (images, audio, video, PDF,
  canvases, bases; not hidden ones) and any other file a note links to: ``.gitkeep``,
  ``vaultkit.toml`` or ``unclosed_work.yaml`` are vault plumbing, not attachments.
- An edge ``a -> b`` exists when note ``a`` has at least one link or embed that resolves
  to ``b`` (its ``count`` is how many). A link into the note itself (``[[#Heading]]``)
  is no edge. Unresolved links are kept aside in ``unresolved``.
- ``inbound(path)``: the other notes that link to ``path``.
- ``orphans()``: notes with no link in and no link out (Obsidian's graph-view meaning).
"""

from __future__ import annotations

import heapq

from vaultkit.core.gcpause import gc_paused

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:
    from typing import Iterable
    from vaultkit.vault.model import Link, Note
    from vaultkit.vault.resolve import Resolution
    from vaultkit.vault.loader import Vault


class LinkGraph:
    """A vault's links, kept compactly: a big vault holds one graph through its whole check.

    ``into`` maps a file to the tuple of the notes linking to it (each once, in the vault's
    order); the edges out of a note are its "links" fact's own list, shared with the fact
    (``out``, the ``{target: count}`` dict per note, is built only when asked for).
    """

    def __init__(self, vault: "Vault"):
        self.vault = vault
        self._edges: dict[str, list] = {}  # path -> [(target, count, embed)], the fact's list
        self.into: dict[str, tuple[str, ...]] = {}
        self.embeds: set[tuple[str, str]] = set()
        self.links = 0  # internal links and embeds (external URLs not counted)
        self.external = 0
        self.resolved = 0
        self._with_unresolved: list[str] = []
        self._out: dict[str, dict[str, int]] | None = None
        with gc_paused():
            self._build(vault)

    def _build(self, vault: "Vault") -> None:
        # Each note's resolved links are a fact of the note and of the vault's file names
        # (vault.names_epoch): an unchanged note in an unchanged tree costs no resolving.
        epoch = vault.names_epoch
        fact = vault.fact
        into: dict = self.into
        shared: dict = {}  # one tuple per distinct edge while the facts are made (see _note_links)
        from vaultkit.vault.loader import decoded

        # (as the vault holds them: a note in the parse cache is decoded only to compute it)
        for path, note in vault.notes.entries().items():
            if note.error:
                continue
            links, external, resolved, edges, unresolved = fact(
                path, "links", lambda note=note: _note_links(vault, decoded(note), shared),
                epoch=epoch)
            self.links += links
            self.external += external
            self.resolved += resolved
            if unresolved:
                self._with_unresolved.append(path)
            self._edges[path] = edges
            for target, count, embed in edges:
                sources = into.get(target)
                if sources is None:
                    into[target] = [path]
                elif sources[-1] != path:  # (a note's sources are added together: once)
                    sources.append(path)
                if embed:
                    self.embeds.add((path, target))
        for target, sources in into.items():  # (values replaced, none added: allowed)
            into[target] = tuple(sources)

    @property
    def out(self) -> dict[str, dict[str, int]]:
        """``{note: {target: count}}`` for every readable note (built on first use)."""
        if self._out is None:
            self._out = {p: {t: c for t, c, _ in edges} for p, edges in self._edges.items()}
        return self._out

    @property
    def unresolved(self) -> list[tuple["Note", "Link", "Resolution"]]:
        """Every link that resolves to nothing, with its note and resolution."""
        resolver = self.vault.resolver
        out = []
        for path in self._with_unresolved:
            note = self.vault.notes[path]
            for link, res in zip(note.links, resolver.resolve_all(note)):
                if not link.external and res.path is None:
                    out.append((note, link, res))
        return out

    # -- queries ---------------------------------------------------------------

    @property
    def attachments(self) -> list[str]:
        """The attachments: files Obsidian shows that are not notes, and linked files."""
        linked = {p for p in self.into if p not in self.vault.notes}
        return sorted(linked.union(p for p in self.vault.attachments if is_attachment(p)))

    @property
    def nodes(self) -> list[str]:
        """Every note, and every attachment some note links to, sorted."""
        extra = {p for p in self.into if p not in self.vault.notes}
        return sorted(list(self.vault.notes) + sorted(extra))

    @property
    def edge_count(self) -> int:
        return sum(len({t for t, _, _ in v}) for v in self._edges.values())

    def inbound(self, path: str, exclude: Iterable[str] = ()) -> set[str]:
        """The other notes linking to ``path``, minus ``exclude``."""
        return set(self.into.get(path, ())).difference(exclude)

    def in_degree(self, path: str, exclude: Iterable[str] = ()) -> int:
        sources = self.into.get(path)
        if not sources:
            return 0
        n = len(sources)
        for e in exclude:
            if e in sources:
                n -= 1
        return n

    def orphans(self) -> list[str]:
        """Notes (readable ones) with no link in and no link out."""
        return [p for p, n in self.vault.notes.entries().items()  # (none decoded for it)
                if not n.error and not self.into.get(p) and not self._edges.get(p)]

    def most_linked(self, n: int, exclude_sources: Iterable[str] = (),
                    notes_only: bool = True) -> list[tuple[str, int]]:
        """The ``n`` files the most other notes link to: ``(path, count)``, ties by path."""
        exclude = set(exclude_sources)
        notes = self.vault.notes
        counts = []
        for path, sources in self.into.items():
            if notes_only and path not in notes:
                continue
            c = len(sources)
            for e in exclude:
                if e in sources:
                    c -= 1
            if c:
                counts.append((c, path))
        return top_linked(counts, n)

    def components(self) -> list[list[str]]:
        """Weakly connected components of the notes (and linked attachments), largest first."""
        parent: dict[str, str] = {p: p for p in self.nodes}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for src, targets in self.out.items():
            for dst in targets:
                a, b = find(src), find(dst)
                if a != b:
                    parent[max(a, b)] = min(a, b)
        groups: dict[str, list[str]] = {}
        for p in parent:
            groups.setdefault(find(p), []).append(p)
        return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))

    def node_attributes(self, path: str) -> dict:
        vault = self.vault
        note = vault.notes.get(path)
        name = path.rsplit("/", 1)[-1]
        if note is not None and name.lower().endswith(".md"):
            name = name[:-3]
        return {
            "name": name,
            "kind": "note" if note is not None else "attachment",
            "layer": vault.layers.get(path) or ("attachment" if note is None else ""),
            "type": vault.types.get(path) or "",
        }

    def to_networkx(self):
        """A ``networkx.DiGraph``: nodes carry name/kind/layer/type, edges count/embed."""
        import networkx as nx

        g = nx.DiGraph()
        for path in self.nodes:
            g.add_node(path, **self.node_attributes(path))
        for src, targets in sorted(self.out.items()):
            for dst, count in sorted(targets.items()):
                g.add_edge(src, dst, count=count, embed=(src, dst) in self.embeds)
        return g


# Obsidian's accepted file formats besides Markdown (help: "Accepted file formats")
ATTACHMENT_SUFFIXES = frozenset({
    "avif", "bmp", "gif", "jpeg", "jpg", "png", "svg", "webp",  # images
    "flac", "m4a", "mp3", "ogg", "wav", "webm", "3gp",  # audio
    "mkv", "mov", "mp4", "ogv",  # video
    "pdf", "canvas", "base",
})


def is_attachment(path: str) -> bool:
    """True for a file Obsidian lists as an attachment (by its extension; not hidden)."""
    if any(part.startswith(".") for part in path.split("/")):
        return False
    name = path.rsplit("/", 1)[-1]
    return "." in name and name.rsplit(".", 1)[1].lower() in ATTACHMENT_SUFFIXES


def top_linked(counts: list[tuple[int, str]], n: int) -> list[tuple[str, int]]:
    """The ``n`` of ``(count, path)`` with the highest counts, as ``(path, count)``; ties by
    path, case folded first (the index's memo ranks its kept in-degrees with this too)."""
    top = heapq.nsmallest(n, counts, key=lambda t: (-t[0], t[1].lower(), t[1]))
    return [(p, c) for c, p in top]


def link_graph(vault: "Vault") -> LinkGraph:
    """The vault's link graph, built once and kept with its resolver."""
    resolver = vault.resolver
    graph = getattr(resolver, "_graph", None)
    if graph is None:
        graph = LinkGraph(vault)
        resolver._graph = graph
    return graph


def linked_from(vault: "Vault", note: "Note") -> list[str]:
    """The files one note links to, as the graph has them (the same cached fact)."""
    edges = vault.fact(note.path, "links", lambda: _note_links(vault, note),
                       epoch=vault.names_epoch)[3]
    return [target for target, _, _ in edges]


def _note_links(vault: "Vault", note: "Note", shared: dict | None = None) -> tuple:
    """(links, external, resolved, [(target, count, embed)], has_unresolved) for one note.

    ``shared``: equal edges of different notes (most are a note linked once) are one tuple,
    kept once however many notes hold it (a cold check of a big vault holds them all)."""
    links = external = resolved = 0
    counts: dict[str, int] = {}
    embedded: set[str] = set()
    unresolved = False
    for link, res in zip(note.links, vault.resolver.resolve_all(note)):
        if link.external:
            external += 1
            continue
        links += 1
        if res.path is None:
            unresolved = True
            continue
        resolved += 1
        if res.path == note.path:
            continue
        counts[res.path] = counts.get(res.path, 0) + 1
        if link.embed:
            embedded.add(res.path)
    if shared is None or embedded:
        edges = [(t, c, t in embedded) for t, c in counts.items()]
    else:  # (keyed by target: a string's hash is kept, a tuple's is computed each time)
        edges = [(shared.get(t) or shared.setdefault(t, (t, 1, False))) if c == 1
                 else (t, c, False) for t, c in counts.items()]
    return links, external, resolved, edges, unresolved
