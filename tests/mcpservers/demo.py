"""The demo tool server (``demo_app.py``) as a program over stdio, for the tests about a
server's process: its start, its exit, a kill or a crash mid-call, a cancellation. ``--name
NAME`` names it; ``--marks DIR`` is where tools leave files that say what happened inside the
server; ``--instructions TEXT`` gives the server instructions for the model. ``--start-gate
FILE`` makes it slow to start: it leaves its pid in ``starting`` and answers nothing until
FILE exists (the test opens the gate when it wants the server ready); ``--exit-at-start
STATUS`` makes it exit instead. Both act before the SDK is imported (seconds of CPU): a server
that never serves does not pay for it."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="demo")
    parser.add_argument("--marks", default="")
    parser.add_argument("--exit-at-start", type=int, default=None)
    parser.add_argument("--start-gate", default="")
    parser.add_argument("--instructions", default=None)
    options = parser.parse_args()
    if options.exit_at_start is not None:
        sys.stderr.write("demo: refusing to start (told to)\n")
        sys.exit(options.exit_at_start)
    marks = Path(options.marks) if options.marks else None
    if options.start_gate:  # a server slow to start: it answers nothing until the gate is open
        if marks is not None:
            (marks / "starting").write_text(str(os.getpid()))
        while not os.path.exists(options.start_gate):
            time.sleep(0.02)
    from demo_app import build  # beside this file, the first entry of sys.path

    build(options.name, marks, options.instructions).run()


if __name__ == "__main__":
    main()
