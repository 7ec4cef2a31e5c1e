"""The link layer over a loaded vault: resolving links, the note graph, the generated index
and Obsidian's graph colours.
"""
