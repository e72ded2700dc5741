"""Which TLS context an adapter's client gets: certifi's bundle wherever TLS may be spoken, and
for a plain-http endpoint with no proxy, one that trusts nothing (a handshake there fails)."""

from __future__ import annotations

import ssl

import pytest
from golem_cli.providers._http import tls_context

PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)


def trusted(context: ssl.SSLContext) -> int:
    return context.cert_store_stats()["x509_ca"]


def test_an_https_endpoint_verifies_against_the_bundle() -> None:
    context = tls_context("https://api.example.com/v1")
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert trusted(context) > 0, "an https endpoint's context must hold the CA bundle"


def test_a_plain_http_endpoint_trusts_no_certificate() -> None:
    context = tls_context("http://127.0.0.1:11434/v1")
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname, "a handshake must still be checked"
    assert trusted(context) == 0, "a plain-http endpoint needs no CA bundle"


@pytest.mark.parametrize("name", PROXIES)
def test_a_proxy_variable_keeps_the_bundle_for_plain_http(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "https://proxy.example.com:3128")
    assert trusted(tls_context("http://127.0.0.1:11434/v1")) > 0, f"{name} may lead over TLS: the bundle is needed"
