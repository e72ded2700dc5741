"""golem's conversation store: files, metadata, locks and ID references.

See ``store.py`` for the layout and the API; ``docs/store.md`` for the design.
"""

from golem_cli.store.errors import (
    AmbiguousReference,
    ConversationExists,
    ConversationLocked,
    ConversationNotFound,
    CorruptConversation,
    InvalidReference,
    StoreError,
)
from golem_cli.store.locks import FileLock, LockHolder
from golem_cli.store.meta import ConversationMeta
from golem_cli.store.refs import LAST, is_conversation_id, parse_reference
from golem_cli.store.store import ConversationInfo, Listing, Store

__all__ = [
    "LAST",
    "AmbiguousReference",
    "ConversationExists",
    "ConversationInfo",
    "ConversationLocked",
    "ConversationMeta",
    "ConversationNotFound",
    "CorruptConversation",
    "FileLock",
    "InvalidReference",
    "Listing",
    "LockHolder",
    "Store",
    "StoreError",
    "is_conversation_id",
    "parse_reference",
]
