"""Variables between this Python and a pod's kernel: :meth:`RemoteKernel.put` and
:meth:`RemoteKernel.get`.

Values travel pickled (each on its own, so an error names the variable), the whole as a
pickled ``{name: pickled value}``, cut into base64 chunks of :data:`CHUNK_BYTES`. Each chunk
is one WebSocket message, well under jupyter_server's 10 MiB limit on what it accepts.

Out (``put``): silent execute requests whose ``user_expressions`` call the podbook agent
(:mod:`podbook.remote._kernel_agent`, installed in the kernel as the module
``_podbook_agent``): ``begin``, one ``chunk`` per piece, then ``finish``, which sets the
variables only once every value loaded. User expressions are evaluated as plain Python, with
no IPython cell transforms (a 2 MiB chunk costs ~0.1 s that way, ~0.9 s as cell code), and
leave no history and no execution count.

Back (``get``): one silent request whose expression makes the agent publish the chunks as
display messages of its own MIME type, which travel to this request only.
"""

from __future__ import annotations

import ast
import base64
import keyword
import pickle
import platform
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podbook.errors import TransferError
from podbook.remote.outputs import DisplayData

if TYPE_CHECKING:
    from podbook.remote.execution import Execution
    from podbook.remote.kernel import RemoteKernel

__all__ = ["CHUNK_BYTES", "MAX_TRANSFER_BYTES", "get_values", "put_values"]

MAX_TRANSFER_BYTES = 256 * 2**20
"""The most one ``put`` or ``get`` carries: 256 MiB of pickled values. Larger data belongs in
a file on the pod (or a network volume)."""

CHUNK_BYTES = 2 * 2**20
"""Bytes of pickled data per WebSocket message (2.7 MiB once in base64 and JSON)."""

AGENT_MIME = "application/vnd.podbook.transfer+json"  # the agent's MIME (_kernel_agent.MIME)
_WINDOW = 4  # chunk requests in flight at once


def _agent_source() -> str:
    return Path(__file__).with_name("_kernel_agent.py").read_text(encoding="utf-8")


def _install_expression() -> str:
    """An expression that (re)installs the agent as ``sys.modules['_podbook_agent']``."""
    source = repr(_agent_source())
    return (
        f"(lambda m: (exec(compile({source}, '<podbook agent>', 'exec'), m.__dict__), 0)[1])("
        "__import__('sys').modules.setdefault('_podbook_agent', "
        "__import__('types').ModuleType('_podbook_agent')))"
    )


def _call(function: str, *args: str) -> str:
    """An expression calling the agent's ``function`` with source-text arguments."""
    return f"__import__('_podbook_agent').{function}({', '.join(args)})"


def _silent(kernel: RemoteKernel, expressions: Mapping[str, str]) -> Execution:
    """Send a silent request that only evaluates ``expressions``."""
    content = {
        "code": "",
        "silent": True,
        "store_history": False,
        "user_expressions": dict(expressions),
        "allow_stdin": False,
        "stop_on_error": False,
    }
    return kernel._submit("execute_request", content, interrupt_on_stop=False)


def _results(
    execution: Execution, on_display: Callable[[DisplayData], None] | None = None
) -> dict[str, Any]:
    """Wait for the request's end; its ``user_expressions`` results."""
    for output in execution:
        if on_display is not None and isinstance(output, DisplayData):
            on_display(output)
    done = execution.done
    if done is None or done.status != "ok":
        raise TransferError(
            f"the kernel of {execution.kernel.where} did not run the transfer "
            f"({done.status if done else 'no answer'}); try again"
        )
    return dict((execution.reply or {}).get("user_expressions") or {})


def _value(result: Any, what: str) -> Any:
    """The value of one expression's result; TransferError with its error otherwise."""
    if not isinstance(result, dict):
        raise TransferError(f"{what}: the kernel sent no result")
    if result.get("status") != "ok":
        evalue = str(result.get("evalue", "")).strip().splitlines()
        detail = evalue[0] if evalue else str(result.get("ename", "error"))
        raise TransferError(f"{what}: {detail}")
    text = (result.get("data") or {}).get("text/plain", "None")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _check_agent(kernel: RemoteKernel) -> None:
    """Install the agent and check that both sides run the same Python major.minor."""
    expressions = {
        "python": "'%d.%d.%d' % tuple(__import__('sys').version_info[:3])",
        "agent": _install_expression(),
    }
    results = _results(_silent(kernel, expressions))
    remote = str(_value(results.get("python"), "could not read the kernel's Python version"))
    kernel.remote_python = remote
    local = platform.python_version()
    if remote.split(".")[:2] != local.split(".")[:2]:
        major_minor = ".".join(local.split(".")[:2])
        raise TransferError(
            f"the kernel of {kernel.where} runs Python {remote} and this one Python {local}; "
            f"pickled values need the same major.minor on both sides: use an image with "
            f"Python {major_minor} (or pass the data as text in the code)"
        )
    _value(
        results.get("agent"), f"could not set up podbook's helper in the kernel of {kernel.where}"
    )


