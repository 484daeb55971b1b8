"""Where the tests find the public reference documents: ``reference/`` in this repository.

They are vendored (see ``reference/README.md``), so no test skips for a missing document.
``$PODBOOK_REFERENCE_OPENAPI`` points the tests at another copy of the REST document.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

REFERENCE_DIR = Path(__file__).resolve().parents[1] / "reference"
REST_REFERENCE = Path(
    os.environ.get("PODBOOK_REFERENCE_OPENAPI") or REFERENCE_DIR / "runpod-rest-v2.openapi.json"
)


@functools.cache
def _load(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def rest_reference() -> dict[str, Any]:
    """A fresh parsed copy of the REST v2 reference document (callers may change it)."""
    return json.loads(_load(REST_REFERENCE))
