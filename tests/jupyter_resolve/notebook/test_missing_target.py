"""A proposal naming a cell its notebook lacks is refused when proposed (issue 46.6): the model
gets an error result it can act on, and no person is asked to accept cells into nowhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server
from tests.jupyter_resolve.notebook.live import make_notebook
from tests.scripting import script

pytestmark = pytest.mark.timeout(240)

CELLS = [{"cell_type": "code", "source": "y = x * 14"}]


def propose(**arguments: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"name": "notebook_propose", "arguments": arguments}]}


@pytest.mark.parametrize("field", ["after_cell_id", "replace_cell_id"])
async def test_a_cell_id_the_notebook_lacks_is_an_error_result_not_a_proposal(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path, field: str
) -> None:
    path = make_notebook(jp_root_dir)  # its one cell is 'cell-1'
    script(gateway, tmp_path, propose(cells=CELLS, **{field: "cell-7"}), {"content": "ok"})
    streamed = await server.chat("add a cell", notebook=path)
    assert not streamed.of("notebook.proposal") and not streamed.of("notebook.decision")
    [done] = streamed.of("tool.completed")
    assert done["ok"] is False
    assert f"has no cell with id 'cell-7' ({field})" in done["output"]
    assert f"leave {field} out" in done["output"]
    assert streamed.of("run.completed")[0]["reason"] == "stop"  # the model went on
