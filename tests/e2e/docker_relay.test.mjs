// The MCP-aware relay on container cells (issue 17: it sits on every
// backend's stdio): a profile's tool deny rules hide and refuse tools of a
// server in a docker or gVisor cell exactly as in a native one, each call is
// one chained record in the audit log, and a hostile client's smuggling
// attempts reach the server as nothing. scripts/test.sh runs this file as
// root and as the docker-group user (scripts/docker.sh e2e_docker_as_user).
//
// Needs a running engine: with MCPCELL_E2E_BACKEND=docker a missing engine
// FAILS every test; without it the file skips with that reason.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { EXIT, assertBinaryExists, resultText, runMcpcell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, NODE_BIN, nodeCellArgs, serverEntry } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';
import { engineRequest } from './lib/engine.mjs';

after(removeTempDirs);

const SOCKET = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
const ENABLED = process.env.MCPCELL_E2E_BACKEND === 'docker';
const LEVELS = ['docker', 'gvisor'];

async function needEngine(t) {
  if (!ENABLED) {
    t.skip('container cells: set MCPCELL_E2E_BACKEND=docker with a running dockerd (scripts/test.sh e2e-docker step)');
    return false;
  }
  let r;
  try {
    r = await engineRequest(SOCKET, 'GET', '/_ping');
  } catch (e) {
    assert.fail(`MCPCELL_E2E_BACKEND=docker but no engine answers on ${SOCKET}: ${e.message} (start it: scripts/docker.sh)`);
  }
  assert.equal(r.status, 200, `engine /_ping answered ${r.status}`);
  return true;
}

function writeProfile(dir, profile) {
  const file = path.join(dir, 'fs.json');
  writeReadableFile(file, JSON.stringify(profile, null, 2));
  return file;
}

const records = (file) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

function verify(file) {
  try {
    return { code: 0, out: execFileSync(MCPCELL_BIN, ['audit', 'verify', file], { encoding: 'utf8' }) };
  } catch (e) {
    return { code: e.status, out: `${e.stdout}${e.stderr}` };
  }
}

