// server-everything in a native cell, driven by the real SDK client: requests,
// notifications, server-to-client requests (sampling, roots) and a clean close.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { resultText, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { NODE_BIN, serverEntry } from './lib/paths.mjs';

test('server-everything: full MCP session through a native cell', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const s = startServer(t, [], [NODE_BIN, serverEntry('server-everything')], {
    capabilities: { sampling: {}, roots: { listChanged: true } },
  });
  const { client } = s;

  // Server → client requests: answered here, counted so we know they crossed the cell.
  let rootsAsked = 0;
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    rootsAsked += 1;
    return { roots: [{ uri: 'file:///e2e-root', name: 'e2e-root' }] };
  });
  let samplingPrompt = null;
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    samplingPrompt = req.params.messages[0].content.text;
    return { model: 'e2e-fake-model', role: 'assistant', content: { type: 'text', text: 'pong-from-client' } };
  });
  // server-everything requests roots/list after initialized and then logs it.
  const rootsLogged = new Promise((resolve) => {
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      if (String(n.params.data).includes('Roots updated')) resolve(n.params);
    });
  });

  // Every message as it arrives, before the SDK dispatches it (see progress below).
  const wire = [];
  try {
    await s.connect();
    const dispatch = s.transport.onmessage; // installed by connect()
    s.transport.onmessage = (m, extra) => {
      wire.push(m);
      dispatch(m, extra);
    };
  } catch (e) {
    assert.fail(`connect through mcpcell failed: ${e.message}\nmcpcell stderr:\n${s.stderr()}`);
  }
  assert.equal(client.getServerVersion()?.name, 'mcp-servers/everything');

  const { tools } = await client.listTools();
  const names = tools.map((x) => x.name);
  assert.ok(names.includes('echo'), `tools/list lacks echo: ${names.join(', ')}`);
  assert.ok(names.includes('trigger-sampling-request'), 'sampling tool missing: client capabilities did not reach the server');

  const echo = await client.callTool({ name: 'echo', arguments: { message: 'hello from outside the cell' } });
  assert.equal(resultText(echo), 'Echo: hello from outside the cell');

  // Notification (server → client) after a server → client request (roots/list).
  const logged = await rootsLogged;
  assert.match(String(logged.data), /Roots updated: 1 root\(s\)/);
  assert.ok(rootsAsked >= 1);

  const roots = await client.callTool({ name: 'get-roots-list', arguments: {} });
  assert.match(resultText(roots), /file:\/\/\/e2e-root/);

  // Progress notifications tied to a request. Counted on the wire: the SDK
  // dispatches notifications a microtask later but responses at once, so a last
  // progress notification read in the same chunk as the response never reaches
  // onprogress (SDK 1.32 Protocol._onnotification vs _onresponse).
  const progress = [];
  const longOp = await client.callTool(
    { name: 'trigger-long-running-operation', arguments: { duration: 0.4, steps: 2 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  );
  assert.match(resultText(longOp), /Long running operation completed/);
  const onWire = wire.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress);
  assert.deepEqual(onWire, [1, 2]);
  assert.equal(progress[0], 1, 'onprogress never called');

  // Sampling: a server → client request whose answer flows back into a tool result.
  const sampled = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'ping' } });
  assert.match(resultText(sampled), /pong-from-client/);
  assert.match(samplingPrompt, /ping/);

  // Close: the SDK ends stdin; server-everything exits 0 on EOF, so mcpcell must
  // pass the EOF in and exit 0 by itself, before the SDK resorts to SIGTERM.
  await client.close();
  const exit = await s.exited;
  assert.deepEqual(exit, { code: 0, signal: null }, `mcpcell stderr:\n${s.stderr()}`);
  assert.deepEqual(s.killsSent, [], 'the SDK had to signal mcpcell: stdin EOF did not end the run');
});
