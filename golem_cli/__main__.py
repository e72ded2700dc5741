"""Entry point of the ``golem`` console script.

``--version`` is answered here, before typer, rich or anything else is imported, so the
cheapest question costs only the interpreter's start-up.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        from golem_cli import __version__

        sys.stdout.write(f"golem {__version__}\n")
        return 0
    from golem_cli.cli.app import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
