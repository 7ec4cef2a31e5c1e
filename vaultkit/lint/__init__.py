"""Linting: the rule base, one module per rule under :mod:`vaultkit.lint.rules`, the engine that
runs them, diagnostics, the baseline and the report formats.
"""

# The baseline's file at the vault root when vaultkit.toml names none (here, not in
# vaultkit.lint.baseline: a check finds there is none without importing that module)
BASELINE_NAME = "vaultkit-baseline.json"
