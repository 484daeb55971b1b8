"""``%pod attach`` in a real JupyterLab: a cell runs in the pod's own kernel (on an emulator
whose pods really run, with a Jupyter server each), says so in a marker line, streams its
printed lines into the page while it still runs, shows an image made in the pod, and after
``%pod detach`` the next cell runs here again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from .jupyterlab import LabServer, open_and_run_all, write_notebook

NOTEBOOK = "pod_attach.ipynb"
LINES = 10
SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40">'
    '<rect width="120" height="40" rx="6" fill="#2da44e"/>'
    '<text x="60" y="26" font-size="16" text-anchor="middle" fill="white">from the pod</text>'
    "</svg>"
)
CELLS = [
    "%load_ext podbook",
    'pod = %pod create --gpu "NVIDIA GeForce RTX 4090" --image runpod/pytorch '
    "--ports 8888/http,22/tcp --jupyter --name browser-attach\n"
    'pod = __import__("podbook").Client().pods.wait_for(pod, "RUNNING", timeout=120)',
    "%pod attach {pod.id}",
    "import os\n"
    "import time\n"
    "from IPython.display import SVG, display\n"
    "\n"
    f"for i in range(1, {LINES + 1}):\n"
    "    print(f\"line {i} in {os.environ['RUNPOD_POD_ID']}\", flush=True)\n"
    "    time.sleep(0.3)\n"
    f"display(SVG({SVG!r}))",
    "%pod detach",
    "import os  # here: the import above ran in the pod\n"
    "print(f\"back here: {pod.name}, RUNPOD_POD_ID={os.environ.get('RUNPOD_POD_ID')}\")",
]
POD_CELL = 3
STDOUT = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]'
# Creating the pod, its RUNNING and its Jupyter server answering take a few seconds each.
TIMEOUT_MS = 60_000

# True at the moment the pod cell's output holds its first line but not yet its last, while
# its prompt still reads [*] (the cell is running): the lines arrive as they are printed.
LIVE_JS = """([index, lines]) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[index];
  if (!cell) return false;
  const prompt = cell.querySelector('.jp-InputPrompt');
  const text = [...cell.querySelectorAll('.jp-OutputArea-output')]
    .map((node) => node.textContent).join('\\n');
  return !!prompt && prompt.textContent.includes('[*]')
    && /line 1 in /.test(text) && !new RegExp(`line ${lines} in `).test(text);
}"""
SCROLL_TO_TOP = "(node) => node.scrollIntoView({block: 'start'})"
SCROLL_TO_BOTTOM = "(node) => node.scrollIntoView({block: 'end'})"


def test_attached_cells_run_in_the_pod_and_stream_live(
    page: Any,
    local_lab: LabServer,
    local_emulator: Any,
    artifacts_dir: Path,
    console_messages: list[str],
) -> None:
    write_notebook(local_lab.root_dir, NOTEBOOK, CELLS)
    open_and_run_all(page, local_lab, NOTEBOOK)

    cells = page.locator(".jp-Notebook .jp-Cell")
    panel = page.locator(".podbook-pod")
    expect(panel).to_have_count(1, timeout=TIMEOUT_MS)
    pod_id = panel.get_attribute("data-pod-id")
    assert pod_id, console_messages
    try:
        expect(cells.nth(2).locator(STDOUT)).to_contain_text(
            f"attached to pod browser-attach ({pod_id})", timeout=TIMEOUT_MS
        )
        pod_cell = cells.nth(POD_CELL)
        outputs = pod_cell.locator(".jp-OutputArea-output")
        marker = outputs.locator(".podbook-remote-marker")
        expect(marker).to_have_text(f"▸ ran in pod browser-attach ({pod_id})", timeout=TIMEOUT_MS)
        pod_cell.evaluate(SCROLL_TO_TOP)

        # Live: the first line is on the page while the cell still runs and before the last.
        page.wait_for_function(LIVE_JS, arg=[POD_CELL, LINES], timeout=TIMEOUT_MS, polling=50)
        page.screenshot(path=str(artifacts_dir / "pod_attach_1_streaming.png"))

        expect(pod_cell.locator(STDOUT)).to_contain_text(
            f"line {LINES} in {pod_id}", timeout=TIMEOUT_MS
        )
        image = outputs.locator("img, svg")
        expect(image).to_have_count(1, timeout=TIMEOUT_MS)
        expect(image).to_be_visible()
        expect(pod_cell.locator(".jp-InputPrompt")).to_have_text("[4]:", timeout=TIMEOUT_MS)
        text = outputs.all_inner_texts()
        assert text[0].startswith("▸ ran in pod browser-attach"), text  # the marker comes first
        streamed = "\n".join(text)
        for i in range(1, LINES + 1):
            assert f"line {i} in {pod_id}" in streamed, streamed

        expect(cells.nth(4).locator(STDOUT)).to_contain_text(
            f"detached from pod {pod_id}: cells run here again", timeout=TIMEOUT_MS
        )
        local = cells.nth(5).locator(".jp-OutputArea-output")
        expect(local).to_have_text(
            "back here: browser-attach, RUNPOD_POD_ID=None", timeout=TIMEOUT_MS
        )
        assert local.locator(".podbook-remote-marker").count() == 0
        # No error and no stderr anywhere (JupyterLab shows both with the stderr MIME type).
        assert page.locator(STDOUT.replace("stdout", "stderr")).count() == 0
        cells.nth(5).evaluate(SCROLL_TO_BOTTOM)
        page.screenshot(path=str(artifacts_dir / "pod_attach_2_done.png"))
    except Exception:
        page.screenshot(path=str(artifacts_dir / "pod_attach_failure.png"))
        print("\n".join(console_messages[-30:]))
        raise
    finally:
        with local_emulator.http() as http:
            assert http.delete(f"/v2/pods/{pod_id}").status_code in (200, 204)
