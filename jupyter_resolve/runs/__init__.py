"""Runs: one agent answer each, owned by the gateway, logged before they are sent."""
