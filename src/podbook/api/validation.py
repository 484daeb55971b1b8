"""Checking a request body against the contract, with the seed's statuses.

``validate_request`` runs two phases. Schema (types, minimums, patterns, unknown or missing
properties, conditional requirements) → 422 with every failure listed as
``"<json_path>: <message>"``. Then the cross-field rules of the request → 400. A body that is
not JSON, or not a JSON object, → 400. The emulator answers with the resulting problem; the
client uses the same code to refuse a bad request before sending it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import ValidationError

from .base import RequestModel
from .container import Mounts, PodMounts, mount_kind
from .problem import STATUS_TITLES, Problem

__all__ = [
    "RequestRejected",
    "validate_request",
    "check_rules",
    "check_patch_mounts",
    "json_path",
    "format_validation_errors",
]

M = TypeVar("M", bound=RequestModel)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class RequestRejected(ValueError):
    """A request that breaks the contract: ``status`` 400 or 422, one ``detail`` line, and
    every individual failure in ``errors`` (``"<json_path>: <message>"``)."""

    def __init__(self, status: int, title: str, detail: str, errors: list[str] | None = None):
        self.status = status
        self.title = title
        self.detail = detail
        self.errors = list(errors or ())
        super().__init__(str(self))

    @classmethod
    def from_errors(cls, status: int, errors: list[str]) -> RequestRejected:
        """Build the rejection for a list of error lines (the first becomes the detail)."""
        detail = errors[0]
        if len(errors) > 1:
            detail += f" (and {len(errors) - 1} more)"
        return cls(status, STATUS_TITLES[status], detail, errors)

    def to_problem(self) -> Problem:
        """The problem+json body that answers this request."""
        problem = Problem(title=self.title, status=self.status, detail=self.detail)
        if self.errors:
            problem.errors = list(self.errors)
        return problem

    def __str__(self) -> str:
        lines = [f"{self.status} {self.title}: {self.detail}"]
        lines.extend(f"  - {error}" for error in self.errors)
        return "\n".join(lines)


# --- json paths and messages ---------------------------------------------------------------


def json_path(loc: tuple[int | str, ...] | list[int | str]) -> str:
    """``("gpu", "count")`` → ``"$.gpu.count"``; ``("ports", 1)`` → ``"$.ports[1]"``."""
    path = "$"
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            path += f".{part}"
        else:
            path += "[" + json.dumps(part) + "]"
    return path


_TYPE_MESSAGES = {
    "missing": "is required",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "string_type": "must be a string",
    "bool_type": "must be a boolean",
    "bool_parsing": "must be a boolean",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "list_type": "must be an array",
    "datetime_type": "must be a date-time string",
    "datetime_parsing": "must be a date-time string",
}


def _message(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind in _TYPE_MESSAGES:
        return _TYPE_MESSAGES[kind]
    if kind == "literal_error":
        return f"must be {ctx.get('expected', 'one of the allowed values')}"
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']}"
    if kind == "greater_than":
        return f"must be > {ctx['gt']}"
    if kind == "less_than_equal":
        return f"must be <= {ctx['le']}"
    if kind == "less_than":
        return f"must be < {ctx['lt']}"
    if kind == "string_too_short":
        return (
            "must not be empty"
            if ctx.get("min_length") == 1
            else f"must be at least {ctx['min_length']} characters"
        )
    if kind == "string_too_long":
        return f"must be at most {ctx['max_length']} characters"
    if kind in ("too_long", "too_short"):
        limit = ctx.get("max_length" if kind == "too_long" else "min_length")
        bound = "at most" if kind == "too_long" else "at least"
        if ctx.get("field_type") in ("List", "Tuple", "Set", "Dictionary"):
            return f"must have {bound} {limit} item{'s' if limit != 1 else ''}"
        if kind == "too_short" and limit == 1:
            return "must not be empty"
        return f"must be {bound} {limit} characters long"
    message = str(error.get("msg", "is invalid"))
    message = message.replace("Input should be", "must be").replace("Value error, ", "")
    return message[:1].lower() + message[1:]


def _quoted(name: str) -> str:
    """``'name'``, or the JSON string form when the name has control or quote characters
    (so an error stays one readable line whatever property a caller sent)."""
    return f"'{name}'" if name.isprintable() and "'" not in name else json.dumps(name)


def format_validation_errors(
    exc: ValidationError, hints: Mapping[str, str] | None = None
) -> list[str]:
    """Turn a pydantic ``ValidationError`` into ``"<json_path>: <message>"`` lines.

    Unknown properties are reported at their parent, grouped:
    ``"$.gpu: additional properties 'x', 'y' not allowed"``. ``hints`` adds words to
    specific unknown top-level properties. Input values are never echoed (they may be secret).
    """
    lines: list[str] = []
    unknown: dict[tuple[int | str, ...], list[str]] = {}
    for error in exc.errors(include_url=False, include_input=False):
        loc = tuple(error["loc"])
        if loc[-1:] == ("[key]",):  # a refused key of an object: its path names it already
            loc = loc[:-1]
        if error["type"] == "extra_forbidden":
            unknown.setdefault(loc[:-1], []).append(str(loc[-1]))
            continue
        lines.append(f"{json_path(loc)}: {_message(error)}")
    for parent, names in unknown.items():
        quoted = ", ".join(_quoted(name) for name in names)
        noun = "property" if len(names) == 1 else "properties"
        line = f"{json_path(parent)}: additional {noun} {quoted} not allowed"
        notes = [
            f"{name} is {hints[name]}" for name in names if not parent and hints and name in hints
        ]
        if notes:
            line += " (" + "; ".join(notes) + ")"
        lines.append(line)
    return list(dict.fromkeys(lines))


# --- the two phases ------------------------------------------------------------------------


def _parse_body(body: Any) -> dict[str, Any]:
    if isinstance(body, (bytes, bytearray, memoryview)):
        try:
            body = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            raise RequestRejected.from_errors(400, ["$: request body is not valid UTF-8"]) from None
    if isinstance(body, str):
        if not body.strip():
            raise RequestRejected.from_errors(400, ["$: request body is empty; send a JSON object"])
        try:
            body = json.loads(body)
        except json.JSONDecodeError as exc:
            raise RequestRejected.from_errors(
                400,
                [
                    f"$: request body is not valid JSON: {exc.msg} at line {exc.lineno}"
                    f" column {exc.colno}"
                ],
            ) from None
    if not isinstance(body, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(body), "a number"
        )
        raise RequestRejected.from_errors(
            400, [f"$: request body must be a JSON object, not {kind}"]
        )
    return body


def validate_request(model_cls: type[M], body: Any) -> M:
    """Validate a request ``body`` (bytes, str or an already decoded JSON value) as ``model_cls``.

    Returns the model, or raises :class:`RequestRejected`: 400 for a body that is not a JSON
    object, 422 listing every schema failure, 400 listing every broken cross-field rule.
    """
    data = _parse_body(body)
    data, misplaced = model_cls.misplaced_properties(data)
    errors: list[str] = []
    model: M | None = None
    try:
        model = model_cls.model_validate(data, by_alias=True, by_name=False)
    except ValidationError as exc:
        errors.extend(format_validation_errors(exc, model_cls.property_hints))
    errors.extend(model_cls.schema_violations(data))
    if errors or model is None:
        raise RequestRejected.from_errors(422, errors or ["$: request body is invalid"])
    rules = misplaced + model.rule_violations()
    if rules:
        raise RequestRejected.from_errors(400, rules)
    return model


def check_rules(model: RequestModel) -> None:
    """Raise :class:`RequestRejected` (400) if a model built in Python breaks a cross-field rule."""
    errors = model.rule_violations()
    if errors:
        raise RequestRejected.from_errors(400, errors)


def _as_mounts(mounts: Mounts | PodMounts | Mapping[str, Any] | None) -> Mounts | None:
    if mounts is None or isinstance(mounts, Mounts):
        return mounts
    if isinstance(mounts, PodMounts):
        mounts = mounts.model_dump(mode="json", by_alias=True, exclude_none=True)
    return Mounts.model_validate(dict(mounts), by_alias=True, by_name=False)


_KIND_WORDS = {None: "no mount", "persistent": "a persistent mount", "network": "a network mount"}


def check_patch_mounts(
    existing_mounts: Mounts | PodMounts | Mapping[str, Any] | None,
    patch_mounts: Mounts | Mapping[str, Any] | None,
) -> list[str]:
    """The PATCH mount rules that need the pod: the kind is fixed at creation and a network
    mount's ``volumeId`` is immutable. Returns the error lines (each → 400); empty when fine.

    Both arguments are :class:`Mounts` (the existing one may be a pod's :class:`PodMounts`)
    or their wire dicts; ``None``/``{}`` patch = no change.
    """
    existing = _as_mounts(existing_mounts)
    patch = _as_mounts(patch_mounts)
    if patch is None:
        return []
    kind = mount_kind(existing)
    errors: list[str] = []
    if patch.persistent is not None and kind != "persistent":
        errors.append(
            "$.mounts.persistent: the mount kind is fixed at creation and this pod has"
            f" {_KIND_WORDS[kind]}; only an existing mount's path (or persistent size) can change"
        )
    if patch.network and kind != "network":
        errors.append(
            "$.mounts.network: the mount kind is fixed at creation and this pod has"
            f" {_KIND_WORDS[kind]}; only an existing mount's path (or persistent size) can change"
        )
    if patch.network and kind == "network" and existing is not None and existing.network:
        current = existing.network[0].volume_id
        if patch.network[0].volume_id != current:
            errors.append(
                f"$.mounts.network[0].volumeId: is immutable; this pod mounts '{current}'"
                " (only the path can change)"
            )
    return errors
