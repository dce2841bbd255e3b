// An MCP server (the real SDK, stdio) for adv12: its tool `configure` writes
// the arguments it received, as JSON, to the file argv[2] (a directory the
// test gives the cell to write), so a test reads what reached the server
// without it passing through the relay or the stderr scan again. Its tool
// `profile` returns, in structuredContent, the object read from the file
// argv[3] (what a server hands the client as structured data).
import { readFileSync, writeFileSync } from 'node:fs';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'adv12-args', version: '0.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: 'configure', description: 'records its arguments', inputSchema: { type: 'object' } },
    { name: 'profile', description: 'returns a profile', inputSchema: { type: 'object' } },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  if (req.params.name === 'configure') {
    writeFileSync(process.argv[2], JSON.stringify(req.params.arguments ?? {}));
    return { content: [{ type: 'text', text: 'configured' }] };
  }
  const profile = JSON.parse(readFileSync(process.argv[3], 'utf8'));
  return { content: [{ type: 'text', text: 'profile loaded' }], structuredContent: profile };
});
await server.connect(new StdioServerTransport());
