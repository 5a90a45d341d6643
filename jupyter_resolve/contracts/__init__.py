"""Pure contracts: the shapes and rules every part of the gateway agrees on.

Nothing here does I/O or imports a server, a client, a process or a socket (a test reads the
imports to keep it so): request bodies and event models (``bodies``), the runtime chat body
(``chat_body``), frame translation (``frames``), empty-run summaries (``summary``), tool-list
drift (``drift``), approval policy (``policy``), tool discipline (``discipline``), budgets
(``budget``), the run manifest (``run_manifest``), OpenAI completion shaping (``completions``),
SSE writing and reading (``sse``), the error tree (``errors``), ids (``ids``), JSON with a
nesting limit (``safejson``), path arguments (``pathargs``) and the MCP servers of the
configuration (``mcp_servers``, which ``config.py`` validates with).

This module imports nothing, so the magics can use a contract without loading the gateway.
"""
