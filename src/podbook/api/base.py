"""Base classes shared by every wire model.

Python attributes are snake_case; on the wire they are camelCase (``data_center_ids`` ↔
``dataCenterIds``). Request models are strict: unknown properties are refused and no value
is coerced (``"1"`` is not an integer). Response models are tolerant: the real service adds
fields over time, so unknown properties are kept rather than refused.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from functools import partial
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, GetJsonSchemaHandler
from pydantic.alias_generators import to_camel
from pydantic.dataclasses import dataclass
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, SchemaSerializer, core_schema

from .secrets import mask_env

__all__ = ["WireModel", "RequestModel", "ResponseModel", "response_record", "Omittable", "to_wire"]

T = TypeVar("T")


class WireModel(BaseModel):
    """Common configuration: camelCase aliases, population by either name."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
    )

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """Like pydantic's, but secret-looking values of an ``env`` field are masked."""
        for name, value in super().__repr_args__():
            if name == "env" and isinstance(value, dict):
                value = mask_env(value)
            yield name, value


class RequestModel(WireModel):
    """A request body. Unknown properties are refused; values are not coerced.

    Two hooks let a request add the rules a pydantic schema cannot express; both return
    error lines ``"<json_path>: <message>"`` and are called by ``validate_request``:
    ``schema_violations`` (class method, on the raw JSON object, → 422) and
    ``rule_violations`` (on the validated model, cross-field rules, → 400).
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    property_hints: ClassVar[dict[str, str]] = {}
    """Extra words for specific unknown top-level properties (e.g. create-only flags)."""

    @classmethod
    def schema_violations(cls, body: dict[str, Any]) -> list[str]:
        """Schema rules beyond the field types (e.g. conditional requirements) → 422."""
        return []

    @classmethod
    def misplaced_properties(cls, body: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """Remove properties that are a rule violation (400) rather than unknown (422).

        Returns the body without them and the error lines to report.
        """
        return body, []

    def rule_violations(self) -> list[str]:
        """Cross-field rules checked after the schema → 400."""
        return []


class ResponseModel(WireModel):
    """A response body. Unknown properties are kept (the service adds fields)."""

    model_config = ConfigDict(extra="allow")


RECORD_CONFIG = ConfigDict(
    alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True, extra="allow"
)

_IS_NONE = partial(operator.is_, None)
"""``value is None`` as a C callable: pydantic-core calls it without a Python frame."""

_ATTRIBUTES = operator.attrgetter("__dict__")
"""A record's attributes, known and unknown, as a C callable."""


def response_record(cls: type[T]) -> type[T]:
    """Make ``cls`` a small nested response record: a pydantic dataclass, not a model.

    The leaves of a pod record (SSH endpoints, runtime metrics, GPU shape...) are built a
    dozen times per pod, thousands of times per list. A dataclass validates the same way but
    is about half the cost of a :class:`ResponseModel` to build and to garbage-collect (no
    ``__pydantic_fields_set__`` set, no extra dict), which keeps listing 1,000 pods through
    the client within its budget. Attribute access is the same; unknown properties are kept
    as attributes and dumped back, optional fields left ``None`` are omitted as the service
    omits them; there is no ``model_dump`` on the record itself (dump the model that holds
    it, or use ``pydantic.TypeAdapter``).

    Dumping stays in pydantic-core: the record is serialized as its attribute dict against a
    typed-dict schema of its fields that allows extra keys, so no Python code runs per record
    (a Python serializer per leaf made dumping 1,000 pods for a panel refresh take 42 ms
    instead of 16 ms).
    """
    record = dataclass(config=RECORD_CONFIG)(cls)
    schema = record.__pydantic_core_schema__
    target = schema["schema"] if schema["type"] == "definitions" else schema
    assert target["type"] == "dataclass", target["type"]
    fields = {
        field["name"]: core_schema.typed_dict_field(
            field["schema"],
            required=False,
            serialization_alias=field.get("serialization_alias"),
            serialization_exclude_if=_IS_NONE if _defaults_to_none(field["schema"]) else None,
        )
        for field in target["schema"]["fields"]
    }
    wire = core_schema.typed_dict_schema(
        fields, extra_behavior="allow", config=target.get("config")
    )
    target["serialization"] = core_schema.plain_serializer_function_ser_schema(
        _ATTRIBUTES, return_schema=wire
    )
    record.__pydantic_serializer__ = SchemaSerializer(schema, target.get("config"))
    return record


def _defaults_to_none(schema: core_schema.CoreSchema) -> bool:
    return schema["type"] == "default" and schema.get("default", ...) is None


def _reject_null(value: Any) -> Any:
    if value is None:
        raise PydanticCustomError("null_not_allowed", "must not be null; omit the property instead")
    return value


class _NeverNull:
    """JSON-schema hook of :data:`Omittable`: the type documented without its ``null``."""

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        documented = handler(schema)
        options = [o for o in documented.get("anyOf", ()) if o != {"type": "null"}]
        if len(options) != 1:
            return documented
        rest = {key: value for key, value in documented.items() if key != "anyOf"}
        return {**options[0], **rest}


Omittable = Annotated[T | None, AfterValidator(_reject_null), _NeverNull()]
"""A property that may be omitted but, when sent, must not be ``null`` (nor documented so)."""


def to_wire(model: BaseModel) -> dict[str, Any]:
    """Dump ``model`` as the JSON object sent on the wire.

    camelCase keys; only the properties that were set (so defaults the service applies itself,
    such as ``cloud``, are not sent unless chosen); JSON-ready values (datetimes as ISO strings).
    Secret values (registry passwords) are revealed here, since the wire needs them; they are
    hidden from ``repr``.
    """
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)
