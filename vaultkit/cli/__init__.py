"""The ``vaultkit`` command line.

Each subcommand is a module in :mod:`vaultkit.cli.commands` with ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``; heavy imports happen inside
``run`` so that ``vaultkit --version`` and argument errors stay instant.
"""

from __future__ import annotations

import sys

from vaultkit import __version__

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:  # (imported where used: a check a running watcher answers needs neither)
    import argparse
    from collections.abc import Sequence

COMMANDS = ("check", "rules", "rule", "init", "index", "graph", "audit", "context", "log", "promote",
            "search", "get",
            "archive", "distill", "history", "recover", "snapshot", "watch", "report", "mcp",
            "server")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``only`` (a command name), that command's parser alone:
    a run of one command (the commit hook) imports and builds no other command's options."""
    import argparse
    import importlib

    formatter = _formatter()
    parser = argparse.ArgumentParser(
        prog="vaultkit",
        description="Lint and look after an agent-memory vault (Markdown + git + Obsidian).",
        formatter_class=formatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"vaultkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND",
                                parser_class=_interleaving(argparse.ArgumentParser))
    for name in (only,) if only in COMMANDS else COMMANDS:
        try:
            module = importlib.import_module(f"vaultkit.cli.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"vaultkit.cli.commands.{name}":
                continue
            raise
        p = sub.add_parser(name, help=module.HELP, description=getattr(module, "DESCRIPTION",
                                                                       module.HELP),
                           formatter_class=formatter)
        module.add_arguments(p)
        p.set_defaults(run=module.run)
    parser.commands = sub.choices  # (an unknown option is told in its command's usage)
    return parser


def _interleaving(base):
    """A command's parser class: its options may come between its positionals, as with git
    and ruff (`vaultkit log . --title T TEXT`, `vaultkit search . --max-results 3 WORDS`);
    argparse alone takes all of a command's positionals at the first one."""

    class CommandParser(base):
        _intermixing = False

        def parse_known_args(self, args=None, namespace=None):
            # (parse_known_intermixed_args calls this method itself, twice; and it reads
            # what follows `--` as options again: there, the plain parse)
            if self._intermixing or (args is not None and "--" in args):
                return super().parse_known_args(args, namespace)
            self._intermixing = True
            try:
                return self.parse_known_intermixed_args(args, namespace)
            except TypeError:  # a form it cannot take (a positional in an exclusive group)
                return super().parse_known_args(args, namespace)
            finally:
                self._intermixing = False

    return CommandParser


def _formatter():
    """argparse's help formatter at the terminal's width, read once.

    argparse makes a formatter for every option it adds (to check its metavar) and the
    stock one imports ``shutil`` (and with it bz2 and lzma) and asks the terminal each
    time; a command's run needs neither. The width is the one
    ``shutil.get_terminal_size()`` gives: ``COLUMNS`` when it is a positive number, else
    the terminal of standard output, else 80."""
    import argparse
    import functools
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return functools.partial(argparse.HelpFormatter, width=columns - 2)


def add_vault_arguments(p: argparse.ArgumentParser, *, cache: bool = True) -> None:
    """Options every command that reads a vault takes."""
    p.add_argument("--root", metavar="DIR",
                   help="vault root (default: the nearest folder, up to the git root, with "
                        "vaultkit.toml or .obsidian/, else one with a bootstrap file or memory/)")
    p.add_argument("--profile", metavar="NAME|FILE",
                   help="rule pack to use instead of the one vaultkit.toml names")
    if cache:
        p.add_argument("--no-cache", action="store_true", help="read and write no cache: every note is read and "
                       "parsed again (search builds its index in memory)")


# Old spellings of a --format value, still accepted (`--format md` is `--format markdown`).
FORMAT_ALIASES = {"md": "markdown"}


def add_format_arguments(p: argparse.ArgumentParser, formats: Sequence[str], *,
                         default: str | None = None, help: str | None = None) -> None:
    """The one way every command chooses its output (ruff's convention):
    ``--format`` (alias ``--output-format``) with the command's ``formats``; ``--json`` is
    kept as the old spelling of ``--format json``."""
    default = default or formats[0]
    p.add_argument("--format", "--output-format", dest="format", default=default,
                   choices=tuple(formats), metavar="{" + ",".join(formats) + "}",
                   type=lambda value: FORMAT_ALIASES.get(value, value),
                   help=help or f"output format: {', '.join(formats)} (default: {default})")
    if "json" in formats:
        p.add_argument("--json", dest="format", action="store_const", const="json",
                       help="the same as --format json")


def add_output_argument(p: argparse.ArgumentParser, *, help: str | None = None,
                        default: str | None = None) -> None:
    """``-o/--output FILE`` (alias ``--output-file``): the command's output goes to FILE,
    written whole and atomically at the end, instead of to standard output."""
    p.add_argument("-o", "--output", "--output-file", dest="output", metavar="FILE",
                   default=default,
                   help=help or "write the output to FILE instead of standard output")


def _run_into_file(args) -> int:
    """Run the command with standard output collected and written to ``-o FILE`` at the end
    (only when the command ran; an error writes nothing)."""
    import contextlib
    import io

    from vaultkit.cli.commands._common import check_output_folder

    check_output_folder(args.output)  # before any work
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = int(args.run(args) or 0)
    from vaultkit.core.atomic import write_output
    from vaultkit.vault.outbound import clean, commands_off

    # (the output boundary: a file gets what the terminal would)
    write_output(args.output, commands_off(clean(buffer.getvalue())).encode("utf-8"))
    return code


def _unrecognized(parser, args, extra: list[str]) -> None:
    """Words no option or argument of the command takes: said with the command's usage
    and name (argparse's own says `vaultkit [-h] [-V] COMMAND ...`, which lists no option
    of the command); ``-C DIR`` where the command takes its vault as PATH says so."""
    command = parser.commands.get(getattr(args, "command", None) or "")
    if command is None:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    message = f"unrecognized arguments: {' '.join(extra)}"
    usage = command.format_usage()
    if "-C" in extra and "-C" not in usage and "PATH" in usage:
        message += f" (name the vault as PATH, without -C: vaultkit {args.command} DIR)"
    command.error(message)


def main(argv: Sequence[str] | None = None, *, workspace=None) -> int:
    """``workspace``: the :class:`~vaultkit.session.workspace.Workspace` of the process
    running the command for a caller (the answering process of ``vaultkit watch``), whose
    listing and snapshot objects the command reads through."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["--version"], ["-V"]):  # fast path: no parser, no imports
        print(f"vaultkit {__version__}")
        return 0
    # A short-lived process whose data has no reference cycles: the cyclic collector
    # would only walk the parsed vault again and again (about a third of a warm run), and,
    # before that, the objects of every module imported (some 18 collections in a commit
    # hook's imports): it is off from here to the command's end.
    import gc

    collecting = gc.isenabled()
    gc.disable()
    try:
        return _main(argv, workspace)
    finally:
        if collecting:
            gc.enable()


def _main(argv: list[str], workspace) -> int:
    """:func:`main` with the cyclic collector off."""
    if argv and argv[0] == "check" and workspace is None:  # `vaultkit watch` may answer it
        from vaultkit.cli.resident import ask

        code = ask(argv)
        if code is not None:
            return code
    if argv and argv[0] == "snapshot" and workspace is None:
        # nothing changed since the last snapshot (most runs of the cron line): said from
        # the record the last run left, before any parser, settings or git
        from vaultkit.vault.quicksnap import answer

        code = answer(argv)
        if code is not None:
            return code
    if argv[:1] == ["help"] and len(argv) <= 2:  # `vaultkit help [COMMAND]`, as git and ruff
        argv = [*argv[1:], "--help"]
    # `vaultkit COMMAND ...`: only that command's parser is built (what it parses is the
    # same; anything else, such as `vaultkit --help`, gets the whole command line)
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            _unrecognized(parser, args, extra)
    except SystemExit as exc:  # argparse: usage errors exit 2, --help exits 0
        return int(exc.code or 0)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    args.workspace = workspace
    from vaultkit.core.errors import VaultkitError
    from vaultkit.vault.profile import ConfigError

    from vaultkit.cli.commands import _common
    from vaultkit.vault.outbound import Stream

    # the output boundary: every line the command prints has its credentials masked and its
    # control characters neutralised, whatever module printed it
    streams = (sys.stdout, sys.stderr)
    sys.stdout, sys.stderr = Stream(sys.stdout), Stream(sys.stderr)
    try:
        if getattr(args, "output", None) and not getattr(args, "writes_output", False):
            code = _run_into_file(args)
        else:
            code = int(args.run(args) or 0)
        _common.save_opened_vaults()
        return code
    except (VaultkitError, ConfigError) as exc:
        print(f"vaultkit: error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"vaultkit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("vaultkit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # e.g. -o onto a full disk (/dev/full): the system's word, one line
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"vaultkit: error: {where}I/O error: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: say so in one line, with a way to see more
        import os
        import traceback

        if os.environ.get("VAULTKIT_DEBUG"):
            traceback.print_exc()
        where = traceback.extract_tb(exc.__traceback__)[-1]
        print(f"vaultkit: internal error: {type(exc).__name__}: {exc} "
              f"(at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}; set VAULTKIT_DEBUG=1 "
              "for the traceback, and please report it)", file=sys.stderr)
        return 2
    finally:
        sys.stdout, sys.stderr = streams
        _common.forget_opened_vaults()
        from vaultkit.vault.outbound import own_commands

        own_commands("")  # (the annotations a command rendered are its own)
        from vaultkit.core import progress

        progress.allow(False)


def console() -> None:
    """The ``vaultkit`` program (console script and ``python -m vaultkit``): :func:`main`,
    then exit with its code. A finished ``check`` (the commit hook's command) leaves without
    the interpreter's teardown: freeing a parsed vault object by object, and the full
    collection finalisation runs, cost a cold check at 10,000 notes several tenths of a
    second and the hook a few hundredths, for nothing a later reader sees. Nor does the
    cyclic collector run before that exit: :func:`main` turns it back on as it found it,
    and its first pass would walk every object the run made (at 10,000 notes 0.2-0.3 s of
    CPU) just before ``os._exit`` frees them all at once."""
    import gc

    check = sys.argv[1:2] == ["check"]
    if check:
        gc.disable()
    code = main()
    if check:
        _exit_now(code)
        gc.enable()  # (the ordinary exit after all)
    sys.exit(code)


def _exit_now(code: int) -> None:
    """``os._exit(code)`` once nothing is left to lose: the atexit handlers ran (the
    multiprocessing one among them) and standard output and error are flushed. Returns
    (for the ordinary exit) while a non-daemon thread runs, which the interpreter would
    wait for, or when a flush fails, which the interpreter reports in its own way."""
    import atexit
    import os
    import threading

    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive()
           for t in threading.enumerate()):
        return
    atexit._run_exitfuncs()  # (each handler once, as at exit; it clears them)
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
