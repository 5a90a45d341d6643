"""The tool bridge that runs inside a scratch kernel (see DESIGN 3.3, 5)."""
