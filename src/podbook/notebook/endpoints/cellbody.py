"""The body of a ``%%runjob`` cell: the job's ``input``.

The body is JSON, or a Python dict expression evaluated in the user's namespace. In both,
``{name}`` (a variable, or a dotted attribute path such as ``{cfg.prompt}``) is replaced
by its value: inside a string literal by the value's text, elsewhere by the value itself
(its JSON form in JSON). A ``{name}`` that names nothing defined is left as it is, as
IPython does on magic lines. A JSON object such as ``{"a": 1}`` is never mistaken for a
``{name}``: only braces around a bare name are expanded.

Mistakes become one :class:`UsageError` line; bad JSON names its line and column.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from IPython.core.error import UsageError

PROG = "%%runjob"
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}")
_JSON_WORDS = frozenset({"true", "false", "null"})
_MISSING = object()


def lookup(path: str, namespace: Mapping[str, Any]) -> Any:
    """The value of ``name`` or ``name.attr...`` in ``namespace`` (``_MISSING`` if absent)."""
    head, *attrs = path.split(".")
    value = namespace.get(head, _MISSING)
    for attr in attrs:
        if value is _MISSING:
            break
        value = getattr(value, attr, _MISSING)
    return value


def _string_literal(quote: str) -> str:
    plain = f"[^{quote}\\\\]*"
    return f"{quote}{plain}(?:\\\\.{plain})*{quote}"


def expand(
    body: str,
    namespace: Mapping[str, Any],
    quotes: str,
    in_string: Callable[[Any, str], str],
    outside: Callable[[str, Any], str],
) -> str:
    """Replace each defined ``{name}`` in ``body``.

    ``quotes`` are the characters that open a string literal; ``in_string(value, quote)``
    and ``outside(name, value)`` give the replacement text for either place.
    """
    literals = "|".join(_string_literal(q) for q in quotes)
    token = re.compile(f"({literals})|{_PLACEHOLDER.pattern}", re.DOTALL)

    def inside(match: re.Match[str], quote: str) -> str:
        value = lookup(match.group(1), namespace)
        return match.group(0) if value is _MISSING else in_string(value, quote)

    def replace(match: re.Match[str]) -> str:
        literal = match.group(1)
        if literal is not None:
            quote = literal[0]
            if "{" not in literal:
                return literal
            return quote + _PLACEHOLDER.sub(lambda m: inside(m, quote), literal[1:-1]) + quote
        value = lookup(match.group(2), namespace)
        return match.group(0) if value is _MISSING else outside(match.group(2), value)

    return token.sub(replace, body)


def _json_in_string(value: Any, _quote: str) -> str:
    return json.dumps(str(value))[1:-1]


def _json_outside(_name: str, value: Any) -> str:
    return json.dumps(value, default=str)


def _python_in_string(value: Any, quote: str) -> str:
    text = str(value).replace("\\", "\\\\").replace(quote, "\\" + quote)
    return text.replace("\n", "\\n").replace("\r", "\\r")


def _python_outside(name: str, _value: Any) -> str:
    return f"({name})"


def _json_error(err: json.JSONDecodeError, expanded: bool) -> UsageError:
    after = " (after {var} expansion)" if expanded else ""
    return UsageError(
        f"{PROG}: the cell is not valid JSON: {err.msg} at line {err.lineno}, "
        f"column {err.colno}{after}; fix it, or write a Python dict."
    )


def parse_job_input(body: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The job's ``input`` from a ``%%runjob`` cell body (see the module docstring)."""
    if not body.strip():
        raise UsageError(
            f'{PROG}: the cell is empty; write the job\'s input in it, e.g. {{"prompt": "Hello"}}.'
        )
    as_json = expand(body, namespace, '"', _json_in_string, _json_outside)
    try:
        value = json.loads(as_json)
    except json.JSONDecodeError as err:
        value = _python_value(body, namespace, _json_error(err, as_json != body))
    if not isinstance(value, dict):
        raise UsageError(
            f"{PROG}: the cell must hold a JSON object or a Python dict "
            f'(e.g. {{"prompt": "Hello"}}), not a {type(value).__name__}.'
        )
    return value


def _python_value(body: str, namespace: Mapping[str, Any], json_error: UsageError) -> Any:
    """Evaluate ``body`` as a Python expression; ``json_error`` when it is not Python."""
    source = expand(body.strip(), namespace, "\"'", _python_in_string, _python_outside)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        raise json_error from None
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    if names & _JSON_WORDS and not (names & _JSON_WORDS) <= namespace.keys():
        raise json_error  # JSON with a mistake, not Python
    try:
        return eval(compile(tree, "<%%runjob cell>", "eval"), dict(namespace))  # noqa: S307
    except Exception as err:  # noqa: BLE001 - any failure of the user's expression
        message = str(err).splitlines()[0] if str(err) else ""
        raise UsageError(
            f"{PROG}: the cell's Python expression failed: {type(err).__name__}: {message}; "
            "fix it, or write JSON."
        ) from None
