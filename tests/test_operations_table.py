"""``docs/operations.md`` (written by ``scripts/operations_table.py``) is current and complete:
every operation of the reference has a row with its client method and its emulator route."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from reference_docs import REST_REFERENCE

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "operations_table.py"
TABLE = ROOT / "docs" / "operations.md"
ROW = re.compile(
    r"^\| `(?P<op>\w+)` \| `(?P<request>[^`]+)` \| (?P<client>.+?) \| .+ \| (?P<route>.+) \|$"
)


def _script() -> ModuleType:
    """``scripts/operations_table.py`` as a module (loaded once, by its path)."""
    if "operations_table" not in sys.modules:
        spec = importlib.util.spec_from_file_location("operations_table", SCRIPT)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["operations_table"] = module
        spec.loader.exec_module(module)
    return sys.modules["operations_table"]


def test_docs_operations_md_is_what_the_script_writes() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr or result.stdout
    assert "docs/operations.md is up to date" in result.stdout


def test_every_reference_operation_has_a_row_with_client_method_and_route() -> None:
    rows = {
        match["op"]: match
        for line in TABLE.read_text(encoding="utf-8").splitlines()
        if (match := ROW.match(line))
    }
    operations = _script().reference_operations(REST_REFERENCE)
    assert operations, "the reference document lists no operation"
    missing = [op.operation_id for op in operations if op.operation_id not in rows]
    assert not missing, f"docs/operations.md has no row for {missing}; run make operations-table"
    for op in operations:
        row = rows[op.operation_id]
        assert row["request"] == f"{op.method} {op.path}"
        assert row["client"].startswith("`client."), f"{op.operation_id}: no client method"
        assert row["route"].startswith("`"), f"{op.operation_id}: no emulator route"


def test_a_stale_table_is_reported_with_how_to_regenerate_it() -> None:
    script = _script()
    path = Path("docs/operations.md")
    assert script.stale_message(path, "same\n", "same\n") is None
    message = script.stale_message(path, "| `getPod` | old |\n", "| `getPod` | new |\n")
    assert message is not None
    first = message.splitlines()[0]
    assert "docs/operations.md is out of date" in first
    assert "make operations-table" in first
    assert "-| `getPod` | old |" in message and "+| `getPod` | new |" in message
