from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import (
    new_code_cell,
    new_markdown_cell,
    new_notebook,
    new_output,
)

from kernel_tools.notebook import notebook_read
from kernel_tools.paths import Workspace


def write_notebook(path: Path) -> None:
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Title"),
            new_code_cell(
                "print('hi')\n1 + 1",
                execution_count=5,
                outputs=[
                    new_output("stream", name="stdout", text="hi\n"),
                    new_output("execute_result", data={"text/plain": "2"}, execution_count=5),
                ],
            ),
            new_code_cell(
                "plot()",
                outputs=[
                    new_output(
                        "display_data",
                        data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
                    ),
                    new_output(
                        "error", ename="ValueError", evalue="bad", traceback=["\x1b[31mboom"]
                    ),
                ],
            ),
            new_code_cell("x = '" + "y" * 5000 + "'"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def test_notebook_read(ws: Workspace, server_root: Path) -> None:
    write_notebook(server_root / "analysis" / "model.ipynb")
    result = notebook_read(ws, "analysis/model.ipynb")
    assert result.ok, result.output
    text = result.output
    assert text.startswith("[notebook 'analysis/model.ipynb': 4 cells, kernel python3;")
    assert "[cell 1] markdown\n# Title" in text
    assert "[cell 2] code (execution_count 5)\nprint('hi')\n1 + 1" in text
    assert "[output 1] stream stdout\nhi\n[output 2] execute_result\n2" in text
    assert "[cell 3] code (execution_count none)" in text
    assert "[output 1] display_data\n<Figure>\n[image/png in cell 3 output 1]" in text
    assert "[output 2] error\nboom" in text
    assert "[cut: 2000 of 5006 characters shown]" in text
    assert len(text) < 20_000


def test_notebook_read_whole_result_is_bounded(ws: Workspace, server_root: Path) -> None:
    nb = new_notebook(cells=[new_code_cell("z" * 1500) for _ in range(30)])
    nbformat.write(nb, str(server_root / "big.ipynb"))
    output = notebook_read(ws, "big.ipynb").output
    assert output.endswith("characters shown]")
    assert "[output truncated: 20000 of" in output


def test_notebook_read_errors(ws: Workspace, server_root: Path, tmp_path: Path) -> None:
    missing = notebook_read(ws, "nope.ipynb")
    assert not missing.ok and "does not exist under the server root" in missing.output
    (server_root / "bad.ipynb").write_text("sk-secret-0123456789abcdef not json")
    bad = notebook_read(ws, "bad.ipynb")
    assert not bad.ok and "'bad.ipynb' is not a valid notebook" in bad.output
    assert "sk-secret" not in bad.output  # the parser's message quotes the file's bytes
    assert "leaves the server root" in notebook_read(ws, "../x.ipynb").output
    assert "absolute" in notebook_read(ws, "/etc/passwd").output
    write_notebook(tmp_path / "outside.ipynb")
    (server_root / "link.ipynb").symlink_to(tmp_path / "outside.ipynb")
    escaped = notebook_read(ws, "link.ipynb")
    assert not escaped.ok and "symlink" in escaped.output
    (server_root / "folder.ipynb").mkdir()
    assert "is a directory" in notebook_read(ws, "folder.ipynb").output