def _size(count: int) -> str:
    """``256 MiB``, ``10.5 MiB`` or ``1,000 bytes``."""
    if count < 2**20:
        return f"{count:,} bytes"
    return f"{count / 2**20:.1f}".removesuffix(".0") + " MiB"


def _too_large(size: int, direction: str) -> TransferError:
    return TransferError(
        f"the values to {direction} take at least {_size(size)} pickled, over the "
        f"{_size(MAX_TRANSFER_BYTES)} limit; move fewer or smaller values, or write them to a "
        "file on the pod"
    )


def _pickle_each(values: Mapping[str, Any]) -> bytes:
    """``{name: pickled value}`` pickled; TransferError naming the first value that cannot
    be pickled, or the one that takes the whole past the limit."""
    blobs: dict[str, bytes] = {}
    total = 0
    for name, value in values.items():
        if not name.isidentifier() or keyword.iskeyword(name):
            raise TransferError(f"{name!r} is not a valid Python variable name")
        try:
            blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise TransferError(
                f"{name!r} (a {type(value).__name__}) cannot be pickled "
                f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                "send a picklable value instead (plain data, arrays, dataframes)"
            ) from None
        total += len(blob)
        if total > MAX_TRANSFER_BYTES:
            raise _too_large(total, "send")
        blobs[name] = blob
    return pickle.dumps(blobs, protocol=pickle.HIGHEST_PROTOCOL)


def _chunks(payload: bytes) -> Iterable[str]:
    for start in range(0, max(len(payload), 1), CHUNK_BYTES):
        yield base64.b64encode(payload[start : start + CHUNK_BYTES]).decode("ascii")


def put_values(kernel: RemoteKernel, values: Mapping[str, Any]) -> None:
    """Set ``values`` as variables of the kernel's namespace (see :meth:`RemoteKernel.put`)."""
    if not values:
        return
    payload = _pickle_each(values)
    _check_agent(kernel)
    tid = uuid.uuid4().hex
    in_flight: list[Execution] = []
    what = f"could not send {', '.join(values)} to the kernel of {kernel.where}"
    for index, text in enumerate(_chunks(payload)):
        expressions = {"chunk": _call("chunk", repr(tid), repr(text))}
        if index == 0:
            expressions = {"begin": _call("begin", repr(tid)), **expressions}
        in_flight.append(_silent(kernel, expressions))
        if len(in_flight) >= _WINDOW:
            _check_chunk(_results(in_flight.pop(0)), what)
    for execution in in_flight:
        _check_chunk(_results(execution), what)
    results = _results(_silent(kernel, {"finish": _call("finish", repr(tid), "globals()")}))
    _value(results.get("finish"), what)


def _check_chunk(results: dict[str, Any], what: str) -> None:
    for key in ("begin", "chunk"):
        if key in results:
            _value(results[key], what)


def get_values(kernel: RemoteKernel, names: Iterable[str]) -> dict[str, Any]:
    """The values of ``names`` in the kernel's namespace (see :meth:`RemoteKernel.get`)."""
    names = list(names)
    if not names:
        return {}
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise TransferError(f"{name!r} is not a valid Python variable name")
    _check_agent(kernel)
    parts: dict[int, bytes] = {}
    received = 0

    def collect(output: DisplayData) -> None:
        nonlocal received
        chunk = output.data.get(AGENT_MIME)
        if not isinstance(chunk, dict):
            return
        part = base64.b64decode(str(chunk.get("data", "")))
        received += len(part)
        if received > MAX_TRANSFER_BYTES + CHUNK_BYTES:
            raise _too_large(received, "get")
        parts[int(chunk.get("index", 0))] = part

    expression = _call("send", repr(names), "globals()", str(CHUNK_BYTES), str(MAX_TRANSFER_BYTES))
    execution = _silent(kernel, {"send": expression})
    what = f"could not get {', '.join(names)} from the kernel of {kernel.where}"
    try:
        results = _results(execution, collect)
    finally:
        execution.close()
    count = _value(results.get("send"), what)
    if not isinstance(count, int) or sorted(parts) != list(range(count)):
        raise TransferError(f"{what}: {len(parts)} of {count} chunks arrived; try again")
    blobs = pickle.loads(b"".join(parts[index] for index in range(count)))
    values: dict[str, Any] = {}
    for name in names:
        try:
            values[name] = pickle.loads(blobs[name])
        except Exception as exc:
            raise TransferError(
                f"{name!r} from the kernel of {kernel.where} cannot be unpickled here "
                f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                "get only values whose types this Python can import"
            ) from None
    return values
