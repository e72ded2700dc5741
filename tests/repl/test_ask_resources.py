"""A tool server's resources in ``golem ask``, as in the chat: ``@SERVER:URI`` in the prompt and
``-a @SERVER:URI`` attach the resource read from the running server, a mention of a name that
is no running server stays text, and a resource that cannot be read sends nothing. The server
is the SDK-built demo (tests/mcpservers/demo_app.py, over HTTP from a thread of this process);
the provider is the loopback one; golem runs through its entry point in this process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from golem_cli.store import Store

from tests.mcpservers import demo_toml, url_toml
from tests.mcpservers.threaded import http_demo
from tests.providerserver import ProviderServer

pytestmark = pytest.mark.slow
README = '<file name="@demo:demo://readme">\n# Demo\nA server for golem\'s tests.\n</file>'
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    with http_demo() as url:
        yield url


@pytest.fixture
def demo(home: Path, demo_url: str) -> Path:
    """The test's home with the demo server configured as `demo`."""
    config = home / "config.toml"
    config.write_text(config.read_text() + url_toml("demo", demo_url) + demo_toml("bad", "--exit-at-start", "3"))
    return home


def asked(server: ProviderServer) -> object:
    (user,) = [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "user"]
    return user


def test_a_mention_in_the_prompt_sends_the_resource_and_another_name_stays_text(golem_main, demo, server):
    done = golem_main("ask", "-T", "demo", "summarise @demo:demo://readme for me@example.com or @nobody:x://y")
    assert done.code == 0, done.err
    assert asked(server) == f"summarise @demo:demo://readme for me@example.com or @nobody:x://y\n\n{README}"


def test_attach_takes_a_servers_image_and_text_once(golem_main, demo, server):
    done = golem_main("ask", "-T", "demo", "-a", "@demo:demo://pixel.png", "-a", "@demo:demo://readme",
                      "what is @demo:demo://readme?")  # fmt: skip
    assert done.code == 0, done.err
    content = asked(server)
    assert isinstance(content, list)
    assert content[0] == {"type": "text", "text": f"what is @demo:demo://readme?\n\n{README}"}  # once, not twice
    assert content[1]["image_url"]["url"] == f"data:image/png;base64,{PNG}"


def test_a_resource_that_cannot_be_read_sends_and_saves_nothing(golem_main, demo, server):
    before = len(server.requests)
    done = golem_main("ask", "-T", "demo", "read @demo:demo://nothing please")
    assert done.code == 2
    (line,) = done.err.splitlines()  # one line: what, and that nothing went
    assert line.startswith("golem: @demo:demo://nothing: tool server 'demo' could not read demo://nothing")
    assert line.endswith("; nothing was sent")
    assert len(server.requests) == before
    assert Store(demo).list() == []


def test_attaching_from_a_server_that_is_not_running_says_how_to_start_it(golem_main, demo, server):
    done = golem_main("ask", "-a", "@demo:demo://readme", "hi")
    assert done.code == 2
    assert "golem: @demo:demo://readme: no running tool server named 'demo'; -T SERVER starts one" in done.err
    assert Store(demo).list() == []


def test_a_resource_of_a_server_that_did_not_start_says_so(golem_main, demo, server):
    before = len(server.requests)
    done = golem_main("ask", "-T", "bad", "-a", "@bad:demo://readme", "read it")
    assert done.code == 2
    assert "golem: @bad:demo://readme: tool server 'bad' is not running (it did not start" in done.err
    assert "did not start: exited at start" in done.err  # the server's own line, first
    assert len(server.requests) == before


def test_a_mention_inside_an_attached_file_is_the_files_text_not_a_request(golem_main, demo, server, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("see @demo:demo://readme\n")
    done = golem_main("ask", "-T", "demo", "-a", str(notes), "summarise this")
    assert done.code == 0, done.err
    assert asked(server) == 'summarise this\n\n<file name="notes.txt">\nsee @demo:demo://readme\n</file>'
