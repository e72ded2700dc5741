"""``golem_run``: golem's real entry point called in the test's own process (``golem_main``,
tests/inprocess.py) in this folder's ``home``, for the tests here whose subject is what a
command prints, saves and sends rather than a process or a terminal."""

from __future__ import annotations

from typing import Any

import pytest

from tests.inprocess import Result


@pytest.fixture
def golem_run(golem_main: Any) -> Any:
    """``golem_run(*args, input="", code=0)``: ``golem *args`` with ``input`` on its standard
    input (a chat reads its prompts from there, one a line), the terminal size the chats of
    this folder have, its exit code checked."""

    def run(*args: str, input: str = "", code: int = 0) -> Result:
        done = golem_main(*args, input=input, env={"COLUMNS": "120", "LINES": "40"})
        assert done.code == code, done.err
        return done

    return run
