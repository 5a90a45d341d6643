"""Runs: one agent answer each, owned by the gateway, logged before they are sent.

The run lifecycle: ``start.py`` (a request becomes a run: soul, tools, budgets, run manifest),
``manager.py`` (drives runs through the runtime, enforces the budgets, cancels, reloads),
``run.py`` (one run: events, limits, approvals), ``approvals.py`` (wait, decide, release),
``tasks.py`` (the role chain as child runs), ``stream.py`` and ``log.py`` (events in order,
watched and written to the run log).
"""
