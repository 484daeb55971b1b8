"""The README is the landing page: its two commands come first and exist, it stays short, and
every relative link and image in it points at a file (and heading) of the repository.

The documentation site itself is checked by ``make docs`` (``mkdocs build --strict``).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def readme_links() -> list[str]:
    """Every link and image target of the README outside code blocks."""
    return LINK.findall(FENCE.sub("", README.read_text(encoding="utf-8")))


def github_anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown page."""
    anchors = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def test_readme_starts_with_the_two_commands_of_the_makefile() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = FENCE.search(text)
    assert first_block and text.index(first_block.group()) < text.index("\n## ")
    commands = [line.split("#")[0].strip() for line in first_block.group().splitlines()[1:-1]]
    assert commands == ["make quickstart", "make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("quickstart", "test", "docs"):
        assert re.search(rf"^{target}:", makefile, re.M), f"Makefile has no {target} target"


def test_readme_is_a_landing_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move detail to docs/"


def test_readme_links_point_at_files_and_headings_that_exist() -> None:
    broken = []
    relative = [t for t in readme_links() if not re.match(r"[a-z]+:", t)]
    assert relative, "the README links to no page of docs/"
    for target in relative:
        path, _, anchor = target.partition("#")
        file = ROOT / path if path else README
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in github_anchors(file):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, broken


def test_readme_shows_the_screenshots_the_browser_tests_take() -> None:
    images = [t for t in readme_links() if t.endswith(".png")]
    assert "docs/images/pod_panel.png" in images
    assert "docs/images/job_panel_completed.png" in images
    written = {p.name for p in (ROOT / "docs" / "images").glob("*.png")}
    browser_tests = "".join(p.read_text() for p in (ROOT / "tests" / "browser").glob("test_*.py"))
    for image in images:
        name = Path(image).name
        assert name in written and f'docs_images / "{name}"' in browser_tests, name


def test_every_docs_image_is_shown_and_taken_by_a_browser_test() -> None:
    pages = README.read_text(encoding="utf-8") + "".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md")
    )
    browser_tests = "".join(p.read_text() for p in (ROOT / "tests" / "browser").glob("test_*.py"))
    for image in (ROOT / "docs" / "images").glob("*.png"):
        assert f"images/{image.name})" in pages, f"{image.name} is shown nowhere"
        assert f'docs_images / "{image.name}"' in browser_tests, (
            f"no browser test takes {image.name}"
        )
