"""Which tools a chat starts with: ``-T`` on top of ``tools = [...]`` in the config, ``--allow``
on top of ``allow = [...]``, ``--yes``, and the tool servers of ``[mcp_servers.NAME]``. A chat
without any tool imports nothing of the tools layer; ``/tools`` builds the toolbox when it is
first needed. Tool servers start later, in the chat's event loop (``tool_servers.py``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct, field

if TYPE_CHECKING:
    from golem_cli.cli.tools.view import ToolView
    from golem_cli.config.project import ProjectRules
    from golem_cli.config.settings import Settings
    from golem_cli.tools.toolbox import Toolbox


def choose_tools(
    settings: Settings, tool: list[str] | None, allow: list[str] | None, yes: bool, *, deny: list[str] | None = None
) -> ToolChoice:
    """A command's tools from ``-T``, ``--allow``, ``--deny`` and ``--yes``, checked
    (``check``), its notes said on stderr."""
    from golem_cli.cli.render.console import note

    choice = ToolChoice(settings, list(tool or ()), list(allow or ()), yes, list(deny or ()))
    choice.project = project_rules(settings)
    for line in choice.check():
        note(line)
    return choice


class ToolChoice(Struct):
    settings: Settings
    tool: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    yes: bool = False
    deny: list[str] = field(default_factory=list)
    #: The project's ``.golem/config.toml``, when the person trusts it as it is now.
    project: ProjectRules | None = None
    _box: Toolbox | None = None

    #: The tools and disabled tools a resumed chat restores (cli/restore.py), enabled after the
    #: others; one that no longer selects anything is left out with a line.
    restored: list[str] = field(default_factory=list)
    off: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # why a restored name was left out

    @property
    def configured(self) -> list[str]:
        """The tools the config and the trusted project file enable."""
        return [*self.settings.tools, *(self.project.tools if self.project else ())]

    @property
    def names(self) -> list[str]:
        return [*self.configured, *self.tool, *self.restored]

    def restore(self, names: list[str], off: list[str]) -> None:
        """Enable ``names`` and disable ``off`` as well (kept with a resumed conversation)."""
        self.restored, self.off = list(names), list(off)
        if self._box is not None:
            self._apply_restored(self._box)

    def _apply_restored(self, box: Toolbox) -> None:
        from golem_cli.tools.registry import ToolSelectionError

        for name in list(self.restored):
            try:
                box.enable([name])
            except ToolSelectionError as e:
                self.restored.remove(name)
                self.left_out.append(f"left out the tool {name} kept with this conversation: {e}")
        for name in self.off:
            try:
                box.disable([name])
            except ToolSelectionError:
                continue  # a tool gone since: nothing to disable

    def toolbox(self) -> Toolbox | None:
        """The chat's toolbox, or None when no tool is enabled (nothing to import)."""
        if not self.names:
            return None
        return self.ensure()

    def ensure(self) -> Toolbox:
        """The toolbox, built on first use. An unknown name is a ``ToolSelectionError``
        saying where it was written (the config file, ``-T``, ``--allow``); a ``tool_root``
        that is not a directory is a ``ConfigError`` naming the file."""
        if self._box is None:
            from golem_cli.config.paths import state_dir
            from golem_cli.providers.resolve import key_variables
            from golem_cli.tools.registry import ToolSelectionError
            from golem_cli.tools.rules import RuleError
            from golem_cli.tools.toolbox import toolbox

            s = self.settings
            root = self._root()
            ours = self.project
            try:
                self._box = toolbox(
                    enabled=[*self.configured, *self.tool],
                    allow=[*s.allow, *(ours.allow if ours else ()), *self.allow],
                    deny=[*s.deny, *(ours.deny if ours else ()), *self.deny], yes=self.yes, root=root,
                    output_limit=s.tool_output_limit, command_timeout=s.command_timeout, servers=s.mcp_servers,
                    command_env=s.command_env, key_variables=key_variables(s.providers),
                    tokens=state_dir() / "mcp-auth" if s.mcp_servers else None,
                )  # fmt: skip
            except (ToolSelectionError, RuleError) as e:
                raise self._located(e) from None
            self._box.approvals.remember = self._remember
            self._apply_restored(self._box)
        return self._box

    def _remember(self, rules: tuple[str, ...]) -> str:
        """``a`` remembered for the project: the rules written to its file (trusted as
        written); where they went, in words."""
        from golem_cli.config.project import remember

        self.project = remember(_tool_root(self.settings), rules)
        return str(self.project.path)

    def check(self) -> list[str]:
        """Refuse ``--allow`` names that allow nothing here, before anything starts: an
        unknown name, or a tool this chat does not enable (``--allow`` waives the question,
        it does not enable: ``-T`` says what the model may use, so one flag never widens it
        unseen, and ``allow = [...]`` in the config stays a standing policy that enables
        nothing). Returns notes for flags that have no effect (``--yes`` without tools)."""
        if not self.allow and not (self.yes and not self.names):
            return []
        box = self.ensure()
        for name in self.allow:
            if box.registry.waiting_for(name) is None:  # a tool server's is checked once it has started
                _refuse_unused_allow(box, name.split("(", 1)[0] if name.rstrip().endswith(")") else name)
        if self.yes and not self.names:
            return ["golem: --yes has no effect: no tool is enabled (add -T fs, shell, web or all)"]
        return []

    def _root(self) -> str | None:
        from pathlib import Path

        root = self.settings.tool_root
        if root is not None and not Path(root).expanduser().is_dir():
            from golem_cli.config.settings import ConfigError

            where = self.settings.source or "config.toml"
            missing = not Path(root).expanduser().exists()
            raise ConfigError(f"{where}: tool_root {root!r} {'does not exist' if missing else 'is not a directory'}")
        return root

    def _located(self, error: Exception) -> Exception:
        """``error`` naming the config file when the name was written there."""
        from golem_cli.tools.registry import ToolSelectionError
        from golem_cli.tools.rules import RuleError

        name = getattr(error, "name", "")
        s = self.settings
        if not name or not isinstance(error, (ToolSelectionError, RuleError)):
            return error
        typed = (*self.tool, *self.allow, *self.deny)
        if name in typed or not (name in s.tools or name in s.allow or name in s.deny):
            return error  # typed on the command line: the name says it
        key = "tools" if name in s.tools else "allow" if name in s.allow else "deny"
        where = f"{s.source or 'config.toml'}: {key}"
        located = type(error)(f"{where}: {error}", hint=error.hint)
        located.name = name
        return located

    def stderr_view(self) -> ToolView:
        """For ``golem ask``: calls and results on stderr (stdout is the reply), questions on
        the terminal when there is one."""
        from golem_cli.cli.render.console import rich_console
        from golem_cli.cli.tools.typeahead import KeysAfterAnswer
        from golem_cli.cli.tools.view import ToolView

        # No prompt follows in ``ask``: keys typed after a one-key answer stay in the terminal
        # (for a next question, or the shell), not read and dropped after the answer.
        view = ToolView(rich_console(stderr=True), after_answer=KeysAfterAnswer(reads=False))
        if self._box is not None:
            self._box.hooks.progress = view.progress
            self._box.approvals.shown = view.waived
            if can_ask():
                self._box.approvals.ask = view.ask
                self._box.hooks.elicit = view.elicit
        return view


