"""The organization's hub service (DESIGN 10.5): ``python -m jupyter_resolve.hub``.

A JupyterHub service that holds the provider keys, so users' servers hold none. It
authenticates every request with the user's hub token (:mod:`.handlers`), applies that user's
allowed models and budgets (:mod:`.limits`, pure), reserves the request's worst case and
settles it to the reported usage in the database, shared by every replica (:mod:`.budgets`,
:mod:`.schema`, :mod:`.database` with its Alembic :mod:`.migrations`), forwards OpenAI- and
Anthropic-compatible requests to the configured upstream (:mod:`.forward`, :mod:`.opening`),
and shows the admin everyone's usage (:mod:`.admin`, :mod:`.admin_page`). The settings are
:class:`.settings.ResolveHub`'s; the process is :mod:`.app`'s.
"""
