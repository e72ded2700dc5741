"""Reading and writing histories: the JSON contract shared with Go golem (spec §1).

``dump_history`` writes exactly the bytes of Go's ``json.Marshal([]model.Message)``, and
``load_history`` reads what Go's ``json.Unmarshal`` reads. Two paths keep that fast: files
golem or Go wrote decode in one msgspec pass straight into the message structs; anything the
strict fast path declines (foreign spellings, ``null`` fields, invalid UTF-8, broken JSON) is
read by ``_goparse``, which mirrors Go's decoder and explains errors by position.

Tool-call arguments that are not valid JSON (a stream cut mid-arguments) cannot be written by
Go at all. golem persists them as ``{"truncated_args":"<verbatim>"}``, the exact object every
adapter sends on the wire for them, and restores the verbatim text on load (see
docs/adr/0002-persisting-truncated-args.md).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import msgspec
from msgspec.structs import astuple

from golem_cli.core.codec import goparse as _goparse
from golem_cli.core.codec.gojson import compact_json, html_escape_json
from golem_cli.core.codec.goparse import JSONSyntaxError, Node, Obj
from golem_cli.core.codec.toolargs import may_be_wrapped, truncated_wrapper, unwrap_truncated
from golem_cli.core.errors import HistoryFormatError
from golem_cli.core.messages import ASSISTANT, SYSTEM, TOOL, USER, Message, Part, ThinkingBlock, ToolCall

__all__ = ["dump_history", "load_history"]

# --- the field layout, read from the declarations in messages.py ---------------------------------
#
# ``Message`` and its parts are declared once, in messages.py. The decoding structs below and the
# Go-semantics reader's field tables are derived from those declarations at import, so a field
# added to ``Message`` is read and written everywhere without an edit here. Only a field of a
# type not in ``_KINDS`` needs one, and it fails at import until it has it.


class _Field(NamedTuple):
    attr: str  # the Python attribute
    key: str  # the JSON name
    kind: str  # how it is read: "str", "bool", "bytes", "raw" (verbatim JSON), or a list kind


# annotation in messages.py -> kind
_KINDS = {
    "str": "str",
    "bool": "bool",
    "bytes": "bytes",
    "list[Part]": "parts",
    "list[ToolCall]": "calls",
    "list[ThinkingBlock]": "thinking",
}
_ZEROS: dict[str, Any] = {"str": "", "bool": False, "bytes": b"", "raw": ""}
_LISTS = ("parts", "calls", "thinking")


def _layout(struct: type[msgspec.Struct], raw: tuple[str, ...] = ()) -> tuple[_Field, ...]:
    notes = struct.__annotations__
    names = zip(struct.__struct_fields__, struct.__struct_encode_fields__, strict=True)
    return tuple(_Field(attr, key, "raw" if attr in raw else _KINDS[notes[attr]]) for attr, key in names)


_MESSAGE = _layout(Message)
_CALL = _layout(ToolCall, raw=("args",))  # args are kept as the model wrote them: any JSON, or not JSON
_PART = _layout(Part)
_THINKING = _layout(ThinkingBlock)


def _zero(kind: str) -> Any:
    return [] if kind in _LISTS else _ZEROS[kind]


# --- fast path -------------------------------------------------------------------------------------


def _decoding_struct(name: str, layout: tuple[_Field, ...], types: dict[str, Any]) -> Any:
    """A struct that decodes exactly the files golem and Go write: every field optional (Go
    fills in zero values), unknown or differently spelled keys refused (the slow path reads
    those)."""
    fields = [(f.attr, types[f.kind], msgspec.Raw(b"") if f.kind == "raw" else _zero(f.kind)) for f in layout]
    rename = {f.attr: f.key for f in layout}
    return msgspec.defstruct(name, fields, rename=rename, gc=False, forbid_unknown_fields=True)


_SCALARS = {"str": str, "bool": bool, "bytes": bytes, "raw": msgspec.Raw}
_DecToolCall = _decoding_struct("_DecToolCall", _CALL, _SCALARS)
# Parts and thinking blocks decode into the public types directly: they forbid unknown keys.
_DecMessage = _decoding_struct(
    "_DecMessage",
    _MESSAGE,
    _SCALARS | {"parts": list[Part], "thinking": list[ThinkingBlock], "calls": list[_DecToolCall]},  # type: ignore[valid-type]  # a struct built at import
)
_decoder = msgspec.json.Decoder(list[_DecMessage] | None)  # type: ignore[valid-type]  # a struct built at import
_encoder = msgspec.json.Encoder()


def args_from_raw(raw: msgspec.Raw) -> str:
    """A tool call's arguments as golem holds them, from their bytes in a file (a truncated
    stream's wrapper undone)."""
    text = bytes(raw).decode("utf-8", "surrogateescape")
    if may_be_wrapped(text):
        restored = unwrap_truncated(text)
        if restored is not None:
            return restored
    return text


