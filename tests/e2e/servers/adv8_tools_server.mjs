// A minimal line-delimited JSON-RPC MCP server (node's standard library only)
// for tests/e2e/adv8_ignored_inputs.test.mjs: tools read_x and delete_x, each
// answering "called NAME SIZE" (SIZE: the length of its arguments' JSON), so a
// test sees from stdout alone which calls reached the server.

import { createInterface } from 'node:readline';

const send = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
const TOOLS = ['read_x', 'delete_x'].map((name) => ({ name, description: name, inputSchema: { type: 'object' } }));

createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.method === 'initialize') {
    send({
      jsonrpc: '2.0',
      id: m.id,
      result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'adv8', version: '1' } },
    });
  } else if (m.method === 'tools/list') {
    send({ jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } });
  } else if (m.method === 'tools/call') {
    const size = JSON.stringify(m.params?.arguments ?? {}).length;
    send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `called ${m.params?.name} ${size}` }] } });
  } else if (m.id !== undefined) {
    send({ jsonrpc: '2.0', id: m.id, result: {} });
  }
});
