"""A loopback server speaking OpenAI chat completions and Anthropic Messages, for tests.

``ProviderServer().start_in_thread()`` in tests and benchmarks, ``python -m tests.providerserver
--port N`` for people. Requests are validated like the real APIs validate them; faults are
injected per request with ``Scenario``.
"""

from tests.providerserver.cache import CacheFigures, PromptCache
from tests.providerserver.recordings import RECORDINGS, load_recording, recording_paths
from tests.providerserver.render import Reply, ToolCallSpec
from tests.providerserver.server import PRESETS, ProviderServer, Received, Scenario

__all__ = [
    "PRESETS",
    "CacheFigures",
    "PromptCache",
    "RECORDINGS",
    "ProviderServer",
    "Received",
    "Reply",
    "Scenario",
    "ToolCallSpec",
    "load_recording",
    "recording_paths",
]
