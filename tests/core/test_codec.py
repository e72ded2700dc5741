"""The JSON contract with Go golem: byte-exact dump, Go-semantics load, clear errors."""

from __future__ import annotations

import base64
import json
import re

import pytest
from golem_cli.core.codec import history as codec
from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.codec.toolargs import wire_args
from golem_cli.core.errors import HistoryFormatError
from golem_cli.core.history.repair import normalize_history
from golem_cli.core.messages import Message, ThinkingBlock, ToolCall
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.strategies import HISTORIES, JSON_VALUES, TEXT, messages
from tests.vectors import DATA

SPEC = DATA / "spec" / "golem-history-contract.md"


def spec_example_bytes() -> bytes:
    doc = SPEC.read_text(encoding="utf-8")
    start = doc.index("Exact bytes Go produces for it")
    body = doc.index("```", start) + 3
    return doc[body : doc.index("```", body)].strip().encode()


def test_spec_example_round_trips_byte_exact():
    exact = spec_example_bytes()
    history = load_history(exact)
    assert len(history) == 7
    assert history[1].parts[1].data == bytes.fromhex("89504E470D0A")
    assert history[2].tool_calls[0].args == '{"sides":6}'
    assert history[2].thinking[1] == ThinkingBlock(redacted="RW5jcnlwdGVk")
    assert history[5].failed is True
    assert dump_history(history) == exact


def test_pinned_shapes():
    assert dump_history([Message(role="user", content="hi")]) == b'[{"role":"user","content":"hi"}]'
    call = Message(role="assistant", tool_calls=[ToolCall("call-1", "roll_dice", '{"guess":4}')])
    assert dump_history([call]) == (
        b'[{"role":"assistant","toolCalls":[{"id":"call-1","name":"roll_dice","args":{"guess":4}}]}]'
    )
    result = Message(role="tool", content="4", tool_call_id="call-1", tool_name="roll_dice")
    assert dump_history([result]) == b'[{"role":"tool","content":"4","toolCallId":"call-1","toolName":"roll_dice"}]'
    signed = Message(role="assistant", tool_calls=[ToolCall("c", "f", "{}", "sig")], thinking=[ThinkingBlock("t", "s")])
    assert dump_history([signed]).index(b"toolCalls") < dump_history([signed]).index(b"thinking")
    assert dump_history([]) == b"[]"
    assert dump_history([Message(role="")]) == b'[{"role":""}]'
    assert dump_history([Message(role="assistant", tool_calls=[ToolCall("", "")])]) == (
        b'[{"role":"assistant","toolCalls":[{"id":"","name":"","args":null}]}]'
    )


def test_go_string_escapes():
    text = 'a<b>&c"\\\n\r\t\b\f\x00\x1f\x7f\u2028\u2029é😀'
    out = dump_history([Message(role="user", content=text)])
    assert out == (
        '[{"role":"user","content":"a\\u003cb\\u003e\\u0026c\\"\\\\\\n\\r\\t\\b\\f\\u0000\\u001f\x7f'
        '\\u2028\\u2029é😀"}]'
    ).encode()
    assert load_history(out)[0].content == text


def test_args_are_compacted_with_spelling_kept():
    args = ' {"a" : 1.0, "b":[1e2, "\\u00e9\\/ x <y>"], "a":2}\n'
    out = dump_history([Message(role="assistant", tool_calls=[ToolCall("c", "f", args)])])
    assert b'"args":{"a":1.0,"b":[1e2,"\\u00e9\\/ x \\u003cy\\u003e"],"a":2}' in out
    assert load_history(out)[0].tool_calls[0].args == '{"a":1.0,"b":[1e2,"\\u00e9\\/ x \\u003cy\\u003e"],"a":2}'