/** An SDK client whose server is mcpcell running `command` in a `level` cell; resolves `exited` with mcpcell's status. */
function startServer(t, level, extra, command) {
  assertBinaryExists();
  const transport = new StdioClientTransport({
    command: MCPCELL_BIN, args: ['run', `--isolate=${level}`, ...nodeCellArgs(), ...extra, '--', ...command],
    env: {}, stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  let resolveExit;
  const exited = new Promise((r) => (resolveExit = r));
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const started = start();
    transport._process.on('exit', (code, signal) => resolveExit({ code, signal }));
    return started;
  };
  const client = new Client({ name: 'mcpcell-e2e-docker-relay', version: '0.0.0' }, { capabilities: {} });
  t.after(() => {
    const child = transport._process;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { client, transport, exited, stderr: () => stderr };
}

for (const level of LEVELS) {
  test(`${level}: denied tools are hidden and refused; each call is one chained audit record`, { timeout: 120_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const docs = makeTempDir(`${level}-relay-docs`);
    writeReadableFile(path.join(docs, 'a.txt'), 'alpha');
    const conf = makeTempDir(`${level}-relay-conf`);
    const profile = writeProfile(conf, { read: [docs], mcpcell: { tools: { deny: ['write_file', 'move_file'] } } });
    const audit = path.join(makeWritableDir(`${level}-relay-log`), 'calls.jsonl');

    const s = startServer(t, level, ['--permission-profile', profile, '--audit-log', audit],
      [NODE_BIN, serverEntry('server-filesystem'), docs]);
    try {
      await s.client.connect(s.transport);
    } catch (e) {
      assert.fail(`connect through a ${level} cell failed: ${e.message}\nmcpcell stderr:\n${s.stderr()}`);
    }
    const names = (await s.client.listTools()).tools.map((x) => x.name);
    assert.ok(names.includes('read_text_file'), names.join(','));
    assert.ok(!names.includes('write_file'), `write_file is listed: ${names.join(',')}`);
    assert.ok(!names.includes('move_file'), `move_file is listed: ${names.join(',')}`);
    await assert.rejects(
      s.client.callTool({ name: 'write_file', arguments: { path: path.join(docs, 'x.txt'), content: 'no' } }),
      (e) => {
        assert.match(e.message, /mcpcell\.tools\.deny\[0\] \("write_file"\)/);
        assert.ok(e.message.includes(profile), e.message);
        return true;
      });
    const read = await s.client.callTool({ name: 'read_text_file', arguments: { path: path.join(docs, 'a.txt') } });
    assert.equal(resultText(read), 'alpha');
    await s.client.close();
    assert.deepEqual(await s.exited, { code: 0, signal: null }, `mcpcell stderr:\n${s.stderr()}`);

    const events = records(audit);
    const launch = events.find((e) => e.event === 'launch');
    assert.equal(launch?.backend, level, JSON.stringify(launch));
    const calls = events.filter((e) => e.event === 'tool_call');
    assert.deepEqual(calls.map((c) => [c.tool, c.outcome]), [['write_file', 'denied'], ['read_text_file', 'ok']],
      JSON.stringify(calls));
    assert.ok(events.some((e) => e.event === 'session_start' && e.server_info?.name), JSON.stringify(events));
    const ok = verify(audit);
    assert.equal(ok.code, 0, ok.out);
  });

  test(`${level}: an echo server receives only what the relay passed`, { timeout: 90_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const conf = makeTempDir(`${level}-relay-echo`);
    const profile = writeProfile(conf, { mcpcell: { tools: { deny: ['write_file'] } } });
    const allowed = '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{}}}';
    const input = [
      '{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"write_file"}}',
      '{"jsonrpc":"2.0","id":2,"method":"\\u0074ools/call","params":{"name":"write_file"}}',
      '[{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_file"}}]',
      '{"jsonrpc":"2.0","id":99,"result":{}}',
      allowed,
      '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_file"}}',
    ].join('\n') + '\n';
    const r = await runMcpcell(['run', `--isolate=${level}`, ...nodeCellArgs(), '--permission-profile', profile, '--',
      NODE_BIN, '-e', 'process.stdin.pipe(process.stdout)'], { input });
    assert.equal(r.code, 0, r.stderr);
    const out = r.stdout.split('\n').filter(Boolean);
    assert.deepEqual(out.filter((l) => !l.includes('"error"')), [allowed], r.stdout);
    const errors = out.filter((l) => l.includes('"error"')).map((l) => JSON.parse(l));
    assert.deepEqual(errors.map((e) => [e.id, e.error.code]), [[1, -32600], [2, -32001], [null, -32600], [5, -32001]],
      r.stdout);
  });
}

for (const level of LEVELS) {
  test(`${level}: a server's unasked answers never reach the client, from the container's stdout or its FIFO`, { timeout: 90_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const conf = makeTempDir(`${level}-relay-forge`);
    const profile = writeProfile(conf, { mcpcell: { tools: { deny: ['write_file'] } } });
    const forged = '{"jsonrpc":"2.0","id":42,"result":{"tools":[{"name":"write_file","inputSchema":{}}]}}';
    const note = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}';
    // Written to fd 1 (the FIFO, or the attach stream) and to PID 1's own
    // stdout (the attach stream where stdio goes through FIFOs): both paths
    // end in the relay.
    const script = `const fs=require("fs"); const l=${JSON.stringify(forged + '\n')};
      fs.writeSync(1, l); try { fs.writeFileSync("/proc/1/fd/1", l); } catch (e) {}
      fs.writeSync(1, ${JSON.stringify(note + '\n')}); process.stdin.resume();`;
    const r = await runMcpcell(['run', `--isolate=${level}`, ...nodeCellArgs(), '--permission-profile', profile, '--',
      NODE_BIN, '-e', script], { input: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.split('\n').filter(Boolean), [note], r.stdout);
  });
}

test('container cells: --relay=off with tool rules is refused before any container exists', { timeout: 30_000 }, async (t) => {
  if (!(await needEngine(t))) return;
  const conf = makeTempDir('relay-off-docker');
  const profile = writeProfile(conf, { mcpcell: { tools: { deny: ['write_file'] } } });
  const r = await runMcpcell(['run', '--isolate=docker', '--relay=off', '--permission-profile', profile, '--', '/bin/true']);
  assert.equal(r.code, EXIT.usage, r.stderr);
  assert.match(r.stderr, /--relay=off.*only the relay enforces/);
});
