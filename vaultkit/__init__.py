"""vaultkit: a linter and toolkit for agent-memory vaults kept as Markdown in git."""

__version__ = "0.4.0"

# The name on the package index (`pip install vaultkit-lint`): "vaultkit" there is an
# unrelated project. The import package and the command stay `vaultkit`.
DISTRIBUTION = "vaultkit-lint"
