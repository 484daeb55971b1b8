"""A griffe extension for the API reference: a resource method declared once as
``name = RESOURCE.op(builder, "docstring")`` (``podbook.client.resources.crud``) is shown
with its docstring, as the method it is, instead of as an undocumented attribute."""

from __future__ import annotations

import ast
from typing import Any

import griffe


def _op_docstring(node: Any) -> str | None:
    """The docstring of ``X.op(builder, "doc")``, or None for any other assignment."""
    call = getattr(node, "value", None)
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return None
    if call.func.attr != "op" or len(call.args) < 2:
        return None
    doc = call.args[1]
    return doc.value if isinstance(doc, ast.Constant) and isinstance(doc.value, str) else None


class OperationMethods(griffe.Extension):
    """Give ``RESOURCE.op(...)`` class attributes their docstring and a ``method`` label."""

    def on_attribute_instance(self, *, node: Any, attr: griffe.Attribute, **kwargs: Any) -> None:
        """Called by griffe for every attribute it finds."""
        doc = _op_docstring(node)
        if doc is not None:
            attr.docstring = griffe.Docstring(doc, parent=attr)
            attr.labels -= {"class-attribute", "instance-attribute"}
            attr.labels.add("method")
            attr.value = None
