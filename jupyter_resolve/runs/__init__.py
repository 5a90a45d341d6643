"""Runs: one agent answer each, owned by the gateway, logged before they are sent.

The run lifecycle: ``request.py`` (the one :class:`RunRequest` every edge builds), ``start.py``
(a request becomes a run: soul, tools, budgets, run manifest), ``manager.py`` (drives runs
through the runtime, fits their rounds, enforces the budgets, cancels, reloads),
``tool_calls.py`` (a run's calls: gate, budget, approval, ``tool.*`` events),
``builtin_tools.py`` (what the builtins and the run's trusted tools run), ``inference_notes.py``
(what the inference streams said: thinking blocks, cache counts, cost), ``run.py`` (one run:
events, limits, approvals), ``approvals.py`` (wait, decide, release), ``tasks.py`` (the role
chain as child runs), ``stream.py`` and ``log.py`` (events in order, watched and written to the
run log).
"""
