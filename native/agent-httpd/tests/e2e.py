#!/usr/bin/env python3
"""End-to-end test of agent-httpd against a fake inference + tools server (stdlib only).

Runs the binary named by $AGENT_HTTPD (the ASan build under `make test`), drives every endpoint,
and checks the frames. Prints "e2e: N passed, M failed" and exits non-zero on any failure.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import resource
import select
import signal
import socket
import socketserver
import stat
import subprocess
import sys
import tempfile
import threading
import time

BIN = os.environ.get("AGENT_HTTPD", "native/build/agent-httpd")
TOKEN = "test-token-0123456789abcdef"
PASSED = 0
FAILED = 0


def check(cond: bool, what: str) -> None:
    global PASSED, FAILED
    if cond:
        PASSED += 1
    else:
        FAILED += 1
        print(f"FAIL: {what}", flush=True)


# ---------------------------------------------------------------------------------------------
# The fake inference + tools server: raw sockets, so each test controls the framing exactly.


class Fake:
    def __init__(self, keep_alive: bool = False, drop_second: bool = False) -> None:
        self.keep_alive = keep_alive  # serve more requests on a connection (else close after one)
        # close a connection at its second request, unanswered: what a server that closed an
        # idle kept connection looks like to a request already on its way
        self.drop_second = drop_second
        self.dropped = 0
        self.connections = 0
        self.conn = threading.local()  # per connection (a thread each): must it close?
        self.lock = threading.Lock()
        self.inference_requests: list[tuple[dict, dict]] = []  # (headers, body)
        self.tool_requests: list[tuple[dict, dict]] = []
        self.closed_early: list[str] = []
        fake = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                fake.serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def read_request(sock: socket.socket) -> tuple[str, dict, bytes]:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("eof in head")
            data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0"))
        while len(body) < n:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("eof in body")
            body += chunk
        return lines[0], headers, body

    def serve(self, sock: socket.socket) -> None:
        with self.lock:
            self.connections += 1
        served = 0
        while self.serve_one(sock, drop=self.drop_second and served == 1) and self.keep_alive:
            served += 1
        try:
            sock.close()
        except OSError:
            pass

    def serve_one(self, sock: socket.socket, drop: bool = False) -> bool:
        """One request; whether the connection may carry another. ``drop``: read it, answer
        nothing, close."""
        try:
            line, headers, body = self.read_request(sock)
        except (ConnectionError, OSError):
            return False
        if drop:
            with self.lock:
                self.dropped += 1
            return False
        self.conn.closing = False
        req = json.loads(body)
        if line.startswith("POST /tools"):
            with self.lock:
                self.tool_requests.append((headers, req))
            self.tools(sock, req)
        else:
            with self.lock:
                self.inference_requests.append((headers, req))
            self.inference(sock, req)
        return not self.conn.closing

    # -- tools --
    def tools(self, sock: socket.socket, req: dict) -> None:
        args = req.get("arguments", {})
        if args.get("fail"):
            body = json.dumps({"error": {"message": "kernel died"}}).encode()
            sock.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body)
            return
        if args.get("sleep"):  # a call that takes a while (steering messages come meanwhile)
            time.sleep(float(args["sleep"]))
        if args.get("big"):
            out = "\u00e9" * 15000 + "tail"  # 30004 bytes
        else:
            out = "echo: " + json.dumps(args, sort_keys=True)
        body = json.dumps({"ok": True, "output": out, "mime": {"type": "text/plain"},
                           "truncated": False, "ms": 7}).encode()
        # answer chunked, to exercise the client's decoder on this path too
        half = len(body) // 2
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                     + b"%x\r\n" % half + body[:half] + b"\r\n"
                     + b"%x;ext=1\r\n" % (len(body) - half) + body[half:] + b"\r\n0\r\n\r\n")

    # -- inference --
    def inference(self, sock: socket.socket, req: dict) -> None:
        model = req["model"]
        rnd = 1 + sum(1 for m in req["messages"] if m.get("role") == "assistant")
        handler = getattr(self, "m_" + str(model).replace("-", "_"), None)
        if handler is None:  # mutated bodies may name no scenario
            body = b'{"error":{"message":"no such model"}}'
            sock.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            return
        handler(sock, rnd, req)

    @staticmethod
    def ev(obj) -> bytes:
        return b"data: " + json.dumps(obj).encode() + b"\n\n"

    @staticmethod
    def delta(**d) -> dict:
        return {"choices": [{"index": 0, "delta": d, "finish_reason": None}]}

    def send(self, sock, pieces: list[bytes], framing: str = "chunked", status: str = "200 OK",
             ctype: str = "text/event-stream", gap: float = 0.01) -> None:
        head = f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\n"
        if framing == "close":
            self.conn.closing = True
        if framing == "chunked":
            head += "Transfer-Encoding: chunked\r\n"
        elif framing == "cl":
            head += f"Content-Length: {sum(len(p) for p in pieces)}\r\n"
        head += "\r\n"
        sock.sendall(head.encode())
        for i, p in enumerate(pieces):
            if framing == "chunked":
                ext = b";foo=bar" if i % 2 else b""
                last = b"0\r\n\r\n" if i == len(pieces) - 1 else b""  # the end with the last
                sock.sendall(b"%x%s\r\n" % (len(p), ext) + p + b"\r\n" + last)
            else:
                sock.sendall(p)
            if i < len(pieces) - 1:
                time.sleep(gap)
        if framing == "chunked" and not pieces:
            sock.sendall(b"0\r\n\r\n")

    def m_simple(self, sock, rnd, req) -> None:
        e = self.ev
        pieces = [
            b": keep-alive\n\n",
            e(self.delta(role="assistant", reasoning_content="think ")),
            e(self.delta(reasoning="more")),
            e(self.delta(content="Hello ")),
            b'data: {"choices":[{"delta":{"content":"w\xc3',  # UTF-8 split across reads
            b'\xb6rld"}}]}\n\n',
            b'data: {"choices":[{"delta":{"content":"\xe2\x82"}}]}\n\n',  # split across events
            b'data: {"choices":[{"delta":{"content":"\xac!\\ud83d\\ude00"}}]}\n\n',
            e({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
            e({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 5}}),
            b"data: [DONE]\n\n",
        ]
        self.send(sock, pieces, "chunked")

    def m_burst(self, sock, rnd, req) -> None:
        # many events in one write: the runtime sends the text of a read as one frame per run
        # of one channel, in order
        e = self.ev
        events = [e(self.delta(reasoning_content="a")), e(self.delta(reasoning_content="b"))]
        events += [e(self.delta(content=f"{i} ")) for i in range(50)]
        events += [e(self.delta(reasoning_content="c")), e(self.delta(content="end"))]
        events += [e({"choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 53}}),
                   b"data: [DONE]\n\n"]
        body = b"".join(events)
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def m_cl(self, sock, rnd, req) -> None:
        body = (b"event: message\r\nid: 1\r\ndata:" + json.dumps(self.delta(content="A")).encode() + b"\r\n\r\n"
                + b"retry: 5\r\ndata:" + json.dumps(self.delta(content="B")).encode() + b"\r\n\r\n"
                + b"data: " + json.dumps({"choices": None, "usage": {"prompt_tokens": 3, "completion_tokens": 2}}).encode()
                + b"\r\n\r\ndata: [DONE]")
        self.send(sock, [body[:17], body[17:40], body[40:]], "cl")

    def m_close(self, sock, rnd, req) -> None:
        # read-until-close, no blank lines between events, no [DONE]
        body = (b"data: " + json.dumps(self.delta(content="x")).encode() + b"\n"
                + b"data: " + json.dumps(self.delta(content="y")).encode() + b"\n")
        self.send(sock, [body[:5], body[5:]], "close")

    def m_json200(self, sock, rnd, req) -> None:
        body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"},
                                        "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 4, "completion_tokens": 1}}).encode()
        self.send(sock, [b"\n", body], "cl", ctype="application/json")

    def m_mislabeled(self, sock, rnd, req) -> None:
        # an SSE stream sent as application/json, with a BOM: still read as SSE
        self.send(sock, [b"\xef\xbb", b"\xbf" + self.ev(self.delta(content="s")), b"data: [DONE]\n\n"],
                  "chunked", ctype="application/json")

    def m_tools(self, sock, rnd, req) -> None:
        e = self.ev
        if rnd == 1:
            pieces = [
                e(self.delta(content="Let me check.")),
                e(self.delta(tool_calls=[{"index": 0, "id": "call_a", "type": "function",
                                          "function": {"name": "echo", "arguments": "{\"te"}}])),
                e(self.delta(tool_calls=[{"index": 0, "function": {"arguments": "xt\": \"h\u00e9\"}"}}])),
                e(self.delta(tool_calls=[{"index": 1, "id": "call_b", "type": "function",
                                          "function": {"name": "nope", "arguments": ""}}])),
                e(self.delta(tool_calls=[{"index": 2, "type": "function",
                                          "function": {"name": "echo", "arguments": "{bad"}}])),
                e(self.delta(tool_calls=[{"index": 3, "id": "call_d", "type": "function",
                                          "function": {"name": "echo", "arguments": ""}}])),
                e({"choices": [{"delta": {}, "finish_reason": "stop"}]}),  # says stop: must be ignored
                b"data: [DONE]\n\n",
            ]
        else:
            pieces = [e(self.delta(content="done.")), b"data: [DONE]\n\n"]
        self.send(sock, pieces, "chunked")

    def m_writing(self, sock, rnd, req) -> None:
        """A call written slowly, a fragment every 150 ms, as a small local model does."""
        e = self.ev
        if rnd == 1:
            args = json.dumps({"text": "a slowly written call"})
            pieces = [e(self.delta(tool_calls=[{"index": 0, "id": "call_w", "type": "function",
                                                "function": {"name": "echo", "arguments": ""}}]))]
            pieces += [e(self.delta(tool_calls=[{"index": 0, "function": {"arguments": args[i:i + 4]}}]))
                       for i in range(0, len(args), 4)]
            self.send(sock, pieces + [b"data: [DONE]\n\n"], "chunked", gap=0.15)
        else:
            self.send(sock, [e(self.delta(content="ok")), b"data: [DONE]\n\n"], "chunked")

    def m_ollama(self, sock, rnd, req) -> None:
        e = self.ev
        if rnd == 1:
            pieces = [
                e(self.delta(content="", tool_calls=[{"index": 0, "id": "call_x", "type": "function",
                                                      "function": {"name": "echo", "arguments": "{\"big\": true}"}}])),
                e(self.delta(tool_calls=[{"index": 0, "id": "call_y", "type": "function",
                                          "function": {"name": "echo", "arguments": {"n": 2}}}])),
                e({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
                b"data: [DONE]",  # no final blank line
            ]
        else:
            pieces = [e(self.delta(content="ok")), b"data: [DONE]\n\n"]
        self.send(sock, pieces, "close")

    def m_budget(self, sock, rnd, req) -> None:
        pieces = [self.ev(self.delta(tool_calls=[{"index": 0, "id": f"c{rnd}", "type": "function",
                                                  "function": {"name": "echo", "arguments": "{}"}}])),
                  b"data: [DONE]\n\n"]
        self.send(sock, pieces, "cl")

    def m_toolfail(self, sock, rnd, req) -> None:
        if rnd == 1:
            pieces = [self.ev(self.delta(tool_calls=[{"index": 0, "id": "f1", "type": "function",
                                                      "function": {"name": "echo", "arguments": "{\"fail\":1}"}}])),
                      b"data: [DONE]\n\n"]
        else:
            pieces = [self.ev(self.delta(content="sorry")), b"data: [DONE]\n\n"]
        self.send(sock, pieces, "chunked")

    def m_http500(self, sock, rnd, req) -> None:
        body = json.dumps({"error": {"message": "model exploded", "type": "server_error"}}).encode()
        self.send(sock, [body], "cl", status="500 Internal Server Error", ctype="application/json")

    def m_http503text(self, sock, rnd, req) -> None:
        self.send(sock, [b"upstream unavailable " + b"z" * 1000], "close", status="503 Service Unavailable",
                  ctype="text/plain")

    def m_midstream(self, sock, rnd, req) -> None:
        pieces = [self.ev(self.delta(content="par")),
                  self.ev({"error": {"message": "overloaded", "code": 529}})]
        self.send(sock, pieces, "chunked")

    def m_garbage(self, sock, rnd, req) -> None:
        self.send(sock, [b"data: {not json}\n\n"], "chunked")

    def m_hugeline(self, sock, rnd, req) -> None:
        try:
            self.send(sock, [b"data: " + b"a" * (5 * 1024 * 1024)], "close")
        except OSError:
            pass  # the runtime may hang up once the line is too long

    def m_badchunk(self, sock, rnd, req) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")

    def m_slow(self, sock, rnd, req) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                     + self.ev(self.delta(content="thinking...")))
        deadline = time.time() + 20
        sock.settimeout(0.1)
        while time.time() < deadline:
            try:
                if sock.recv(1) == b"":
                    with self.lock:
                        self.closed_early.append(req["model"])
                    return
            except socket.timeout:
                pass
            except OSError:
                with self.lock:
                    self.closed_early.append(req["model"])
                return

    def m_steer(self, sock, rnd, req) -> None:
        """Round 1 calls a tool that takes 1 s (messages are posted meanwhile); round 2 answers."""
        e = self.ev
        if rnd == 1:
            call = {"index": 0, "id": "call_s", "type": "function",
                    "function": {"name": "echo", "arguments": "{\"sleep\": 1}"}}
            pieces = [e(self.delta(tool_calls=[call])), b"data: [DONE]\n\n"]
        else:
            pieces = [e(self.delta(content=f"round {rnd}")), b"data: [DONE]\n\n"]
        self.send(sock, pieces, "chunked")

    def m_steer_text(self, sock, rnd, req) -> None:
        """Every round answers text without calls, the first slowly (1 s between its pieces)."""
        e = self.ev
        gap = 1.0 if rnd == 1 else 0.01
        self.send(sock, [e(self.delta(content=f"answer {rnd}")), b"data: [DONE]\n\n"], "chunked", gap=gap)

    def m_hang(self, sock, rnd, req) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
        time.sleep(3)


# ---------------------------------------------------------------------------------------------
# Running the binary


def token_pipe(token: str) -> int:
    """The read end of a pipe holding the token, closed for writing (what the gateway does)."""
    r, w = os.pipe()
    os.write(w, token.encode() + b"\n")
    os.close(w)
    return r


def clean_env() -> dict:
    env = dict(os.environ)
    env.pop("RESOLVE_RUNTIME_TOKEN", None)
    return env


class Agent:
    def __init__(self, inference_url: str, tools_url: str, *extra: str, token: str | None = TOKEN) -> None:
        argv = [BIN, "--port", "0", "--inference-url", inference_url, "--tools-url", tools_url, *extra]
        fds: tuple[int, ...] = ()
        if token is not None:
            fds = (token_pipe(token),)
            argv += ["--token-fd", str(fds[0])]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(),
                                     pass_fds=fds)
        for fd in fds:
            os.close(fd)
        line = self.proc.stdout.readline().decode()
        self.port = json.loads(line)["port"] if line.startswith("{") else 0
        self.first_line = line

    def conn(self, timeout: float = 20) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method: str, path: str, body=None, token: str | None = TOKEN, headers=None):
        c = self.conn()
        h = dict(headers or {})
        if token is not None:
            h["Authorization"] = f"Bearer {token}"
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            h["Content-Type"] = "application/json"
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r, data

    def chat(self, body: dict):
        r, data = self.request("POST", "/chat", body)
        return r, data, parse_frames(data)

    def stop(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = -999
        err = self.proc.stderr.read().decode(errors="replace")
        self.proc.stdout.close()
        self.proc.stderr.close()
        return rc, err


def parse_frames(data: bytes) -> list[dict]:
    """Strictly parse the SSE body: only `data: {json}` lines each followed by a blank line."""
    text = data.decode("utf-8")  # raises on invalid UTF-8
    frames = []
    parts = text.split("\n\n")
    check(parts[-1] == "", "stream ends with a blank line")
    for p in parts[:-1]:
        ok = p.startswith("data: ") and "\n" not in p
        check(ok, f"frame is a single data line: {p[:80]!r}")
        if ok:
            f = json.loads(p[6:])
            check(set(f) == {"t", "d"}, f"frame has only t and d: {f}")
            frames.append(f)
    if frames:
        check(frames[0]["t"] == "run", "first frame is run")
        check(frames[-1]["t"] == "done", "last frame is done")
        check(sum(1 for f in frames if f["t"] == "done") == 1, "exactly one done")
    return frames


def of(frames: list[dict], t: str) -> list[dict]:
    return [f["d"] for f in frames if f["t"] == t]


def chat_body(run_id: str, model: str, **kw) -> dict:
    b = {"run_id": run_id, "message": "hi", "history": [], "system": "", "tools": [], "model": model}
    b.update(kw)
    return b


ECHO_TOOL = {"type": "function", "function": {"name": "echo", "description": "echo", "parameters": {"type": "object"}}}
READ_TOOL = {"type": "function", "function": {"name": "read", "description": "read", "parameters": {"type": "object"}}}


# ---------------------------------------------------------------------------------------------
# Tests


def test_stream_shapes(a: Agent, fake: Fake) -> None:
    history = [{"role": "user", "content": "earlier \u00e9"}, {"role": "assistant", "content": "yes"}]
    r, data, fr = a.chat(chat_body("run-simple", "simple", system="be brief", history=history,
                                   tools=[ECHO_TOOL], budget={"rounds": 3}))
    check(r.status == 200, "chat 200")
    check(r.getheader("Content-Type") == "text/event-stream", "content type")
    check(r.getheader("Cache-Control") == "no-cache", "cache-control")
    check(r.getheader("Connection") == "close", "connection close")
    check(r.getheader("Content-Length") is None, "no content-length")
    check(b"event:" not in data, "no event: lines")
    check(of(fr, "run") == [{"run_id": "run-simple", "model": "simple", "rounds": 3}], "run frame")
    check(of(fr, "round") == [{"n": 1, "of": 3}], "round frame")
    text = "".join(d["text"] for d in of(fr, "delta"))
    check(text == "Hello w\u00f6rld\u20ac!\U0001F600", f"delta text reassembled: {text!r}")
    check(len(of(fr, "delta")) >= 3, "deltas forwarded piece by piece")
    check("".join(d["text"] for d in of(fr, "reasoning")) == "think more", "reasoning text")
    check(of(fr, "usage") == [{"prompt_tokens": 11, "completion_tokens": 5}], "usage frame")
    check(of(fr, "done") == [{"reason": "stop", "rounds": 1}], "done stop")
    # what went to inference
    headers, req = [x for x in fake.inference_requests if x[1]["model"] == "simple"][-1]
    check(headers.get("authorization") == f"Bearer {TOKEN}", "inference bearer")
    check(headers.get("x-resolve-run-id") == "run-simple", "run id header")
    check(headers.get("accept") == "text/event-stream", "accept header")
    check(headers.get("content-type") == "application/json", "content-type header")
    check(req["messages"] == [{"role": "system", "content": "be brief"}, *history,
                              {"role": "user", "content": "hi"}], "messages assembled")
    check(req["tools"] == [ECHO_TOOL], "tools passed through")
    check(req["stream"] is True and req["stream_options"] == {"include_usage": True}, "stream flags")

    r, data, fr = a.chat(chat_body("run-burst", "burst"))
    text = "".join(f"{i} " for i in range(50))
    kinds = [(f["t"], f["d"].get("text")) for f in fr if f["t"] in ("delta", "reasoning", "usage")]
    merged: list = []
    for kind, piece in kinds:
        if merged and merged[-1][0] == kind and kind != "usage":
            merged[-1] = (kind, merged[-1][1] + piece)
        else:
            merged.append((kind, piece))
    check(merged == [("reasoning", "ab"), ("delta", text), ("reasoning", "c"), ("delta", "end"),
                     ("usage", None)], f"a burst keeps its order: {merged!r}")
    check(len(of(fr, "delta")) <= 6, f"a burst's text goes in few frames: {len(of(fr, 'delta'))}")

    r, data, fr = a.chat(chat_body("run-cl", "cl"))
    check("".join(d["text"] for d in of(fr, "delta")) == "AB", "content-length stream, CRLF, data: w/o space")
    check(of(fr, "usage") == [{"prompt_tokens": 3, "completion_tokens": 2}], "usage with choices null")
    check(of(fr, "done") == [{"reason": "stop", "rounds": 1}], "cl done")
    _, req = [x for x in fake.inference_requests if x[1]["model"] == "cl"][-1]
    check("tools" not in req, "tools omitted when empty")
    check(req["messages"] == [{"role": "user", "content": "hi"}], "no system message when empty")

    r, data, fr = a.chat(chat_body("run-json200", "json200"))
    check([d["text"] for d in of(fr, "delta")] == ["whole"], "non-streamed JSON answer")
    check(of(fr, "usage") == [{"prompt_tokens": 4, "completion_tokens": 1}], "non-streamed usage")
    r, data, fr = a.chat(chat_body("run-mislabeled", "mislabeled"))
    check([d["text"] for d in of(fr, "delta")] == ["s"], "SSE behind a JSON content type and a BOM")
    check(of(fr, "done") == [{"reason": "stop", "rounds": 1}], "mislabeled done")

    r, data, fr = a.chat(chat_body("run-close", "close"))
    check("".join(d["text"] for d in of(fr, "delta")) == "xy", "read-until-close, no blank lines, no [DONE]")
    check(of(fr, "done") == [{"reason": "stop", "rounds": 1}], "close done")


def test_tools(a: Agent, fake: Fake) -> None:
    n_tool = len(fake.tool_requests)
    r, data, fr = a.chat(chat_body("run-tools", "tools", tools=[ECHO_TOOL, READ_TOOL]))
    calls = of(fr, "tool_call")
    results = of(fr, "tool_result")
    check([c["call_id"] for c in calls] == ["call_a", "call_b", "call_1_2", "call_d"], f"call ids {calls}")
    check(calls[0] == {"call_id": "call_a", "name": "echo", "arguments": {"text": "h\u00e9"}}, "args parsed")
    check(calls[2]["arguments"] == "{bad", "invalid args passed as raw string")
    check(calls[3]["arguments"] == {}, "empty args become {}")
    check(results[0]["ok"] is True and results[0]["output"] == 'echo: {"text": "h\\u00e9"}', f"echo result {results[0]}")
    check(results[0]["mime"] == {"type": "text/plain"} and results[0]["ms"] == 7 and results[0]["truncated"] is False,
          "mime/ms/truncated passed through")
    check(results[1]["ok"] is False and results[1]["output"] ==
          "unknown tool 'nope': not among the tools this run may use (echo, read)", f"unknown tool {results[1]}")
    check(results[1]["mime"] is None, "mime null for local errors")
    check(results[2]["ok"] is False and results[2]["output"].startswith("invalid JSON arguments for 'echo': "),
          f"invalid json {results[2]}")
    check(set(results[0]) == {"call_id", "name", "ok", "output", "mime", "truncated", "ms"}, "tool_result fields")
    new = fake.tool_requests[n_tool:]
    check(len(new) == 2, f"only valid known calls reach the tools URL ({len(new)})")
    h, treq = new[0]
    check(treq == {"run_id": "run-tools", "call_id": "call_a", "name": "echo", "arguments": {"text": "h\u00e9"}},
          f"tools request body {treq}")
    check(h.get("authorization") == f"Bearer {TOKEN}", "tools bearer")
    check(of(fr, "round") == [{"n": 1, "of": 8}, {"n": 2, "of": 8}], "two rounds")
    check(of(fr, "done") == [{"reason": "stop", "rounds": 2}], "done stop after tools")
    # order: tool_call then its tool_result
    kinds = [f["t"] for f in fr if f["t"] in ("tool_call", "tool_result")]
    check(kinds == ["tool_call", "tool_result"] * 4, "call/result interleaved")
    _, req2 = [x for x in fake.inference_requests if x[1]["model"] == "tools"][-1]
    msgs = req2["messages"]
    asst = msgs[1]
    check(asst["role"] == "assistant" and asst["content"] == "Let me check.", "assistant content")
    check([tc["id"] for tc in asst["tool_calls"]] == ["call_a", "call_b", "call_1_2", "call_d"], "assistant tool_calls")
    check(asst["tool_calls"][0] == {"id": "call_a", "type": "function",
                                   "function": {"name": "echo", "arguments": "{\"text\": \"h\u00e9\"}"}},
          "raw argument string kept")
    check(asst["tool_calls"][3]["function"]["arguments"] == "{}", "empty args sent as {}")
    tool_msgs = msgs[2:6]
    check([m["role"] for m in tool_msgs] == ["tool"] * 4, "tool messages appended")
    check(tool_msgs[1] == {"role": "tool", "tool_call_id": "call_b", "content": results[1]["output"]},
          "tool message content")


def test_tool_progress(a: Agent) -> None:
    """A call being written is announced (tool_progress) before its tool_call: its name at once,
    then how far it got, never more often than every 500 ms, so over the 1.2 s it takes the
    count is seen growing."""
    r, data, fr = a.chat(chat_body("run-writing", "writing", tools=[ECHO_TOOL]))
    kinds = [f["t"] for f in fr]
    progress = of(fr, "tool_progress")
    check(len(progress) >= 2, f"progress frames while the call is written: {progress}")
    check(kinds.index("tool_call") > max(i for i, k in enumerate(kinds) if k == "tool_progress"),
          "every tool_progress before the tool_call")
    check(progress[0] == {"index": 0, "call_id": "call_w", "name": "echo", "pieces": 0, "bytes": 0},
          f"the name at once: {progress[0]}")
    pieces = [p["pieces"] for p in progress]
    check(pieces == sorted(pieces) and 0 < pieces[-1] <= 9, f"fragments counted as they grow: {pieces}")
    check(len(progress) <= 10, "at most one frame a fragment")
    call = of(fr, "tool_call")[0]
    check(call["arguments"] == {"text": "a slowly written call"}, f"the call still parses: {call}")
    check(of(fr, "done") == [{"reason": "stop", "rounds": 2}], "done after the call's round")


def test_ollama_and_truncation(a: Agent) -> None:
    r, data, fr = a.chat(chat_body("run-ollama", "ollama", tools=[ECHO_TOOL]))
    calls = of(fr, "tool_call")
    check([c["call_id"] for c in calls] == ["call_x", "call_y"], f"index 0 twice = two calls {calls}")
    check(calls[1]["arguments"] == {"n": 2}, "object arguments accepted")
    res = of(fr, "tool_result")
    out = res[0]["output"] if res else ""
    check(res and res[0]["truncated"] is True, "truncated flag")
    marker = "\n[output truncated: 20000 of 30004 characters shown]"
    check(out.endswith(marker) and out[: -len(marker)] == "\u00e9" * 10000, f"cut at 20000 bytes: {out[-80:]!r}")
    check(of(fr, "done") == [{"reason": "stop", "rounds": 2}], "ollama done")


def test_budget_and_errors(a: Agent) -> None:
    _, _, fr = a.chat(chat_body("run-budget", "budget", tools=[ECHO_TOOL], budget={"rounds": 2}))
    check(of(fr, "done") == [{"reason": "budget", "rounds": 2}], "done budget")
    check(len(of(fr, "tool_result")) == 2, "tools ran in both rounds")

    _, _, fr = a.chat(chat_body("run-tf", "toolfail", tools=[ECHO_TOOL]))
    res = of(fr, "tool_result")
    check(res and res[0]["ok"] is False and res[0]["output"] == "tools endpoint answered HTTP 503: kernel died",
          f"tools non-200 {res}")
    check(of(fr, "done") == [{"reason": "stop", "rounds": 2}], "loop goes on after a failed tool")

    _, _, fr = a.chat(chat_body("run-500", "http500"))
    check(of(fr, "error") == [{"code": "inference_http", "message": "model exploded", "status": 500}],
          f"inference_http {of(fr, 'error')}")
    check(of(fr, "done") == [{"reason": "error", "rounds": 1}], "done error")

    _, _, fr = a.chat(chat_body("run-503", "http503text"))
    err = of(fr, "error")
    check(err and err[0]["status"] == 503 and err[0]["message"].startswith("upstream unavailable")
          and len(err[0]["message"]) == 500, "non-JSON error body cut to 500")

    _, _, fr = a.chat(chat_body("run-mid", "midstream"))
    check(of(fr, "error") == [{"code": "inference_stream", "message": "overloaded"}], "mid-stream error")
    check([d["text"] for d in of(fr, "delta")] == ["par"], "text before the error forwarded")
    check(of(fr, "done") == [{"reason": "error", "rounds": 1}], "mid-stream done error")

    for model in ("garbage", "badchunk", "hugeline"):
        _, _, fr = a.chat(chat_body("run-" + model, model))
        err = of(fr, "error")
        check(err and err[0]["code"] == "inference_protocol", f"{model}: inference_protocol {err}")
        check(of(fr, "done") == [{"reason": "error", "rounds": 1}], f"{model}: done error")


def test_cancel(a: Agent, fake: Fake) -> None:
    c = a.conn()
    c.request("POST", "/chat", body=json.dumps(chat_body("run-slow", "slow")),
              headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    r = c.getresponse()
    lines = []
    while True:  # read until the first delta arrives
        line = r.fp.readline()
        lines.append(line)
        if not line or b'"delta"' in line:
            break
    h = json.loads(a.request("GET", "/healthz")[1])
    check(h["active_runs"] == 1, "healthz counts the active run")
    r409, body409 = a.request("POST", "/chat", chat_body("run-slow", "simple"))
    check(r409.status == 409 and json.loads(body409)["error"]["code"], "duplicate run_id 409")
    t0 = time.time()
    rc, body = a.request("POST", "/runs/run%2Dslow/cancel")  # percent-encoded id
    check(rc.status == 200 and json.loads(body) == {"ok": True}, "cancel 200")
    rest = r.read()
    c.close()
    check(time.time() - t0 < 3, "cancel is prompt")
    fr = parse_frames(b"".join(lines) + rest)
    check(of(fr, "done") == [{"reason": "cancelled", "rounds": 1}], f"done cancelled {of(fr, 'done')}")
    time.sleep(0.3)
    check("slow" in fake.closed_early, "in-flight inference aborted")
    rc, body = a.request("POST", "/runs/run-slow/cancel")
    check(rc.status == 404 and json.loads(body)["error"]["code"] == "no_such_run", "cancel unknown 404")

    # the client disconnecting aborts the run
    s = socket.create_connection(("127.0.0.1", a.port))
    body = json.dumps(chat_body("run-gone", "slow")).encode()
    s.sendall(b"POST /chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
              + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    got = b""
    while b'"delta"' not in got:
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
    s.close()
    ok = False
    for _ in range(50):
        time.sleep(0.1)
        if json.loads(a.request("GET", "/healthz")[1])["active_runs"] == 0:
            ok = True
            break
    check(ok, "client disconnect ends the run")


class Streaming:
    """A /chat read on a thread of its own, so a test can post to the run meanwhile."""

    def __init__(self, a: Agent, body: dict) -> None:
        self.frames: list[dict] = []
        self.thread = threading.Thread(target=lambda: self.frames.extend(a.chat(body)[2]))
        self.thread.start()

    def join(self) -> list[dict]:
        self.thread.join(30)
        return self.frames


def wait_for(cond, what: str, timeout: float = 10) -> None:
    deadline = time.time() + timeout
    while not cond() and time.time() < deadline:
        time.sleep(0.02)
    check(cond(), what)


def post_message(a: Agent, run_id: str, mid: str, text: str):
    r, body = a.request("POST", f"/runs/{run_id}/messages", {"id": mid, "text": text})
    return r.status, json.loads(body)


def test_steering(a: Agent, fake: Fake) -> None:
    """Messages posted while a tool call runs are delivered before the next inference, in order,
    as user turns after the call's result, each with a `message` frame; the ninth waiting is
    refused; an ended run takes none."""
    n_tool = len(fake.tool_requests)
    run = Streaming(a, chat_body("run-steer", "steer", tools=[ECHO_TOOL]))
    wait_for(lambda: len(fake.tool_requests) > n_tool, "the slow call started")
    texts = [f"not that column \u00e9 {i}" for i in range(8)]
    answers = [post_message(a, "run-steer", f"m{i}", t) for i, t in enumerate(texts)]
    check(all(st == 200 and b == {"ok": True} for st, b in answers), f"8 messages queued: {answers}")
    st, b = post_message(a, "run-steer", "m8", "one too many")
    check(st == 429 and b["error"]["code"] == "too_many_messages", f"the ninth waiting: {st} {b}")
    fr = run.join()
    kinds = [f["t"] for f in fr]
    check(of(fr, "message") == [{"id": f"m{i}", "text": t} for i, t in enumerate(texts)],
          f"message frames in order: {of(fr, 'message')}")
    check(kinds.index("message") > kinds.index("tool_result") and
          kinds.index("message") < [i for i, k in enumerate(kinds) if k == "round"][1],
          f"delivered after the call's result, before round 2: {kinds}")
    check(of(fr, "done") == [{"reason": "stop", "rounds": 2}], f"done: {of(fr, 'done')}")
    sent = [b for _, b in fake.inference_requests if b["model"] == "steer"][-1]["messages"]
    check([m["role"] for m in sent] == ["user", "assistant", "tool"] + ["user"] * 8,
          f"round 2's messages: {[m['role'] for m in sent]}")
    check([m["content"] for m in sent[3:]] == texts, "the texts as user turns")
    st, b = post_message(a, "run-steer", "late", "too late")
    check(st == 404 and b["error"]["code"] == "no_such_run", f"an ended run: {st} {b}")


def test_steering_after_an_answer(a: Agent, fake: Fake) -> None:
    """A message that comes while the model answers without calls gets a round of its own (the
    answer kept before it), within the budget; past the budget it is not delivered."""
    run = Streaming(a, chat_body("run-steer-text", "steer-text", budget={"rounds": 3}))
    wait_for(lambda: any(b["model"] == "steer-text" for _, b in fake.inference_requests),
             "the first round started")
    st, _ = post_message(a, "run-steer-text", "m1", "and the median?")
    check(st == 200, "queued during the answer")
    fr = run.join()
    check(of(fr, "message") == [{"id": "m1", "text": "and the median?"}], "delivered")
    check(of(fr, "done") == [{"reason": "stop", "rounds": 2}], f"one more round: {of(fr, 'done')}")
    sent = [b for _, b in fake.inference_requests if b["model"] == "steer-text"][-1]["messages"]
    check(sent == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "answer 1"},
                   {"role": "user", "content": "and the median?"}], f"the answer before it: {sent}")

    n = len(fake.inference_requests)
    run = Streaming(a, chat_body("run-steer-last", "steer-text", budget={"rounds": 1}))
    wait_for(lambda: len(fake.inference_requests) > n, "the only round started")
    st, _ = post_message(a, "run-steer-last", "m1", "one more thing")
    check(st == 200, "queued during the last round")
    fr = run.join()
    check(not of(fr, "message") and of(fr, "done") == [{"reason": "stop", "rounds": 1}],
          f"no round left: not delivered {of(fr, 'done')}")


def test_steering_refusals(a: Agent) -> None:
    def refused(body, status: int, code: str, run_id: str = "run-none") -> None:
        r, data = a.request("POST", f"/runs/{run_id}/messages", body)
        got = json.loads(data)["error"]["code"] if data else None
        check(r.status == status and got == code, f"{body!r:.60}: {r.status} {got}")

    refused({"id": "m", "text": "x"}, 404, "no_such_run")
    refused(b"", 400, "bad_request")
    refused(b"{nope", 400, "bad_request")
    refused({"id": "a b", "text": "x"}, 400, "bad_request")
    refused({"id": "m", "text": ""}, 400, "bad_request")
    refused({"id": "m", "text": "x" * (256 * 1024 + 1)}, 413, "message_too_large")
    r, _ = a.request("GET", "/runs/run-none/messages")
    check(r.status == 405, "GET messages 405")


def test_concurrency(a: Agent) -> None:
    results: dict[int, list] = {}

    def one(i: int) -> None:
        try:
            _, _, fr = a.chat(chat_body(f"run-par-{i}", "tools" if i % 2 else "simple", tools=[ECHO_TOOL]))
            results[i] = fr
        except Exception as e:  # noqa: BLE001
            results[i] = [repr(e)]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    good = all(
        isinstance(results.get(i, [None])[-1], dict)
        and results[i][-1] == {"t": "done", "d": {"reason": "stop", "rounds": 2 if i % 2 else 1}}
        for i in range(16))
    check(good, "16 concurrent runs all finish correctly")
    check(json.loads(a.request("GET", "/healthz")[1])["active_runs"] == 0, "no run left active")


def test_http_surface(a: Agent) -> None:
    r, body = a.request("GET", "/healthz")
    h = json.loads(body)
    check(r.status == 200 and h["ok"] is True and h["version"] == "0.1.0" and isinstance(h["uptime_s"], int)
          and h["active_runs"] == 0, f"healthz {h}")

    def err(r, body, status, code=None):
        try:
            e = json.loads(body)["error"]
        except (ValueError, KeyError, TypeError):
            e = {}
        good = r.status == status and isinstance(e.get("message"), str) and (code is None or e.get("code") == code)
        good = good and r.getheader("Content-Type") == "application/json"
        return good

    check(err(*a.request("GET", "/healthz", token=None), 401), "no token 401")
    check(err(*a.request("GET", "/healthz", token="wrong"), 401), "wrong token 401")
    check(err(*a.request("GET", "/healthz", token=TOKEN + "x"), 401), "longer token 401")
    check(err(*a.request("GET", "/nope"), 404), "unknown path 404")
    check(err(*a.request("GET", "/chat"), 405), "GET /chat 405")
    check(err(*a.request("POST", "/healthz"), 405), "POST /healthz 405")
    check(err(*a.request("POST", "/chat", body=b"{nope"), 400), "bad JSON 400")
    check(err(*a.request("POST", "/chat", body=b"[1]"), 400), "non-object 400")
    r, body = a.request("POST", "/chat", {"run_id": "x", "model": "m"})
    check(err(r, body, 400) and "'message'" in json.loads(body)["error"]["message"], "missing field named")
    r, body = a.request("POST", "/chat", {"run_id": "x", "model": 1, "message": "m"})
    check(err(r, body, 400) and "'model'" in json.loads(body)["error"]["message"], "ill-typed field named")
    r, body = a.request("POST", "/chat", chat_body("x", "m", budget={"rounds": 0}))
    check(err(r, body, 400) and "budget.rounds" in json.loads(body)["error"]["message"], "rounds range")
    r, body = a.request("POST", "/chat", chat_body("x", "m", budget={"rounds": 65}))
    check(err(r, body, 400), "rounds 65 rejected")
    r, body = a.request("POST", "/chat", chat_body("x", "m", tools=[{"type": "function"}]))
    check(err(r, body, 400) and "tools[0]" in json.loads(body)["error"]["message"], "tool without name")
    r, body = a.request("POST", "/chat", chat_body("a b", "m"))
    check(err(r, body, 400) and "run_id" in json.loads(body)["error"]["message"], "bad run_id")
    r, body = a.request("POST", "/chat", chat_body("x", "m", history={"a": 1}))
    check(err(r, body, 400) and "history" in json.loads(body)["error"]["message"], "history type")
    r, body = a.request("POST", "/chat", body=b"x" * (8 * 1024 * 1024 + 10))
    check(err(r, body, 413), "body over 8 MiB 413")
    r, body = a.request("GET", "/healthz", headers={"X-Big": "a" * 17000})
    check(err(r, body, 431), "head over 16 KiB 431")
    # chunked request body
    c = a.conn()
    c.putrequest("POST", "/chat")
    c.putheader("Authorization", f"Bearer {TOKEN}")
    c.putheader("Transfer-Encoding", "chunked")
    c.endheaders()
    payload = json.dumps(chat_body("run-chunked-req", "cl")).encode()
    c.send(b"%x\r\n" % len(payload) + payload + b"\r\n0\r\n\r\n")
    r = c.getresponse()
    fr = parse_frames(r.read())
    c.close()
    check(r.status == 200 and of(fr, "done") == [{"reason": "stop", "rounds": 1}], "chunked request body")

    # garbage of every kind: the server must answer or close, and stay up
    rnd = random.Random(5)
    samples = [b"\x00" * 100, b"GET / HTTP/1.1\r\n" + b"A" * 20000, b"\r\n\r\n", b"POST /chat HTTP/1.1\r\n"
               b"Authorization: Bearer " + TOKEN.encode() + b"\r\nContent-Length: 99999999999999999999\r\n\r\n",
               b"POST /chat HTTP/1.1\r\nAuthorization: Bearer " + TOKEN.encode()
               + b"\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
               b"POST /chat HTTP/1.1\r\nAuthorization: Bearer " + TOKEN.encode()
               + b"\r\nContent-Length: 5\r\n\r\n\xff\xfe\x00{]"]
    samples += [bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 400))) for _ in range(40)]
    for s in samples:
        try:
            sock = socket.create_connection(("127.0.0.1", a.port), timeout=5)
            sock.sendall(s)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
            sock.close()
        except OSError:
            pass
    # mutated /chat bodies: a clean 400 or a run, never a crash
    base = json.dumps(chat_body("run-mut", "garbage", tools=[ECHO_TOOL], budget={"rounds": 2})).encode()
    statuses = set()
    for i in range(60):
        b = bytearray(base)
        for _ in range(rnd.randrange(1, 4)):
            b[rnd.randrange(len(b))] = rnd.choice(b'{}[]":,\\0a\x00\xff ')
        try:
            r, _ = a.request("POST", "/chat", bytes(b))
            statuses.add(r.status)
        except OSError:
            statuses.add(-1)
    check(statuses <= {200, 400}, f"mutated bodies answered 200/400 only: {statuses}")
    r, body = a.request("GET", "/healthz")
    check(r.status == 200, "alive after garbage")


def test_process(fake: Fake) -> None:
    inf = f"http://127.0.0.1:{fake.port}/v1/chat/completions"
    tools = f"http://localhost:{fake.port}/tools"

    def run(args, token=None, env=None):
        fds = (token_pipe(token),) if token else ()
        args = [*args, "--token-fd", str(fds[0])] if fds else args
        try:
            return subprocess.run([BIN, *args], env={**clean_env(), **(env or {})}, capture_output=True,
                                  timeout=20, pass_fds=fds)
        finally:
            for fd in fds:
                os.close(fd)

    base = ["--port", "0", "--inference-url", inf, "--tools-url", tools]
    p = run(base)
    check(p.returncode == 2 and b"token" in p.stderr, "no token: exit 2")
    p = run(base, env={"RESOLVE_RUNTIME_TOKEN": TOKEN})
    check(p.returncode == 2 and b"--token-fd" in p.stderr and TOKEN.encode() not in p.stderr,
          "a token in the environment is refused (it would stay readable in /proc)")
    p = run(base, token="has space")
    check(p.returncode == 2 and b"printable" in p.stderr, "token with a space refused")
    p = run(base, token="x" * 5000)
    check(p.returncode == 2 and b"4096" in p.stderr, "over-long token refused")
    p = run([*base, "--token-fd", "2"])
    check(p.returncode == 2 and b"stderr" in p.stderr, "--token-fd 2 refused")
    p = run([*base, "--token-fd", "999"])
    check(p.returncode == 2 and b"not an open file descriptor" in p.stderr, "--token-fd of a closed fd refused")
    p = run(["--port", "0", "--inference-url", "http://example.com/v1", "--tools-url", tools], token="t")
    check(p.returncode == 2 and b"reaches only loopback" in p.stderr, "non-loopback URL: exit 2")
    p = run(["--port", "0", "--inference-url", inf, "--tools-url", "http://10.0.0.1:80/x"], token="t")
    check(p.returncode == 2 and b"reaches only loopback" in p.stderr, "private address refused")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tok")
        with open(path, "w") as f:
            f.write(TOKEN + "\n")
        os.chmod(path, 0o644)
        p = run(["--port", "0", "--inference-url", inf, "--tools-url", tools, "--token-file", path])
        check(p.returncode == 2 and b"group/other" in p.stderr, "readable token file refused")
        check(os.path.exists(path), "a refused token file is left alone")
        os.chmod(path, 0o600)
        a = Agent(inf, tools, "--token-file", path, token=None)
        check(a.port > 0, "token file accepted")
        check(not os.path.exists(path), "token file removed once read")
        r, _ = a.request("GET", "/healthz")
        check(r.status == 200, "token from file works")
        rc, err = a.stop()
        check(rc == 0, f"exit 0 after SIGTERM ({rc})")
        check(TOKEN not in err, "token never logged")

    # connect failure, idle timeout, unreachable tools
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    a = Agent(f"http://127.0.0.1:{dead}/v1", f"http://127.0.0.1:{dead}/tools", "--inference-timeout", "1")
    check(a.first_line.strip() == '{"port": %d}' % a.port, "port line exact")
    _, _, fr = a.chat(chat_body("run-dead", "simple"))
    err = of(fr, "error")
    check(err and err[0]["code"] == "inference_connect", f"inference_connect {err}")
    rc, err = a.stop()
    check(rc == 0, "clean exit (ASan leak check)")

    a = Agent(inf, f"http://127.0.0.1:{dead}/tools", "--inference-timeout", "1")
    t0 = time.time()
    _, _, fr = a.chat(chat_body("run-hang", "hang"))
    err = of(fr, "error")
    check(err and err[0]["code"] == "inference_timeout" and time.time() - t0 < 3, f"inference_timeout {err}")
    _, _, fr = a.chat(chat_body("run-unreach", "toolfail", tools=[ECHO_TOOL]))
    res = of(fr, "tool_result")
    check(res and res[0]["ok"] is False and res[0]["output"].startswith("tools endpoint unreachable"),
          f"tools unreachable {res}")
    # SIGTERM while a run is active: exits promptly
    c = a.conn()
    c.request("POST", "/chat", body=json.dumps(chat_body("run-term", "slow")),
              headers={"Authorization": f"Bearer {TOKEN}"})
    r = c.getresponse()
    r.fp.readline()
    t0 = time.time()
    rc, err = a.stop()
    check(rc == 0 and time.time() - t0 < 5, f"SIGTERM during a run: exit 0 promptly ({rc})")
    c.close()
    check(TOKEN not in err, "token never logged (2)")


def readable(sock: socket.socket, timeout: float) -> bool:
    """poll, not select: descriptors here go past FD_SETSIZE."""
    p = select.poll()
    p.register(sock, select.POLLIN)
    return bool(p.poll(timeout * 1000))


def test_idle_connections(fake: Fake) -> None:
    """Connections without a token that send a byte and then nothing: a head has a total
    deadline, unfinished heads are capped (the idlest closed first), /healthz still answers."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 1300 if hard == resource.RLIM_INFINITY else min(1300, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    n = min(1100, want - 150)
    inf = f"http://127.0.0.1:{fake.port}/v1/chat/completions"
    a = Agent(inf, f"http://localhost:{fake.port}/tools", "--head-timeout", "1", "--max-runs", "4")
    socks = []
    try:
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
            socks.append(s)
            s.sendall(b"G")
        r, body = a.request("GET", "/healthz")
        check(r.status == 200 and json.loads(body)["ok"] is True, f"healthz answers with {n} idle connections held")
        _, _, fr = a.chat(chat_body("run-flood", "simple"))
        check(of(fr, "done") == [{"reason": "stop", "rounds": 1}], "a chat runs with idle connections held")
        # each idle connection is closed by its deadline (a 408, or a reset for the evicted)
        cut = 0
        for s in socks[-50:]:
            try:
                data = s.recv(4096) if readable(s, 5) else b"(still open)"
            except ConnectionError:
                data = b""
            cut += data == b"" or data.startswith(b"HTTP/1.1 408 ")
        check(cut == 50, f"idle connections closed at their deadline ({cut} of 50)")
    finally:
        for s in socks:
            s.close()
    # a head sent a byte at a time is cut at its deadline, however often bytes arrive
    head = f"GET /healthz HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()
    s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
    answer, sent = b"", 0
    try:
        for sent in range(1, len(head) + 1):
            s.sendall(head[sent - 1:sent])
            if readable(s, 0.2):
                answer = s.recv(4096)
                break
    except ConnectionError:
        answer = b"(reset)"
    s.close()
    check(sent < len(head) and (answer.startswith(b"HTTP/1.1 408 ") or answer in (b"", b"(reset)")),
          f"slow head cut at its deadline ({sent} of {len(head)} bytes, {answer[:40]!r})")
    r, _ = a.request("GET", "/healthz")
    check(r.status == 200, "alive after the idle connections")
    rc, err = a.stop()
    check(rc == 0, f"idle-connection instance exits 0 (ASan/LSan clean): rc={rc}")
    if rc != 0:
        print(err[-4000:])


