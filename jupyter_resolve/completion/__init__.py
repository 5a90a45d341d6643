"""Inline completion (DESIGN 10.3): not a run — no log, agent or tools — but the key, the
model locks and usage accounting apply. The provider's call is ``providers/completion.py``."""
