"""Rules for what may run without asking: ``allow`` and ``deny`` patterns.

A rule names a tool, alone or with a pattern over what its call does::

    run_command(git status*)              the command line
    run_command(pytest *)
    write_file(src/**)                    the path, relative to the tool root
    edit_file(docs/*.md)
    fetch_url(https://docs.python.org/*)  the URL
    read_file                             every call of the tool
    github__search                        a tool server's tool (by name only, no pattern)
    fs, shell, github, github.get_*       a group, a server, a pattern over names (as -T selects)

They come from ``allow = [...]`` and ``deny = [...]`` in ``config.toml``, from the project's
``.golem/config.toml`` (once the user has trusted it), from ``--allow`` and ``--deny``, and
from the ``a`` answer at a question. A call a ``deny`` rule matches is refused without a
question, whatever allows it (``--yes`` too): deny wins. A call an ``allow`` rule matches runs
without a question. Anything else is asked.

How a pattern matches:

* A pattern without ``*`` matches exactly that text, whole.
* ``*`` matches any run of characters; in a path, any run but ``/``. ``**`` matches any run,
  ``/`` included (``src/**`` is everything under ``src``; ``src/**/test_*.py`` also matches
  ``src/test_a.py``).
* A command pattern ending in `` *`` also matches the command without arguments
  (``pytest *`` matches ``pytest``), never a longer word (``ls *`` does not match ``lsof``).
* ``\\*`` is a star itself; nothing else is special (``?``, ``[`` are themselves).

What is matched:

* ``run_command``: each command of the command line, its words with quotes removed, one space
  between them. A line made of several commands (``a && b``, ``a || b``, ``a; b``, ``a | b``,
  ``a & b``, new lines, ``( … )``, ``$( … )``, ``<( … )``) is allowed only when every one of
  them is, and denied when any is. What the splitter cannot classify is always asked:
  backticks, ``eval``/``exec``/``source``, ``sh -c`` (any shell), here-documents,
  redirection to a file (``2>&1`` and ``> /dev/null`` are fine), comments, functions,
  ``if``/``for``/``while`` and the like, an unquoted ``$X`` as the command.
* File tools: the path relative to the tool root, normalized (``./a/../b`` is ``b``). A path
  outside the root matches no rule (the tool refuses it anyway).
* ``fetch_url``: the URL as ``scheme://host[:port]/path?query``, scheme and host in lower case,
  a ``user:password@`` part removed, an empty path written ``/``. End a host with ``/`` in a
  pattern (``https://docs.python.org/*``), or ``*`` also matches ``docs.python.org.evil.com``.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import Literal
from urllib.parse import urlsplit

from msgspec import Struct, field

from golem_cli.core.errors import InputError

#: What a tool's rules match on: its command line, a path under the root, a URL.
Kind = Literal["command", "path", "url"]
COMMAND: Kind = "command"
PATH: Kind = "path"
URL: Kind = "url"

Verdict = Literal["allow", "deny", "ask"]


class RuleError(InputError):
    """A rule golem cannot read (exit 2): what is wrong with it, and the form it takes.
    ``name`` is the rule as written (so the caller can say where it came from)."""

    name: str = ""


def _refused(text: str, what: str) -> RuleError:
    error = RuleError(f"{text!r} {what}", hint=_FORM)
    error.name = text.strip()
    return error


_RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_.*?\[\]-]+)(?:\((?P<pattern>.*)\))?$", re.DOTALL)
_FORM = "a rule is TOOL or TOOL(PATTERN), e.g. run_command(git status*) or write_file(src/**)"


class Rule(Struct, frozen=True, kw_only=True):
    """One rule: ``tool`` (a tool's name, or for a rule without pattern anything ``-T``
    selects by) and ``pattern`` (None: every call)."""

    tool: str
    pattern: str | None = None

    @property
    def text(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"

    def __str__(self) -> str:
        return self.text


def parse_rule(text: str) -> Rule:
    """``text`` as a rule; ``RuleError`` saying what is wrong with it."""
    stripped = text.strip()
    found = _RULE.fullmatch(stripped)
    if found is None:
        raise _refused(text, "is not a rule")
    pattern = found.group("pattern")
    if pattern is None:
        return Rule(tool=found.group("tool"))
    if not re.fullmatch(r"[A-Za-z0-9_-]+", found.group("tool")):
        raise _refused(text, "names a group or a pattern; a rule with a pattern names one tool")
    if not pattern.strip():
        raise _refused(text, "has an empty pattern")
    return Rule(tool=found.group("tool"), pattern=pattern.strip())


def split_rules(line: str) -> list[str]:
    """Rules written on one line, apart at spaces outside parentheses
    (``fs run_command(git status*)`` is two)."""
    found: list[str] = []
    word = ""
    depth = 0
    for c in line:
        if c == "(":
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        if c.isspace() and depth == 0:
            if word:
                found.append(word)
            word = ""
        else:
            word += c
    return [*found, word] if word else found


def parse_rules(texts: Iterable[str]) -> list[Rule]:
    return [parse_rule(text) for text in texts if text.strip()]


# --- patterns ------------------------------------------------------------------------------


def compile_pattern(pattern: str, kind: Kind) -> re.Pattern[str]:
    """The regular expression a pattern of ``kind`` stands for (matched whole)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("\\*", i):
            out.append(re.escape("*"))
            i += 2
        elif pattern[i] == "*":
            i = _star(pattern, i, kind, out)
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _star(pattern: str, i: int, kind: Kind, out: list[str]) -> int:
    """Append what the ``*`` or ``**`` at ``i`` stands for; returns where the pattern goes on."""
    if pattern.startswith("**", i):
        slash = kind == PATH and pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/")
        out.append("(?:.*/)?" if slash else ".*")
        return i + (3 if slash else 2)
    if kind == COMMAND and i == len(pattern) - 1 and i > 0 and pattern[i - 1] == " ":
        out[-1] = r"(?:\ .*)?"  # "pytest *": also "pytest", never "pytestx"
    else:
        out.append("[^/]*" if kind == PATH else ".*")
    return i + 1


