"""The entries of the built-in providers in the ``jupyter_resolve.providers`` group
(pyproject.toml), one module each: the provider's defaults, the ``c.Resolve`` settings it adds
and its factory, which imports the provider only when it is built (:mod:`..registry`)."""
