// A stdio MCP server on the real SDK's McpServer with a few fixed resources,
// a resource template and two prompts, as a server author writes one. The SDK
// reads a resource by `new URL(params.uri).toString()` (WHATWG URL): a URI
// the relay's glob rules judged in one spelling is served in its canonical
// one. The adversary's resource-filter tests (adv_filters.test.mjs) use it.
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const server = new McpServer({ name: 'adv-resources', version: '1.0.0' });
const fixed = {
  'test://docs/readme': 'public readme',
  'test://secrets/key': 'SECRET-RESOURCE-BODY',
  'file:///srv/secret.txt': 'SECRET-FILE-BODY',
  'http://internal.example/admin': 'SECRET-HTTP-BODY',
};
for (const [uri, text] of Object.entries(fixed)) {
  server.registerResource(uri, uri, {}, async (u) => ({ contents: [{ uri: u.href, text }] }));
}
server.registerResource('notes', new ResourceTemplate('test://notes/{id}', { list: undefined }), {},
  async (u, { id }) => ({ contents: [{ uri: u.href, text: `note ${id}` }] }));
// A file server's template: the file the URI names (fileURLToPath ignores a query and a fragment).
if (process.env.ADV_DATA_DIR) {
  server.registerResource('files', new ResourceTemplate(`file://${process.env.ADV_DATA_DIR}/{name}`, { list: undefined }), {},
    async (u) => ({ contents: [{ uri: u.href, text: readFileSync(fileURLToPath(u), 'utf8') }] }));
}
server.registerPrompt('greet', {}, async () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] }));
server.registerPrompt('leak_prompt', {}, async () => ({
  messages: [{ role: 'user', content: { type: 'text', text: 'SECRET-PROMPT-BODY' } }],
}));
await server.connect(new StdioServerTransport());
