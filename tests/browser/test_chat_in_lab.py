"""``%%chat`` in a real JupyterLab: the reply streams into the chat panel as plain text and is
rendered as markdown once complete, with its timings; Stop on a reply that would go on for a
long time ends it, and the endpoint's job is cancelled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from .jupyterlab import LabServer, on_a_fresh_node, open_and_run_all, write_notebook

NOTEBOOK = "chat.ipynb"
GENERATORS = """import time

def markdown_reply(messages, params):
    pieces = ["# Streams", "\\n\\nA **reply**", " arrives", " *piece by piece*:",
              "\\n\\n- first", "\\n- second", "\\n\\nRead [the docs](https://example.org/docs)",
              " or `help()`."]
    for piece in pieces:  # slow enough (4 s) to be seen streaming on a busy machine
        time.sleep(0.5)
        yield piece

def long_reply(messages, params):
    for i in range(3000):
        time.sleep(0.05)
        yield f"w{i} "
"""
CELLS = [
    "%load_ext podbook",
    GENERATORS,
    "%endpoint serve markdown_reply --openai --name browser-md",
    "%endpoint serve long_reply --openai --name browser-long",
    "%%chat browser-md -o first\nWrite me something in markdown",
    "%%chat browser-long -o long_turn\nGo on and on",
    "%%chat chat-demo --max-tokens 12 --system 'Be brief'\nHello from the browser",
]
TIMEOUT_MS = 60_000


def chat_panel(page: Any, endpoint: str) -> Any:
    return page.locator(f'.podbook-chat[data-endpoint="{endpoint}"]')


def test_chat_streams_into_the_panel_and_stop_works(
    page: Any,
    jupyter_lab: LabServer,
    emulator: Any,
    artifacts_dir: Path,
    docs_images: Path,
    console_messages: list[str],
) -> None:
    write_notebook(jupyter_lab.root_dir, NOTEBOOK, CELLS)
    open_and_run_all(page, jupyter_lab, NOTEBOOK)
    first = chat_panel(page, "browser-md")
    long_turn = chat_panel(page, "browser-long")
    demo = chat_panel(page, "chat-demo")
    try:
        # The markdown reply: plain text while it streams, then rendered.
        expect(first).to_have_count(1, timeout=TIMEOUT_MS)
        expect(first.locator('[data-role="user"]')).to_have_text("Write me something in markdown")
        expect(first).to_have_attribute("data-status", "STREAMING", timeout=TIMEOUT_MS)
        reply = first.locator(".podbook-chat-reply")
        expect(reply).to_have_attribute("data-rendered", "plain")
        expect(reply).to_contain_text("# Streams")  # the raw text, as it arrives
        on_a_fresh_node(first.scroll_into_view_if_needed)
        page.screenshot(path=str(artifacts_dir / "chat_1_streaming.png"))
        expect(first).to_have_attribute("data-status", "DONE", timeout=TIMEOUT_MS)
        expect(reply).to_have_attribute("data-rendered", "markdown")
        expect(reply.locator("h3")).to_have_text("Streams")
        expect(reply.locator("strong")).to_have_text("reply")
        expect(reply.locator("em")).to_have_text("piece by piece")
        expect(reply.locator("li")).to_have_count(2)
        expect(reply.locator("a")).to_have_attribute("href", "https://example.org/docs")
        expect(reply.locator("code")).to_have_text("help()")
        expect(first).to_have_attribute("data-pieces", "8")
        expect(first.locator('[data-stat="ttft"]')).to_contain_text("to first token")
        expect(first.locator('[data-stat="tokensPerSecond"]')).to_contain_text("tok/s")
        expect(first.locator('[data-stat="finishReason"]')).to_have_text("stop")
        expect(first.locator('button[data-action="stop"]')).to_have_count(0)
        on_a_fresh_node(first.scroll_into_view_if_needed)
        page.screenshot(path=str(artifacts_dir / "chat_2_markdown_done.png"))
        first.screenshot(path=str(docs_images / "chat_panel.png"))

        # The long reply streams; Stop ends it and the job is cancelled.
        expect(long_turn).to_have_attribute("data-status", "STREAMING", timeout=TIMEOUT_MS)
        page.wait_for_function(
            "(el) => Number(el.getAttribute('data-pieces')) >= 10",
            arg=long_turn.element_handle(),
            timeout=TIMEOUT_MS,
        )
        on_a_fresh_node(long_turn.scroll_into_view_if_needed)
        page.screenshot(path=str(artifacts_dir / "chat_3_long_streaming.png"))
        long_turn.locator('button[data-action="stop"]').click()
        expect(long_turn).to_have_attribute("data-status", "STOPPED", timeout=30_000)
        expect(long_turn.locator('button[data-action="stop"]')).to_have_count(0)
        stopped_at = int(long_turn.get_attribute("data-pieces") or "0")
        assert 10 <= stopped_at < 3000, stopped_at
        expect(long_turn.locator('[data-stat="tokens"] b')).to_have_text(str(stopped_at))
        page.wait_for_timeout(1000)
        assert int(long_turn.get_attribute("data-pieces") or "0") == stopped_at
        with emulator.http() as http:
            records = http.get("/v2/browser-long/requests").json()["requests"]
        assert records[0]["status"] == "CANCELLED", records[0]
        page.screenshot(path=str(artifacts_dir / "chat_4_long_stopped.png"))

        # The built-in chat-demo, with a system message.
        expect(demo).to_have_attribute("data-status", "DONE", timeout=TIMEOUT_MS)
        expect(demo.locator('[data-stat="tokens"]')).to_contain_text("12")
        expect(demo.locator(".podbook-id")).to_have_text("chat-demo")

        errors = page.locator(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
        )
        expect(errors).to_have_count(0)
        assert emulator.api_key not in page.content()
    except AssertionError:
        print("\n".join(console_messages[-30:]))
        page.screenshot(path=str(artifacts_dir / "chat_failure.png"), full_page=True)
        raise
