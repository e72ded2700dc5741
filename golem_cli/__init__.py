"""golem: a command-line chat for large language models that never loses a turn.

Only the version lives here so that ``golem --version`` costs nothing to import.
"""

__version__ = "0.1.0"
