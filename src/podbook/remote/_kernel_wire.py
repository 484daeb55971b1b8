"""The kernel protocol on jupyter_server's WebSocket: messages out, messages in, outputs.

Messages are built by :class:`jupyter_client.session.Session` (ids, header, date, protocol
version) and travel as jupyter_server's default WebSocket form: a JSON text frame holding the
message with its ``channel``, or a binary frame (offsets, then the JSON, then the buffers)
when a message carries buffers.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from podbook.remote.outputs import (
    ClearOutput,
    DisplayData,
    ExecuteError,
    ExecuteResult,
    KernelOutput,
    StreamText,
    UpdateDisplayData,
)

__all__ = ["decode", "encode", "new_session", "to_output"]


def new_session(session_id: str | None = None) -> Any:
    """A jupyter_client ``Session`` (``session_id``: reuse an id, so that the server replays
    what it buffered for it after a reconnect)."""
    from jupyter_client.session import Session

    if session_id is None:
        return Session(username="podbook")
    return Session(username="podbook", session=session_id)


def encode(
    session: Any, msg_type: str, content: dict[str, Any], channel: str = "shell"
) -> tuple[str, str]:
    """A new request as ``(msg_id, text frame)``."""
    from jupyter_client.jsonutil import json_default

    msg = session.msg(msg_type, content)
    msg["channel"] = channel
    msg["buffers"] = []
    return msg["msg_id"], json.dumps(msg, default=json_default)


def decode(frame: str | bytes) -> dict[str, Any] | None:
    """A message from a WebSocket frame (None when it is not one)."""
    try:
        if isinstance(frame, str):
            msg = json.loads(frame)
        else:
            count = struct.unpack("!I", frame[:4])[0]
            offsets = [*struct.unpack(f"!{count}I", frame[4 : 4 * (count + 1)]), len(frame)]
            msg = json.loads(frame[offsets[0] : offsets[1]].decode("utf-8"))
            msg["buffers"] = [frame[a:b] for a, b in zip(offsets[1:-1], offsets[2:], strict=True)]
    except (ValueError, struct.error, UnicodeDecodeError):
        return None
    return msg if isinstance(msg, dict) else None


def parent_id(msg: dict[str, Any]) -> str | None:
    """The ``msg_id`` of the request a message answers (None for unsolicited ones)."""
    parent = msg.get("parent_header") or {}
    return parent.get("msg_id") if isinstance(parent, dict) else None


def msg_type(msg: dict[str, Any]) -> str:
    """The message's type (``stream``, ``status``, ``execute_reply``, ...)."""
    header = msg.get("header") or {}
    return str(msg.get("msg_type") or header.get("msg_type") or "")


def to_output(msg: dict[str, Any]) -> KernelOutput | None:
    """The typed output of an iopub message (None for those that are not outputs:
    ``status``, ``execute_input``, comm messages, ...)."""
    kind = msg_type(msg)
    content = msg.get("content") or {}
    if kind == "stream":
        name = "stderr" if content.get("name") == "stderr" else "stdout"
        return StreamText(name=name, text=str(content.get("text", "")))
    if kind in ("display_data", "update_display_data"):
        transient = content.get("transient") or {}
        cls = UpdateDisplayData if kind == "update_display_data" else DisplayData
        return cls(
            data=dict(content.get("data") or {}),
            metadata=dict(content.get("metadata") or {}),
            display_id=transient.get("display_id"),
        )
    if kind == "execute_result":
        return ExecuteResult(
            data=dict(content.get("data") or {}),
            metadata=dict(content.get("metadata") or {}),
            execution_count=content.get("execution_count"),
        )
    if kind == "clear_output":
        return ClearOutput(wait=bool(content.get("wait", False)))
    if kind == "error":
        return error_of(content)
    return None


def error_of(content: dict[str, Any]) -> ExecuteError:
    """The error of an ``error`` message or of an ``execute_reply`` whose status is error."""
    return ExecuteError(
        ename=str(content.get("ename", "Error")),
        evalue=str(content.get("evalue", "")),
        traceback=tuple(str(line) for line in content.get("traceback") or ()),
    )
