"""Alembic migrations of the usage database (``python -m jupyter_resolve.hub upgrade-db``).

Run by :func:`..database.upgrade` with the service's own engine; there is no ``alembic.ini``.
``0001`` is the schema the service created before it had migrations (a database of that age is
stamped ``0001`` first, then upgraded).
"""
