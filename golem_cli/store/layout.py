"""The names of the store's files (see store.py for the layout), in a module that imports
nothing, so that a command can find them without importing the store's machinery."""

from __future__ import annotations

import re

MESSAGES_SUFFIX = ".json"
META_SUFFIX = ".meta.json"
INDEX_NAME = "index.sqlite"
CONVERSATIONS_DIR = "conversations"  # under the store's root: the messages files and sidecars
#: A messages file's name: a conversation ID (canonical lowercase UUID) and ``.json``.
MESSAGES_NAME_LENGTH = 36 + len(MESSAGES_SUFFIX)
MESSAGES_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.json\Z")
