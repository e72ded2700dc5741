"""The arguments and options several commands share, declared once as typer annotations:
``def chat(model: Model = None, ...)``; and ``ChatFlags``, which carries the ones that set up a
chat from the command to where they apply."""

from __future__ import annotations

from typing import Annotated

import typer
from msgspec import Struct

from golem_cli.cli.completion import ID_HELP, conversation_ids, model_names, tool_names

ConversationId = Annotated[str, typer.Argument(metavar="ID", help=ID_HELP, autocompletion=conversation_ids)]

Model = Annotated[
    str | None,
    typer.Option("--model", "-m", metavar="PROVIDER:MODEL", autocompletion=model_names,
                 help="provider:model, e.g. openai:gpt-4o-mini, ollama:llama3.2."),
]  # fmt: skip
MaxMessages = Annotated[
    int | None,
    typer.Option("--max-messages", metavar="N", min=1, help="Send at most the newest N messages per run (default 20)."),
]
TrimStride = Annotated[
    int | None,
    typer.Option("--trim-stride", metavar="K", min=1,
                 help="Move the window's cut in steps of K messages, so its start stays put and the "
                      "provider's prompt cache keeps hitting (default 1)."),
]  # fmt: skip
SummarizeTrimmed = Annotated[
    bool,
    typer.Option("--summarize-trimmed",
                 help="Fold the messages that leave the window into a running summary sent before it "
                      "(with --trim-stride K, once every K messages)."),
]  # fmt: skip
NoMarkdown = Annotated[bool, typer.Option("--no-markdown", help="Print replies as plain text.")]
ContextTokens = Annotated[
    int | None,
    typer.Option("--context-tokens", metavar="N", min=1,
                 help="Send at most about N tokens of history per run, instead of a message count."),
]  # fmt: skip
MaxCost = Annotated[
    float | None,
    typer.Option("--max-cost", metavar="USD", min=0.000001,
                 help="Spend at most this many USD in this command (max_cost in config.toml): a turn that would "
                      "pass it is refused."),
]  # fmt: skip
ModelOptions = Annotated[
    list[str] | None,  # NAME=VALUE each (command.py joins -o NAME VALUE)
    typer.Option("--option", "-o", metavar="KEY VALUE",
                 help="A model option (repeatable): temperature, top_p, max_tokens, seed, stop, "
                      "reasoning_effort, thinking_budget; e.g. -o temperature 0.2."),
]  # fmt: skip
Tools = Annotated[
    list[str] | None,
    typer.Option("--tool", "-T", metavar="NAME", autocompletion=tool_names,
                 help="Let the model use a tool or group: fs, shell, web, all, or a name from `golem tools` "
                      "(repeatable)."),
]  # fmt: skip
Allow = Annotated[
    list[str] | None,
    typer.Option("--allow", metavar="RULE", autocompletion=tool_names,
                 help="Run this tool (or group) without asking, or the calls TOOL(PATTERN) matches, such as "
                      "'run_command(git status*)' (repeatable); it must be enabled (-T)."),
]  # fmt: skip
Deny = Annotated[
    list[str] | None,
    typer.Option("--deny", metavar="RULE", autocompletion=tool_names,
                 help="Never run what this rule names (repeatable): a tool, or TOOL(PATTERN) such as "
                      "'run_command(git push*)'; deny wins over --allow and --yes."),
]  # fmt: skip
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Approve every tool call without asking.")]
NoProjectInstructions = Annotated[
    bool,
    typer.Option("--no-project-instructions",
                 help="Leave out AGENTS.md (or CLAUDE.md) of the tool root and its parents up to the repository."),
]  # fmt: skip


class ChatFlags(Struct, frozen=True, kw_only=True):
    """What ``resume``, ``fork`` and ``ask`` were told beyond the model and the conversation,
    as their options above give it: one value for the functions that restore a chat under it."""

    options: list[str] | None = None
    tool: list[str] | None = None
    allow: list[str] | None = None
    deny: list[str] | None = None
    yes: bool = False
    max_messages: int | None = None
    context_tokens: int | None = None
    trim_stride: int | None = None
    max_cost: float | None = None
    summarize_trimmed: bool = False
    no_project_instructions: bool = False