def _tool_calls(calls: list[Any]) -> list[ToolCall]:
    for c in calls:
        c.args = args_from_raw(c.args)
    return [ToolCall(*astuple(c)) for c in calls]


def load_history(data: bytes | bytearray | memoryview | str) -> list[Message]:
    """Read a JSON array of golem messages (``null`` reads as empty, as Go does).

    Unknown keys are ignored and keys match case-insensitively, as in Go. Raises
    ``HistoryFormatError`` naming the position and the problem for anything else, and never
    raises any other exception on bad input.
    """
    return read_history(data)[0]


def read_history(data: bytes | bytearray | memoryview | str) -> tuple[list[Message], bool]:
    """``load_history``, and whether the strict fast path read the bytes: spelled as golem and
    Go write histories, so that messages appended to them keep the file on the fast path (the
    store reuses such bytes, store/saving.py)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    elif not isinstance(data, bytes):
        data = bytes(data)
    long = len(data) > 2 * PIECE
    if long:
        # Long: a batch at a time all the same, so that the decoded copies of every message
        # never coexist (ADR 0016).
        view = memoryview(data)
        decoded = read_history_pieces(view[at : at + PIECE] for at in range(0, len(data), PIECE))
        if decoded is not None:
            return decoded
    if data.startswith(_BOM):
        data = data[3:]  # a byte-order mark from a Windows editor; Go would refuse it
    if not long:  # (a long one the fast path declined in pieces, it declines whole)
        messages = _decode(data, empty=True)
        if messages is not None:
            return messages, True
    return _load_slow(data), False


_BOM = b"\xef\xbb\xbf"

#: How the files golem and Go write continue with a new message (compact, ``role`` first). In
#: a string the quotes would be escaped, so only a tool call's raw ``args`` can hold these bytes
#: elsewhere: a cut there leaves a batch that does not decode, and is not taken.
_NEXT_MESSAGE = b',{"role":'
#: Bytes gathered before the whole messages among them are decoded (``read_history_pieces``).
PIECE = 1 << 21


def read_history_pieces(pieces: Iterable[bytes | memoryview]) -> tuple[list[Message], bool] | None:
    """``read_history`` of the bytes ``pieces`` make, decoded a batch of whole messages at a
    time as they arrive: a long file's bytes are never all held beside its messages (ADR
    0016). None when the strict fast path declines
    them: the caller reads them whole and calls ``read_history``, whose Go-semantics reader
    explains errors by position.

    A buffer of at least ``PIECE`` bytes is cut at its last ``,{"role":`` and the messages
    before it are decoded as one array. Such a batch decodes only if the cut is where a
    message ends (an unclosed object or string cannot be closed by one ``]``), and batches that
    each decode to one message or more join into an array that decodes to the same messages:
    the result is exactly the one decoding of the whole. A cut that fails is retried only
    once the buffer has doubled, so hostile bytes cost at most a few decodings of the file.
    """
    buf = bytearray()
    out: list[Message] = []
    retry_at = PIECE  # a smaller file is decoded in one pass, as read_history does
    searched = 1  # where the search for a cut resumes: the bytes before it hold none untried
    started = False
    for piece in pieces:
        buf += piece
        if not started and len(buf) >= len(_BOM):
            started = True
            if buf.startswith(_BOM):
                del buf[: len(_BOM)]
        if len(buf) < retry_at:
            continue
        cut = buf.rfind(_NEXT_MESSAGE, searched)
        searched = max(len(buf) - len(_NEXT_MESSAGE) + 1, 1)
        if cut < 0:
            continue
        buf[cut] = 0x5D  # "]": the batch is buf[: cut + 1], decoded where it lies
        with memoryview(buf) as view, view[: cut + 1] as batch:
            decoded = _decode(batch, empty=False)
        if decoded is None:
            buf[cut] = 0x2C  # ","
            retry_at = 2 * len(buf)
            continue
        out += decoded
        del buf[:cut]
        buf[0] = 0x5B  # "[": the rest is an array again
        searched = max(searched - cut, 1)
        retry_at = PIECE
    if not started and buf.startswith(_BOM):
        del buf[: len(_BOM)]
    with memoryview(buf) as view:
        decoded = _decode(view, empty=not out)
    if decoded is None:
        return None
    out += decoded
    return out, True


def decoded_fields(data: bytes | memoryview) -> list[Any] | None:
    """The messages of one JSON array as the strict fast path decodes them, before a
    ``Message`` is built: each with ``Message``'s fields, a tool call's arguments still their
    raw bytes (``args_from_raw``); ``[]`` for ``null``; None when the path declines the bytes.
    For a reader that needs a few fields of every message of many files (the index's rebuild,
    store/digest.py) and so builds no messages."""
    try:
        return _decoder.decode(data) or []
    except (msgspec.DecodeError, RecursionError):
        return None


def _decode(data: bytes | memoryview, *, empty: bool) -> list[Message] | None:
    """The messages of one JSON array on the strict fast path; None when it declines them
    (or finds none and ``empty`` is false: a batch must hold a message)."""
    decoded = decoded_fields(data)
    if decoded is None:
        return None
    if not decoded:
        return [] if empty else None
    # Same field order as Message (both come from its declaration): positional construction
    # from a tuple is the fastest way to build a long history's messages. Each is built in the
    # decoded one's place, which is freed at once: no second list of them. The names a run
    # repeats in every message (its role, run and conversation) are kept once each (ADR 0016).
    new, fields, role = Message, astuple, _ROLES.get
    run = conversation = ""
    for i, m in enumerate(decoded):
        if m.tool_calls:
            m.tool_calls = _tool_calls(m.tool_calls)
        m.role = role(m.role, m.role)
        if m.run_id == run:
            m.run_id = run
        else:
            run = m.run_id
        if m.conversation_id == conversation:
            m.conversation_id = conversation
        else:
            conversation = m.conversation_id
        decoded[i] = new(*fields(m))
    return decoded  # the structs were replaced by Messages


_ROLES = {role: role for role in (SYSTEM, USER, ASSISTANT, TOOL)}


# --- slow path: Go semantics -------------------------------------------------------------------

_ITEM_NAMES = {"parts": "part", "calls": "tool call", "thinking": "thinking block"}


class _BindError(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def _field_index(layout: tuple[_Field, ...]) -> tuple[dict[str, _Field], dict[str, _Field]]:
    return {f.key: f for f in layout}, {_goparse.fold_key(f.key): f for f in layout}


_INDEXES = {id(layout): _field_index(layout) for layout in (_MESSAGE, _CALL, _PART, _THINKING)}


def _bind_object(node: Node, layout: tuple[_Field, ...], what: str, text: str) -> list[Any]:
    """Go's struct decoding: exact key first, then case-insensitive; last occurrence wins.
    Returns the field values in declaration order (zero values for absent fields)."""
    out: dict[str, Any] = {}
    if node.value is not None and not isinstance(node.value, Obj):
        raise _BindError(f"{what} must be an object, found {_goparse.describe(node.value)}", node.start)
    exact, folded = _INDEXES[id(layout)]
    for key, val in node.value.pairs if node.value is not None else ():
        field = exact.get(key) or folded.get(_goparse.fold_key(key))
        if field is None:
            continue
        if field.kind == "raw":
            out[field.key] = text[val.start : val.end]
        elif val.value is None:
            out.pop(field.key, None)  # null leaves the zero value
        else:
            out[field.key] = _bind_value(field, val, what, text)
    return [out[f.key] if f.key in out else _zero(f.kind) for f in layout]


#: What a field of each scalar kind must be, and how the error says it.
_SCALAR_CHECKS: dict[str, tuple[type, str]] = {"str": (str, "a string"), "bool": (bool, "true or false")}


def _bind_value(field: _Field, val: Node, what: str, text: str) -> Any:
    """One field's value (not null): a checked scalar, base64 bytes, or a list of items."""
    where = f'{what}: field "{field.key}"'
    if field.kind in _SCALAR_CHECKS:
        kind, said = _SCALAR_CHECKS[field.kind]
        if not isinstance(val.value, kind):
            raise _BindError(f"{where} must be {said}, found {_goparse.describe(val.value)}", val.start)
        return val.value
    if field.kind == "bytes":
        return _base64(val, where)
    if not isinstance(val.value, list):
        raise _BindError(f"{where} must be an array, found {_goparse.describe(val.value)}", val.start)
    item_name = _ITEM_NAMES[field.kind]
    return [_bind_item(field.kind, item, f"{what}, {item_name} {i}", text) for i, item in enumerate(val.value)]


