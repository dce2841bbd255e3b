// Issue 14 item 2 with a real native module from the real npm registry:
// mcp-sqlite@1.0.9 depends on sqlite3 5.x, whose install script
// (`prebuild-install -r napi || node-gyp rebuild`) is refused GitHub in its
// cell (it reaches only the npm registry) and compiles SQLite from source with the host's g++ — a couple of
// CPU minutes, so this file is not part of the default run: set
// E2E_NPM_REAL=1 (and have the npm registry reachable). A real SDK client
// then queries SQLite through the server in its own cell.

import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';

test('mcp-sqlite@1.0.9: sqlite3 is compiled in its cell from the real registry, and the server queries SQLite', { timeout: 900_000 }, async (t) => {
  if (process.env.E2E_NPM_REAL !== '1') {
    t.skip('set E2E_NPM_REAL=1 to compile sqlite3 from the real npm registry (a couple of CPU minutes)');
    return;
  }
  if (await skipWithoutCell(t)) return;
  const cache = mkdtempSync('/var/tmp/e2e-npm-real-');
  chmodSync(cache, 0o755);
  t.after(() => rmSync(cache, { recursive: true, force: true }));
  const env = { ...process.env, XDG_CACHE_HOME: cache };
  const r = await runMcpcell(['install', '--install-timeout', '14m', 'npx://mcp-sqlite@1.0.9'], { env, guardMs: 880_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /running the install scripts of sqlite3 \(install\) in a native cell of their own/);
  const dir = path.join(cache, 'mcpcell', 'npx', 'mcp-sqlite@1.0.9', 'node_modules', 'sqlite3', 'build', 'Release');
  assert.ok(existsSync(path.join(dir, 'node_sqlite3.node')), 'built from source in the cell');

  const transport = new StdioClientTransport({ command: MCPCELL_BIN, args: ['run', 'npx://mcp-sqlite@1.0.9', ':memory:'], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const client = new Client({ name: 'npm-real-e2e', version: '0' });
  t.after(() => client.close().catch(() => {}));
  await client.connect(transport);
  const res = await client.callTool({ name: 'query', arguments: { sql: 'select 6 * 7 as answer, sqlite_version() as v' } });
  assert.match(res.content[0].text, /"answer": 42/, stderr);
  await client.close();
  assert.doesNotMatch(stderr, /running the install scripts/);
});
