"""``golem tools``: every tool a chat can enable, with its source, group, whether its calls
ask first, and what it does. ``/tools`` in the REPL shows the same rows with the ones
enabled in this chat marked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from golem_cli.cli.command import Command, Option

if TYPE_CHECKING:
    from golem_cli.tools.registry import ToolEntry
    from golem_cli.tools.toolbox import Toolbox

PANEL = "Chat"


def _approval(entry: ToolEntry, box: Toolbox | None = None) -> str:
    if box is not None and not box.approvals.needs_question(entry):
        return "runs" if not entry.needs_approval else "allowed"
    return "asks" if entry.needs_approval else "runs"


def tool_rows(box: Toolbox) -> list[str]:
    """One line per tool: enabled mark, name, group, source, approval, summary."""
    entries = box.registry.entries()
    width = max(len(e.name) for e in entries)
    group_width = max(len(e.group) for e in entries)
    rows = []
    for e in entries:
        mark = "*" if box.is_enabled(e.name) else " "
        rows.append(f"{mark} {e.name:<{width}}  {e.group:<{group_width}}  {e.source:<8}  "
                    f"{_approval(e, box):<7}  {e.summary}")  # fmt: skip
    return rows


def list_tools(*, as_json: bool) -> int:
    from golem_cli.cli.console import out, print_json
    from golem_cli.config.settings import load_settings
    from golem_cli.tools.toolbox import toolbox

    s = load_settings()
    box = toolbox(enabled=s.tools, allow=s.allow, root=s.tool_root, output_limit=s.tool_output_limit,
                  command_timeout=s.command_timeout)  # fmt: skip
    if as_json:
        print_json([
            {"name": e.name, "group": e.group, "source": e.source, "needs_approval": e.needs_approval,
             "allowed": e.name in box.approvals.allowed, "enabled_by_config": box.is_enabled(e.name),
             "description": e.tool.description}
            for e in box.registry.entries()
        ])  # fmt: skip
        return 0
    for row in tool_rows(box):
        out(row)
    out("")
    out("* enabled in every chat (tools = [...] in config.toml). Enable more with -T NAME or a group:")
    out(f"  {', '.join(sorted(box.registry.groups()))}, all. 'asks' tools run after you approve each call")
    out("  (y once, a always for this tool, n deny); --allow NAME or --yes approve without asking.")
    return 0


COMMANDS = (
    Command("tools", list_tools, "List the tools a chat can use (-T NAME enables them).", PANEL, [
        Option("as_json", "--json", help="Print the tools as JSON."),
    ]),
)  # fmt: skip