@pytest.mark.parametrize("args", ['{"sides":', "   ", "{\"a\":1}{\"b\":2}", '{"a":NaN}', "not json <&>", '"unterminated'])
def test_truncated_args_persist_without_loss(args):
    history = [Message(role="assistant", tool_calls=[ToolCall("c1", "roll", args)])]
    data = dump_history(history)
    # The file is valid JSON that Go can unmarshal: args is the truncated_args object.
    parsed = json.loads(data)
    assert parsed[0]["toolCalls"][0]["args"] == {"truncated_args": args}
    # ...which is byte for byte what every adapter sends for these args (blank args go as {}).
    if args.strip():
        assert re.search(rb'"args":(\{.*\})\}\]\}\]$', data).group(1) == wire_args(args).encode()
    loaded = load_history(data)
    assert loaded[0].tool_calls[0].args == args
    assert normalize_history(loaded)[1].truncated == ["c1"]
    assert dump_history(loaded) == data


@pytest.mark.parametrize("spelling", [
    {},  # Python's json.dump: a space after each colon, non-ASCII as u-escapes
    {"indent": 2},  # jq's and json.dump(indent=2)'s: one key a line
    {"ensure_ascii": False, "separators": (",", ":")},  # Go's own, for comparison
])  # fmt: skip
@pytest.mark.parametrize("args", ['{"sides":', "café {<&>", '"unterminated'])
def test_truncated_args_are_recognised_in_any_json_spelling(args, spelling):
    """A history golem wrote, re-spelled by jq or json.dump, still holds a call that was cut
    off: it was reported only in Go's compact spelling."""
    data = json.loads(dump_history([Message(role="assistant", tool_calls=[ToolCall("c1", "roll", args)])]))
    respelled = json.dumps(data, **spelling).encode()
    loaded = load_history(respelled)
    assert loaded[0].tool_calls[0].args == args
    assert normalize_history(loaded)[1].truncated == ["c1"]
    assert b'"args":{"truncated_args":' in dump_history(loaded)  # written back in Go's spelling


@pytest.mark.parametrize("args", [
    '{"truncated_args": "{}"}',  # its string is valid JSON: golem never wraps that
    '{"truncated_args": "{", "more": 1}',  # another key
    '{"truncated_args": "{", "truncated_args": "{"}',  # the key twice
    '{"truncated_args": 5}',
])  # fmt: skip
def test_objects_that_are_not_the_wrapper_are_kept(args):
    data = dump_history([Message(role="assistant", tool_calls=[ToolCall("c", "f", args)])])
    assert load_history(data)[0].tool_calls[0].args == json_compacted(args)


def json_compacted(args: str) -> str:
    return args.replace('": ', '":').replace(", ", ",")


def test_genuine_truncated_args_object_is_kept_when_not_a_wrapper():
    # A model may really send {"truncated_args": "{}"}; its content is valid JSON, so it is
    # not golem's wrapper and must stay as it is.
    args = '{"truncated_args":"{}"}'
    data = dump_history([Message(role="assistant", tool_calls=[ToolCall("c", "f", args)])])
    assert load_history(data)[0].tool_calls[0].args == args


def test_nil_and_null_args():
    nil = dump_history([Message(role="assistant", tool_calls=[ToolCall("c", "f", "")])])
    assert b'"args":null' in nil
    assert load_history(nil)[0].tool_calls[0].args == "null"
    missing = load_history(b'[{"role":"assistant","toolCalls":[{"id":"c","name":"f"}]}]')
    assert missing[0].tool_calls[0].args == ""


# --- Go decoding semantics -------------------------------------------------------------------


def test_keys_match_case_insensitively_and_unknown_keys_are_ignored():
    data = b'[{"ROLE":"user","Content":"hi","TOOLCALLID":"x","extra":{"deep":[1,2]},"runid":"r"}]'
    assert load_history(data) == [Message(role="user", content="hi", tool_call_id="x", run_id="r")]


