// stdout belongs to JSON-RPC: whatever mcpcell says goes to stderr, even with -v.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { lines, runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { NODE_BIN } from './lib/paths.mjs';

const line = JSON.stringify({ jsonrpc: '2.0', method: 'x' });
const printLine = [NODE_BIN, '-e', `console.log(JSON.stringify({jsonrpc:'2.0',method:'x'}))`];

for (const flags of [[], ['-v']]) {
  test(`stdout carries only the server's bytes (${flags.join(' ') || 'no flags'})`, { timeout: 60_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const r = await runInCell(flags, printLine, { relay: 'on' });
    assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
    assert.equal(r.stdout, line + '\n');
  });
}

test('-v says on stderr what the cell is built from', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const quiet = await runInCell([], printLine);
  const verbose = await runInCell(['-v'], printLine);
  assert.equal(verbose.code, 0, `stderr:\n${verbose.stderr}`);
  // Compared with the same run without -v: warnings about default limits may appear in both.
  assert.ok(lines(verbose.stderr).length > lines(quiet.stderr).length,
    `-v added nothing on stderr:\n--- without -v:\n${quiet.stderr}--- with -v:\n${verbose.stderr}`);
});

test('stdin reaches the server byte for byte and stdout comes back unchanged', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  // A 3 MiB line plus a few small ones: no framing, splitting or buffering loss.
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x', params: { blob: 'a'.repeat(3 << 20) } });
  const input = `${line}\n${big}\n${line}\n`;
  const r = await runInCell([], [NODE_BIN, '-e', 'process.stdin.pipe(process.stdout)'], { input, relay: 'on' });
  assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
  assert.equal(r.stdout.length, input.length);
  assert.ok(r.stdout === input, 'echoed bytes differ from the input');
});

test('with the relay on (the default), a server line that looks like JSON but is no message is dropped and said once on stderr; plain text passes', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const program = ['/bin/sh', '-c', 'echo "[INFO] starting"; echo "{\\"a\\":1}"; echo plain'];
  const r = await runInCell([], program, { relay: 'default', input: '' });
  assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
  assert.equal(r.stdout, 'plain\n');
  const said = lines(r.stderr).filter((l) => l.includes('dropped a line from the server'));
  assert.equal(said.length, 1, `expected one note on stderr:\n${r.stderr}`);
  assert.match(said[0], /--relay=off/);
  const raw = await runInCell([], program, { relay: 'off', input: '' });
  assert.equal(raw.stdout, '[INFO] starting\n{"a":1}\nplain\n');
});
