"""``vaultkit search``: full-text search over the memory set (the runtime's memory_search)."""

from __future__ import annotations

import sys

HELP = "search MEMORY.md and memory/**/*.md (index, titles and tags first, then BM25 full text)"
DESCRIPTION = (
    "Search the memory set (MEMORY.md and memory/**/*.md) like the runtime's memory_search: "
    "INDEX.md entries, titles, headings, tags and paths first, then BM25 full text over chunks "
    "of at most 700 characters (each one a snippet) that never cut an entry, in one ranked "
    "list; a result's line range is its snippet and the lines around it, about 1,600 "
    "characters. A journal's date "
    "is searchable as words (October 2023, Wednesday, 2023年10月, октябрь), and relative "
    "dates (yesterday, last week) in queries and entries are resolved. The SQLite FTS5 "
    "index in .vaultkit/ is "
    "brought up to date before every search. Chinese and other CJK text is indexed as "
    "character bigrams. --json prints {\"results\": [{path, startLine, endLine, score, "
    "snippet, snippetStartLine, snippetEndLine}]} (and snippetWindows when a snippet skips "
    "a line too long for it, shown as a line '…'), with \"stale\": true and a \"note\" when "
    "the index could not be updated (the results then come from an up-to-date copy in memory)."
)


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("query", nargs="+", metavar="[PATH] QUERY",
                   help="words to look for; the first word is the vault only when it is "
                        "written as a path, with a '/' or as '.' or '..' (./vault, ~/vault, "
                        "vault/), and names a folder; else every word is searched for and the "
                        "vault is here (or -C)")
    p.add_argument("-C", "--vault", dest="vault_dir", metavar="PATH",
                   help="the vault or a folder inside it, never taken for a query word "
                        "(default: here)")
    p.add_argument("--type", dest="type_name", metavar="T",
                   help="only notes of this type (decision, lesson, person, ...)")
    p.add_argument("--layer", metavar="L", help="only notes of this layer (journal, archive, ...)")
    p.add_argument("--max-results", "-n", type=int, default=6, metavar="N",
                   help="at most N results (default 6)")
    p.add_argument("--min-score", type=float, default=0.0, metavar="S",
                   help="drop results scoring below S, 0..1 (default 0: keep every result "
                        "that matches a query word; 0.55 asks for every query word)")
    add_format_arguments(p, ('text', 'json'), help="text (default) or json, shaped as memory_search's answer")
    add_output_argument(p)
    add_vault_arguments(p)


def run(args) -> int:

    from vaultkit.core.errors import VaultkitError
    from vaultkit.memory.search import highlight, search_scan
    from vaultkit.vault.loader import scan_vault

    if args.max_results < 1:
        raise VaultkitError("--max-results must be at least 1")
    if not 0 <= args.min_score <= 1:
        raise VaultkitError("--min-score must lie between 0 and 1")
    from vaultkit.core import progress
    from vaultkit.memory.search import query_cut

    progress.allow(args.format != "json")
    if args.vault_dir is not None:
        if not __import__("os").path.isdir(args.vault_dir):
            raise VaultkitError(f"--vault {args.vault_dir}: no such folder")
        words, where = list(args.query), args.vault_dir
    else:
        words, where = vault_path_first(args.query)
        bare = words[0] if where == "." and len(words) > 1 else None
        if bare and __import__("os").path.isdir(bare):  # `search mq x`: a word, not the vault
            print(f"vaultkit: note: '{bare}' is searched for as a word; to search the vault "
                  f"in the folder {bare}, write ./{bare} or -C {bare}", file=sys.stderr)
    if not "".join(words).strip():  # (`search ""` too: no word, no answer to give)
        raise VaultkitError("nothing to search for: give words after the PATH")
    query = " ".join(words)
    cut = query_cut(query)
    if cut:
        print(f"vaultkit: note: {cut}", file=sys.stderr)
    scan = scan_vault(where, root=args.root, profile=args.profile,
                      use_cache=not args.no_cache)
    profile = scan.settings.profile
    if args.type_name and args.type_name not in profile.types:
        known = ", ".join(sorted(profile.types))
        raise VaultkitError(f"--type {args.type_name}: unknown type (known: {known})")
    layers = {layer.name for layer in profile.layers}
    if args.layer and args.layer not in layers:
        raise VaultkitError(f"--layer {args.layer}: unknown layer (known: "
                            f"{', '.join(sorted(layers))})")
    status: dict = {}
    hits = search_scan(scan, query, max_results=args.max_results, min_score=args.min_score,
                       type_name=args.type_name, layer=args.layer, use_cache=not args.no_cache,
                       status=status)
    if args.format == "json":
        from vaultkit.vault.outbound import dumps

        answer: dict = {"results": [h.to_dict() for h in hits]}
        if status.get("stale"):
            answer.update(stale=True, note=status["stale"])
        print(dumps(answer, indent=2))
        return 0
    if status.get("stale"):
        print(f"vaultkit: note: {status['stale']}", file=sys.stderr)
    if not hits:
        shown = query if len(query) <= 200 else query[:200] + "..."
        print(f"No results for {shown!r}.", file=sys.stderr)
        return 0
    from vaultkit.lint.report import use_colour  # (the text output's alone)
    from vaultkit.vault.outbound import clean_line
    from vaultkit.vault.scan import display_path

    colour = use_colour(sys.stdout)
    out = []
    for h in hits:
        # the lines printed below (the snippet's), so an editor opens where the text is
        where = clean_line(f"{display_path(scan.root / h.path)}:"
                           f"{h.snippet_start or h.start_line}-{h.snippet_end or h.end_line}")
        if colour:
            where = f"\x1b[1m{where}\x1b[0m"
        out.append(f"{where}  score {h.score:.2f}")
        body = highlight(h.snippet, h.spans, colour)
        out.extend("    " + line for line in body.split("\n"))
        for c in h.credentials:
            out.append(f"    ! line {c['line']} holds a credential: {c['kind']} ({c['masked']}); "
                       "redact it before use")
        out.append("")
    sys.stdout.write("\n".join(out))
    return 0


def vault_path_first(words: list[str]) -> tuple[list[str], str]:
    """``(query words, vault path)``: the first word is the vault when it is written as a
    path (``.``, ``..``, or with a '/') and names a folder; else the vault is here."""
    import os

    first = words[0]
    if (first in (".", "..") or "/" in first or os.sep in first) and os.path.isdir(first):
        return words[1:], first
    if len(words) > 1 and first.startswith(("./", "../")):  # a path no query word is written as
        from vaultkit.core.errors import VaultkitError

        raise VaultkitError(f"{first}: no such folder (vaultkit search [PATH] QUERY)")
    return words, "."
