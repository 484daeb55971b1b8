"""A worker's log keeps exactly its last MAX_LINES lines, as written, however it stores them."""

from __future__ import annotations

import time

from podbook.emulator.broker.workerlogs import BLOCK_LINES, MAX_LINES, WorkerLog


def test_the_log_keeps_the_last_lines_with_their_number_time_source_and_text() -> None:
    log = WorkerLog()
    before = time.time()
    texts = ["job a started", 'a "quoted"\nline\twith é and \x00', "", "container says hi"]
    for index in range(MAX_LINES + 3 * BLOCK_LINES + 7):
        text = texts[index % len(texts)]
        log.note(text, source="container" if text.startswith("container") else "system")
    lines = log.tail(MAX_LINES * 2, None)
    assert len(lines) == MAX_LINES
    total = MAX_LINES + 3 * BLOCK_LINES + 7
    assert [line.seq for line in lines] == list(range(total - MAX_LINES + 1, total + 1))
    for line in lines:
        assert line.line == texts[(line.seq - 1) % len(texts)]
        assert line.source == ("container" if line.line.startswith("container") else "system")
        assert before <= line.ts <= time.time()
    assert [line.ts for line in lines] == sorted(line.ts for line in lines)


def test_reads_by_source_number_and_time_see_the_same_lines() -> None:
    log = WorkerLog()
    for index in range(130):
        log.note(f"line {index + 1}", source="container" if index % 2 else "system")
    every = log.tail(1000, None)
    assert [line.line for line in log.tail(3, "container")] == ["line 126", "line 128", "line 130"]
    assert [line.seq for line in log.after_seq(127, None)] == [128, 129, 130]
    middle = every[60]
    later = log.from_time(middle.ts, inclusive=True, source=None)
    assert later[0].ts >= middle.ts and later[-1].seq == 130
    assert log.tail(0, None) == []
