"""The public surface of ``golem_cli.core``: the modules ``PUBLIC`` names, each name in one
``__all__``, defined where it is listed; and a program that embeds the runtime through it."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import subprocess
import sys

import pytest
from golem_cli.core import PUBLIC

MODULES = [importlib.import_module(name) for name in PUBLIC]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_each_public_module_lists_names_defined_in_it(module):
    assert module.__all__ == sorted(set(module.__all__), key=module.__all__.index), "listed twice"
    for name in module.__all__:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__ == module.__name__, f"{name} is defined in {value.__module__}"


def test_no_name_is_public_in_two_modules():
    seen: dict[str, str] = {}
    for module in MODULES:
        for name in module.__all__:
            assert name not in seen, f"{name} is public in {seen[name]} and {module.__name__}"
            seen[name] = module.__name__


def test_the_package_itself_imports_nothing():
    code = "import sys, golem_cli.core; print(sorted(m for m in sys.modules if m.startswith('golem_cli.core.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_program_embeds_the_runtime_through_the_public_names(tmp_path):
    from golem_cli.core.agent import Agent
    from golem_cli.core.codec.history import dump_history, load_history
    from golem_cli.core.errors import HistoryFormatError
    from golem_cli.core.history.repair import normalize_history
    from golem_cli.core.messages import ASSISTANT, USER, Message, ToolCall
    from golem_cli.core.model import TextDelta
    from golem_cli.core.offline import EchoModel
    from golem_cli.core.runconfig import RunHooks

    # a file another program left with a call that never got its result
    path = tmp_path / "conversation.json"
    path.write_bytes(
        dump_history(
            [Message(role=USER, content="roll"), Message(role=ASSISTANT, tool_calls=[ToolCall(id="c1", name="roll")])]
        )
    )
    history, repair = normalize_history(load_history(path.read_bytes()))
    assert repair.changed

    deltas: list[str] = []
    hooks = RunHooks(on_event=lambda e: deltas.append(e.text) if isinstance(e, TextDelta) else None)
    result = asyncio.run(Agent(EchoModel()).run_stream_with_history(history, "and now?", hooks=hooks))
    assert "".join(deltas) == result.output
    path.write_bytes(dump_history(history + result.new_messages))

    again = load_history(path.read_bytes())
    assert [m.role for m in again] == ["user", "assistant", "tool", "user", "assistant"]
    assert again[-1].conversation_id == result.conversation_id
    with pytest.raises(HistoryFormatError):
        load_history(b"{")
