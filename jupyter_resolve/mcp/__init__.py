"""MCP both ways (DESIGN 9.3): the agent uses the MCP servers a researcher configures
(:mod:`.config`, :mod:`.connections`, :mod:`.results`, :mod:`.catalog`), and MCP clients drive
the workbench at ``<base_url>resolve/mcp`` (:mod:`.server`, :mod:`.tools`)."""
