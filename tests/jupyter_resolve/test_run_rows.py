"""The run index's pure parts (contracts/run_rows.py) and the log ends it is built from
(runs/log.py): rows from a log's first and last records, cursors, a page merged from the index's
answer and memory, the last record of a log with a torn end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_resolve.contracts.errors import BadRequest
from jupyter_resolve.contracts.run_rows import (
    RunQuery,
    decode_cursor,
    encode_cursor,
    merge_page,
    page_limit,
    row_from_log,
    started_row,
    usage_totals,
)
from jupyter_resolve.runs.log import close_live_log, last_record, summarize_log


def record(seq: int, kind: str, data: dict[str, object], ts: float) -> dict[str, object]:
    return {"seq": seq, "type": kind, "data": data, "ts": ts}


STARTED = record(1, "run.started", {"session_id": "s-1", "model": "m", "prompt": "x" * 300}, 10.0)


def test_a_row_from_a_logs_first_and_last_records() -> None:
    done = record(9, "run.completed", {"reason": "budget", "rounds": 8}, 20.0)
    usages: list[dict[str, object]] = [
        {"prompt_tokens": 5, "completion_tokens": 2, "run_cost": 0.1},
        {"prompt_tokens": 7},
    ]
    row = row_from_log("run-1", STARTED, done, usages)
    assert row is not None
    assert (row.status, row.reason, row.started_at, row.ended_at, row.events) == (
        "completed",
        "budget",
        10.0,
        20.0,
        9,
    )
    assert row.prompt is not None and len(row.prompt) == 200 and row.prompt.endswith("…")
    assert (row.usage.prompt_tokens, row.usage.completion_tokens, row.usage.cost) == (12, 2, 0.1)
    live = row_from_log("run-1", STARTED, record(4, "tool.started", {}, 12.0))
    assert live is not None and (live.status, live.events, live.ended_at) == ("running", 4, None)
    assert row_from_log("run-1", record(1, "text.delta", {}, 1.0), None) is None
    assert usage_totals([]).prompt_tokens is None


def test_cursors_round_trip_and_anything_else_is_a_400() -> None:
    position = (1764600000.123456, "run-20261201-x")
    assert decode_cursor(encode_cursor(position)) == position
    for bad in ("", "nope", encode_cursor((float("nan"), "r")), "x" * 500):
        with pytest.raises(BadRequest):
            decode_cursor(bad)
    assert page_limit(None) == 50 and page_limit("200") == 200
    for bad_limit in ("0", "201", "-1", "x", True):
        with pytest.raises(BadRequest):
            page_limit(bad_limit)


def test_memory_wins_over_the_index_in_a_page() -> None:
    rows = [started_row(f"run-{i}", {"session_id": "s"}, float(i)) for i in range(6)]
    indexed = [r.info() for r in reversed(rows[1:])]  # 5..1: the index's answer, limit 4 + 1
    ended = rows[4].info().model_copy(update={"status": "completed", "reason": "stop"})
    fresh = started_row("run-9", {"session_id": "s"}, 9.0).info()  # not written yet
    page, position = merge_page(
        RunQuery(status="running", limit=4), indexed, {"run-4": ended, "run-9": fresh}
    )
    assert [i.run_id for i in page] == ["run-9", "run-5", "run-3", "run-2"]
    assert position == (2.0, "run-2")
    last, none = merge_page(RunQuery(before=position, limit=4), [rows[1].info()], {})
    assert [i.run_id for i in last] == ["run-1"] and none is None


def test_the_last_record_of_a_log_with_a_torn_end(tmp_path: Path) -> None:
    log = tmp_path / "run-1.jsonl"
    big = record(2, "text.delta", {"text": "y" * 200_000}, 11.0)
    log.write_text(json.dumps(STARTED) + "\n" + json.dumps(big) + "\n" + '{"seq":3,"ty')
    last = last_record(log, block=4096)
    assert last is not None and last["seq"] == 2
    assert close_live_log(log, "run.completed", "run_id", {"reason": "interrupted"})
    summary = summarize_log(log)
    assert summary.first == STARTED and summary.last is not None
    assert summary.last["type"] == "run.completed" and summary.last["seq"] == 3
    assert not close_live_log(log, "run.completed", "run_id", {"reason": "interrupted"})
