// server-filesystem in a native cell: the CELL, not the server, decides which
// host files exist. The server is told "/" is allowed; only --read/--write dirs
// are in the cell.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { resultText, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { NODE_BIN, serverEntry } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const readText = (client, p) => client.callTool({ name: 'read_text_file', arguments: { path: p } });
const writeText = (client, p, content) => client.callTool({ name: 'write_file', arguments: { path: p, content } });

test('server-filesystem: --read/--write are the only host files the server can touch', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const readDir = makeTempDir('fs-read');
  const outsideDir = makeTempDir('fs-outside'); // a sibling the cell is never given
  const writeDir = makeWritableDir('fs-write');
  writeReadableFile(path.join(readDir, 'inside.txt'), 'alpha-inside');
  writeReadableFile(path.join(outsideDir, 'secret.txt'), 'beta-outside');

  // Control: without a cell, this very server with "/" allowed reads the outside file.
  const plain = new Client({ name: 'e2e-control', version: '0' });
  let control;
  try {
    await plain.connect(new StdioClientTransport({
      command: NODE_BIN, args: [serverEntry('server-filesystem'), '/'], stderr: 'ignore',
    }));
    control = await readText(plain, path.join(outsideDir, 'secret.txt'));
  } finally {
    await plain.close();
  }
  assert.equal(control.isError, undefined, resultText(control));
  assert.equal(resultText(control), 'beta-outside');

  const s = startServer(t, ['--read', readDir, '--write', writeDir], [NODE_BIN, serverEntry('server-filesystem'), '/']);
  try {
    await s.connect();
  } catch (e) {
    assert.fail(`connect through mcpcell failed: ${e.message}\nmcpcell stderr:\n${s.stderr()}`);
  }
  const { client } = s;

  const inside = await readText(client, path.join(readDir, 'inside.txt'));
  assert.equal(resultText(inside), 'alpha-inside');

  const outside = await readText(client, path.join(outsideDir, 'secret.txt'));
  assert.equal(outside.isError, true, `cell let the server read ${outsideDir}: ${resultText(outside)}`);
  // The server's realpath() fails with ENOENT (the dir is not in the cell); it
  // then looks for a Unicode-equivalent name from "/" down and reports the miss.
  assert.match(resultText(outside), /ENOENT|no such file|Parent directory does not exist/i);
  assert.doesNotMatch(resultText(outside), /beta-outside/);

  const written = await writeText(client, path.join(writeDir, 'out.txt'), 'gamma-written');
  assert.equal(written.isError, undefined, resultText(written));
  assert.equal(readFileSync(path.join(writeDir, 'out.txt'), 'utf8'), 'gamma-written');

  const refused = await writeText(client, path.join(readDir, 'nope.txt'), 'must not land');
  assert.equal(refused.isError, true, `write into a --read dir succeeded: ${resultText(refused)}`);
  assert.match(resultText(refused), /EROFS|read-only/i);
  assert.equal(existsSync(path.join(readDir, 'nope.txt')), false);

  await client.close();
  assert.deepEqual(await s.exited, { code: 0, signal: null }, `mcpcell stderr:\n${s.stderr()}`);
});
