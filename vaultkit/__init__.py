"""vaultkit: a linter and toolkit for agent-memory vaults kept as Markdown in git."""

__version__ = "0.1.0"
