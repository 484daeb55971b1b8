"""Each panel's ESM is ``common.js`` inlined ahead of its view, and the result is a valid,
import-free ES module: a name declared both in ``common.js`` and in a view fails here."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from podbook.notebook.billing.panel import BillingPanel
from podbook.notebook.catalog.panel import CatalogPanel
from podbook.notebook.chat.panel import ChatPanel
from podbook.notebook.endpoints.health import HealthPanel
from podbook.notebook.endpoints.panel import JobPanel
from podbook.notebook.panels.assets import VIEWS_DIR, view_asset
from podbook.notebook.panels.esm import COMMON, build_esm, live_view_esm
from podbook.notebook.pods.cluster import ClusterPanel
from podbook.notebook.pods.panel import PodPanel
from podbook.notebook.pods.podlist import PodListPanel

PANELS = {
    "pod.js": PodPanel,
    "podlist.js": PodListPanel,
    "cluster.js": ClusterPanel,
    "catalog.js": CatalogPanel,
    "job.js": JobPanel,
    "health.js": HealthPanel,
    "billing.js": BillingPanel,
    "chat.js": ChatPanel,
}
VIEWS = sorted(p.name for p in VIEWS_DIR.glob("*.js") if p.name != COMMON)
NODE = shutil.which("node")
# A top-level declaration: `export function h(`, `const MASK =`, `class Foo`, ...
DECLARATION = re.compile(
    r"^(?:export\s+)?(?:async\s+)?(?:function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)",
    re.MULTILINE,
)


def node_check(source: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``node --check`` on ``source`` as an ES module (duplicate declarations are errors)."""
    module = tmp_path / "built.mjs"
    module.write_text(source, encoding="utf-8")
    return subprocess.run(
        [NODE or "node", "--check", str(module)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_every_view_has_a_panel() -> None:
    assert sorted(PANELS) == VIEWS


@pytest.mark.parametrize("view", sorted(PANELS))
def test_panel_sends_common_then_its_view_without_the_import(view: str) -> None:
    esm = PANELS[view]._esm
    assert isinstance(esm, str)
    common = (VIEWS_DIR / COMMON).read_text(encoding="utf-8")
    assert esm.startswith(common.rstrip())
    assert esm == view_asset(view)
    assert "./common.js" not in esm.removeprefix(common.rstrip())
    assert not re.search(r"^\s*import\b|\bimport\s*\(", esm, re.MULTILINE), (
        "a blob URL cannot import"
    )
    assert esm.rstrip().endswith("export default { render };")


@pytest.mark.parametrize("view", VIEWS)
def test_view_declares_no_name_common_declares(view: str) -> None:
    common = set(DECLARATION.findall((VIEWS_DIR / COMMON).read_text(encoding="utf-8")))
    own = set(DECLARATION.findall((VIEWS_DIR / view).read_text(encoding="utf-8")))
    assert not common & own, f"{view} redeclares {sorted(common & own)} from common.js"


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("view", sorted(PANELS))
def test_built_esm_parses_as_a_module(view: str, tmp_path: Path) -> None:
    checked = node_check(PANELS[view]._esm, tmp_path)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_clashing_name_fails_the_build_check(tmp_path: Path) -> None:
    common = (VIEWS_DIR / COMMON).read_text(encoding="utf-8")
    view = 'import { h } from "./common.js";\nfunction h() {}\nexport default { render() {} };\n'
    checked = node_check(build_esm(common, view, "clash.js"), tmp_path)
    assert checked.returncode != 0
    assert "Identifier 'h' has already been declared" in checked.stderr


def test_build_removes_a_multiline_import_only() -> None:
    view = 'import {\n  h,\n  fact,\n} from "./common.js";\n\nconst x = "./common.js";\n'
    built = build_esm("export const A = 1;\n", view, "v.js")
    assert built.startswith("export const A = 1;\n")
    assert "import" not in built
    assert built.endswith('\nconst x = "./common.js";\n')


def test_a_missing_common_gives_a_one_line_stand_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "pod.js").write_text("export default { render() {} };\n", encoding="utf-8")
    monkeypatch.setattr("podbook.notebook.panels.assets.VIEWS_DIR", tmp_path)
    stand_in = view_asset("pod.js")
    assert isinstance(stand_in, str)
    assert "view file common.js is missing from this installation; reinstall podbook." in stand_in


def test_hot_reload_rebuilds_when_common_changes(tmp_path: Path) -> None:
    pytest.importorskip("watchfiles")
    pytest.importorskip("anywidget._file_contents")
    (tmp_path / COMMON).write_text("export const A = 1;\n", encoding="utf-8")
    view = 'import { A } from "./common.js";\nexport default { render() {} };\n'
    (tmp_path / "v.js").write_text(view, encoding="utf-8")
    contents = live_view_esm(tmp_path, "v.js")
    pushed: list[str] = []
    contents.changed.connect(pushed.append)
    deadline = time.monotonic() + 60
    while not pushed and time.monotonic() < deadline:  # the watcher may start late under load
        (tmp_path / COMMON).write_text("export const A = 2;\n", encoding="utf-8")
        time.sleep(0.5)
    assert pushed, "no rebuild within 60 s of editing common.js"
    assert str(contents).startswith("export const A = 2;\n")
    assert "./common.js" not in str(contents)
