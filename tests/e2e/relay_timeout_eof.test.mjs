// --call-timeout after the client closed stdin (issue 17): a client on pipes
// writes its call, closes stdin and reads the answer. The server here never
// answers and ignores EOF, and --grace 60s keeps the stop order from ending
// it for a minute; the client must still get the timeout error (before, the
// deadline was dropped at EOF and the client waited for the kill).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { assertBinaryExists, runArgv, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, NODE_BIN } from './lib/paths.mjs';
import { makeWritableDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const SILENT = 'process.stdin.resume(); process.stdin.on("end", () => {}); setInterval(() => {}, 1000);';

test('a call is answered at its --call-timeout after the client closed stdin', { timeout: 45_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  assertBinaryExists();
  const audit = path.join(makeWritableDir('timeout-eof-log'), 'calls.jsonl');
  const child = spawn(MCPCELL_BIN, runArgv(['--call-timeout', '1s', '--grace', '60s', '--audit-log', audit],
    [NODE_BIN, '-e', SILENT]), { stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const answer = new Promise((resolve) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.on('exit', () => resolve(null));
  });
  child.stdin.end('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}\n');
  const line = await answer;
  assert.ok(line !== null, `mcpcell ended without answering the call; stderr:\n${stderr}`);
  const r = JSON.parse(line);
  assert.equal(r.id, 1, line);
  assert.equal(r.error.code, -32003, line);
  assert.match(r.error.message, /--call-timeout/);
  assert.match(r.error.message, /closed stdin/);
  child.kill('SIGTERM');  // the user ends the session; the stop order ends the server
  await exited;
  const calls = readFileSync(audit, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    .filter((e) => e.event === 'tool_call');
  assert.deepEqual(calls.map((c) => [c.tool, c.outcome, c.limit]), [['slow', 'timeout', 'call_timeout']], JSON.stringify(calls));
});
