"""Benchmark ``vaultkit mcp``: a warm memory_search call against the CLI's whole process.

On the synthetic vault of ``--size`` notes (bench/synth.py, built and committed as
bench/run.py does), it measures

- ``vaultkit search QUERY`` as a whole process (start, scan, query, exit), after one run
  that built the search index, with bench/run.py's wall-clock wrapper;
- the MCP server started by the SDK's stdio client: the first ``memory_search`` (server
  start, SDK import, vault load and index sync), then warm ``memory_search`` calls
  (round trip through the client, the same queries), and a call right after one note
  changed (the server lists the vault, reparses that note, resyncs it in the index);
- the floor no tool can go below: round trips of a call to a tool the server does not
  have (the JSON-RPC framing, the SDK's validation and dispatch on both sides, an error
  result; no vault work), alternated with the warm searches;
- the server process's CPU per warm call (from ``/proc``, Linux), and in this process the
  CPU of the server's own work per warm ``memory_search``: all of it, and the calling
  thread's alone (the BM25 ranking runs beside it on a second thread; with a free core,
  the calling thread's CPU is what the call waits for).

With ``--baseline CMD`` it compares instead: two servers, this vaultkit and ``CMD`` (another
vaultkit, e.g. ``"env PYTHONPATH=/path/to/old/tree python -m vaultkit"``), each on its own
copy of the vault, with their warm ``memory_search`` calls and unknown-tool calls
alternated (A B, B A, ...) so both see the same load: round trips and each server
process's CPU per call.

Needs the ``mcp`` extra. Usage: ``python bench/mcp_search.py [--size 10000] [--runs 15]
[--baseline CMD]``.
(Not ``bench/mcp.py``: tests put bench/ on sys.path, and that name would shadow the SDK.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run as bench  # noqa: E402
import synth  # noqa: E402


def cli_search(vk, vault, runs):
    queries = iter(bench.QUERIES * (runs + 2))
    first = bench.measure([*vk, "search", next(queries)], vault)  # builds the index
    if first["rc"] != 0:
        raise SystemExit(f"bench: vaultkit search failed: {bench.last_line(first['stderr'])}")
    walls, cpus = [], []
    for _ in range(runs):
        r = bench.measure([*vk, "search", next(queries)], vault)
        walls.append(r["wall"])
        cpus.append(r["cpu"])
    return {"first": first["wall"], "walls": walls, "cpus": cpus}


def session_cpu(vault, runs):
    """CPU seconds of the server's own work per warm memory_search (in this process).

    Wall time on a busy machine measures the neighbours as much as vaultkit; CPU time
    of the same work does not.
    """
    from vaultkit.cli.mcp_server import VaultSession

    session = VaultSession(vault.resolve())
    queries = iter(bench.QUERIES * (runs + 2))
    session.vault()
    session.memory_search({"query": next(queries)})
    cpus, threads = [], []
    for _ in range(runs):
        t0, t1 = time.process_time(), time.thread_time()
        session.memory_search({"query": next(queries)})
        threads.append(time.thread_time() - t1)
        cpus.append(time.process_time() - t0)
    session.close()
    return cpus, threads


def _server_pid(before: set[int]) -> int | None:
    """The process the stdio client started (a child of this one), where /proc tells."""
    found = _children() - before
    return found.pop() if len(found) == 1 else None


def _children() -> set[int]:
    out: set[int] = set()
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children") as fh:
                out |= {int(x) for x in fh.read().split()}
    except OSError:
        pass
    return out


def _process_cpu(pid: int | None) -> float | None:
    """User + system seconds of process ``pid`` (all its threads), or None."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def mcp_search(vk, vault, runs):
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=vk[0], args=[*vk[1:], "mcp", str(vault)],
                                   cwd=str(vault))
    queries = iter(bench.QUERIES * (runs + 2))
    out = {}

    async def call(client, query):
        t0 = time.perf_counter()
        result = await client.call_tool("memory_search", {"query": query})
        wall = time.perf_counter() - t0
        if result.is_error:
            raise SystemExit(f"bench: memory_search failed: {result.content[0].text}")
        return wall, result.structured_content["results"]

    async def floor(client):
        t0 = time.perf_counter()
        result = await client.call_tool("no_such_tool", {})
        wall = time.perf_counter() - t0
        if not result.is_error:
            raise SystemExit("bench: a call to an unknown tool did not fail")
        return wall

    async def main():
        t0 = time.perf_counter()
        before = _children()
        async with Client(params, mode="legacy", cache=None) as client:
            out["connect"] = time.perf_counter() - t0
            pid = _server_pid(before)
            out["first"], _ = await call(client, next(queries))
            out["first_from_start"] = time.perf_counter() - t0
            await call(client, next(queries))
            walls, floors = [], []
            cpu0 = _process_cpu(pid)
            for _ in range(runs):
                wall, hits = await call(client, next(queries))
                walls.append(wall)
            cpu1 = _process_cpu(pid)
            for _ in range(runs):
                floors.append(await floor(client))
            cpu2 = _process_cpu(pid)
            out["walls"] = walls
            out["floor_walls"] = floors
            out["hits"] = len(hits)
            if cpu0 is not None and cpu2 is not None:
                out["server_cpu"] = (cpu1 - cpu0) / runs
                out["floor_server_cpu"] = (cpu2 - cpu1) / runs
            # one note changed: the next call lists the vault and resyncs that note only
            note = sorted((vault / "memory" / "semantic").rglob("*.md"))[0]
            saved = note.read_bytes()
            try:
                note.write_bytes(saved + b"\nAppended by the MCP benchmark.\n")
                out["after_change"], _ = await call(client, next(queries))
            finally:
                note.write_bytes(saved)
                os.utime(note, (synth.MTIME, synth.MTIME))

    anyio.run(main)
    return out


