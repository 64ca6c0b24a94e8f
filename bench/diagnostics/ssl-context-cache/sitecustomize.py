"""Diagnostic for the side-by-side bench: reuse one TLS context per set of CA settings.

fast-agent 0.7.22 builds a new OpenAI client for every model call, and with it a new TLS context
(`httpx._config.create_ssl_context` -> `ssl.create_default_context`), which parses the whole CA
bundle each time. Put this folder on the target's PYTHONPATH to measure the bridge without that
cost; see README.md, "Performance".
This changes the bridge under test: its figures are a diagnosis, never a certification result.
"""

import ssl

_create = ssl.create_default_context
_contexts = {}


def _shared_context(purpose=ssl.Purpose.SERVER_AUTH, *, cafile=None, capath=None, cadata=None):
    key = (purpose, cafile, capath, cadata)
    if key not in _contexts:
        _contexts[key] = _create(purpose, cafile=cafile, capath=capath, cadata=cadata)
    return _contexts[key]


ssl.create_default_context = _shared_context
