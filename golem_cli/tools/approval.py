"""Who says yes: the approval policy of a chat, as the core's approval hook.

A call a ``deny`` rule matches is denied, whatever else allows it. A call of a tool that needs
approval runs when the whole run was approved (``--yes``), when its tool was allowed
(``--allow NAME``, the config, or ``a`` at an earlier question), when an allow rule with a
pattern matches it (``run_command(git status*)``: the syntax is ``rules.py``'s), or when the
person answers ``y``. Otherwise it is denied: with the person's reason when they answer ``n``,
or because nobody can be asked (no terminal, a script) — never run. A denial is a ``failed``
result the model reads, so nothing is silently dropped. A call that runs without a question
is still shown (``shown``), so what ran is on the screen.

The question itself is the CLI's (``ask``, given a ``Question``); this module knows nothing
of terminals. Ctrl-C at the question surfaces from ``ask`` as ``KeyboardInterrupt`` (or the
task's cancellation), which the core turns into a stop that closes the batch.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Literal

from msgspec import Struct

from golem_cli.core.tools import APPROVED, Approval, ApprovalRequest, ToolFailed
from golem_cli.tools.registry import Registry, ToolEntry, ToolSelectionError
from golem_cli.tools.rules import PATH, Decision, Rule, RuleError, RuleSet, parse_rule, suggestions

Choice = Literal["yes", "always", "no"]

NO_TERMINAL = (
    "it needs the user's approval and nobody can be asked here (no terminal); "
    "the user can approve it with --yes or --allow {name}"
)


class Question(Struct, frozen=True, kw_only=True):
    """What the person is shown: the tool, where it comes from, and the call; ``offers``, what
    an ``a`` answer may allow from now on (a label and its rules, narrowest first; the whole
    tool last)."""

    tool: str
    source: str
    arguments: str  # the arguments as the model sent them, formatted
    preview: str  # the tool's own rendering (a diff, the command); "" when it has none
    offers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    call_id: str = ""


class Answer(Struct, frozen=True):
    choice: Choice
    reason: str = ""  # a denial's reason, read by the model
    rules: tuple[str, ...] = ()  # with "always": what to allow from now on (the tool when empty)
    remember: bool = False  # with "always": also for the project (its .golem/config.toml)


Ask = Callable[[Question], Awaitable[Answer]]
#: Hears a call that runs without a question, with why (``--yes``, the rule that allowed it).
Shown = Callable[[Question, str], None]


class Approvals:
    """The approval hook of one chat (``RunHooks.approve``); ``allowed`` grows with ``a``
    answers and ``/tools allow`` for the rest of the session. ``root`` is the tool root the
    path rules are relative to."""

    def __init__(
        self,
        registry: Registry,
        *,
        yes: bool = False,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        ask: Ask | None = None,
        root: str = "/",
    ) -> None:
        self.registry = registry
        self.yes = yes
        self.root = root
        self.allowed: set[str] = set()
        #: Tools denied whole, each with the rule that named it.
        self.denied: dict[str, Rule] = {}
        #: The rules with a pattern (``run_command(git status*)``).
        self.rules = RuleSet()
        #: ``allow`` names of tool servers that have not started yet (``refresh`` reads them).
        self.waiting: list[str] = []
        self._waiting_deny: list[str] = []
        self.ask = ask
        self.shown: Shown | None = None
        #: Writes rules to the project's file (the CLI's: the tools layer writes no config);
        #: returns where they went. None: nothing can be remembered for the project.
        self.remember: Callable[[tuple[str, ...]], str] | None = None
        self.deny(deny)
        self.allow(allow)

    def allow(self, names: Iterable[str]) -> list[str]:
        """Waive approval for what ``names`` select (a destructive tool only by its own name),
        or for the calls a rule with a pattern matches; names of a tool server not started
        yet wait for it. Returns the tools (and rules) allowed now."""
        plain, patterned = self._parted(names)
        self.rules.allow.extend(r for r in patterned if r not in self.rules.allow)
        now, waiting = self.registry.split_waiting(plain)
        self.waiting.extend(waiting)
        found = self.registry.allowable(now)
        self.allowed |= found
        return sorted(found) + [r.text for r in patterned]

    def deny(self, names: Iterable[str]) -> list[str]:
        """Refuse every call of what ``names`` select, or the calls a rule with a pattern
        matches. Returns the tools (and rules) denied now."""
        plain, patterned = self._parted(names)
        self.rules.deny.extend(r for r in patterned if r not in self.rules.deny)
        now, waiting = self.registry.split_waiting(plain)
        self._waiting_deny.extend(waiting)
        found = self._deny_names(now)
        return sorted(found) + [r.text for r in patterned]

    def _deny_names(self, names: Iterable[str]) -> set[str]:
        found: set[str] = set()
        for name in names:
            for entry in self.registry.select([name]):
                self.denied.setdefault(entry.name, parse_rule(name))
                found.add(entry.name)
        return found

    def _parted(self, names: Iterable[str]) -> tuple[list[str], list[Rule]]:
        """``names`` parted into plain names (the registry selects by them) and rules with a
        pattern, each checked against the tool it names."""
        plain: list[str] = []
        patterned: list[Rule] = []
        for name in names:
            if not name.strip():
                continue
            rule = parse_rule(name)
            if rule.pattern is None:
                plain.append(name.strip())
                continue
            entry = self.registry.entry(rule.tool)
            if entry is None:
                error = ToolSelectionError(f"{rule.text}: {no_such_tool(self.registry, rule.tool)}")
                error.name = rule.text
                raise error
            if entry.matched_on is None:
                refused = RuleError(f"{rule.text}: {rule.tool} takes no pattern; name the tool alone ({rule.tool})")
                refused.name = name.strip()
                raise refused
            patterned.append(rule)
        return plain, patterned

    def forget(self, text: str) -> bool:
        """Remove the rule written ``text`` (as ``rule_list`` shows it); False when none is."""
        rule = parse_rule(text)
        found = False
        for rules in (self.rules.allow, self.rules.deny):
            if rule in rules:
                rules.remove(rule)
                found = True
        named = {name for name, by in self.denied.items() if by == rule}
        for name in named:
            del self.denied[name]
        if rule.pattern is None and rule.tool in self.allowed:
            self.allowed.discard(rule.tool)
            found = True
        return found or bool(named)

    def rule_list(self) -> list[tuple[str, str]]:
        """Every rule in force, as ("allow" | "deny", its text), deny first."""
        denied = sorted({r.text for r in self.denied.values()} | {r.text for r in self.rules.deny})
        allowed = sorted(self.allowed | {r.text for r in self.rules.allow})
        return [("deny", t) for t in denied] + [("allow", t) for t in allowed]

    def refresh(self) -> list[str]:
        """Apply the waiting names whose server has started; returns a line for each that
        selects nothing on it."""
        problems = []
        still = []
        for name in self.waiting:
            server = self.registry.waiting_for(name)
            if server is not None:
                still.append(name)
                continue
            try:
                self.allowed |= self.registry.allowable([name])
            except ToolSelectionError:
                lazy = next((s for s in self.registry.lazy_sources() if s.claims(name)), None)
                if lazy is None or not lazy.problem:  # a server that failed was reported already
                    problems.append(f"--allow {name}: {no_such_tool(self.registry, name)}")
        self.waiting = still
        now, self._waiting_deny = self.registry.split_waiting(self._waiting_deny)
        for name in now:
            try:
                self._deny_names([name])
            except ToolSelectionError:
                problems.append(f"--deny {name}: {no_such_tool(self.registry, name)}")
        return problems

    def needs_question(self, entry: ToolEntry | None) -> bool:
        if entry is None or not entry.needs_approval:
            return False
        return not (self.yes or entry.name in self.allowed)

    def decide(self, entry: ToolEntry, args: dict[str, object]) -> Decision:
        """What the rules say of this call (deny wins): a tool denied whole, else the rules
        with a pattern over what the call does."""
        if entry.name in self.denied:
            return Decision(verdict="deny", rule=self.denied[entry.name])
        if entry.matched_on is None:
            return Decision(verdict="ask")
        kind, arg = entry.matched_on
        value = args.get(arg, "." if kind == PATH else "")
        if not isinstance(value, str):
            return Decision(verdict="ask")
        return self.rules.decide(entry.name, kind, value, self.root)

    async def __call__(self, request: ApprovalRequest) -> Approval:
        """The call's approval; ``ToolFailed`` when it would fail anyway (its preview says
        why: an edit whose text is not in the file, a path outside the root), so nobody is
        asked about a call that cannot do what it asks."""
        entry = self.registry.entry(request.call.name)
        if entry is None:
            return APPROVED
        decision = self.decide(entry, request.args)
        if decision.verdict == "deny":
            return Approval(approved=False, reason=f"the user's rule deny {decision.rule} refuses it")
        if not entry.needs_approval:
            return APPROVED
        waived = self._waived(entry, decision)
        if waived:
            if self.shown is not None:
                self.shown(question(entry, request, self.root), waived)
            return APPROVED
        asked = question(entry, request, self.root)
        if self.ask is None:
            return Approval(approved=False, reason=NO_TERMINAL.format(name=entry.name))
        answer = await self.ask(asked)
        if answer.choice == "always":
            self.allow(answer.rules or [entry.name])
            if answer.remember and self.remember is not None:
                self.remember(answer.rules or (entry.name,))
        if answer.choice in ("yes", "always"):
            return APPROVED
        return Approval(approved=False, reason=answer.reason.strip())

    def _waived(self, entry: ToolEntry, decision: Decision) -> str:
        """Why this call needs no question ("" when it does)."""
        if self.yes:
            return "--yes"
        if entry.name in self.allowed:
            return f"allow {entry.name}"
        if decision.verdict == "allow":
            return f"allow {decision.rule}"
        return ""


def question(entry: ToolEntry, request: ApprovalRequest, root: str = "/") -> Question:
    """What the person is asked; ``ToolFailed`` from the preview (the call will fail) passes."""
    preview = ""
    if entry.preview is not None:
        try:
            preview = entry.preview(request.args)
        except ToolFailed:
            raise
        except Exception as e:  # a broken preview must not decide the call
            preview = f"(no preview: {e})"
    return Question(
        tool=entry.name, source=entry.source, arguments=format_arguments(request.args), preview=preview,
        offers=offers(entry, request.args, root), call_id=request.call.id,
    )  # fmt: skip


def offers(entry: ToolEntry, args: dict[str, object], root: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """What ``a`` may allow for this call: its rules (``rules.suggestions``), then the tool."""
    found: list[tuple[str, tuple[str, ...]]] = []
    if entry.matched_on is not None:
        kind, arg = entry.matched_on
        value = args.get(arg, "." if kind == PATH else "")
        if isinstance(value, str):
            offered = suggestions(entry.name, kind, value, root)
            found = [(label, tuple(r.text for r in rules)) for label, rules in offered]
    return (*found, (f"every {entry.name} call", (entry.name,)))


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


def format_arguments(args: dict[str, object]) -> str:
    """``key: value`` lines, strings as they are (multi-line ones indented). A name that is not
    a plain word is shown quoted and escaped (``"a\\nb"``), so it cannot draw lines that look
    like other arguments."""
    lines: list[str] = []
    for key, value in args.items():
        name = key if _PLAIN_NAME.fullmatch(key) else json.dumps(key)
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if "\n" in text or "\r" in text:
            lines.append(f"{name}:")
            lines.extend("  " + line for line in text.splitlines())
        else:
            lines.append(f"{name}: {text}")
    return "\n".join(lines)


def no_such_tool(registry: Registry, name: str) -> str:
    """Why ``name`` selects nothing, naming what the tool server it points at offers."""
    lazy = next((s for s in registry.lazy_sources() if s.claims(name)), None)
    if lazy is None:
        return f"no tool or group named {name!r}"
    offered = sorted(e.own_name or e.name for e in registry.entries() if e.group == lazy.group)
    shown = ", ".join(offered[:20]) + (", ..." if len(offered) > 20 else "")
    return f"tool server {lazy.group!r} has no tool {name!r}" + (f" (it offers {shown})" if offered else "")
