"""What every handler shares: authentication, errors, streaming, stand-ins for handlers loaded
on first use. Each service's own handlers live beside it (``runs/handlers.py``...)."""
