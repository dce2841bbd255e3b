// server-memory in a native cell: its knowledge graph file lives in a --write
// dir, named by --env, and survives into a second cell.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { resultText, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { NODE_BIN, serverEntry } from './lib/paths.mjs';
import { makeWritableDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

async function withMemoryServer(t, memoryFile, writeDir, body) {
  const s = startServer(t, ['--write', writeDir, '--env', `MEMORY_FILE_PATH=${memoryFile}`],
    [NODE_BIN, serverEntry('server-memory')]);
  try {
    await s.connect();
  } catch (e) {
    assert.fail(`connect through mcpcell failed: ${e.message}\nmcpcell stderr:\n${s.stderr()}`);
  }
  await body(s.client);
  await s.client.close();
  assert.deepEqual(await s.exited, { code: 0, signal: null }, `mcpcell stderr:\n${s.stderr()}`);
}

test('server-memory: create_entities → read_graph, persisted to the host through --write', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const writeDir = makeWritableDir('memory');
  const memoryFile = path.join(writeDir, 'graph.jsonl');
  const entity = { name: 'mcpcell-e2e', entityType: 'project', observations: ['runs MCP servers in cells'] };

  await withMemoryServer(t, memoryFile, writeDir, async (client) => {
    const created = await client.callTool({ name: 'create_entities', arguments: { entities: [entity] } });
    assert.equal(created.isError, undefined, resultText(created));
    const graph = JSON.parse(resultText(await client.callTool({ name: 'read_graph', arguments: {} })));
    assert.deepEqual(graph.entities, [entity]);
  });

  const onHost = readFileSync(memoryFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.deepEqual(onHost, [{ type: 'entity', ...entity }]);

  // A fresh cell reads what the first one wrote.
  await withMemoryServer(t, memoryFile, writeDir, async (client) => {
    const graph = JSON.parse(resultText(await client.callTool({ name: 'read_graph', arguments: {} })));
    assert.deepEqual(graph.entities, [entity]);
  });
});
