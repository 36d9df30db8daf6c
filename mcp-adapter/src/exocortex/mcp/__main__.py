"""`python -m exocortex.mcp [--transport stdio|http]`."""

from __future__ import annotations

import argparse

from exocortex.mcp.run import Transport, serve


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m exocortex.mcp", description=__doc__)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", help="HTTP bind address (default EXO_MCP_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="HTTP port (default EXO_MCP_PORT or 3211)")
    args = parser.parse_args()
    transport: Transport = args.transport
    serve(transport, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
