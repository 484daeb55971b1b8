"""MkDocs hook: list optional pages in the nav once they exist.

``docs/queue-push.md`` is written alongside the queue's push path; until it lands the nav
must still build under ``--strict`` (a nav entry naming a missing page fails it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# page -> the nav section it belongs to
OPTIONAL_PAGES = {
    "queue-push.md": "Serverless and the queue",
}


def _mentions(items: list[Any], page: str) -> bool:
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if value == page or (isinstance(value, list) and _mentions(value, page)):
            return True
    return False


def on_config(config: Any) -> Any:
    """Add each optional page that exists to its section (after the section's pages)."""
    nav = config["nav"]
    for page, section in OPTIONAL_PAGES.items():
        if not (Path(config["docs_dir"]) / page).is_file() or _mentions(nav, page):
            continue
        for item in nav:
            if isinstance(item, dict) and section in item:
                item[section].append(page)
    return config
