"""The pure checks of what clients send: ids (DESIGN 9.4), paths, JSON depth (issue 14)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, ValidationError

from jupyter_resolve.contracts import safejson
from jupyter_resolve.contracts.bodies import ChatRequest, ToolCallRequest
from jupyter_resolve.contracts.errors import BadRequest
from jupyter_resolve.contracts.ids import Id, check_id, is_id, optional_id
from jupyter_resolve.contracts.pathargs import PathArg, check_path_text
from jupyter_resolve.runs.tasks import TaskRequest

GOOD_IDS = ["a", "0", "run-20261129-201500-1a2b3c4d", "A.b_c-d", "a..", "x" * 128]
BAD_IDS = ["", ".", "..", ".a", "_a", "-a", "a/b", "a\\b", "a b", "a\n", "a\x00", "é", "x" * 129]


class Holder(BaseModel):
    id: Id


@pytest.mark.parametrize("value", GOOD_IDS)
def test_good_ids_pass_everywhere(value: str) -> None:
    assert is_id(value) and check_id("run_id", value) == value
    assert Holder(id=value).id == value


@pytest.mark.parametrize("value", BAD_IDS)
def test_bad_ids_fail_everywhere(value: str) -> None:
    assert not is_id(value)
    with pytest.raises(BadRequest, match=r"^run_id: .* is not an id"):
        check_id("run_id", value)
    with pytest.raises(ValidationError):
        Holder(id=value)
    message = [{"role": "user", "content": "x"}]
    with pytest.raises(ValidationError):
        ChatRequest.model_validate({"messages": message, "session_id": value})
    with pytest.raises(ValidationError):
        TaskRequest(goal="x", session_id=value)
    with pytest.raises(ValidationError):
        ToolCallRequest(run_id=value, call_id="c", name="python")


def test_optional_ids_of_query_arguments() -> None:
    assert optional_id("session_id", None) is None
    assert optional_id("session_id", "") is None
    assert optional_id("session_id", "s-1") == "s-1"
    with pytest.raises(BadRequest):
        optional_id("session_id", "..")


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("", "empty"),
        ("a\x00b", "control character"),
        ("a\rb", "control character"),
        ("a\x7f", "control character"),
        ("\ud800", "UTF-8"),
        ("n" * 256, "name of 256 bytes"),
        ("dir\\" + "n" * 256, "name of 256 bytes"),
        ("ü" * 128, "name of 256 bytes"),
        ("d/" * 2048 + "f", "over 4096"),
    ],
)
def test_paths_a_file_system_cannot_take_are_refused(value: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        check_path_text(value)

    class Body(BaseModel):
        path: PathArg

    with pytest.raises(ValidationError):
        Body(path=value)


@pytest.mark.parametrize("value", ["a.txt", "deep/er/file.ipynb", "n" * 255, "d/" * 2047 + "f"])
def test_paths_a_file_system_takes_pass(value: str) -> None:
    assert check_path_text(value) == value


def test_json_at_the_depth_limit_loads_and_one_deeper_does_not() -> None:
    at_limit = "[" * safejson.MAX_DEPTH + "]" * safejson.MAX_DEPTH
    assert safejson.nesting_depth(at_limit) == safejson.MAX_DEPTH
    assert safejson.loads(at_limit.encode()) == json.loads(at_limit)
    with pytest.raises(safejson.TooDeep, match="nested deeper than 64 levels"):
        safejson.loads("[" + at_limit + "]")


def test_brackets_in_strings_do_not_count_and_escapes_are_followed() -> None:
    text = json.dumps({"a": "[[[{{{" * 100, "b": ['\\"[[[', "\\\\"], "c": '"]]]'})
    assert safejson.nesting_depth(text) == 2
    assert safejson.loads(text) == json.loads(text)


def test_a_loader_error_is_always_a_value_error() -> None:
    for payload in (b"\xff\xfe\x00", "[" * 100_000, '{"a": [1, 2', b"", "nan nan"):
        with pytest.raises(ValueError):
            safejson.loads(payload)
    utf16 = json.dumps({"a": [1]}).encode("utf-16")
    assert safejson.loads(utf16) == {"a": [1]}  # what json.loads detects, so does this
