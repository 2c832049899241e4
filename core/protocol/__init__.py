"""The seed's packet protocol: packets, the dispatcher that routes them, server and client."""
