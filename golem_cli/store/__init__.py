"""golem's conversation store: files, metadata, locks, the index, search and ID references.

See ``store.py`` for the layout and the API; ``docs/store.md`` for the design. Names load on
first use (PEP 562): a new chat's banner imports ``store.refs`` (and with it this package)
before its prompt, and ``Store`` brings msgspec and the message types, which the prompt would
wait for (measured in docs/store.md, "The package's names").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "AmbiguousReference": "errors", "ConversationExists": "errors", "ConversationLocked": "errors",
    "ConversationNotFound": "errors", "CorruptConversation": "errors", "InvalidReference": "errors",
    "StoreError": "errors",
    "FileLock": "locks", "LockHolder": "locks",
    "ConversationMeta": "meta",
    "LAST": "refs", "is_conversation_id": "refs", "parse_reference": "refs",
    "ConversationInfo": "store", "Listing": "store", "Store": "store",
}  # fmt: skip

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'golem_cli.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"golem_cli.store.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # the names for type checkers, re-exported explicitly
    from golem_cli.store.errors import AmbiguousReference as AmbiguousReference
    from golem_cli.store.errors import ConversationExists as ConversationExists
    from golem_cli.store.errors import ConversationLocked as ConversationLocked
    from golem_cli.store.errors import ConversationNotFound as ConversationNotFound
    from golem_cli.store.errors import CorruptConversation as CorruptConversation
    from golem_cli.store.errors import InvalidReference as InvalidReference
    from golem_cli.store.errors import StoreError as StoreError
    from golem_cli.store.locks import FileLock as FileLock
    from golem_cli.store.locks import LockHolder as LockHolder
    from golem_cli.store.meta import ConversationMeta as ConversationMeta
    from golem_cli.store.refs import LAST as LAST
    from golem_cli.store.refs import is_conversation_id as is_conversation_id
    from golem_cli.store.refs import parse_reference as parse_reference
    from golem_cli.store.store import ConversationInfo as ConversationInfo
    from golem_cli.store.store import Listing as Listing
    from golem_cli.store.store import Store as Store
