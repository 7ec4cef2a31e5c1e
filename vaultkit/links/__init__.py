"""What is built from a loaded vault's resolved links: the note graph, the generated index and
Obsidian's graph colours.
"""
