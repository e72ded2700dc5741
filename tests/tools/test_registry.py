"""Sources, names, groups and selection; the approval policy as the core's hook, end to end
through a real run (a denied write never touches the disk)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golem_cli.core.agent import Agent
from golem_cli.core.messages import ToolCall
from golem_cli.core.runconfig import RunHooks
from golem_cli.core.tools import SchemaTool, Tool
from golem_cli.tools.approval import Answer, Approvals, Question, format_arguments
from golem_cli.tools.builtin import BuiltinSource, ToolSettings
from golem_cli.tools.registry import Registry, ToolEntry, ToolSelectionError

from tests.scripted import ScriptedModel, Step, reply
from tests.tools.conftest import run

BUILTINS = ["read_file", "list_files", "search_files", "write_file", "edit_file", "run_command", "fetch_url"]


class FakeServer:
    """What an MCP source will look like: tools named SERVER__TOOL, grouped by server."""

    def __init__(self, name: str, tools: list[str], *, approval: bool = True) -> None:
        self.name = f"mcp:{name}"
        self._entries = [
            ToolEntry(tool=SchemaTool(f"{name}__{t}", f"{t} on {name}", {"type": "object"}, lambda a, c: "ok"),
                      source=self.name, group=name, needs_approval=approval, own_name=t)
            for t in tools
        ]  # fmt: skip

    def entries(self) -> list[ToolEntry]:
        return self._entries

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass


def test_selection_by_name_group_source_tool_and_all(tmp_path: Path):
    registry = Registry([BuiltinSource(ToolSettings(root=tmp_path)), FakeServer("gh", ["search", "open"])])
    names = lambda sel: [e.name for e in registry.select(sel)]  # noqa: E731
    assert names(["all"]) == BUILTINS
    assert names(["fs"]) == BUILTINS[:5]
    assert names(["shell", "read_file", "web"]) == ["read_file", "run_command", "fetch_url"]
    assert names(["gh"]) == ["gh__search", "gh__open"]
    assert names(["gh.open", "gh__search"]) == ["gh__search", "gh__open"]
    assert names([" fs ", "", "fs"]) == BUILTINS[:5]
    with pytest.raises(ToolSelectionError, match="no tool or group named 'fss'") as info:
        registry.select(["fss"])
    assert info.value.hint == "`golem tools` lists the tools; groups: fs, gh, shell, web, all"
    assert registry.groups()["shell"] == ["run_command"]
    assert [e.source for e in registry.entries()][-1] == "mcp:gh"
    assert [e.tool.name for e in registry.select(["web"])] == ["fetch_url"]


def test_names_must_be_valid_for_both_providers_and_unique(tmp_path: Path):
    with pytest.raises(ToolSelectionError, match="has a name providers refuse"):
        Registry([FakeServer("bad.name", ["x"])])
    with pytest.raises(ToolSelectionError, match="has a name providers refuse"):
        Registry([FakeServer("s", ["x" * 64])])
    clash = FakeServer("x", [])
    clash._entries = [ToolEntry(tool=Tool(lambda: "", name="read_file"), source=clash.name, group="x", needs_approval=True)]
    with pytest.raises(ToolSelectionError, match="'read_file' is offered by both builtin and mcp:x"):
        Registry([BuiltinSource(ToolSettings(root=tmp_path)), clash])


def test_builtin_policy_and_summaries(tmp_path: Path):
    registry = Registry([BuiltinSource(ToolSettings(root=tmp_path))])
    need = {e.name: e.needs_approval for e in registry.entries()}
    assert need == {"read_file": False, "list_files": False, "search_files": False, "write_file": True,
                    "edit_file": True, "run_command": True, "fetch_url": True}  # fmt: skip
    assert all(e.summary and "\n" not in e.summary for e in registry.entries())


def write_call(path: str = "out.txt", content: str = "hi\n", id: str = "w1") -> Step:
    args = json.dumps({"path": path, "content": content})
    return Step(tool_calls=[ToolCall(id=id, name="write_file", args=args)])


def one_run(registry: Registry, approvals: Approvals, steps: list[Step]):
    agent = Agent(ScriptedModel(steps), tools=[e.tool for e in registry.entries()], undeclared_tools="answer")
    return run(agent.run_with_history([], "go", hooks=RunHooks(approve=approvals)))


def results(result) -> list[tuple[str, bool]]:
    return [(m.content, m.failed) for m in result.messages if m.role == "tool"]


def test_without_anyone_to_ask_a_call_is_denied_and_never_runs(tmp_path: Path):
    registry = Registry([BuiltinSource(ToolSettings(root=tmp_path))])
    result = one_run(registry, Approvals(registry), [write_call(), reply("ok")])
    assert results(result) == [
        ("Your tool call was denied: it needs the user's approval and nobody can be asked here (no terminal); "
         "the user can approve it with --yes or --allow write_file. Do not call it again; continue without its result.", True)
    ]  # fmt: skip
    assert not (tmp_path / "out.txt").exists()


def test_yes_and_allow_approve_without_asking(tmp_path: Path):
    registry = Registry([BuiltinSource(ToolSettings(root=tmp_path))])
    one_run(registry, Approvals(registry, yes=True), [write_call("a.txt"), reply("ok")])
    one_run(registry, Approvals(registry, allow=["fs"]), [write_call("b.txt"), reply("ok")])
    assert (tmp_path / "a.txt").read_text() == (tmp_path / "b.txt").read_text() == "hi\n"
    with pytest.raises(ToolSelectionError):
        Approvals(registry, allow=["nope"])


def test_answers_yes_always_and_no_with_a_reason(tmp_path: Path):
    registry = Registry([BuiltinSource(ToolSettings(root=tmp_path))])
    asked: list[Question] = []
    answers = [Answer("yes"), Answer("no", " not there "), Answer("always")]

    async def ask(question: Question) -> Answer:
        asked.append(question)
        return answers.pop(0)

    approvals = Approvals(registry, ask=ask)
    steps = [write_call("1.txt", id="a"), write_call("2.txt", id="b"), write_call("3.txt", id="c"),
             write_call("4.txt", id="d"), Step(tool_calls=[ToolCall(id="r", name="read_file", args='{"path":"1.txt"}')]),
             reply("done")]  # fmt: skip
    result = one_run(registry, approvals, steps)
    assert [q.arguments for q in asked] == [f"path: {n}.txt\ncontent:\n  hi" for n in (1, 2, 3)]
    assert asked[0].tool == "write_file" and asked[0].source == "builtin"
    assert asked[0].preview.splitlines()[:2] == ["--- /dev/null", "+++ b/1.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1.txt", "3.txt", "4.txt"]  # 4: allowed by "always"
    assert results(result)[1] == (
        "Your tool call was denied: not there. Do not call it again; continue without its result.", True
    )
    assert results(result)[4] == ("hi\n", False)  # read_file needs no question
    assert approvals.allowed == {"write_file"}


def test_a_failing_preview_never_decides_the_call(tmp_path: Path):
    def broken(args: dict) -> str:
        raise RuntimeError("boom")

    source = FakeServer("s", ["t"])
    source._entries = [ToolEntry(tool=Tool(lambda: "ran", name="t"), source=source.name, group="s", needs_approval=True,
                                 preview=broken)]
    registry = Registry([source])
    seen: list[Question] = []

    async def ask(question: Question) -> Answer:
        seen.append(question)
        return Answer("yes")

    result = one_run(registry, Approvals(registry, ask=ask), [Step(tool_calls=[ToolCall(id="x", name="t")]), reply("k")])
    assert seen[0].preview == "(no preview: boom)" and results(result) == [("ran", False)]


def test_format_arguments():
    assert format_arguments({"a": 1, "b": "x", "c": "l1\nl2", "d": [1, "é"]}) == 'a: 1\nb: x\nc:\n  l1\n  l2\nd: [1, "é"]'