def test_go_special_folds():
    # U+017F (long s) folds onto s and U+212A (Kelvin) onto k in Go; dotless i does not fold.
    data = '[{"role":"user","content":"a","parts":[{"\u212aind":"image","url":"https://x"}]},{"role":"assistant","toolCalls":[{"id":"c","name":"f","args":{},"\u017fignature":"s"}]},{"role":"user","contentı":"no"}]'
    out = load_history(data)
    assert out[0].parts[0].kind == "image"
    assert out[1].tool_calls[0].signature == "s"
    assert out[2].content == ""


def test_last_repeated_key_wins_and_null_means_zero():
    out = load_history(b'[{"role":"user","content":"a","Content":"b","parts":null,"failed":null}]')
    assert out == [Message(role="user", content="b")]
    assert load_history(b"[null]") == [Message(role="")]
    assert load_history(b"null") == []
    assert load_history(b"[]") == []


def test_escaped_keys_and_base64_line_breaks():
    out = load_history(b'[{"r\\u006fle":"user","parts":[{"kind":"image","data":"AQID\\r\\nBA==","mediaType":"x/y"}]}]')
    assert out[0].role == "user"
    assert out[0].parts[0].data == b"\x01\x02\x03\x04"


def test_invalid_utf8_and_lone_surrogates_become_replacement_characters():
    out = load_history(b'[{"role":"user","content":"a\xffb\xe2\x82","toolName":"\\ud800x\\udc00"}]')
    assert out[0].content == "a\ufffdb\ufffd\ufffd"
    assert out[0].tool_name == "\ufffdx\ufffd"


def test_byte_order_mark_is_tolerated():
    assert load_history(b'\xef\xbb\xbf[{"role":"user"}]') == [Message(role="user")]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", "invalid JSON at line 1, column 1: unexpected end of JSON input"),
        (b"[1,", "invalid JSON at line 1, column 4"),
        (b'{"role":"user"}', "a history must be a JSON array of messages, found object"),
        (b'"text"', "found string"),
        (b"[1]", "message 0 must be an object, found number"),
        (b'[{"role":"user"},\n {"role":5}]', 'line 2, column 10: message 1: field "role" must be a string, found number'),
        (b'[{"role":"tool","failed":"yes"}]', 'field "failed" must be true or false, found string'),
        (b'[{"role":"user","parts":{}}]', 'field "parts" must be an array, found object'),
        (b'[{"role":"user","parts":[{"kind":"image","data":"AQI"}]}]', 'message 0, part 0: field "data" is not valid padded standard base64'),
        (b'[{"role":"assistant","toolCalls":[{"id":7}]}]', 'message 0, tool call 0: field "id" must be a string'),
        (b'[{"role":"user"}] x', "invalid JSON at line 1, column 19"),
        (b"\xff\xfe[\x00", "invalid JSON"),
        (b'[{"role":"user","content":"a\x01"}]', "invalid JSON"),
        (b"[NaN]", "invalid JSON"),
        (b"[" * 20000, "invalid JSON"),
    ],
)
def test_errors_name_position_and_problem(data, expected):
    with pytest.raises(HistoryFormatError) as info:
        load_history(data)
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


@given(st.binary(max_size=60) | st.text(max_size=60).map(str.encode))
def test_load_never_raises_anything_but_history_format_error(data):
    try:
        out = load_history(data)
    except HistoryFormatError:
        return
    assert isinstance(out, list)


# --- independent oracle and fast/slow agreement ----------------------------------------------


_OUTSIDE_STRING_SPACE = re.compile(r'("(?:[^"\\]|\\.)*")|[ \t\n\r]+', re.DOTALL)


def oracle_args(args: str) -> str:
    """Go's persisted args, from the stdlib json module and a regex, not from golem."""
    if args == "":
        return "null"

    def no_constants(name: str) -> None:
        raise ValueError(name)

    try:
        json.loads(args, parse_constant=no_constants)
    except (ValueError, RecursionError):
        return '{"truncated_args":' + json.dumps(args, ensure_ascii=False) + "}"
    return _OUTSIDE_STRING_SPACE.sub(r"\1", args)


