"""A minimal MCP server over stdio (newline-delimited JSON-RPC), stdlib only:
initialize, tools/list, and tools/call of one tool, `whoami`, which answers
with this package's version and where its code and interpreter live.
The e2e tests ship it as a wheel from a local package index (uvx.test.mjs)."""
import json
import os
import sys

VERSION = "@VERSION@"


def reply(msg_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


def whoami():
    return {"version": VERSION, "module": os.path.abspath(__file__), "prefix": sys.prefix,
            "uid": os.getuid(), "can_write_module": os.access(os.path.dirname(os.path.abspath(__file__)), os.W_OK)}


def handle(msg):
    method, msg_id = msg.get("method"), msg.get("id")
    if msg_id is None:
        return  # a notification (notifications/initialized): nothing to answer
    if method == "initialize":
        reply(msg_id, {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                       "serverInfo": {"name": "e2e-pyserver", "version": VERSION}})
    elif method == "tools/list":
        reply(msg_id, {"tools": [{"name": "whoami", "description": "where this server runs",
                                  "inputSchema": {"type": "object", "properties": {}}}]})
    elif method == "tools/call" and msg["params"]["name"] == "whoami":
        reply(msg_id, {"content": [{"type": "text", "text": json.dumps(whoami())}]})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id,
                                     "error": {"code": -32601, "message": f"no method {method}"}}) + "\n")
        sys.stdout.flush()


def main():
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))
    return 0
