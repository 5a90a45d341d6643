"""External agents over the Agent Client Protocol (DESIGN 10.4): ``c.Resolve.acp_agents``.

``agents.py`` supervises the agents' processes, ``runs.py`` drives a run with one of them,
``client.py`` answers what an agent asks of this server (files within the root, permissions as
approvals, terminals when allowed), ``events.py`` translates its updates into this project's
events (pure). The ``agent-client-protocol`` SDK is imported only when an agent starts.
"""
