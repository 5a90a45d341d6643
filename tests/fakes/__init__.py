"""Fake model servers speaking the real wire formats over loopback (see ``_server.py``)."""
