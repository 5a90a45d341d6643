"""Tools: the catalogue (``catalog.py``, ``toolset.py``), the dispatcher that checks a name
and executes it (``dispatch.py``), and the executors (``kernel.py``, ``web_fetch.py``). A run's
calls go through its gate first (runs/tool_calls.py)."""