def paired(servers: dict, runs: int) -> dict:
    """``{name: {"search": [walls], "floor": [walls], "search_cpu", "floor_cpu"}}`` for the
    servers ``{name: (vaultkit command, vault)}``, calls alternated between them."""
    import contextlib

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    out = {name: {"search": [], "floor": []} for name in servers}

    async def main():
        async with contextlib.AsyncExitStack() as stack:
            clients = {}
            for name, (vk, vault) in servers.items():
                before = _children()
                params = StdioServerParameters(command=vk[0], args=[*vk[1:], "mcp", str(vault)],
                                               cwd=str(vault))
                client = await stack.enter_async_context(Client(params, mode="legacy",
                                                                cache=None))
                clients[name] = (client, _server_pid(before))
                for query in ("warm up", bench.QUERIES[0]):  # load, sync, first query
                    result = await client.call_tool("memory_search", {"query": query})
                    if result.is_error:
                        raise SystemExit(f"bench: {name}: memory_search failed: "
                                         f"{result.content[0].text}")
            names = list(servers)
            for kind in ("search", "floor"):
                cpu0 = {n: _process_cpu(pid) for n, (_c, pid) in clients.items()}
                for i in range(runs):
                    for name in (names if i % 2 == 0 else names[::-1]):
                        client = clients[name][0]
                        t0 = time.perf_counter()
                        if kind == "search":
                            await client.call_tool("memory_search",
                                                   {"query": bench.QUERIES[i % len(bench.QUERIES)]})
                        else:
                            await client.call_tool("no_such_tool", {})
                        out[name][kind].append(time.perf_counter() - t0)
                for name, (_c, pid) in clients.items():
                    cpu1 = _process_cpu(pid)
                    if cpu0[name] is not None and cpu1 is not None:
                        out[name][f"{kind}_cpu"] = (cpu1 - cpu0[name]) / runs

    anyio.run(main)
    return out


