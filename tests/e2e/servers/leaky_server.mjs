// An MCP server (the real SDK, stdio) that leaks a secret on request, for the
// secret scan's end-to-end test. argv[2] is a file holding the secret (not
// the secret itself: argv is in the audit log's launch record). Tools:
//   leak {where}  the secret in: text, split (two text blocks), structured,
//                 resource (embedded resource text), iserror, rpcerror
//   echo {value}  answers "got: <value>" and writes the same to stderr, so a
//                 test can see what reached the server
import { readFileSync } from 'node:fs';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const secret = readFileSync(process.argv[2], 'utf8').trim();
const server = new Server({ name: 'leaky', version: '0.0.0' }, { capabilities: { tools: {} } });
const obj = (props) => ({ type: 'object', properties: props });

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: 'leak', description: 'returns a secret', inputSchema: obj({ where: { type: 'string' } }) },
    { name: 'echo', description: 'echoes its argument', inputSchema: obj({ value: { type: 'string' } }) },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const args = req.params.arguments ?? {};
  if (req.params.name === 'echo') {
    process.stderr.write(`echo received: ${args.value}\n`);
    return { content: [{ type: 'text', text: `got: ${args.value}` }] };
  }
  const cut = 10;
  switch (args.where) {
    case 'text':
      return { content: [{ type: 'text', text: `GITHUB_TOKEN=${secret}` }] };
    case 'split':
      return { content: [{ type: 'text', text: `token ${secret.slice(0, cut)}` }, { type: 'text', text: secret.slice(cut) }] };
    case 'structured':
      return { content: [{ type: 'text', text: 'see structured' }], structuredContent: { env: { GITHUB_TOKEN: secret } } };
    case 'resource':
      return { content: [{ type: 'resource', resource: { uri: 'file:///app/.env', mimeType: 'text/plain', text: `T=${secret}` } }] };
    case 'iserror':
      return { content: [{ type: 'text', text: `auth failed for ${secret}` }], isError: true };
    case 'rpcerror':
      throw new McpError(ErrorCode.InternalError, `auth failed for ${secret}`);
    default:
      return { content: [{ type: 'text', text: 'nothing' }] };
  }
});

await server.connect(new StdioServerTransport());