def escape(text: str) -> str:
    """A pattern matching ``text`` exactly (its stars made literal)."""
    return text.replace("*", "\\*")


# --- what a call is matched on ------------------------------------------------------------


class Unclassifiable(Exception):
    """A command line the splitter cannot take apart safely; its rules never allow it."""


def command_parts(line: str) -> list[str]:
    """The commands of a shell command line, each as its words joined by one space;
    ``Unclassifiable`` (with the reason) for what cannot be classified."""
    parts = _Splitter(line).split()
    if not parts:
        raise Unclassifiable("an empty command")
    return parts


def relative_path(given: str, root: str | os.PathLike[str]) -> str | None:
    """``given`` (relative to ``root`` unless absolute) relative to ``root``, normalized
    without touching the disk; None when it leads outside."""
    root_text = posixpath.normpath(os.fspath(root))
    text = given.strip() or "."
    if text.startswith("~"):
        text = os.path.expanduser(text)
    joined = posixpath.normpath(text if text.startswith("/") else posixpath.join(root_text, text))
    if joined == root_text:
        return "."
    if not joined.startswith(root_text.rstrip("/") + "/"):
        return None
    return joined[len(root_text.rstrip("/")) + 1 :]


def normal_url(url: str) -> str:
    """``url`` as rules see it: lower-case scheme and host, no user part, ``/`` for no path."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url.strip()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{netloc}{parts.path or '/'}{query}"


def subjects(kind: Kind, value: str, root: str | os.PathLike[str] = "/") -> list[str] | None:
    """What a call's rules match on: the commands of a command line, the path relative to
    ``root``, the normalized URL. None when no pattern may allow it (an unclassifiable
    command line, a path outside the root)."""
    if kind == COMMAND:
        try:
            return command_parts(value)
        except Unclassifiable:
            return None
    if kind == PATH:
        rel = relative_path(value, root)
        return None if rel is None else [rel]
    return [normal_url(value)]


# --- deciding -------------------------------------------------------------------------------


class Decision(Struct, frozen=True, kw_only=True):
    """What the rules say of one call, and the rule that decided (None when asked)."""

    verdict: Verdict
    rule: Rule | None = None
    why: str = ""  # for "ask": why no rule could decide (an unclassifiable command)


class RuleSet(Struct, kw_only=True):
    """The allow and deny rules with a pattern (rules without one are names the registry
    resolves). ``decide`` applies them to one call."""

    allow: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    _compiled: dict[tuple[str, Kind], re.Pattern[str]] = field(default_factory=dict)  # patterns compiled once

    def matches(self, rule: Rule, kind: Kind, subject: str) -> bool:
        if rule.pattern is None:
            return True
        key = (rule.pattern, kind)
        if key not in self._compiled:
            self._compiled[key] = compile_pattern(rule.pattern, kind)
        return self._compiled[key].fullmatch(subject) is not None

    def decide(self, tool: str, kind: Kind, value: str, root: str | os.PathLike[str] = "/") -> Decision:
        """Deny when a deny rule of ``tool`` matches any part (or the whole line of an
        unclassifiable command); allow when every part is matched by an allow rule; else ask."""
        parts = subjects(kind, value, root)
        denying = self._first(self.deny, tool, kind, [value.strip()] if parts is None else parts)
        if denying is not None:
            return Decision(verdict="deny", rule=denying)
        if parts is None:
            return Decision(verdict="ask", why=_why_not(kind, value))
        allowing = [self._first(self.allow, tool, kind, [part]) for part in parts]
        if any(rule is None for rule in allowing):
            return Decision(verdict="ask")
        return Decision(verdict="allow", rule=allowing[0])

    def _first(self, rules: list[Rule], tool: str, kind: Kind, parts: list[str]) -> Rule | None:
        """The first rule of ``tool`` with a pattern that matches any of ``parts``."""
        for rule in rules:
            if rule.tool == tool and rule.pattern is not None and any(self.matches(rule, kind, p) for p in parts):
                return rule
        return None

    def allows(self, tool: str, kind: Kind, value: str, root: str | os.PathLike[str] = "/") -> bool:
        """Whether an allow rule with a pattern names this call (and no deny rule does):
        for checks that need an explicit rule (a private address for ``fetch_url``)."""
        return self.decide(tool, kind, value, root).verdict == "allow"


def _why_not(kind: Kind, value: str) -> str:
    if kind == COMMAND:
        try:
            command_parts(value)
        except Unclassifiable as e:
            return f"no rule can allow it: {e}"
    return "it is outside the tool root"


# --- suggestions for the question's "a" --------------------------------------------------------


def suggestions(tool: str, kind: Kind, value: str, root: str | os.PathLike[str] = "/") -> list[tuple[str, list[Rule]]]:
    """The rules the ``a`` answer offers for this call, narrowest first, each with its label:
    this exact command (each part), its prefix; this file, its directory; this URL, its site.
    The whole tool is the caller's last choice."""
    parts = subjects(kind, value, root)
    if not parts:
        return []
    if kind == COMMAND:
        exact = [Rule(tool=tool, pattern=escape(p)) for p in parts]
        prefixes = _unique(Rule(tool=tool, pattern=escape(_prefix(p)) + " *") for p in parts)
        label = "this exact command" if len(parts) == 1 else f"these {len(parts)} exact commands"
        offered = [(label, exact)]
        if prefixes != exact:
            shown = ", ".join(escape(_prefix(p)) for p in parts)
            offered.append((f"commands starting {shown}", prefixes))
        return offered
    if kind == PATH:
        folder = posixpath.dirname(parts[0])
        offered = [("this file", [Rule(tool=tool, pattern=escape(parts[0]))])]
        pattern = f"{escape(folder)}/**" if folder else "**"
        offered.append((f"files under {folder or 'the tool root'}", [Rule(tool=tool, pattern=pattern)]))
        return offered
    site = urlsplit(parts[0])
    offered = [("this URL", [Rule(tool=tool, pattern=escape(parts[0]))])]
    offered.append((f"{site.scheme}://{site.netloc}/", [Rule(tool=tool, pattern=f"{site.scheme}://{site.netloc}/*")]))
    return offered