def _tool_root(settings: Settings) -> Path:
    return Path(settings.tool_root).expanduser() if settings.tool_root else Path.cwd()


def project_rules(settings: Settings) -> ProjectRules | None:
    """The project file's rules when the person trusts the file as it is now: asked once on
    the terminal (again when the file changed), else left out with a line saying how to
    trust it."""
    from golem_cli.cli.render.console import note
    from golem_cli.config.project import read_project_rules, trust, trusted

    rules = read_project_rules(_tool_root(settings))
    if rules is None:
        return None
    for problem in rules.problems:
        note(f"golem: {problem}")
    if rules.empty or trusted(rules):
        return rules if not rules.empty else None
    if not can_ask():
        note(f"golem: {rules.path} is not trusted, its rules are left out ({rules.described()}); "
             "run golem in a terminal there once to trust it")  # fmt: skip
        return None
    sys.stderr.write(f"{rules.path} sets rules for this project: {rules.described()}\n")
    try:
        answer = input("Trust this file (asked again when it changes)? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        note("golem: the project file's rules are left out")
        return None
    trust(rules)
    return rules


def can_ask() -> bool:
    """A person can answer a question: stdin and stderr are both a terminal."""
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _refuse_unused_allow(box: Toolbox, name: str) -> None:
    """An ``InputError`` when ``--allow name`` names tools none of which this chat enables."""
    from golem_cli.core.errors import InputError

    chosen = [e for e in box.registry.entries() if e.name in box.registry.allowable([name])]
    if chosen and not any(box.is_enabled(e.name) or e.name in box.waiting for e in chosen):
        groups = " -T ".join(sorted({e.group for e in chosen}))
        what = f"{chosen[0].name} is not" if len(chosen) == 1 else f"none of its {len(chosen)} tools is"
        raise InputError(
            f"--allow {name}: {what} enabled in this chat (--allow skips the question, -T enables); add -T {groups}"
        )
