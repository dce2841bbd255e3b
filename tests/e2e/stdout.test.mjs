// stdout belongs to JSON-RPC: whatever mcpcell says goes to stderr, even with -v.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { runInCell, skipWithoutCell } from './lib/mcpcell.mjs';
import { NODE_BIN } from './lib/paths.mjs';

const line = JSON.stringify({ jsonrpc: '2.0', method: 'x' });
const printLine = [NODE_BIN, '-e', `console.log(JSON.stringify({jsonrpc:'2.0',method:'x'}))`];

for (const verbose of [false, true]) {
  test(`stdout carries only the server's bytes${verbose ? ' (with -v)' : ''}`, { timeout: 60_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const r = await runInCell(verbose ? ['-v'] : [], printLine);
    assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
    assert.equal(r.stdout, line + '\n');
    if (verbose) assert.notEqual(r.stderr, '', '-v said nothing on stderr');
  });
}

test('stdin reaches the server byte for byte and stdout comes back unchanged', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  // A 3 MiB line plus a few small ones: no framing, splitting or buffering loss.
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x', params: { blob: 'a'.repeat(3 << 20) } });
  const input = `${line}\n${big}\n${line}\n`;
  const r = await runInCell([], [NODE_BIN, '-e', 'process.stdin.pipe(process.stdout)'], { input });
  assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
  assert.equal(r.stdout.length, input.length);
  assert.ok(r.stdout === input, 'echoed bytes differ from the input');
});