def test_keep_alive() -> None:
    """Inference rounds and tool calls of a run share kept-alive connections."""
    fake = Fake(keep_alive=True)
    a = Agent(f"http://127.0.0.1:{fake.port}/v1/chat/completions",
              f"http://127.0.0.1:{fake.port}/tools")
    try:
        opened = []
        for i in range(2):
            r, data, fr = a.chat(chat_body(f"run-keep-{i}", "tools", tools=[ECHO_TOOL],
                                           budget={"rounds": 4}))
            check(of(fr, "done") and of(fr, "done")[0]["reason"] == "stop", f"keep-alive run {i} ends")
            opened.append(fake.connections)
        requests = len(fake.inference_requests) + len(fake.tool_requests)
        check(requests >= 6, f"two runs made their requests: {requests}")
        check(opened[1] == opened[0] < requests // 2,
              f"{requests} requests on {opened} connections (the second run opened none)")
    finally:
        rc, err = a.stop()
        check(rc == 0, f"keep-alive instance exits 0 (ASan/LSan clean): rc={rc}")
        fake.close()


def test_kept_connection_closed_under_a_request() -> None:
    """A kept connection the server closes with a request on it: the request is sent again on a
    new connection, and the run goes on as if nothing happened."""
    fake = Fake(keep_alive=True, drop_second=True)
    a = Agent(f"http://127.0.0.1:{fake.port}/v1/chat/completions",
              f"http://127.0.0.1:{fake.port}/tools")
    try:
        for i in range(3):
            r, data, fr = a.chat(chat_body(f"run-drop-{i}", "tools", tools=[ECHO_TOOL],
                                           budget={"rounds": 4}))
            check(r.status == 200 and of(fr, "done") and of(fr, "done")[0]["reason"] == "stop",
                  f"run {i} on dropped kept connections ends well: {of(fr, 'error')}")
        check(fake.dropped >= 2, f"kept connections were dropped under requests: {fake.dropped}")
        answered = len(fake.inference_requests) + len(fake.tool_requests)
        check(answered >= 9, f"every request was answered in the end: {answered}")
    finally:
        rc, err = a.stop()
        check(rc == 0, f"dropped-connection instance exits 0 (ASan/LSan clean): rc={rc}")
        fake.close()


