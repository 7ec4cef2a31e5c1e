"""Reading a vault: scan the folder, parse each note into the model, load the profile, resolve
links as Obsidian does, keep the parse cache, and the git and OpenClaw facts about the workspace.

:mod:`vaultkit.vault.loader` puts it together as a :class:`~vaultkit.vault.loader.Vault`.
"""