def compare(args, out_dir: Path, vault: Path, vk: list[str]) -> int:
    import shlex
    import shutil

    base_vault = out_dir / f"{vault.name}-baseline"
    if not base_vault.is_dir():  # its own copy: two versions must not share one index
        shutil.copytree(vault, base_vault, symlinks=True)
    bench.restore_vault(base_vault)
    got = paired({"baseline": (shlex.split(args.baseline), base_vault), "this": (vk, vault)},
                 args.runs)
    bench.restore_vault(vault)
    bench.restore_vault(base_vault)
    print(f"\nvaultkit mcp on the {args.size:,}-note vault, {args.runs} calls each, alternated "
          f"({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})")
    print(f"  {'':<48} {'baseline':>10} {'this':>10}")
    for label, kind, pick in (
            ("memory_search round trip, median", "search", statistics.median),
            ("memory_search round trip, fastest", "search", min),
            ("unknown-tool round trip (SDK floor), median", "floor", statistics.median)):
        print(f"  {label:<48} " + " ".join(f"{pick(got[n][kind]) * 1000:8.1f} ms"
                                           for n in ("baseline", "this")))
    for label, key in (("server CPU per memory_search (/proc)", "search_cpu"),
                       ("server CPU per unknown-tool call (/proc)", "floor_cpu")):
        if all(key in got[n] for n in got):
            print(f"  {label:<48} " + " ".join(f"{got[n][key] * 1000:8.1f} ms"
                                               for n in ("baseline", "this")))
    (out_dir / f"mcp-{args.size}-paired.json").write_text(json.dumps(got, indent=1))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=10000, help="notes in the vault (default 10000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs", type=int, default=15, help="timed queries each way (default 15)")
    p.add_argument("--out", default=str(HERE / "out"), help="where the vault is built")
    p.add_argument("--vaultkit", help="command to run vaultkit (default: beside this Python)")
    p.add_argument("--baseline", metavar="CMD",
                   help="compare with the vaultkit this command runs (calls alternated)")
    args = p.parse_args(argv)
    try:
        import mcp  # noqa: F401
    except ImportError:
        print("bench: needs the MCP SDK: pip install 'vaultkit-lint[mcp]'", file=sys.stderr)
        return 2
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    vault, _ = bench.prepare_vault(out_dir, args.size, args.seed, log=print)
    vk = bench.find_vaultkit(args.vaultkit)
    if args.baseline:
        return compare(args, out_dir, vault, vk)
    cli = cli_search(vk, vault, args.runs)
    server = mcp_search(vk, vault, args.runs)
    server["cpus"], server["thread_cpus"] = session_cpu(vault, args.runs)
    bench.restore_vault(vault)

    cli_med = statistics.median(cli["walls"])
    mcp_med = statistics.median(server["walls"])
    rows = [
        ("CLI `vaultkit search`, whole process, warm index (median)", cli_med),
        ("CLI `vaultkit search`, fastest", min(cli["walls"])),
        ("MCP server start to first answer (SDK import, load, sync)",
         server["first_from_start"]),
        ("MCP memory_search, warm (median round trip)", mcp_med),
        ("MCP memory_search, fastest", min(server["walls"])),
        ("MCP call to an unknown tool: the SDK's floor (median round trip)",
         statistics.median(server["floor_walls"])),
        ("MCP memory_search right after one note changed", server["after_change"]),
        ("CPU: CLI `vaultkit search` process (median)", statistics.median(cli["cpus"])),
        ("CPU: server work per warm memory_search (median)", statistics.median(server["cpus"])),
        ("CPU: of it the calling thread's (median)", statistics.median(server["thread_cpus"])),
    ]
    if "server_cpu" in server:
        rows += [("CPU: server process per warm memory_search (mean, /proc)",
                  server["server_cpu"]),
                 ("CPU: server process per unknown-tool call (mean, /proc)",
                  server["floor_server_cpu"])]
    print(f"\nvaultkit mcp on the {args.size:,}-note vault ({args.runs} queries each; "
          f"{os.cpu_count()} cores)")
    for label, seconds in rows:
        print(f"  {label:<62} {seconds * 1000:8.1f} ms")
    cpu_ratio = statistics.median(server["cpus"]) / statistics.median(cli["cpus"])
    print(f"  warm memory_search takes {mcp_med / cli_med:.2f}x the CLI's whole-process wall "
          f"time ({cli_med / mcp_med:.1f}x faster) and {cpu_ratio:.2f}x its CPU time")
    print(f"  (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: wall times "
          "include waiting for the CPU)")
    report = {"size": args.size, "runs": args.runs, "cli": cli, "mcp": server,
              "ratio": mcp_med / cli_med,
              "cpu_ratio": cpu_ratio}
    (out_dir / f"mcp-{args.size}.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
