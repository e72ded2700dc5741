"""The name a tool server's tool has for the model: ``SERVER__TOOL``.

Both providers accept tool names of ``^[a-zA-Z0-9_-]{1,64}$`` and nothing else, and two
servers may well offer a tool of the same name (``search``), so golem does not send a
server's own names. It sends ``SERVER__TOOL`` (Codex CLI's spelling):

* ``SERVER`` is the config table's name, which the config allows only as letters and digits
  with single ``-`` or ``_`` between them (never ``__``, never a trailing ``_``). The first
  ``__`` of a model name therefore ends the server's name, and no two servers can produce the
  same model name; the built-in tools never contain ``__``, so none is taken either.
* ``TOOL`` is the server's own name when ``SERVER__TOOL`` is valid as it is. Otherwise (a
  character providers refuse, such as ``.`` or a space, or more than 64 characters in all) it
  is the own name with each refused character replaced by ``_``, cut to fit, and followed by
  ``_`` and 8 hex digits of a hash of the own name. The hash makes the fallback unique and
  deterministic: the same server and tool give the same name in every chat, so a resumed
  conversation's calls still find their tool.

``-T SERVER.TOOL`` and ``allow`` use the server's own name; ``golem tools`` shows both.
"""

from __future__ import annotations

import hashlib
import re

SEPARATOR = "__"
MAX_NAME = 64
_VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_REFUSED = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_DIGITS = 8


def model_name(server: str, tool: str) -> str:
    """The name the model sees for ``server``'s tool ``tool`` (see the module docstring)."""
    plain = f"{server}{SEPARATOR}{tool}"
    if _VALID.fullmatch(plain):
        return plain
    digest = hashlib.sha256(tool.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_DIGITS]
    room = MAX_NAME - len(server) - len(SEPARATOR) - 1 - _HASH_DIGITS
    stem = _REFUSED.sub("_", tool)[: max(room, 0)].strip("_")
    return f"{server}{SEPARATOR}{stem}_{digest}" if stem else f"{server}{SEPARATOR}{digest}"
