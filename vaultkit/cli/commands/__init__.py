"""One module per subcommand; see :mod:`vaultkit.cli`."""
