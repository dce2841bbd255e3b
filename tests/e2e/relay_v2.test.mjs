// The relay and the 2026-07-28 protocol era, with the real TypeScript SDK v2
// (@modelcontextprotocol/client and /server 2.4.0) on both ends: a client
// pinned to 2026-07-28 and one in 'auto' mode (server/discover probe, then
// the modern era) talk to a v2 server of our own through mcpcell with a
// profile that denies write_file. The denied tool is hidden and refused; the
// tool that asks for input passes its input_required round trip intact and
// is one audit record with its rounds counted; a retry that names the denied
// tool (with the other call's requestState) is refused like a first call.
// A tool whose input_required round asks the user for a password is passed
// with a warning, or refused under "poisoning": "block".

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, test } from 'node:test';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { runArgv, skipWithoutCell } from './lib/mcpcell.mjs';
import { E2E_DIR, MCPCELL_BIN, NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const SERVER = path.join(E2E_DIR, 'servers', 'v2_ask_server.mjs');
const V2 = '2026-07-28';

function setup(extra = {}) {
  const conf = makeTempDir('relay-v2-conf');
  const profile = path.join(conf, 'deny.json');
  writeReadableFile(profile, JSON.stringify({ mcpcell: { tools: { deny: ['write_file'] }, ...extra } }));
  const audit = path.join(makeWritableDir('relay-v2-log'), 'calls.jsonl');
  const argv = runArgv(['--read', path.join(E2E_DIR, 'servers'), '--permission-profile', profile, '--audit-log', audit],
    [NODE_BIN, SERVER]);
  return { profile, audit, argv };
}

function records(file) {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

for (const mode of [{ pin: V2 }, 'auto']) {
  const label = typeof mode === 'string' ? mode : `pinned to ${mode.pin}`;
  test(`v2 client (${label}) ↔ v2 server through the relay: deny holds, input_required passes, one record per call`,
    { timeout: 120_000 }, async (t) => {
      if (await skipWithoutCell(t)) return;
      const { profile, audit, argv } = setup();
      let stderr = '';
      const transport = new StdioClientTransport({ command: MCPCELL_BIN, args: argv, env: {}, stderr: 'pipe' });
      transport.stderr?.setEncoding('utf8').on('data', (d) => (stderr += d));
      const client = new Client({ name: 'v2-e2e', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } });
      const asked = [];
      client.setRequestHandler('elicitation/create', async (req) => {
        asked.push(req.params.message);
        return { action: 'accept', content: { word: 'hello' } };
      });
      try {
        await client.connect(transport);
      } catch (e) {
        assert.fail(`connect (${label}) through mcpcell failed: ${e.message}\nstderr:\n${stderr}`);
      }
      const names = (await client.listTools()).tools.map((x) => x.name);
      assert.deepEqual(names.sort(), ['add', 'ask', 'login'], `listed: ${names}`);
      const answer = await client.callTool({ name: 'ask', arguments: {} });
      assert.equal(answer.content[0].text, 'you said hello');
      assert.deepEqual(asked, ['a word?'], 'the client answered the server\'s elicitation once');
      await assert.rejects(client.callTool({ name: 'write_file', arguments: {} }), (e) => {
        assert.match(e.message, /mcpcell\.tools\.deny\[0\] \("write_file"\)/);
        assert.ok(e.message.includes(profile), e.message);
        return true;
      });
      assert.equal((await client.callTool({ name: 'add', arguments: {} })).content[0].text, 'sum');
      await client.close();

      const all = records(audit);
      // 'auto' probes on a sibling process first: the last run's records are this connection's
      // (by run id: the relay may record the first answer before the launch record is written).
      const lastRun = all.findLast((e) => e.event === 'exit').run;
      const run = all.filter((e) => e.run === lastRun);
      // The SDK's stdio transport probes server/discover on a sibling process (in both modes)
      // and then speaks the modern era without a handshake: the probe's run has the
      // session_start, this connection's run only its calls, each with its own _meta.
      const start = all.find((e) => e.event === 'session_start');
      assert.ok(start, `no session_start: ${JSON.stringify(all)}`);
      assert.notEqual(start.run, lastRun);
      assert.equal(start.via, 'server/discover');
      assert.equal(start.protocol, V2);
      assert.equal(start.server_info?.name, 'v2-ask');
      assert.equal(start.client_info?.name, 'v2-e2e');
      const calls = run.filter((e) => e.event === 'tool_call');
      assert.deepEqual(calls.map((c) => [c.tool, c.outcome, c.rounds]),
        [['ask', 'ok', 2], ['write_file', 'denied', 1], ['add', 'ok', 1]], JSON.stringify(calls));
      for (const c of calls) {
        assert.equal(c.protocol, V2);
        assert.equal(c.client_info?.name, 'v2-e2e');
      }
      assert.deepEqual(calls[0].input_responses.keys, ['word']);
      assert.equal(JSON.stringify(calls).includes('hello'), false, 'input responses are redacted by default');
    });
}

/** mcpcell with the v2 server, driven line by line: send() resolves with the next line on stdout. */
function rawSession(t, argv) {
  const child = spawn(MCPCELL_BIN, argv, { stdio: ['pipe', 'pipe', 'pipe'], env: {} });
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const lines = [];
  const waiting = [];
  createInterface({ input: child.stdout }).on('line', (l) => (waiting.length ? waiting.shift()(l) : lines.push(l)));
  const next = () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((r) => waiting.push(r)));
  return {
    /** `msg`: an object, or a line as it is to be sent. */
    async send(msg) {
      child.stdin.write(`${typeof msg === 'string' ? msg : JSON.stringify(msg)}\n`);
      const got = await Promise.race([next(), new Promise((_, rej) => setTimeout(() => rej(new Error(`no answer; stderr:\n${stderr}`)), 60_000))]);
      return JSON.parse(got);
    },
    end: () => new Promise((r) => { child.on('exit', r); child.stdin.end(); }),
  };
}