def _base64(val: Node, where: str) -> bytes:
    if not isinstance(val.value, str):
        raise _BindError(f"{where} must be a base64 string, found {_goparse.describe(val.value)}", val.start)
    cleaned = val.value.replace("\r", "").replace("\n", "")  # Go's decoder skips line breaks
    try:
        return base64.b64decode(cleaned.encode("ascii"), validate=True) if cleaned else b""
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise _BindError(f"{where} is not valid padded standard base64", val.start) from None


def _bind_item(kind: str, node: Node, what: str, text: str) -> Any:
    if kind == "parts":
        return Part(*_bind_object(node, _PART, what, text))
    if kind == "thinking":
        return ThinkingBlock(*_bind_object(node, _THINKING, what, text))
    call = ToolCall(*_bind_object(node, _CALL, what, text))
    if may_be_wrapped(call.args):
        call = msgspec.structs.replace(call, args=unwrap_truncated(call.args) or call.args)
    return call


def _load_slow(data: bytes) -> list[Message]:
    text = _goparse.decode_text(data)
    try:
        root = _goparse.parse(text)
        if root.value is None:
            return []
        if not isinstance(root.value, list):
            raise _BindError(
                f"a history must be a JSON array of messages, found {_goparse.describe(root.value)}",
                root.start,
            )
        return [Message(*_bind_object(node, _MESSAGE, f"message {i}", text)) for i, node in enumerate(root.value)]
    except (JSONSyntaxError, _BindError) as e:
        line, col = _goparse.line_col(text, e.pos)
        kind = "invalid JSON" if isinstance(e, JSONSyntaxError) else "not a golem history"
        raise HistoryFormatError(f"{kind} at line {line}, column {col}: {e}") from None


