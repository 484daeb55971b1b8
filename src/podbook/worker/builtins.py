"""The old name of :mod:`podbook.worker._builtins`, kept while the emulator's
``BUILTIN_HANDLERS`` (``src/podbook/emulator/broker/endpoints.py``) name the built-in
handlers ``podbook.worker.builtins:fn``; delete it when they name ``podbook.worker._builtins``."""

from podbook.worker._builtins import chat_demo, echo, stream_demo

__all__ = ["chat_demo", "echo", "stream_demo"]
