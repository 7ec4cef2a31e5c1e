"""Benchmark ``vaultkit server``: the delay from a didChange to its publishDiagnostics.

On the synthetic vault of ``--size`` notes (bench/synth.py, built and committed as
bench/run.py does), it starts ``vaultkit server`` over stdio with pygls's own client,
opens a note and a bootstrap file (MEMORY.md), and then, ``--runs`` times each, sends a
whole-text didChange (a line added, then taken away again, never saved) and measures the
wall time until the server publishes the diagnostics of that version: what a person
waits for after a key. Each change comes after the previous one's diagnostics, a pause,
so the server checks it at once (``change_delay``; inside a burst it waits
vaultkit.cli.lsp_server.DEBOUNCE_S for the next key). Targets: under 100 ms for a note, under 300 ms for a bootstrap file.

Needs the ``server`` extra. Usage: ``python bench/server.py [--size 10000] [--runs 15]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run as bench  # noqa: E402

TARGETS = {"note": 0.100, "bootstrap": 0.300}


async def measure(vault: Path, runs: int) -> dict:
    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("vaultkit-bench", "1")
    arrived: dict[tuple[str, int], float] = {}
    waiting: dict[tuple[str, int], asyncio.Future] = {}

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: lsp.PublishDiagnosticsParams):
        key = (params.uri, params.version)
        arrived[key] = time.perf_counter()
        future = waiting.pop(key, None)
        if future is not None and not future.done():
            future.set_result(len(params.diagnostics))

    def expect(uri: str, version: int) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        waiting[(uri, version)] = future
        return future

    await client.start_io(sys.executable, "-m", "vaultkit", "server", "--stdio", cwd=str(vault))
    t0 = time.perf_counter()
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=vault.as_uri()))
    client.initialized(lsp.InitializedParams())
    out: dict = {"size_notes": None}
    notes = sorted((vault / "memory").rglob("*.md"))
    files = {"note": next(p for p in notes if "/semantic/" in p.as_posix()
                          or "/procedural/" in p.as_posix()),
             "bootstrap": vault / "MEMORY.md"}
    for kind, path in files.items():
        uri = path.resolve().as_uri()
        text = path.read_text(encoding="utf-8")
        first = expect(uri, 1)
        start = time.perf_counter()
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)))
        await asyncio.wait_for(first, 600)
        out[f"{kind}_open"] = time.perf_counter() - start
        if kind == "note":
            out["first_open_from_start"] = time.perf_counter() - t0
        delays = []
        for i in range(runs):
            version = i + 2
            new = text + "\n- an unsaved line\n" if i % 2 == 0 else text
            done = expect(uri, version)
            start = time.perf_counter()
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [lsp.TextDocumentContentChangeWholeDocument(text=new)]))
            await asyncio.wait_for(done, 600)
            delays.append(arrived[(uri, version)] - start)
            await asyncio.sleep(0.2)  # (a pause between keystroke bursts)
        out[kind] = delays
        out[f"{kind}_path"] = path.relative_to(vault).as_posix()
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(
            lsp.TextDocumentIdentifier(uri)))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=10000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--out", type=Path, default=HERE / "out")
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    vault, _ = bench.prepare_vault(args.out, args.size, args.seed, log=print)
    try:
        result = asyncio.run(measure(vault.resolve(), args.runs))
    finally:
        bench.restore_vault(vault)
    result["size_notes"] = args.size
    for kind in ("note", "bootstrap"):
        delays = result[kind]
        median = statistics.median(delays)
        verdict = "pass" if median < TARGETS[kind] else "FAIL"
        print(f"{args.size:,} notes: didChange -> publishDiagnostics, {kind} "
              f"({result[f'{kind}_path']}): median {median * 1000:.0f} ms, "
              f"min {min(delays) * 1000:.0f}, max {max(delays) * 1000:.0f} "
              f"(target < {TARGETS[kind] * 1000:.0f} ms: {verdict}); "
              f"first open {result[f'{kind}_open'] * 1000:.0f} ms")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