def main() -> int:
    if not os.path.exists(BIN):
        print(f"e2e: {BIN} not built")
        print("e2e: 0 passed, 1 failed")
        return 1
    fake = Fake()
    inf = f"http://127.0.0.1:{fake.port}/v1/chat/completions"
    tools = f"http://localhost:{fake.port}/tools"
    a = Agent(inf, tools)
    try:
        for t in (lambda: test_stream_shapes(a, fake), lambda: test_tools(a, fake),
                  lambda: test_tool_progress(a),
                  lambda: test_ollama_and_truncation(a), lambda: test_budget_and_errors(a),
                  lambda: test_steering(a, fake), lambda: test_steering_after_an_answer(a, fake),
                  lambda: test_steering_refusals(a),
                  lambda: test_cancel(a, fake), lambda: test_concurrency(a), lambda: test_http_surface(a), lambda: test_process(fake),
                  lambda: test_idle_connections(fake), test_keep_alive,
                  test_kept_connection_closed_under_a_request):
            try:
                t()
            except Exception as e:  # a crash in one group must not hide the others
                import traceback
                traceback.print_exc()
                check(False, f"exception {e!r}")
    finally:
        rc, err = a.stop()
        check(rc == 0, f"main instance exits 0 on SIGTERM (ASan/LSan clean): rc={rc}")
        if rc != 0:
            print(err[-4000:])
        check(TOKEN not in err, "token never in logs")
        fake.close()
    print(f"e2e: {PASSED} passed, {FAILED} failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
