"""``%resolve`` lines ending in ``?`` are questions for the agent, not IPython help requests."""

from __future__ import annotations

from IPython.core.inputtransformer2 import TransformerManager

from jupyter_resolve.magics.line import keep_question_marks


def transformed(cell: str) -> str:
    manager = TransformerManager()
    manager.cleanup_transforms.append(keep_question_marks)
    return manager.transform_cell(cell)


def test_a_question_reaches_the_magic_whole() -> None:
    assert transformed("%resolve What is my favourite number?\n") == (
        "get_ipython().run_line_magic('resolve', 'What is my favourite number?')\n"
    )
    assert transformed('x = 1\n%resolve is it "odd"?\n').endswith(
        "get_ipython().run_line_magic('resolve', 'is it \"odd\"?')\n"
    )
    # without the transformer IPython asks for help on `number` instead
    assert TransformerManager().transform_cell("%resolve What is my number?\n") == (
        "get_ipython().run_line_magic('pinfo', 'number')\n"
    )


def test_help_and_other_lines_stay_as_ipython_reads_them() -> None:
    assert transformed("%resolve?\n") == "get_ipython().run_line_magic('pinfo', '%resolve')\n"
    assert transformed("%resolve hi\n") == "get_ipython().run_line_magic('resolve', 'hi')\n"
    assert transformed("%%resolve\nwhat?\n").startswith("get_ipython().run_cell_magic(")
    assert transformed("len?\n") == "get_ipython().run_line_magic('pinfo', 'len')\n"
