"""The memory tools behind ``log``, ``search``, ``get``, ``archive`` and ``distill``.

Each module holds the logic as plain functions; the commands in
:mod:`vaultkit.commands` only parse arguments and print.
"""
