"""The OpenAI-compatible facade under ``/resolve/v1/`` (DESIGN 3.5): the same agent, answered
in OpenAI's shapes (``contracts/facade_models.py`` and ``contracts/completions.py``)."""
