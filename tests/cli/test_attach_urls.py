"""An attachment URL that cannot be fetched says why in words, and a URL of another scheme is
named as a URL golem cannot attach (it used to be "no such file"; a refused connection was
"cannot download: ConnectError")."""

from __future__ import annotations

from tests.cli.conftest import assert_one_line_error

ENV = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}  # never reached


def test_a_refused_download_says_so_and_what_to_do(golem_main, home, refused_port):
    url = f"http://127.0.0.1:{refused_port}/report.pdf"  # a PDF by URL: OpenAI needs it inline
    done = golem_main("ask", "-m", "openai:gpt-4o-mini", "-a", url, "summarize", env=ENV)
    assert done.code == 2
    assert_one_line_error(done)
    assert f"{url}: cannot download: " in done.err and "ConnectError" not in done.err
    assert "refused" in done.err.lower() and "download it yourself and attach the file" in done.err


def test_a_url_of_another_scheme_is_not_called_a_missing_file(golem_main, home):
    for url in ("ftp://example.com/notes.txt", "s3://bucket/key.png"):
        done = golem_main("ask", "-m", "offline:echo", "-a", url, "x")
        assert done.code == 2
        assert_one_line_error(done)
        assert f"{url}: only http(s) URLs can be attached" in done.err, done.err
