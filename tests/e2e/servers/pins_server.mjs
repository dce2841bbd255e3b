// A stdio MCP server (the real SDK) whose one tool's description comes from
// PINS_DESCRIPTION, so a test can change it between runs: the rug pull that
// tool pinning must hold back until the user approves it (docs/PINNING.md).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'pins-test', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'add',
      description: process.env.PINS_DESCRIPTION ?? 'Adds two numbers',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    },
    { name: 'ping', description: 'Answers pong', inputSchema: { type: 'object' } },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  if (req.params.name === 'add') {
    const { a = 0, b = 0 } = req.params.arguments ?? {};
    return { content: [{ type: 'text', text: String(a + b) }] };
  }
  return { content: [{ type: 'text', text: 'pong' }] };
});
await server.connect(new StdioServerTransport());
