"""Proves the browser harness on a trivial anywidget counter, independent of podbook."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from .jupyterlab import LabServer, open_and_run_all, write_notebook

COUNTER_CELL = '''
import anywidget
import traitlets

class Counter(anywidget.AnyWidget):
    _esm = """
    function render({ model, el }) {
      const button = document.createElement("button");
      button.className = "harness-counter";
      const show = () => {
        button.dataset.count = String(model.get("count"));
        button.textContent = `clicked ${model.get("count")} times`;
      };
      button.addEventListener("click", () => {
        model.set("count", model.get("count") + 1);
        model.save_changes();
      });
      model.on("change:count", show);
      show();
      el.appendChild(button);
    }
    export default { render };
    """
    count = traitlets.Int(0).tag(sync=True)

counter = Counter()
counter
'''

ECHO_CELL = """
import ipywidgets
echo = ipywidgets.Label()
counter.observe(lambda change: setattr(echo, "value", f"kernel saw {change['new']}"), "count")
echo
"""


def test_counter_widget_round_trips_through_the_kernel(
    page: Any, jupyter_lab: LabServer, artifacts_dir: Path, console_messages: list[str]
) -> None:
    write_notebook(jupyter_lab.root_dir, "harness_counter.ipynb", [COUNTER_CELL, ECHO_CELL])
    open_and_run_all(page, jupyter_lab, "harness_counter.ipynb")

    button = page.locator("button.harness-counter")
    expect(button).to_have_attribute("data-count", "0", timeout=30_000)
    for _ in range(3):
        button.click()
    expect(button).to_have_attribute("data-count", "3")
    # The kernel received every click: its observer updated a second widget.
    expect(page.get_by_text("kernel saw 3")).to_be_visible(timeout=10_000)
    page.screenshot(path=str(artifacts_dir / "harness_counter.png"))
