"""Each panel's ESM: ``views/common.js`` inlined ahead of the view, built once at load.

A view imports its shared helpers (``import { h, ... } from "./common.js";``) so the js/
tests load it as an ordinary ES module. anywidget runs a view from a blob URL, where that
relative import cannot resolve, so the ``_esm`` a panel sends is the text of ``common.js``
followed by the view's text with that one import statement removed. With ``ANYWIDGET_HMR=1``
in a source checkout (and ``watchfiles`` installed) the built text is rebuilt whenever either
file changes, as anywidget does for a plain file path.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from pathlib import Path

COMMON = "common.js"

# The view's import of the shared helpers: one statement, possibly spread over several lines.
COMMON_IMPORT = re.compile(
    r"^import\s*\{[^}]*\}\s*from\s*([\"'])\./common\.js\1;?[ \t]*\n?", re.MULTILINE
)


def build_esm(common: str, view: str, name: str = "view") -> str:
    """``common`` followed by ``view`` without its ``./common.js`` import statement."""
    body = COMMON_IMPORT.sub("", view, count=1)
    return f"{common.rstrip()}\n\n// ---- {name}: the view itself ----\n\n{body}"


@functools.cache
def view_esm(views_dir: Path, name: str) -> str:
    """The built ESM of ``views_dir/name`` (read once per process)."""
    common = (views_dir / COMMON).read_text(encoding="utf-8")
    return build_esm(common, (views_dir / name).read_text(encoding="utf-8"), name)


def hot_reload_wanted(views_dir: Path) -> bool:
    """True when anywidget's hot reload is on and the views are a source checkout's files."""
    if os.getenv("ANYWIDGET_HMR") != "1" or {"site-packages", "dist-packages"} & set(
        views_dir.parts
    ):
        return False
    try:
        import watchfiles  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


def live_view_esm(views_dir: Path, name: str) -> object:
    """The built ESM as contents anywidget pushes to open views again on every edit.

    Uses anywidget's (private) ``VirtualFileContents``; the plain text when it is gone.
    """
    try:
        from anywidget._file_contents import VirtualFileContents  # noqa: PLC0415
    except ImportError:
        return view_esm(views_dir, name)
    contents = VirtualFileContents(view_esm(views_dir, name))
    watched = {COMMON, name}

    def watch() -> None:
        from watchfiles import watch as watch_files  # noqa: PLC0415

        # The folder, not the two files: an editor's save-by-rename replaces the file watched.
        for changes in watch_files(views_dir):
            if not any(Path(path).name in watched for _change, path in changes):
                continue
            try:
                common = (views_dir / COMMON).read_text(encoding="utf-8")
                view = (views_dir / name).read_text(encoding="utf-8")
            except OSError:
                continue  # mid-save: the next event brings the new file
            contents.contents = build_esm(common, view, name)

    threading.Thread(target=watch, name=f"podbook-hmr-{name}", daemon=True).start()
    return contents