def go_marshal_oracle(history: list[Message]) -> bytes:
    """Go's encoding built from Python's json module, independently of golem's encoder."""

    def obj(m: Message) -> dict:
        d: dict = {"role": m.role}
        if m.content:
            d["content"] = m.content
        if m.parts:
            d["parts"] = [
                {k: v for k, v in (("kind", p.kind), ("url", p.url), ("data", base64.b64encode(p.data).decode()),
                                   ("mediaType", p.media_type)) if k == "kind" or v}
                for p in m.parts
            ]  # fmt: skip
        if m.tool_calls:
            d["toolCalls"] = [
                {"id": c.id, "name": c.name, "args": "\x00ARGS" + oracle_args(c.args) + "\x00",
                 **({"signature": c.signature} if c.signature else {})}
                for c in m.tool_calls
            ]  # fmt: skip
        for key, value in (("toolCallId", m.tool_call_id), ("toolName", m.tool_name), ("failed", m.failed)):
            if value:
                d[key] = value
        if m.thinking:
            d["thinking"] = [{k: v for k, v in (("text", t.text), ("signature", t.signature), ("redacted", t.redacted)) if v}
                             for t in m.thinking]  # fmt: skip
        for key, value in (("runId", m.run_id), ("conversationId", m.conversation_id)):
            if value:
                d[key] = value
        return d

    text = json.dumps([obj(m) for m in history], separators=(",", ":"), ensure_ascii=False)
    text = re.sub(r'"\\u0000ARGS(.*?)\\u0000"', lambda mt: json.loads('"' + mt.group(1) + '"'), text)
    for a, b in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(a, b)
    return text.encode("utf-8", "surrogateescape")


@given(st.sampled_from([" ", "\n", "", "\t "]), JSON_VALUES, st.booleans())
def test_args_compaction_matches_regex_oracle(space, value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only, indent=1 if space == "\n" else None).replace(",", "," + space)
    expected = oracle_args(text)
    for a, b in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        expected = expected.replace(a, b) if expected.startswith('{"truncated_args":') else expected
    assert codec.persisted_args(text).decode() == expected


@given(HISTORIES)
def test_dump_matches_independent_go_oracle(history):
    assert dump_history(history) == go_marshal_oracle(history)


