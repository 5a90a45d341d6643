"""The A2A peer endpoint (DESIGN 3.8): signing, the Agent Card, the read-only catalogue, jobs and
the JSON-RPC mapping. ``signing``, ``card`` and ``catalogue`` are pure; ``jobs`` starts gateway
runs; ``service`` composes them for the handlers in ``handlers.py``."""
