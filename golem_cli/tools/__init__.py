"""Tools the model may call in a chat: the built-in file, shell and web tools, their
registry (sources, groups, selection by name), the approval policy, and the bounds every
tool output respects.

A sibling of ``providers``, ``store`` and ``config``: it reads files, runs processes and
fetches pages, so it cannot live in the core, and it prints nothing (the CLI asks the
approval questions and renders calls). See docs/architecture.md and ADR 0010.
"""
