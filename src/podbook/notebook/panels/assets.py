"""Where the panels' ESM views and CSS live (``podbook/views/``, shipped in the wheel)."""

from __future__ import annotations

from pathlib import Path

VIEWS_DIR = Path(__file__).resolve().parents[2] / "views"

_MISSING_VIEW = """
export default {
  render({ model, el }) {
    el.textContent = "podbook: view file %s is missing from this installation; reinstall podbook.";
  },
};
"""


def view_asset(name: str) -> Path | str:
    """The path of ``views/<name>``; an inline stand-in when a dev checkout lacks the file.

    anywidget reads a ``Path`` when the class is defined, so a missing file would make the
    whole module fail to import; the stand-in keeps the panels (and their static forms)
    usable and says what is wrong.
    """
    path = VIEWS_DIR / name
    if path.is_file():
        return path
    return _MISSING_VIEW % name if name.endswith(".js") else ""
