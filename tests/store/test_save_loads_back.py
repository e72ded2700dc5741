"""The store's last line of defence (issue 8, item 1): a save whose bytes would not load back is
refused, and the file on disk stays as it was."""

from __future__ import annotations

import pytest
from golem_cli.core.messages import Message, ToolCall
from golem_cli.store import Store
from golem_cli.store.errors import StoreError


def test_a_history_that_would_not_load_back_is_not_saved(tmp_path) -> None:
    store = Store(tmp_path)
    cid = store.create([Message(role="user", content="hi")])
    before = store.messages_path(cid).read_bytes()
    bad = Message(role="assistant", tool_calls=[ToolCall(id=123, name="f", args="{}")])  # type: ignore[arg-type]
    with pytest.raises(StoreError) as caught:
        store.save(cid, [Message(role="user", content="hi"), bad])
    assert "would not load back" in str(caught.value) and 'field "id" must be a string' in str(caught.value)
    assert store.messages_path(cid).read_bytes() == before and store.load(cid) == [Message(role="user", content="hi")]