# --- dump ------------------------------------------------------------------------------------


def persisted_args(args: str) -> bytes:
    """The bytes a call's args take in a file: Go's compacted raw value, ``null`` for nil,
    and the ``truncated_args`` wrapper for text that is not valid JSON."""
    if args == "":
        return b"null"
    try:
        compacted = compact_json(args.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        compacted = None
    return compacted if compacted is not None else truncated_wrapper(args).encode()


def saved_args(args: str) -> str:
    """A call's ``args`` as they read back from the file ``dump_history`` writes: compacted
    and HTML-escaped as Go writes raw JSON, ``null`` for nil, cut-off arguments verbatim."""
    return args_from_raw(msgspec.Raw(html_escape_json(persisted_args(args))))


def as_saved(message: Message) -> Message:
    """``message`` as it reads back from the file ``dump_history`` writes (``saved_args``;
    the index must hold what a later reading of the file finds)."""
    if not message.tool_calls:
        return message
    calls = [msgspec.structs.replace(c, args=saved_args(c.args)) for c in message.tool_calls]
    return msgspec.structs.replace(message, tool_calls=calls)


def _to_enc(m: Message) -> Message:
    """The message as it is encoded: each call's args as raw JSON bytes (the encoder does not
    check the declared types, so the public structs carry them, and Go's omitempty rules are
    the declarations' defaults)."""
    calls = [msgspec.structs.replace(c, args=msgspec.Raw(persisted_args(c.args))) for c in m.tool_calls]
    return msgspec.structs.replace(m, tool_calls=calls)


#: Messages encoded at a time. The HTML-safe escaping then works on pieces that stay in the
#: CPU's cache (passes over a whole long history in memory cost as much as the encoding), and
#: a writer holds one piece of the file at a time, not the whole (``history_chunks``).
_BATCH = 256


def dump_history(messages: Iterable[Message]) -> bytes:
    """The exact bytes Go's ``json.Marshal([]model.Message)`` writes for ``messages``
    (keys in struct order, omitempty, HTML-safe escapes, base64, compacted raw args)."""
    return b"".join(history_chunks(messages))


def history_chunks(messages: Iterable[Message]) -> Iterator[bytes]:
    """``dump_history(messages)`` in pieces of a few hundred messages, in order: what a
    writer streams to a file, so a long history is never held twice (as messages and as one
    block of bytes) nor copied whole."""
    history = messages if isinstance(messages, list) else list(messages)
    yield b"["
    for start in range(0, len(history), _BATCH):
        if start:
            yield b","
        yield _encode_items(history[start : start + _BATCH])
    yield b"]"


def drain_chunks(messages: list[Message]) -> Iterator[bytes]:
    """``history_chunks(messages)`` for a caller done with the messages: the list is emptied
    as it is encoded, a batch at a time, so that what only it held is freed as it is written.
    Encoding keeps a UTF-8 copy inside every string that is not ASCII (CPython caches it),
    which only freeing the message frees (ADR 0016)."""
    yield b"["
    messages.reverse()  # batches are taken from the end: no list of the rest is made per batch
    first = True
    while messages:
        batch = messages[-_BATCH:]
        del messages[-_BATCH:]
        batch.reverse()
        if not first:
            yield b","
        first = False
        yield _encode_items(batch)
        del batch
    yield b"]"


def dump_with_batches(messages: Iterable[Message]) -> tuple[bytes, list[tuple[int, int]]]:
    """``dump_history(messages)`` and where its batches of whole messages lie in it, as
    (start, end) offsets: the array is ``[`` batch ``,`` batch ... ``]``, and a reader can check
    the batches one at a time instead of decoding every message at once (store/saving.py)."""
    chunks = list(history_chunks(messages))  # "[", batch, ",", batch, ..., "]"
    batches, at = [], 0
    for i, chunk in enumerate(chunks):
        if i % 2 and i < len(chunks) - 1:
            batches.append((at, at + len(chunk)))
        at += len(chunk)
    return b"".join(chunks), batches


def dump_appended(dumped: bytes, more: Sequence[Message]) -> bytes:
    """``dump_history(old + more)`` from ``dumped``, the bytes ``dump_history(old)`` wrote for
    a non-empty ``old``: only ``more`` is encoded, ``dumped`` is copied (the messages of an
    array are encoded independently, so the bytes of a longer history start with those of a
    shorter one, up to its closing bracket)."""
    if not more:
        return dumped
    chunks = history_chunks(more)
    next(chunks)  # the opening bracket: a comma continues the array instead
    return b"".join([memoryview(dumped)[:-1], b",", *chunks])


def _encode_items(batch: list[Message]) -> bytes:
    """Some messages as Go writes them, comma-separated, without the array's brackets."""
    wire = [_to_enc(m) if m.tool_calls else m for m in batch]
    try:
        encoded = _encoder.encode(wire)
    except UnicodeEncodeError:
        encoded = _encoder.encode([_without_surrogates(m) for m in wire])
    return html_escape_json(encoded)[1:-1]


def _without_surrogates(m: Any) -> Any:
    """Go writes invalid UTF-8 as U+FFFD; a Python string can only carry it as lone
    surrogates, which the encoder refuses, so they are replaced first (rare path)."""
    if isinstance(m, str):
        return _goparse._SURROGATE.sub("\ufffd", m)
    if isinstance(m, list):
        return [_without_surrogates(x) for x in m]
    if isinstance(m, msgspec.Struct):
        changes = {f: _without_surrogates(getattr(m, f)) for f in m.__struct_fields__}
        return msgspec.structs.replace(m, **changes)
    return m
