"""Property tests for every wire model of ``podbook.api``.

Requests: any JSON (garbage, or shaped like the model's own JSON schema) given to
``validate_request`` either gives a model or raises ``RequestRejected`` with status 400/422
and one-line ``"<json_path>: <message>"`` errors — never another exception; a body that was
accepted dumps (``to_wire``) to a body that validates again to the same model.
Responses: garbage raises only pydantic's ``ValidationError``; an accepted record dumped and
validated again is equal.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import podbook.api
from podbook.api.base import RequestModel, ResponseModel, to_wire
from podbook.api.validation import RequestRejected, validate_request

SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _models(base: type) -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(podbook.api.__path__):
        module = importlib.import_module(f"podbook.api.{info.name}")
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, base)
                and value is not base
                and not name.startswith("_")
                and value.__module__ == module.__name__
            ):
                found[f"{value.__module__}.{name}"] = value
    return [found[key] for key in sorted(found)]


REQUESTS = _models(RequestModel)
RESPONSES = _models(ResponseModel)

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _schema(model: type) -> dict[str, Any]:
    return model.model_json_schema(by_alias=True, mode="validation")


def from_schema(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    """A small JSON-schema → strategy translation (types, bounds, enums, patterns, refs)."""
    if depth > 5:
        return JSON_SCALARS
    if "$ref" in schema:
        target = defs[schema["$ref"].rsplit("/", 1)[-1]]
        return st.deferred(lambda: from_schema(target, defs, depth + 1))
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of([from_schema(s, defs, depth + 1) for s in schema[key]])
    if "allOf" in schema:
        return from_schema(schema["allOf"][0], defs, depth + 1)
    kind = schema.get("type")
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True).filter(
                lambda s: len(s) >= schema.get("minLength", 0)
            )
        low = schema.get("minLength", 0)
        return st.text(min_size=low, max_size=max(low, schema.get("maxLength", low + 12)))
    if kind == "integer":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -(10**6) - 1) + 1)
        high = schema.get("maximum", schema.get("exclusiveMaximum", 10**9 + 1) - 1)
        return st.integers(min_value=low, max_value=max(low, high))
    if kind == "number":
        return st.floats(
            min_value=schema.get("minimum"),
            max_value=schema.get("maximum"),
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = from_schema(schema.get("items", {}), defs, depth + 1)
        low = schema.get("minItems", 0)
        return st.lists(items, min_size=low, max_size=max(low, min(schema.get("maxItems", 3), 3)))
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if not properties:
            extra = schema.get("additionalProperties")
            values = from_schema(extra, defs, depth + 1) if isinstance(extra, dict) else JSON
            return st.dictionaries(st.text(min_size=1, max_size=8), values, max_size=3)
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: from_schema(v, defs, depth + 1) for k, v in properties.items() if k in required},
            optional={
                k: from_schema(v, defs, depth + 1)
                for k, v in properties.items()
                if k not in required
            },
        )
    return JSON


def shaped(model: type) -> Any:
    """Bodies shaped like ``model``'s schema, or garbage in its property names."""
    schema = _schema(model)
    defs = schema.get("$defs", {})
    names = list(schema.get("properties", {})) or ["x"]
    garbage_in_names = st.dictionaries(st.sampled_from(names), JSON, max_size=len(names))
    return from_schema(schema, defs) | garbage_in_names | JSON


def _check_rejection(exc: RequestRejected) -> None:
    assert exc.status in (400, 422)
    assert exc.detail and "\n" not in exc.detail
    for line in exc.errors:
        assert line.startswith("$") and "\n" not in line, line
    assert str(exc)


@pytest.mark.parametrize("model", REQUESTS, ids=lambda m: m.__name__)
@SETTINGS
@given(data=st.data())
def test_request_models_accept_or_reject_cleanly_and_round_trip(model: type, data: Any) -> None:
    body = data.draw(shaped(model))
    try:
        accepted = validate_request(model, body)
    except RequestRejected as exc:
        _check_rejection(exc)
        return
    wire = to_wire(accepted)
    json.dumps(wire)
    again = validate_request(model, wire)
    assert to_wire(again) == wire
    assert again == accepted


@pytest.mark.parametrize("model", REQUESTS, ids=lambda m: m.__name__)
@SETTINGS
@given(raw=st.binary(max_size=64) | st.text(max_size=64))
def test_request_models_reject_raw_garbage_cleanly(model: type, raw: bytes | str) -> None:
    try:
        validate_request(model, raw)
    except RequestRejected as exc:
        _check_rejection(exc)


@pytest.mark.parametrize("model", RESPONSES, ids=lambda m: m.__name__)
@SETTINGS
@given(data=st.data())
def test_response_models_read_what_they_dump(model: type, data: Any) -> None:
    body = data.draw(shaped(model))
    try:
        record = model.model_validate(body)
    except ValidationError:
        return
    for mode in ("python", "json"):
        assert model.model_validate(record.model_dump(mode=mode, by_alias=True)) == record


def test_every_module_contributes_models() -> None:
    assert len(REQUESTS) >= 15 and len(RESPONSES) >= 30
