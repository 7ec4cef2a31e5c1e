"""The memory tools behind ``log``, ``search``, ``get``, ``archive``, ``distill``, ``history`` and
``recover``.

Each module holds the logic as plain functions; the commands in
:mod:`vaultkit.cli.commands` only parse arguments and print.
"""