_SUBCOMMAND = re.compile(r"[a-z][a-z0-9-]*")
#: Programs whose second word is a subcommand (``git status``, ``cargo test``).
_WITH_SUBCOMMANDS = frozenset(
    "git gh npm pnpm yarn bun cargo go docker podman kubectl helm pip pip3 uv poetry pdm hatch tox nox "
    "brew apt apt-get dnf systemctl journalctl dotnet mvn gradle bundle rails rake mix deno terraform".split()
)


def _prefix(command: str) -> str:
    """The program, and its subcommand for programs that have them (``git status``)."""
    words = command.split(" ")
    if len(words) > 1 and words[0] in _WITH_SUBCOMMANDS and _SUBCOMMAND.fullmatch(words[1]):
        return " ".join(words[:2])
    return words[0]


def _unique(rules: Iterable[Rule]) -> list[Rule]:
    seen: list[Rule] = []
    for rule in rules:
        if rule not in seen:
            seen.append(rule)
    return seen


# --- the shell splitter -------------------------------------------------------------------------

_SEPARATORS = frozenset(";&|\n")
_WORD_END = frozenset(" \t;&|\n()<>")
_KEYWORDS = frozenset(
    "if then else elif fi for while until do done case esac function select { } [[ ]] ! coproc".split()
)
_RUNS_TEXT = frozenset("eval exec source . trap alias".split())
_SHELLS = frozenset("sh bash zsh dash ksh mksh fish csh tcsh busybox".split())