test('hand-written rounds: a retry that names a denied tool is denied, whatever requestState it carries', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const { audit, argv } = setup();
  const s = rawSession(t, argv);
  const meta = { 'io.modelcontextprotocol/protocolVersion': V2, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
  const call = (id, name, extra = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, ...extra, _meta: meta } });

  const first = await s.send(call(1, 'ask'));
  assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
  const state = first.result.requestState;
  const answers = { word: { action: 'accept', content: { word: 'x' } } };
  for (const id of [2, 3, 4]) {
    const denied = await s.send(call(id, 'write_file', { inputResponses: answers, requestState: state }));
    assert.equal(denied.id, id);
    assert.equal(denied.error?.code, -32001, JSON.stringify(denied));
  }
  // The escaped spelling of the name on a retry: decoded, denied.
  const line = JSON.stringify(call(5, 'write_file', { inputResponses: answers, requestState: state })).replace('"write_file"', '"write\\u005ffile"');
  assert.ok(line.includes('write\\u005ffile'));
  const escaped = await s.send(line);
  assert.equal(escaped.error?.code, -32001, JSON.stringify(escaped));
  // The round the server asked for still completes.
  const done = await s.send(call(6, 'ask', { inputResponses: answers, requestState: state }));
  assert.equal(done.result?.content?.[0]?.text, 'you said x', JSON.stringify(done));
  await s.end();
  const calls = records(audit).filter((e) => e.event === 'tool_call');
  assert.deepEqual(calls.map((c) => [c.tool, c.outcome]),
    [['write_file', 'denied'], ['write_file', 'denied'], ['write_file', 'denied'], ['write_file', 'denied'], ['ask', 'ok']],
    JSON.stringify(calls));
  // The first denied retry took the round over; the later ones name a state no longer waiting.
  assert.equal(calls[0].rounds, 2);
  assert.equal(calls[4].rounds, 1);
  assert.equal(calls[4].unknown_request_state, true);
});

for (const poisoning of ['warn', 'block']) {
  test(`v2 client ↔ v2 server: an input_required round asking for a password, "poisoning": "${poisoning}"`,
    { timeout: 120_000 }, async (t) => {
      if (await skipWithoutCell(t)) return;
      const { audit, argv } = setup({ pins: { poisoning } });
      let stderr = '';
      const transport = new StdioClientTransport({ command: MCPCELL_BIN, args: argv, env: {}, stderr: 'pipe' });
      transport.stderr?.setEncoding('utf8').on('data', (d) => (stderr += d));
      const stderrDone = new Promise((r) => transport.stderr?.on('end', r));
      const client = new Client({ name: 'v2-e2e', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: V2 } } });
      const asked = [];
      client.setRequestHandler('elicitation/create', async (req) => {
        asked.push(req.params.message);
        return { action: 'accept', content: { password: 'correct horse battery' } };
      });
      await client.connect(transport);
      try {
        if (poisoning === 'warn') {
          const answer = await client.callTool({ name: 'login', arguments: {} });
          assert.equal(answer.content[0].text, 'signed in', JSON.stringify(answer));
          assert.equal(asked.length, 1, 'the user saw the form');
        } else {
          await assert.rejects(client.callTool({ name: 'login', arguments: {} }), (e) => {
            assert.match(e.message, /credential_request/);
            assert.match(e.message, /"poisoning": "warn"/, 'says how to allow it');
            return true;
          });
          assert.deepEqual(asked, [], 'the form never reached the client');
        }
        assert.equal((await client.callTool({ name: 'add', arguments: {} })).content[0].text, 'sum');
      } finally {
        await client.close();
      }
      // stderr arrives on its own pipe: read it whole, once mcpcell has exited.
      await Promise.race([stderrDone, new Promise((r) => setTimeout(r, 10_000))]);
      if (poisoning === 'warn') {
        assert.match(stderr, /relay: warning: the server asks the user something the poisoning checks flag \(credential_request/);
      } else {
        assert.match(stderr, /relay: refused: the server asks the user/);
      }
      const all = records(audit);
      const flagged = all.filter((e) => e.event === 'input_request');
      assert.equal(flagged.length, 1, JSON.stringify(all));
      assert.equal(flagged[0].via, 'input_required');
      assert.equal(flagged[0].action, poisoning === 'warn' ? 'passed' : 'refused');
      assert.equal(flagged[0].findings[0].rule, 'credential_request');
      const login = all.filter((e) => e.event === 'tool_call' && e.tool === 'login');
      assert.deepEqual(login.map((c) => c.outcome), [poisoning === 'warn' ? 'ok' : 'denied'], JSON.stringify(login));
    });
}
