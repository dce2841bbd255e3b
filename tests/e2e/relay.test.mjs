// The MCP-aware relay (issue 17's user story) with the real SDK client and
// the real server-filesystem: a profile's tool deny rules hide the tools from
// tools/list and refuse their calls naming the rule; every call is one record
// in the audit log; `mcpcell audit verify` says the chain is intact, and
// finds a record edited with sed.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { EXIT, resultText, runInCell, runMcpcell, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, NODE_BIN, serverEntry } from './lib/paths.mjs';
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

function verify(file) {
  try {
    return { code: 0, out: execFileSync(MCPCELL_BIN, ['audit', 'verify', file], { encoding: 'utf8' }) };
  } catch (e) {
    return { code: e.status, out: `${e.stdout}${e.stderr}` };
  }
}

test('relay: denied tools are hidden and refused, each call is one chained audit record', { timeout: 90_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const docs = makeTempDir('relay-docs');
  writeReadableFile(path.join(docs, 'a.txt'), 'alpha');
  const conf = makeTempDir('relay-conf');
  const profile = writeProfile(conf, { read: [docs], mcpcell: { tools: { deny: ['write_file', 'move_file'] } } });
  const logDir = makeWritableDir('relay-log');
  const audit = path.join(logDir, 'calls.jsonl');

  const s = startServer(t, ['--permission-profile', profile, '--audit-log', audit],
    [NODE_BIN, serverEntry('server-filesystem'), docs]);
  try {
    await s.connect();
  } catch (e) {
    assert.fail(`connect through mcpcell failed: ${e.message}\nmcpcell stderr:\n${s.stderr()}`);
  }
  const { client } = s;
  const names = (await client.listTools()).tools.map((x) => x.name);
  assert.ok(names.includes('read_text_file'), names.join(','));
  assert.ok(!names.includes('write_file'), `write_file is listed: ${names.join(',')}`);
  assert.ok(!names.includes('move_file'), `move_file is listed: ${names.join(',')}`);

  await assert.rejects(
    client.callTool({ name: 'write_file', arguments: { path: path.join(docs, 'x.txt'), content: 'no' } }),
    (e) => {
      assert.match(e.message, /mcpcell\.tools\.deny\[0\] \("write_file"\)/);
      assert.ok(e.message.includes(profile), e.message);
      assert.match(e.message, /remove that entry to allow it/);
      return true;
    });
  const read = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(docs, 'a.txt') } });
  assert.equal(resultText(read), 'alpha');
  const missing = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(docs, 'none.txt') } });
  assert.equal(missing.isError, true);

  await client.close();
  assert.deepEqual(await s.exited, { code: 0, signal: null }, `mcpcell stderr:\n${s.stderr()}`);

  const events = records(audit);
  const calls = events.filter((e) => e.event === 'tool_call');
  assert.deepEqual(calls.map((c) => [c.tool, c.outcome]),
    [['write_file', 'denied'], ['read_text_file', 'ok'], ['read_text_file', 'isError']], JSON.stringify(calls));
  for (const c of calls) {
    assert.deepEqual(c.arguments.keys.sort(), c.tool === 'write_file' ? ['content', 'path'] : ['path']);
    assert.ok(!JSON.stringify(c).includes('alpha'), 'results are redacted by default');
  }
  assert.ok(events.some((e) => e.event === 'session_start' && e.server_info?.name), JSON.stringify(events));
  assert.ok(events.some((e) => e.event === 'session_end'));

  const ok = verify(audit);
  assert.equal(ok.code, 0, ok.out);
  assert.equal(ok.out.trim(), `ok: ${events.length} records, 1 runs, chain intact`);

  // sed -i 'Ns/read_text_file/list_directory/' on the first read call's record.
  const lines = readFileSync(audit, 'utf8').split('\n');
  const n = lines.findIndex((l) => l.includes('"tool":"read_text_file"')) + 1;
  execFileSync('sed', ['-i', `${n}s/read_text_file/list_directory/`, audit]);
  const bad = verify(audit);
  assert.equal(bad.code, 1, bad.out);
  assert.equal(bad.out.trim(), `${audit}:${n}: record hash mismatch (edited?)`);
});

test('relay: tool rules are never accepted and ignored', { timeout: 30_000 }, async () => {
  const conf = makeTempDir('relay-refuse');
  const profile = writeProfile(conf, { mcpcell: { tools: { deny: ['write_file'] } } });
  const off = await runMcpcell(['run', '--isolate=native', '--relay=off', '--permission-profile', profile, '--dry-run', '--', '/bin/true']);
  assert.equal(off.code, EXIT.usage, off.stderr);
  assert.match(off.stderr, /--relay=off.*only the relay enforces/);
  // The relay sits on every backend's stdio: a container cell holds the rules too (docker_relay.test.mjs runs them).
  for (const level of ['docker', 'podman', 'gvisor', 'container']) {
    const r = await runMcpcell(['run', `--isolate=${level}`, '--permission-profile', profile, '--dry-run', '--', '/bin/true']);
    assert.equal(r.code, 0, `${level}: ${r.stderr}`);
    const cell = JSON.parse(r.stdout).cell;
    assert.equal(cell.relay.on, true, level);
    assert.deepEqual(cell.relay.tools.deny, ['write_file'], level);
    const offr = await runMcpcell(['run', `--isolate=${level}`, '--relay=off', '--permission-profile', profile, '--dry-run', '--', '/bin/true']);
    assert.equal(offr.code, EXIT.usage, `${level}: ${offr.stderr}`);
    assert.match(offr.stderr, /--relay=off.*only the relay enforces/, level);
  }
  const dry = await runMcpcell(['run', '--isolate=native', '--permission-profile', profile, '--dry-run', '--', '/bin/true']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(JSON.parse(dry.stdout).cell.relay.tools.deny, ['write_file']);
});

test('relay: an echo server receives only what the relay decided to pass', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const conf = makeTempDir('relay-echo');
  const profile = writeProfile(conf, { mcpcell: { tools: { deny: ['write_file'] } } });
  const logDir = makeWritableDir('relay-echo-log');
  const audit = path.join(logDir, 'echo.jsonl');
  const allowed = '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{}}}';
  const note = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}';
  const input = [
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"write_file"}}',
    '{"jsonrpc":"2.0","id":2,"method":"\\u0074ools/call","params":{"name":"write_file"}}',
    '[{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_file"}}]',
    '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write_file"}}',
    '{"jsonrpc":"2.0","id":99,"result":{}}',
    allowed,
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_file\\u0000"}}',
    note,
  ].join('\n') + '\n';
  const r = await runInCell(['--permission-profile', profile, '--audit-log', audit],
    [NODE_BIN, '-e', 'process.stdin.pipe(process.stdout)'], { input, relay: 'on' });
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout.split('\n').filter(Boolean);
  // What the server echoed is exactly what it was given: the allowed call and the notification.
  const echoed = out.filter((l) => !l.includes('"error"'));
  assert.deepEqual(echoed, [allowed, note], r.stdout);
  const errors = out.filter((l) => l.includes('"error"')).map((l) => JSON.parse(l));
  assert.deepEqual(errors.map((e) => [e.id, e.error.code]),
    [[1, -32600], [2, -32001], [null, -32600], [5, -32001]], r.stdout);
  const events = records(audit);
  assert.equal(events.filter((e) => e.event === 'forged_response').length, 1);
  assert.equal(events.filter((e) => e.event === 'tool_call' && e.outcome === 'denied').length, 2);
  assert.equal(verify(audit).code, 0);
});