@settings(max_examples=30)
@given(st.lists(messages(), min_size=1, max_size=12), st.integers(0, 5))
def test_dump_of_a_history_spanning_batches_matches_the_oracle(history, extra):
    """dump_history encodes ``codec._BATCH`` messages at a time: the pieces join exactly."""
    long = (history * (2 * codec._BATCH // len(history) + 2))[: 2 * codec._BATCH + extra]
    assert dump_history(long) == go_marshal_oracle(long)
    assert dump_history(iter(long)) == dump_history(tuple(long)) == dump_history(long)


@settings(max_examples=40)  # messages() draws much
@given(st.lists(messages(), min_size=1, max_size=6), st.lists(messages(), max_size=6), st.integers(0, 2 * codec._BATCH))
def test_a_dump_appended_to_is_the_dump_of_the_whole(old, more, length):
    """``dump_appended`` encodes only the new messages: the bytes are Go's for all of them,
    whichever batch the old ones ended in."""
    old = (old * (length // len(old) + 1))[: max(1, length)]
    appended = codec.dump_appended(dump_history(old), more)
    assert appended == dump_history(old + more) == go_marshal_oracle(old + more)


def test_a_long_history_is_written_in_pieces_of_a_batch():
    """A writer holds a few hundred messages' bytes at a time, never the whole file."""
    history = [Message("user", f"message {i} <&>") for i in range(1000)]
    chunks = list(codec.history_chunks(history))
    assert b"".join(chunks) == dump_history(history) == go_marshal_oracle(history)
    pieces = chunks[1:-1:2]  # between the brackets, separated by commas
    assert chunks[0] == b"[" and chunks[-1] == b"]" and set(chunks[2:-1:2]) == {b","}
    assert [len(load_history(b"[" + piece + b"]")) for piece in pieces] == [256, 256, 256, 232]


KEY_SPELLINGS = st.sampled_from([str.lower, str.upper, lambda s: s, lambda s: s[:1].upper() + s[1:]])


@st.composite
def foreign_json(draw) -> bytes:
    """A golem file as another writer might spell it: key case, unknown keys, nulls, spaces."""
    history = draw(HISTORIES)
    items = json.loads(dump_history(history))
    out = []
    for item in items:
        if draw(st.booleans()):
            item = {draw(KEY_SPELLINGS)(k): v for k, v in item.items()}
        if draw(st.booleans()):
            item["unknownKey"] = draw(TEXT)
        if draw(st.booleans()):
            item["toolName"] = None
        out.append(item)
    return json.dumps(out, indent=draw(st.sampled_from([None, 1])), ensure_ascii=draw(st.booleans())).encode()


@given(foreign_json())
def test_fast_path_agrees_with_go_semantics_reader(data):
    assert load_history(data) == codec._load_slow(data)


@given(HISTORIES, st.lists(st.tuples(st.integers(0, 10**6), st.binary(max_size=3)), min_size=1, max_size=4))
def test_damaged_files_load_or_fail_cleanly(history, edits):
    """Real files broken in a few bytes (a torn copy, a bad edit): either a history that then
    round-trips, or one HistoryFormatError line; nothing else."""
    data = bytearray(dump_history(history))
    for pos, replacement in edits:
        if data:
            at = pos % len(data)
            data[at : at + 1] = replacement
    try:
        loaded = load_history(bytes(data))
    except HistoryFormatError as e:
        assert "\n" not in str(e)
        return
    again = dump_history(loaded)
    assert dump_history(load_history(again)) == again


# --- the field layout comes from the one declaration in messages.py ----------------------------


def _filled(struct: type) -> object:
    """An instance of ``struct`` with every field set to a value other than its default, by
    type, so a field added to the declaration is covered without editing this test."""
    import typing

    import msgspec

    values = {}
    for f in msgspec.structs.fields(struct):
        if f.name == "args":
            values[f.name] = '{"q":"x"}'
        elif f.type is str:
            values[f.name] = f"{f.name}-value"
        elif f.type is bool:
            values[f.name] = True
        elif f.type is bytes:
            values[f.name] = b"\x00\xffdata"
        elif typing.get_origin(f.type) is list:
            values[f.name] = [_filled(typing.get_args(f.type)[0])]
        else:
            raise AssertionError(f"no test value for {struct.__name__}.{f.name}: {f.type}")
    return struct(**values)


def test_every_declared_field_is_written_and_read_on_both_paths():
    import msgspec

    message = _filled(Message)
    data = dump_history([message])
    for struct in (Message, ToolCall, ThinkingBlock, codec.Part):
        for f in msgspec.structs.fields(struct):
            assert f'"{f.encode_name}":'.encode() in data, f"{struct.__name__}.{f.name} is not written"
    assert load_history(data) == [message]  # the strict fast path
    slow = data.replace(b'{"role"', b'{"notAField":1,"role"', 1)  # an unknown key: the Go-semantics reader
    assert codec._decoder.decode(data) and load_history(slow) == [message]
    with pytest.raises(msgspec.ValidationError):
        codec._decoder.decode(slow)  # it really took the slow path


def test_decoding_structs_mirror_the_declarations():
    import msgspec

    for public, decoding in ((Message, codec._DecMessage), (ToolCall, codec._DecToolCall)):
        assert decoding.__struct_fields__ == public.__struct_fields__
        assert decoding.__struct_encode_fields__ == public.__struct_encode_fields__
        assert all(f.default is not msgspec.NODEFAULT or f.default_factory is not msgspec.NODEFAULT
                   for f in msgspec.structs.fields(decoding))  # Go reads a missing key as zero  # fmt: skip
