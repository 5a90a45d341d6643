"""The pure part of inline completion (contracts/completion.py): bounds, magic lines, styles
by model, the cleaning of a chat answer, the held-back tail of a stream."""

from __future__ import annotations

import pytest

from jupyter_resolve.contracts.completion import (
    bound,
    clean_chat,
    on_magic_line,
    safe_length,
    scripted_completion,
    style_for,
)


def test_bound_keeps_the_text_nearest_the_cursor() -> None:
    assert bound("abcdef", "uvwxyz", 2, 3) == ("ef", "uvw")
    assert bound("ab", "", 10, 10) == ("ab", "")


@pytest.mark.parametrize(
    ("prefix", "suffix", "magic"),
    [
        ("%resolve plot", "", True),
        ("x = 1\n  %%time", "\ny", True),
        ("", "!ls -la", True),
        ("x = 1\nprint(", ")", False),
        ("# 100% done\nx", "", False),
    ],
)
def test_magic_and_shell_lines_are_left_alone(prefix: str, suffix: str, magic: bool) -> None:
    assert on_magic_line(prefix, suffix) is magic


@pytest.mark.parametrize(
    ("model", "configured", "style"),
    [
        ("codestral-latest", "auto", "fim"),
        ("qwen2.5-coder-7b", "auto", "suffix"),
        ("gpt-3.5-turbo-instruct", "auto", "suffix"),
        ("local", "auto", "suffix"),
        ("gpt-4o-mini", "auto", "chat"),
        ("claude-sonnet-4-5", "auto", "chat"),
        ("gpt-4o-mini", "suffix", "suffix"),
    ],
)
def test_style_by_model_family(model: str, configured: str, style: str) -> None:
    assert style_for(model, configured) == style


@pytest.mark.parametrize(
    ("answer", "prefix", "suffix", "text"),
    [
        ("```python\nimport numpy as np\n```", "import ", "", "numpy as np"),
        ("numpy as np", "import ", "", "numpy as np"),
        ("x = 1\ny = 2", "x = 1\n", "", "y = 2"),
        ("total(a)\nprint(t)", "t = ", "\nprint(t)", "total(a)"),
        ("a\n\n\n# next cell", "", "", "a"),
    ],
)
def test_a_chat_answer_is_cleaned_to_the_insertion(
    answer: str, prefix: str, suffix: str, text: str
) -> None:
    assert clean_chat(answer, prefix, suffix) == text


def test_a_tail_that_may_start_a_stop_is_held_back() -> None:
    assert safe_length("abc") == 3
    assert safe_length("abc\n\n") == 3
    assert safe_length("abc``") == 3
    assert safe_length("abc\n") == 3


def test_the_scripted_table() -> None:
    assert scripted_completion("x = 1\nimport ") == "numpy as np"
    assert scripted_completion("    ") == "# TODO"
    assert scripted_completion("value") == ""
