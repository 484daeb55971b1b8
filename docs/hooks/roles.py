"""MkDocs hook: Sphinx cross-reference roles in docstrings read as plain code.

The docstrings write ``:class:`~podbook.client.Client``` for Sphinx; the API reference shows
``Client`` as code, without the role and the ``~`` (as Sphinx would show it).
"""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(
    r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):<code>(~?)([^<]*)</code>"
)


def _shown(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def on_page_content(html: str, **kwargs: Any) -> str:
    """Drop the role prefix of every cross-reference in the rendered page."""
    return ROLE.sub(_shown, html)
