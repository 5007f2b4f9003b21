"""``localmem serve``: one process owns a store and every other client goes through it.

:mod:`localmem.server.app` is the HTTP interface (Starlette: the Memory API as JSON, and MCP
over streamable HTTP), :mod:`localmem.server.run` binds it to the loopback interface, writes the
discovery and token files and runs the background jobs. The client is :mod:`localmem.remote`.
"""
