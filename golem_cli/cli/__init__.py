"""golem's command line: the only layer that prints or reads keys.

``app.run(args)`` is the entry point; each command group lives in its own module and imports
what it needs inside its commands, so ``golem list`` never pays for markdown rendering.
"""
