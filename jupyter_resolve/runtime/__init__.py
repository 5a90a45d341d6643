"""The agent runtime (native agent-httpd): its supervisor and the client that streams /chat."""
