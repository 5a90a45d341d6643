"""Tests of jupyter_resolve.providers, against the fake servers in tests/fakes."""
