"""Reading a vault: scan the folder, parse each note into the model, load the profile, resolve
links as Obsidian does, keep the parse cache, and the git and OpenClaw facts about the workspace.

:mod:`vaultkit.vault.loader` puts it together as a :class:`~vaultkit.vault.loader.Vault`.
"""

# The credential detector's version (vaultkit.vault.secretscan): bump it when what is found
# changes; per-note findings and the output boundary's verified texts are kept under it.
# (Here, so that reading it imports no detector: a warm check's output needs none.)
DETECTOR_VERSION = "6"
