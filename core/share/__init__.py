"""The memory shared with other AI apps over the Model Context Protocol (`trulymem mcp`).

Claude Desktop, Cursor, Cherry Studio and other MCP clients start `trulymem mcp` (over
standard input and output) or connect to `trulymem mcp --http` (127.0.0.1, with a
token), and use the same graph the window shows, through the tools the registry offers
to apps. Every change they make is logged as theirs ("mcp:Claude Desktop"), so it shows
in the window's review inbox and can be undone; what they may take away is limited per
session and per hour, and only the person can lift that.
"""
