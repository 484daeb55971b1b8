"""Where the panels' ESM views and CSS live (``podbook/views/``, shipped in the wheel)."""

from __future__ import annotations

from pathlib import Path

from podbook.notebook.panels.esm import COMMON, hot_reload_wanted, live_view_esm, view_esm

VIEWS_DIR = Path(__file__).resolve().parents[2] / "views"

_MISSING_VIEW = """
export default {
  render({ model, el }) {
    el.textContent = "podbook: view file %s is missing from this installation; reinstall podbook.";
  },
};
"""


def view_asset(name: str) -> Path | str | object:
    """What a panel sets as ``_esm``/``_css`` for ``views/<name>``.

    A view (``.js``) is its built ESM, ``common.js`` inlined (see ``esm.py``); a stylesheet
    is its path. A missing file gives an inline stand-in rather than an error: anywidget
    reads a ``Path`` when the class is defined, so a missing file would make the whole module
    fail to import; the stand-in keeps the panels (and their static forms) usable and says
    what is wrong.
    """
    path = VIEWS_DIR / name
    if not name.endswith(".js"):
        return path if path.is_file() else ""
    for needed in (path, VIEWS_DIR / COMMON):
        if not needed.is_file():
            return _MISSING_VIEW % needed.name
    if hot_reload_wanted(VIEWS_DIR):
        return live_view_esm(VIEWS_DIR, name)
    return view_esm(VIEWS_DIR, name)
