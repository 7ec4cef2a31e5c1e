"""Errors that end a command with exit code 2 and one clear line, never a traceback."""


class VaultkitError(Exception):
    """A usage, configuration or I/O problem the user can act on."""
