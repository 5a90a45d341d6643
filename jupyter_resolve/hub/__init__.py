"""The organization's hub service (DESIGN 10.5): ``python -m jupyter_resolve.hub``.

A JupyterHub service that holds the provider keys, so users' servers hold none. It
authenticates every request with the user's hub token, applies that user's allowed models and
budgets (:mod:`.limits`, pure), forwards OpenAI- and Anthropic-compatible requests to the
configured upstream (:mod:`.forward`), and records usage (:mod:`.budgets`, SQLAlchemy). The
settings are :class:`.settings.ResolveHub`'s; the routes are in :mod:`.handlers`.
"""