class _Splitter:
    """A small shell tokenizer: enough of POSIX sh to find every command a line runs, and to
    refuse (``Unclassifiable``) what it does not understand rather than guess."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.parts: list[str] = []

    def split(self) -> list[str]:
        self._commands(closing=None)
        return self.parts

    def _peek(self, n: int = 1) -> str:
        return self.text[self.i : self.i + n]

    def _commands(self, closing: str | None) -> None:
        """Commands until ``closing`` (a ``)`` ending a subshell or substitution) or the end."""
        words: list[str] = []
        separated = True  # an operator may not start a line or follow another
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\\" and self._peek(2) == "\\\n":
                self.i += 2
            elif c in _SEPARATORS:
                self._end_command(words, separated)
                separated = True
            elif c == "(":
                self._subshell(words)
            elif c == ")":
                if closing != ")":
                    raise Unclassifiable("an unmatched )")
                self.i += 1
                self._finish(words)
                return
            else:
                self._word_or_redirection(words)
                separated = False
        if closing is not None:
            raise Unclassifiable("an unclosed (")
        self._finish(words)

    def _end_command(self, words: list[str], separated: bool) -> None:
        op = self._peek(2)
        if op in (";;", ";&"):
            raise Unclassifiable("a case clause")
        if separated and self.text[self.i] != "\n":
            raise Unclassifiable(f"{self.text[self.i]!r} with no command before it")
        self.i += 2 if op in ("&&", "||", "|&") else 1
        self._finish(words)

    def _subshell(self, words: list[str]) -> None:
        if words:
            raise Unclassifiable("a function definition")
        if self._peek(2) == "((":
            raise Unclassifiable("arithmetic (( ))")
        self.i += 1
        self._commands(closing=")")

    def _finish(self, words: list[str]) -> None:
        if not words:
            return
        _check_command(words)
        self.parts.append(" ".join(words))
        words.clear()

    def _word_or_redirection(self, words: list[str]) -> None:
        start = self.i
        while self.i < len(self.text) and self.text[self.i].isdigit():
            self.i += 1
        if self.i == start and self._peek(2) in ("<(", ">("):
            self.i += 2
            self._commands(closing=")")
            words.append(self.text[start : self.i])
            return
        if self._peek() in ("<", ">") or self.text.startswith("&>", self.i):
            words.append(self._redirection())
            return
        self.i = start
        if self._peek() == "#":
            raise Unclassifiable("a comment")
        words.append(self._word())

    def _redirection(self) -> str:
        """A redirection: fd duplication, ``/dev/null``, and reading a file are fine; a
        here-document or writing to a file cannot be classified."""
        digits_start = self.i
        while digits_start > 0 and self.text[digits_start - 1].isdigit():
            digits_start -= 1
        fd = self.text[digits_start : self.i]
        op = re.match(r"&>>|&>|>>|>\||>&|<<<|<<-|<<|<&|<>|<|>", self.text[self.i :])
        assert op is not None
        self.i += len(op.group())
        if op.group().startswith("<<"):
            raise Unclassifiable("a here-document")
        if self._peek() == "(":
            raise Unclassifiable("process substitution after a redirection")
        while self._peek() in (" ", "\t"):
            self.i += 1
        target = self._word()
        if op.group() in (">&", "<&") and re.fullmatch(r"\d+|-", target):
            return f"{fd}{op.group()}{target}"
        if op.group() in ("<", "<&") or target == "/dev/null":
            return f"{fd}{op.group()}{target}"
        raise Unclassifiable("redirection to a file")

    def _word(self) -> str:
        out: list[str] = []
        while self.i < len(self.text) and self.text[self.i] not in _WORD_END:
            c = self.text[self.i]
            if c == "'":
                end = self.text.find("'", self.i + 1)
                if end < 0:
                    raise Unclassifiable("an unclosed '")
                out.append(self.text[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                out.append(self._double_quoted())
            elif c == "\\":
                if self.i + 1 == len(self.text):
                    raise Unclassifiable("a \\ at the end")
                out.append(self._peek(2)[1:])
                self.i += 2
            elif c == "`":
                raise Unclassifiable("backticks")
            elif c == "$":
                out.append(self._dollar())
            else:
                out.append(c)
                self.i += 1
        if not out and self.i < len(self.text) and self.text[self.i] in "<>":
            raise Unclassifiable("a redirection with no target")
        return "".join(out)

    def _double_quoted(self) -> str:
        self.i += 1
        out: list[str] = []
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == '"':
                self.i += 1
                return "".join(out)
            if c == "\\" and self._peek(2)[1:] in ('"', "\\", "$", "`", "\n"):
                out.append(self._peek(2)[1:])
                self.i += 2
            elif c == "`":
                raise Unclassifiable("backticks")
            elif c == "$":
                out.append(self._dollar())
            else:
                out.append(c)
                self.i += 1
        raise Unclassifiable('an unclosed "')

    def _dollar(self) -> str:
        """``$(…)`` is split as commands of its own (its text stays in the word); ``${…}``
        and ``$NAME`` stay as written; arithmetic and ``$'…'`` cannot be classified."""
        start = self.i
        nxt = self._peek(3)[1:]
        if nxt.startswith("(("):
            raise Unclassifiable("arithmetic $(( ))")
        if nxt.startswith("("):
            self.i += 2
            self._commands(closing=")")
            return self.text[start : self.i]
        if nxt.startswith("'"):
            raise Unclassifiable("$'…' quoting")
        if nxt.startswith("{"):
            end = self.text.find("}", self.i)
            inner = self.text[self.i + 2 : end]
            if end < 0 or "$" in inner or "`" in inner:
                raise Unclassifiable("a ${…} expansion it cannot read")
            self.i = end + 1
            return self.text[start : self.i]
        self.i += 1
        return "$"


def _check_command(words: Sequence[str]) -> None:
    """``Unclassifiable`` for a command whose effect its words do not say."""
    head = next((w for w in words if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)), "")
    if not head:
        return  # assignments only: they change nothing outside this shell
    if head in _KEYWORDS:
        raise Unclassifiable(f"shell syntax ({head})")
    if head in _RUNS_TEXT:
        raise Unclassifiable(f"{head} runs text as commands")
    if head.startswith("$"):
        raise Unclassifiable("the command is a variable")
    name = head.rsplit("/", 1)[-1]
    args = list(words)[list(words).index(head) + 1 :]
    if name in _SHELLS and any(re.fullmatch(r"-[A-Za-z]*c[A-Za-z]*", a) for a in args):
        raise Unclassifiable(f"{name} -c runs text as commands")
