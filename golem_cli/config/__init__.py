"""Where golem keeps its files and what the user configured.

``paths`` answers "where" (platformdirs, or ``GOLEM_HOME`` for everything at once);
``settings`` reads ``config.toml`` and the environment. Both are cheap to import: platformdirs
and tomllib are imported only when they are needed.
"""
