// The README's first demo: server-everything in a native mcpcell cell, driven by
// the real MCP SDK client. Lists the server's tools on stdout; progress goes to
// stderr. Usage: node demo.mjs   (MCPCELL_BIN overrides the binary path)

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { MCPCELL_BIN, NODE_BIN, nodeCellArgs, serverEntry } from './lib/paths.mjs';

const args = ['run', '--isolate', ...nodeCellArgs(), '--', NODE_BIN, serverEntry('server-everything')];
console.error(`$ ${MCPCELL_BIN} ${args.join(' ')}`);

const transport = new StdioClientTransport({ command: MCPCELL_BIN, args, stderr: 'inherit' });
const client = new Client({ name: 'mcpcell-demo', version: '0.0.0' });
try {
  await client.connect(transport);
  const server = client.getServerVersion();
  console.error(`connected to ${server?.name} ${server?.version} inside a cell`);
  const { tools } = await client.listTools();
  for (const tool of tools) console.log(`${tool.name}\t${tool.description ?? ''}`);
  const echo = await client.callTool({ name: 'echo', arguments: { message: 'hello from outside the cell' } });
  console.error(`echo → ${echo.content[0].text}`);
} catch (e) {
  console.error(`demo failed: ${e.message}`);
  process.exitCode = 1;
} finally {
  await client.close();
}
