// Attacks on the MCP relay (issue 17) through the real binary: the real SDK
// client where a client is needed, and hostile servers written as a few lines
// of node that put exactly the bytes under test on the wire. Each test names
// the attack; docs/ATTACKS.md lists what each one showed.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runInCell, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { NODE_BIN, serverEntry } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

function writeProfile(dir, profile) {
  const file = path.join(dir, 'fs.json');
  writeReadableFile(file, JSON.stringify(profile, null, 2));
  return file;
}

function records(file) {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

// The SDK writes the id last ({method, params, jsonrpc, id}; {result, jsonrpc,
// id}), so a relay that looks for the id only in an oversize message's first
// bytes answers "id": null and the SDK client waits for its call forever. A
// regression shows as the SDK's own request timeout (-32001) instead of -32002.
test('relay attack: oversize call and oversize answer from the real SDK each get an error with their id', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const docs = makeTempDir('adv-big-docs');
  writeReadableFile(path.join(docs, 'big.txt'), 'x'.repeat(200 * 1024));
  writeReadableFile(path.join(docs, 'a.txt'), 'alpha');
  const conf = makeTempDir('adv-big-conf');
  const profile = writeProfile(conf, { read: [docs], mcpcell: { tools: { deny: ['write_file'] } } });
  const s = startServer(t, ['--permission-profile', profile, '--max-message', '64k'],
    [NODE_BIN, serverEntry('server-filesystem'), docs]);
  await s.connect();
  const { client } = s;
  const bounded = { timeout: 30_000 };
  await assert.rejects(
    client.callTool({ name: 'read_text_file', arguments: { path: path.join(docs, 'big.txt') } }, undefined, bounded),
    (e) => {
      assert.equal(e.code, -32002, e.message);
      assert.match(e.message, /the server's answer was refused: .*exceeds the maximum message size of 65536 bytes.*--max-message/);
      return true;
    });
  await assert.rejects(
    client.callTool({ name: 'read_text_file', arguments: { path: 'y'.repeat(100 * 1024) } }, undefined, bounded),
    (e) => {
      assert.equal(e.code, -32002, e.message);
      return true;
    });
  // The session goes on: the next line after each oversize one is judged as usual.
  const read = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(docs, 'a.txt') } }, undefined, bounded);
  assert.equal(read.content[0].text, 'alpha');
  await client.close();
  assert.deepEqual(await s.exited, { code: 0, signal: null }, s.stderr());
});
