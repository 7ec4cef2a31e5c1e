"""Linting: the rule base, one module per rule under :mod:`vaultkit.lint.rules`, the engine that
runs them, diagnostics, the baseline and the report formats.
"""
