"""The rule syntax (``tools/rules.py``): patterns over commands, paths and URLs, the shell
splitter that allows a compound command only when every part is allowed, and the approval
hook applying allow and deny rules (deny wins) through a real run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golem_cli.core.messages import ToolCall
from golem_cli.tools.approval import Answer, Approvals, Question
from golem_cli.tools.builtin import BuiltinSource, ToolSettings
from golem_cli.tools.registry import Registry, ToolSelectionError
from golem_cli.tools.rules import (
    RuleError,
    RuleSet,
    Unclassifiable,
    command_parts,
    compile_pattern,
    normal_url,
    parse_rule,
    parse_rules,
    relative_path,
    suggestions,
)
from hypothesis import given
from hypothesis import strategies as st

from tests.scripted import Step, reply
from tests.tools.test_registry import one_run, results


def test_rules_are_read_as_a_tool_with_an_optional_pattern():
    assert parse_rule(" run_command(git status*) ").text == "run_command(git status*)"
    assert parse_rule("run_command(git status*)").pattern == "git status*"
    assert parse_rule("read_file").pattern is None
    assert parse_rule("github.get_*").tool == "github.get_*"  # a name pattern, as -T selects
    assert parse_rule("run_command(echo (a))").pattern == "echo (a)"
    for bad in ("run_command()", "run_command(", "fs.*(x)", "bad name(x)", "(x)"):
        with pytest.raises(RuleError):
            parse_rule(bad)
    assert [r.text for r in parse_rules(["a", " ", "b(c)"])] == ["a", "b(c)"]


@pytest.mark.parametrize(
    ("pattern", "kind", "yes", "no"),
    [
        ("git status", "command", ["git status"], ["git status -s", "git statu"]),
        ("git status*", "command", ["git status", "git status -s", "git statusx"], ["git stat", "xgit status"]),
        ("pytest *", "command", ["pytest", "pytest -q tests/a.py"], ["pytestx", "py"]),
        ("ls \\*.py", "command", ["ls *.py"], ["ls a.py"]),
        ("src/**", "path", ["src/a", "src/a/b/c.py"], ["srcx/a", "lib/src/a"]),
        ("docs/*.md", "path", ["docs/a.md"], ["docs/a/b.md", "docs/a.txt"]),
        ("src/**/test_*.py", "path", ["src/test_a.py", "src/x/y/test_b.py"], ["src/x/a.py"]),
        ("a?[b]", "path", ["a?[b]"], ["ax[b]", "axb"]),
        ("https://docs.python.org/*", "url", ["https://docs.python.org/3/"], ["https://docs.python.org.evil/"]),
        ("http://127.0.0.1:*", "url", ["http://127.0.0.1:8080/x"], ["http://127.0.0.1/"]),
    ],
)
def test_patterns(pattern, kind, yes, no):
    compiled = compile_pattern(pattern, kind)
    assert [s for s in yes if compiled.fullmatch(s)] == yes
    assert [s for s in no if compiled.fullmatch(s)] == []


@pytest.mark.parametrize(
    ("line", "parts"),
    [
        ("git status", ["git status"]),
        ("git   status  ", ["git status"]),
        ("git status && rm -rf /", ["git status", "rm -rf /"]),
        ("a || b; c | d & e |& f\ng", ["a", "b", "c", "d", "e", "f", "g"]),
        ("(cd sub && make)", ["cd sub", "make"]),
        ("echo $(date) | wc -l", ["date", "echo $(date)", "wc -l"]),
        ('echo "$(rm x)"', ["rm x", "echo $(rm x)"]),
        ("diff <(ls a) <(ls b)", ["ls a", "ls b", "diff <(ls a) <(ls b)"]),
        ("""echo "a;b" 'c|d' e\\;f""", ["echo a;b c|d e;f"]),
        ("make 2>&1 >/dev/null", ["make 2>&1 >/dev/null"]),
        ("wc -l < in.txt", ["wc -l <in.txt"]),
        ("FOO=1 git status", ["FOO=1 git status"]),
        ("echo ${HOME} $PATH", ["echo ${HOME} $PATH"]),
    ],
)
def test_the_splitter_finds_every_command_a_line_runs(line, parts):
    assert command_parts(line) == parts


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("echo `id`", "backticks"),
        ('echo "`id`"', "backticks"),
        ("eval rm x", "eval"),
        ("sh -c 'rm x'", "sh -c"),
        ("/bin/bash -lc 'rm x'", "bash -c"),
        ("cat <<EOF\nx\nEOF", "here-document"),
        ("ls > out.txt", "redirection to a file"),
        ("ls >> out.txt", "redirection to a file"),
        ("ls &> out.txt", "redirection to a file"),
        ("for f in *; do rm $f; done", "shell syntax"),
        ("if true; then rm x; fi", "shell syntax"),
        ("ls # && rm x", "comment"),
        ("$CMD x", "variable"),
        ("echo $((1+2))", "arithmetic"),
        ("echo 'open", "unclosed"),
        ('echo "open', "unclosed"),
        ("echo (x", "function"),
        ("(echo x", "unclosed"),
        ("echo x)", "unmatched"),
        ("&& ls", "no command before"),
        ("f() { rm x; }", "function"),
        ("echo $'a'", "quoting"),
        ("echo ${x:-$(rm y)}", "expansion"),
        ("", "empty"),
    ],
)
def test_what_the_splitter_cannot_classify_it_says(line, why):
    with pytest.raises(Unclassifiable, match=why):
        command_parts(line)


def test_paths_and_urls_as_rules_see_them():
    assert relative_path("./a/../b", "/r") == "b"
    assert relative_path("/r/src/x.py", "/r") == "src/x.py"
    assert relative_path(".", "/r") == "."
    assert relative_path("../r2/x", "/r") is None
    assert relative_path("/etc/passwd", "/r") is None
    assert normal_url("HTTPS://user:pw@Docs.Python.org") == "https://docs.python.org/"
    assert normal_url("http://[::1]:8080/a?b=c") == "http://[::1]:8080/a?b=c"


def rules(allow=(), deny=()) -> RuleSet:
    return RuleSet(allow=parse_rules(allow), deny=parse_rules(deny))


def test_compound_commands_are_allowed_only_when_every_part_is_and_deny_wins():
    r = rules(allow=["run_command(git status*)", "run_command(pytest *)"], deny=["run_command(git push*)"])
    assert r.decide("run_command", "command", "git status && pytest -q").verdict == "allow"
    assert r.decide("run_command", "command", "git status && rm -rf x").verdict == "ask"
    assert r.decide("run_command", "command", "git status; echo $(rm -rf x)").verdict == "ask"
    assert r.decide("run_command", "command", "git status `rm -rf x`").verdict == "ask"
    denied = r.decide("run_command", "command", "git status && git push --force")
    assert denied.verdict == "deny" and denied.rule is not None and denied.rule.text == "run_command(git push*)"
    assert r.decide("run_command", "command", "git push `x`").verdict == "deny"  # unclassifiable: the whole line
    both = rules(allow=["run_command(git *)"], deny=["run_command(git push*)"])
    assert both.decide("run_command", "command", "git push").verdict == "deny"
    assert both.decide("write_file", "path", "x").verdict == "ask"  # another tool's rules never apply


def test_paths_outside_the_root_match_no_allow_rule():
    r = rules(allow=["write_file(**)"])
    assert r.decide("write_file", "path", "a/b", "/r").verdict == "allow"
    assert r.decide("write_file", "path", "../x", "/r").verdict == "ask"


def test_what_the_a_answer_offers():
    offered = suggestions("run_command", "command", "git status -s && ls -la")
    assert [(label, [r.text for r in rs]) for label, rs in offered] == [
        ("these 2 exact commands", ["run_command(git status -s)", "run_command(ls -la)"]),
        ("commands starting git status, ls", ["run_command(git status *)", "run_command(ls *)"]),
    ]
    assert suggestions("run_command", "command", "ls `x`") == []
    assert [rs[0].text for _, rs in suggestions("run_command", "command", "ls")] == ["run_command(ls)", "run_command(ls *)"]
    assert [rs[0].text for _, rs in suggestions("write_file", "path", "src/a/b.py", "/")] == [
        "write_file(src/a/b.py)",
        "write_file(src/a/**)",
    ]
    assert [rs[0].text for _, rs in suggestions("fetch_url", "url", "https://a.b/c?d")] == [
        "fetch_url(https://a.b/c?d)",
        "fetch_url(https://a.b/*)",
    ]


def test_an_exact_rule_of_a_command_with_stars_matches_only_it():
    [(_, [exact]), _] = suggestions("run_command", "command", "rm *.tmp")
    r = RuleSet(allow=[exact])
    assert r.decide("run_command", "command", "rm *.tmp").verdict == "allow"
    assert r.decide("run_command", "command", "rm a.tmp").verdict == "ask"


_SHELLISH = st.text(alphabet="ab $();&|`'\"<>\\\n#{}=", max_size=30)


@given(_SHELLISH)
def test_a_line_with_an_unquoted_backtick_is_never_allowed_and_what_splits_is(line):
    r = rules(allow=["run_command(*)"])
    verdict = r.decide("run_command", "command", line).verdict
    if "`" in line and "'" not in line and "\\" not in line:
        assert verdict == "ask"
    try:
        parts = command_parts(line)
    except Unclassifiable:
        assert verdict == "ask"
    else:
        assert verdict == "allow" and parts


# --- the approval hook ------------------------------------------------------------------------


def command_call(command: str, id: str = "c1") -> Step:
    return Step(tool_calls=[ToolCall(id=id, name="run_command", args=json.dumps({"command": command}))])


def write_call(path: str, id: str = "w1") -> Step:
    return Step(tool_calls=[ToolCall(id=id, name="write_file", args=json.dumps({"path": path, "content": "x"}))])


def test_allow_rules_run_calls_without_a_question_and_show_them(tmp_path: Path):
    registry = Registry([BuiltinSource(ToolSettings(root=tmp_path))])
    asked: list[Question] = []
    shown: list[tuple[str, str]] = []

    async def ask(question: Question) -> Answer:
        asked.append(question)
        return Answer("no")

    approvals = Approvals(registry, allow=["run_command(echo *)", "write_file(src/**)"], ask=ask, root=str(tmp_path))
    approvals.shown = lambda q, why: shown.append((q.preview.splitlines()[0], why))
    (tmp_path / "src").mkdir()
    steps = [command_call("echo hi && echo there"), command_call("echo hi; touch x", "c2"), write_call("src/a.py"),
             write_call("b.py", "w2"), reply("done")]  # fmt: skip
    result = one_run(registry, approvals, steps)
    assert [q.preview.splitlines()[0] for q in asked] == ["$ echo hi; touch x", "--- /dev/null"]
    assert shown == [("$ echo hi && echo there", "allow run_command(echo *)"), ("--- /dev/null", "allow write_file(src/**)")]
    assert (tmp_path / "src" / "a.py").exists() and not (tmp_path / "b.py").exists() and not (tmp_path / "x").exists()
    assert results(result)[0][0].endswith("hi\nthere")


def test_deny_wins_over_allow_and_yes_even_for_tools_that_never_ask(tmp_path: Path):
    registry = Registry([BuiltinSource(ToolSettings(root=tmp_path))])
    (tmp_path / ".env").write_text("SECRET")
    approvals = Approvals(
        registry, yes=True, allow=["shell", "run_command(*)"], deny=["run_command(rm *)", "read_file(.env)"],
        root=str(tmp_path),
    )  # fmt: skip
    (tmp_path / "keep").write_text("")
    steps = [command_call("ls && rm keep"), Step(tool_calls=[ToolCall(id="r", name="read_file", args='{"path":".env"}')]),
             reply("done")]  # fmt: skip
    got = results(one_run(registry, approvals, steps))
    assert got == [
        ("Your tool call was denied: the user's rule deny run_command(rm *) refuses it. Do not call it again; "
         "continue without its result.", True),
        ("Your tool call was denied: the user's rule deny read_file(.env) refuses it. Do not call it again; "
         "continue without its result.", True),
    ]  # fmt: skip
    assert (tmp_path / "keep").exists()
    whole = Approvals(registry, yes=True, deny=["shell"])
    assert "run_command" in whole.denied
    assert whole.rule_list() == [("deny", "shell")]


def test_rules_naming_unknown_tools_or_tools_without_patterns_are_refused(tmp_path: Path):
    registry = Registry([BuiltinSource(ToolSettings(root=tmp_path))])
    with pytest.raises(ToolSelectionError, match="nope"):
        Approvals(registry, allow=["nope(x)"])
    with pytest.raises(RuleError, match="takes no pattern"):
        from tests.tools.test_registry import FakeServer

        server_registry = Registry([FakeServer("gh", ["search"])])
        Approvals(server_registry, allow=["gh__search(x)"])
