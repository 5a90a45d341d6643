"""Tool calls from the runtime: checked against the run's tools, then executed."""
