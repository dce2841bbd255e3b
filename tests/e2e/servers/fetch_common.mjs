// What the two fetch servers share: one MCP tool, `fetch_url`, on the real
// SDK's low-level Server over stdio. The tool answers with one JSON text item
// {ok, status, body, via, error, code} so a test can assert on what happened
// (isError is set when no HTTP answer came back at all).

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** How much of a body the tool returns. */
export const BODY_LIMIT = 4000;

const INPUT_SCHEMA = {
  type: 'object',
  properties: {
    url: { type: 'string', description: 'http:// or https:// URL to GET' },
    mode: { type: 'string', enum: ['auto', 'forward', 'connect', 'direct'], description: 'proxy-aware server only' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
  },
  required: ['url'],
};

/** The chain of error causes as "message (CODE) <- cause (CODE)", and the innermost code. */
export function describeError(e) {
  const parts = [];
  let code;
  for (let cur = e, depth = 0; cur && depth < 5; cur = cur.cause, depth++) {
    parts.push(`${cur.message ?? String(cur)}${cur.code ? ` (${cur.code})` : ''}`);
    if (cur.code) code = cur.code;
  }
  return { error: parts.join(' <- '), code: code ?? null };
}

/**
 * Serves `fetch_url` over stdio; `fetchUrl(args)` resolves to
 * {status, body, via} or throws.
 */
export async function serveFetchTool(name, description, fetchUrl) {
  const server = new Server({ name, version: '0.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: 'fetch_url', description, inputSchema: INPUT_SCHEMA }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    if (req.params.name !== 'fetch_url') {
      return { isError: true, content: [{ type: 'text', text: `unknown tool ${req.params.name}` }] };
    }
    const args = req.params.arguments ?? {};
    let out;
    try {
      const r = await fetchUrl(args);
      out = { ok: true, status: r.status, body: String(r.body).slice(0, BODY_LIMIT), via: r.via };
    } catch (e) {
      out = { ok: false, ...describeError(e) };
    }
    return { isError: !out.ok, content: [{ type: 'text', text: JSON.stringify(out) }] };
  });
  await server.connect(new StdioServerTransport());
}
