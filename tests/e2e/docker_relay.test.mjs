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
import { execFileSync, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
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

// With tool rules in a profile, and with none (the relay is on by default).
for (const [level, rules] of LEVELS.flatMap((l) => [[l, true], [l, false]])) {
  test(`${level}: a server's unasked answers never reach the client, from the container's stdout or its FIFO${rules ? '' : ' (no profile)'}`, { timeout: 90_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const conf = makeTempDir(`${level}-relay-forge`);
    const profile = rules ? ['--permission-profile', writeProfile(conf, { mcpcell: { tools: { deny: ['write_file'] } } })] : [];
    const forged = '{"jsonrpc":"2.0","id":42,"result":{"tools":[{"name":"write_file","inputSchema":{}}]}}';
    const note = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}';
    // Written to fd 1 (the FIFO, or the attach stream) and to PID 1's own
    // stdout (the attach stream where stdio goes through FIFOs): both paths
    // end in the relay.
    const script = `const fs=require("fs"); const l=${JSON.stringify(forged + '\n')};
      fs.writeSync(1, l); try { fs.writeFileSync("/proc/1/fd/1", l); } catch (e) {}
      fs.writeSync(1, ${JSON.stringify(note + '\n')}); process.stdin.resume();`;
    const r = await runMcpcell(['run', `--isolate=${level}`, ...nodeCellArgs(), ...profile, '--',
      NODE_BIN, '-e', script], { input: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.split('\n').filter(Boolean), [note], r.stdout);
  });
}

// A GitHub token with a valid checksum (github.blog, 2021-04-05: CRC-32 of
// the 30 random characters in 6 base62 digits); the scan reports no token without it.
const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function githubToken() {
  const body = Array.from({ length: 30 }, () => B62[randomInt(B62.length)]).join('');
  let c = 0xffffffff;
  for (const b of Buffer.from(body)) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  let n = (c ^ 0xffffffff) >>> 0;
  let sum = '';
  for (let i = 0; i < 6; i++, n = Math.floor(n / 62)) sum = B62[n % 62] + sum;
  return `ghp_${body}${sum}`;
}

/** Connects the SDK client of `startServer`, failing with mcpcell's stderr. */
async function connect(s, level) {
  try {
    await s.client.connect(s.transport);
  } catch (e) {
    assert.fail(`connect through a ${level} cell failed: ${e.message}\nmcpcell stderr:\n${s.stderr()}`);
  }
}

// Issue 17: the relay is on by default in container cells too. No profile
// and no --relay flag here (before, a container cell without rules copied
// bytes and the token went through): the default secret scan masks a token
// both ways, each finding and each call on the record.
for (const level of LEVELS) {
  test(`${level}: by default (no profile, no flag) the relay masks a secret both ways, on the record`, { timeout: 120_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const token = githubToken();
    const audit = path.join(makeWritableDir(`${level}-relay-default-log`), 'calls.jsonl');
    const s = startServer(t, level, ['--audit-log', audit, '--env', `LEAKED_TOKEN=${token}`],
      [NODE_BIN, serverEntry('server-everything')]);
    await connect(s, level);
    // Server → client: the cell's environment, token included, comes back masked.
    const env = resultText(await s.client.callTool({ name: 'get-env', arguments: {} }));
    assert.ok(env.includes('LEAKED_TOKEN'), env.slice(0, 400));
    assert.ok(!env.includes(token), 'the token reached the client');
    assert.match(env, /\[REDACTED:github-pat-classic\]/);
    // Client → server: the server receives the mask, so echoes the mask.
    const echo = resultText(await s.client.callTool({ name: 'echo', arguments: { message: `use ${token}` } }));
    assert.equal(echo, 'Echo: use [REDACTED:github-pat-classic]');
    await s.client.close();
    assert.deepEqual(await s.exited, { code: 0, signal: null }, `mcpcell stderr:\n${s.stderr()}`);

    assert.ok(!readFileSync(audit, 'utf8').includes(token), 'the token is in the audit log');
    const events = records(audit);
    assert.equal(events.find((e) => e.event === 'launch')?.backend, level);
    const found = events.filter((e) => e.event === 'secret');
    assert.deepEqual(found.map((e) => [e.from, e.action, e.findings[0].rule]).sort(),
      [['client', 'redacted', 'github-pat-classic'], ['server', 'redacted', 'github-pat-classic']], JSON.stringify(found));
    const calls = events.filter((e) => e.event === 'tool_call').map((e) => [e.tool, e.outcome]);
    assert.deepEqual(calls, [['get-env', 'ok'], ['echo', 'ok']], JSON.stringify(calls));
    assert.ok(events.some((e) => e.event === 'session_start' && e.server_info?.name), JSON.stringify(events));
    const ok = verify(audit);
    assert.equal(ok.code, 0, ok.out);
  });

  test(`${level}: prompt and resource rules hold: hidden, refused naming the rule, on the record`, { timeout: 120_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const conf = makeTempDir(`${level}-relay-content`);
    const profile = writeProfile(conf, { mcpcell: { prompts: { deny: ['args-prompt'] },
      resources: { deny: ['demo://resource/dynamic/blob/*'] } } });
    const audit = path.join(makeWritableDir(`${level}-relay-content-log`), 'calls.jsonl');
    const s = startServer(t, level, ['--permission-profile', profile, '--audit-log', audit],
      [NODE_BIN, serverEntry('server-everything')]);
    await connect(s, level);
    const prompts = (await s.client.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.includes('simple-prompt') && !prompts.includes('args-prompt'), prompts.join(','));
    await assert.rejects(s.client.getPrompt({ name: 'args-prompt', arguments: { city: 'x' } }),
      /mcpcell\.prompts\.deny\[0\] \("args-prompt"\).*remove that entry to allow it/);
    const templates = (await s.client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);
    assert.deepEqual(templates, ['demo://resource/dynamic/text/{resourceId}']);
    await assert.rejects(s.client.readResource({ uri: 'demo://resource/dynamic/blob/1' }), /mcpcell\.resources\.deny\[0\]/);
    await assert.rejects(s.client.subscribeResource({ uri: 'demo://resource/dynamic/%62lob/1' }), /percent-encoding/);
    const text = await s.client.readResource({ uri: 'demo://resource/dynamic/text/1' });
    assert.match(text.contents[0].text, /Resource 1/);
    await s.client.close();
    assert.deepEqual(await s.exited, { code: 0, signal: null }, `mcpcell stderr:\n${s.stderr()}`);
    const denied = records(audit).filter((e) => e.outcome === 'denied').map((e) => e.event);
    assert.deepEqual(denied, ['prompt_get', 'resource_read', 'resource_subscribe']);
    const ok = verify(audit);
    assert.equal(ok.code, 0, ok.out);
  });
}

// --call-timeout after the client closed stdin, through the container's stdio
// pump: a silent server that ignores EOF, --grace 60s; the client still gets
// the timeout error, then ends the session with SIGTERM.
for (const level of LEVELS) {
  test(`${level}: a call is answered at its --call-timeout after the client closed stdin`, { timeout: 60_000 }, async (t) => {
    if (!(await needEngine(t))) return;
    const audit = path.join(makeWritableDir(`${level}-relay-eof-log`), 'calls.jsonl');
    const silent = 'process.stdin.resume(); process.stdin.on("end", () => {}); setInterval(() => {}, 1000);';
    const child = spawn(MCPCELL_BIN, ['run', `--isolate=${level}`, ...nodeCellArgs(), '--call-timeout', '1s', '--grace', '60s',
      '--audit-log', audit, '--', NODE_BIN, '-e', silent], { stdio: ['pipe', 'pipe', 'pipe'] });
    t.after(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const exited = new Promise((resolve) => child.on('exit', resolve));
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
    assert.deepEqual([r.id, r.error?.code], [1, -32003], line);
    assert.match(r.error.message, /--call-timeout.*closed stdin/);
    child.kill('SIGTERM');
    await exited;
    const calls = records(audit).filter((e) => e.event === 'tool_call').map((e) => [e.tool, e.outcome]);
    assert.deepEqual(calls, [['slow', 'timeout']], JSON.stringify(calls));
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
