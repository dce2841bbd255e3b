// Attacks on the MCP relay (issue 17) through the real binary: the real SDK
// client where a client is needed, and hostile servers written as a few lines
// of node that put exactly the bytes under test on the wire. Each test names
// the attack; docs/ATTACKS.md lists what each one showed.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runArgv, runInCell, skipWithoutCell, startServer } from './lib/mcpcell.mjs';
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

// A hostile server inflates the supervisor (outside the cell's memory limit):
// simdjson's DOM tape takes 16 bytes per number and its structural index 4 per
// token, so one line of `0,0,0,…` cost the supervisor ~13× its size (measured:
// 60 MB line, 772 MB peak RSS; 16 MiB, ~210 MB). Now a line whose DOM would
// exceed 4× --max-message is refused before it is parsed, with its id (written
// last, as the SDKs do); a smaller dense line still passes intact.
test('relay attack: a line of small numbers does not inflate the supervisor beyond 4x the maximum message', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const max = 16 * 1024 * 1024;
  const logDir = makeWritableDir('adv-dense-log');
  const audit = path.join(logDir, 'dense.jsonl');
  // Answers request 1 with ~15.9 MiB of zeros (under the maximum), request 2 with 2 MiB of them.
  const server = `
    const zeros = (n) => Array(n).fill('0').join(',');
    const sizes = { 1: ${max / 2 - 4096}, 2: ${1024 * 1024} };
    let buf = '';
    process.stdin.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\\n')) >= 0) {
        const req = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        process.stdout.write('{"jsonrpc":"2.0","result":{"data":[' + zeros(sizes[req.id]) + ']},"id":' + req.id + '}\\n');
      }
    });
    process.stdin.on('end', () => process.exit(0));`;
  let peakKb = 0;
  let out = '';
  const answers = [];
  const r = await runInCell(['--max-message', '16m', '--audit-log', audit], [NODE_BIN, '-e', server], {
    relay: 'on',
    onSpawn: (child) => {
      child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
      child.stdout.on('data', (d) => {
        out += d;
        let nl;
        while ((nl = out.indexOf('\n')) >= 0) {
          answers.push(JSON.parse(out.slice(0, nl)));
          out = out.slice(nl + 1);
          if (answers.length === 1) child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
        }
        if (answers.length < 2) return;
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)[1]);
        child.stdin.end();
      });
    },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(answers.length, 2, r.stderr);
  assert.ok(peakKb > 0, 'the supervisor was measured while running');
  t.diagnostic(`supervisor peak RSS ${peakKb} kB`);
  assert.ok(peakKb * 1024 < 4 * max, `supervisor peak RSS ${peakKb} kB with --max-message 16m`);
  assert.equal(answers[0].id, 1);
  assert.equal(answers[0].error?.code, -32002, JSON.stringify(answers[0]));
  assert.match(answers[0].error.message, /would take up to \d+ bytes to parse.*4 times the maximum message size of 16777216 bytes.*--max-message/);
  assert.equal(answers[1].id, 2, 'the smaller dense answer passes');
  assert.equal(answers[1].result.data.length, 1024 * 1024);
  const refused = records(audit).filter((e) => e.event === 'relay_refused');
  assert.equal(refused.length, 1, JSON.stringify(refused));
  assert.equal(refused[0].code, -32002);
  assert.equal(refused[0].id, 1);
});

// The same through the audit record: a server's serverInfo (and a client's
// clientInfo) went whole into nlohmann::json for session_start, ~16 bytes a
// number beside the DOM, so 5 MiB of zeros in serverInfo, under the DOM bound,
// held the supervisor at 341 MB (3 MiB: ~190 MB). Now a record keeps such info
// up to 4 KiB, and the supervisor stays within the documented bound: the lines
// (up to --max-message each way) and one DOM (up to 4x --max-message).
test('relay attack: a serverInfo of small numbers is not copied whole into the audit record', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const max = 16 * 1024 * 1024;
  const logDir = makeWritableDir('adv-dense-info');
  const audit = path.join(logDir, 'info.jsonl');
  const server = `
    let buf = '';
    process.stdin.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\\n')) >= 0) {
        const req = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        const zeros = '[' + Array(${1_500_000}).fill('0').join(',') + ']';
        process.stdout.write('{"jsonrpc":"2.0","result":{"protocolVersion":"2025-06-18","capabilities":{},' +
          '"serverInfo":{"name":"x","version":"1","z":' + zeros + '}},"id":' + req.id + '}\\n');
      }
    });
    process.stdin.on('end', () => process.exit(0));`;
  let peakKb = 0;
  let out = '';
  const r = await runInCell(['--max-message', '16m', '--audit-log', audit], [NODE_BIN, '-e', server], {
    relay: 'on',
    onSpawn: (child) => {
      child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",' +
        '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n');
      child.stdout.on('data', (d) => {
        out += d;
        if (!out.includes('\n')) return;
        peakKb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]);
        child.stdin.end();
      });
    },
  });
  assert.equal(r.code, 0, r.stderr);
  t.diagnostic(`supervisor peak RSS ${peakKb} kB`);
  assert.ok(peakKb > 0, 'the supervisor was measured while running');
  assert.ok(peakKb * 1024 < 6 * max, `supervisor peak RSS ${peakKb} kB with --max-message 16m`);
  assert.equal(JSON.parse(out.slice(0, out.indexOf('\n'))).result.serverInfo.z.length, 1_500_000, 'the answer passes whole');
  const start = records(audit).find((e) => e.event === 'session_start');
  assert.match(start?.server_info?.withheld ?? '', /^\d+ bytes; audit records keep up to 4096$/, JSON.stringify(start)?.slice(0, 300));
  assert.deepEqual(start.client_info, { name: 't', version: '1' });
});

// The same through tool pinning (on by default in a cell): the pins read a
// tools/list page as nlohmann::json, ~2x the DOM, so a 3 MiB page of zeros
// in one tool's inputSchema held the supervisor at 250 MB under
// --max-message 16m. Now a page whose DOM bound exceeds the maximum is
// refused with the request's id (the client's tools/list gets -32002).
test('relay attack: a tools/list page of small numbers is not copied whole for pinning', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const max = 16 * 1024 * 1024;
  const home = makeWritableDir('adv-dense-pins');
  const server = `
    let buf = '';
    process.stdin.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\\n')) >= 0) {
        const req = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        const n = req.id === 1 ? ${1_500_000} : 100;
        const zeros = '[' + Array(n).fill('0').join(',') + ']';
        process.stdout.write('{"jsonrpc":"2.0","result":{"tools":[{"name":"t","inputSchema":{"type":"object",' +
          '"properties":{"z":{"enum":' + zeros + '}}}}]},"id":' + req.id + '}\\n');
      }
    });
    process.stdin.on('end', () => process.exit(0));`;
  let peakKb = 0;
  let out = '';
  const answers = [];
  const r = await runInCell(['--max-message', '16m'], [NODE_BIN, '-e', server], {
    relay: 'on',
    env: { ...process.env, XDG_STATE_HOME: home },
    onSpawn: (child) => {
      child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
      child.stdout.on('data', (d) => {
        out += d;
        let nl;
        while ((nl = out.indexOf('\n')) >= 0) {
          answers.push(JSON.parse(out.slice(0, nl)));
          out = out.slice(nl + 1);
          if (answers.length === 1) child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
        }
        if (answers.length < 2) return;
        peakKb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]);
        child.stdin.end();
      });
    },
  });
  assert.equal(r.code, 0, r.stderr);
  t.diagnostic(`supervisor peak RSS ${peakKb} kB`);
  assert.ok(peakKb > 0, 'the supervisor was measured while running');
  assert.ok(peakKb * 1024 < 6 * max, `supervisor peak RSS ${peakKb} kB with --max-message 16m`);
  assert.equal(answers[0].id, 1);
  assert.equal(answers[0].error?.code, -32002, JSON.stringify(answers[0]).slice(0, 300));
  assert.match(answers[0].error.message, /tools\/list page would take up to \d+ bytes to pin.*--max-message.*pins\.mode/);
  assert.equal(answers[1].result?.tools?.[0]?.inputSchema?.properties?.z?.enum?.length, 100, 'a small page is pinned and passes');
});

// A hostile server floods the audit log: every forged response (an answer to
// a request never sent) was one record, without limit, so a server writing
// `{"jsonrpc":"2.0","id":N,"result":{}}` in a loop grew the user's log (and
// the disk) as fast as it could write. Now the first 100 per session are
// recorded and the rest counted in session_end.
test('relay attack: forged responses in bulk do not write one audit record each', { timeout: 120_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const logDir = makeWritableDir('adv-flood-log');
  const audit = path.join(logDir, 'flood.jsonl');
  const n = 20000;
  const server = `
    let out = '';
    for (let i = 0; i < ${n}; i++) out += '{"jsonrpc":"2.0","id":' + (1000 + i) + ',"result":{}}\\n';
    process.stdout.write(out, () => process.exit(0));`;
  const r = await runInCell(['--audit-log', audit], [NODE_BIN, '-e', server], { relay: 'on', input: '' });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '', 'no forged answer reaches the client');
  const events = records(audit);
  const end = events.find((e) => e.event === 'session_end');
  assert.equal(end?.forged, n, JSON.stringify(end));
  assert.equal(end.held_back, n - 100, JSON.stringify(end));
  assert.equal(events.filter((e) => e.event === 'forged_response').length, 100);
});

// A hostile server dribbles its tools/list answer one byte per write, and
// ends another with CRLF: the relay frames on '\n' across reads and judges
// each whole line, so write_file is hidden either way.
test('relay attack: a tools/list answer written a byte at a time or with CRLF still hides a denied tool', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const conf = makeTempDir('adv-dribble');
  const profile = writeProfile(conf, { mcpcell: { tools: { deny: ['write_file'] } } });
  const server = String.raw`
    const tools = '{"tools":[{"name":"write_file"},{"name":"read_file"},{"name":"write\u005ffile"}]}';
    let buf = '';
    const answers = [];
    process.stdin.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const req = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        answers.push('{"result":' + tools + ',"jsonrpc":"2.0","id":' + req.id + '}' + (req.id === 1 ? '\r\n' : '\n'));
      }
      if (answers.length === 2) dribble(answers.join(''), 0);
    });
    function dribble(s, i) {
      if (i === s.length) return process.exit(0);
      process.stdout.write(s[i], () => setImmediate(() => dribble(s, i + 1)));
    }`;
  const input = '{"jsonrpc":"2.0","id":0,"method":"tools/list"}\n{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n';
  const r = await runInCell(['--permission-profile', profile], [NODE_BIN, '-e', server], { relay: 'on', input });
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.deepEqual(out.map((m) => [m.id, m.result.tools.map((x) => x.name)]), [[0, ['read_file']], [1, ['read_file']]], r.stdout);
});

// The Python MCP SDK reads stdio as `for line in TextIOWrapper(sys.stdin.buffer,
// encoding="utf-8")`: universal newlines, so a lone CR also ends a line. A
// line `x\r{…tools/call write_file…}` is one undecodable line to the relay and
// to Node's ReadBuffer, and two lines to Python, the second a denied call. The
// relay must refuse the whole line, not pass it as "plain text" because it
// does not start with '{'. This server is that reader (real CPython), echoing
// each line it was given as a notification.
test('relay attack: a line Python splits at CR into a denied call never reaches a Python reader', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const conf = makeTempDir('adv-python-cr');
  const profile = writeProfile(conf, { mcpcell: { tools: { deny: ['write_file'] } } });
  const server = String.raw`
import io, json, sys
for line in io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8"):
    print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": line}}), flush=True)
`;
  const denied = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{}}}';
  const allowed = '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{}}}';
  const input = [`x\r${denied}`, `"x"\r${denied}`, `1\r${denied}`, `x\u2028${denied}`, allowed].join('\n') + '\n';
  const r = await runInCell(['--permission-profile', profile], ['/usr/bin/python3', '-c', server], { relay: 'on', input });
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const seen = out.filter((m) => m.method === 'notifications/message').map((m) => m.params.data);
  assert.deepEqual(seen, [`${allowed}\n`], 'the Python reader was given only the allowed call');
  assert.deepEqual(out.filter((m) => m.error).map((m) => m.error.code), [-32700, -32700, -32700, -32700], r.stdout);
});

// A cell with a --write grant on the same filesystem as the audit log fills
// it. Before: the calls after that ran and answered as usual and their
// records were never written (a warning on stderr), the first lost record cut
// mid-line. Now the relay fails closed: the answer whose record cannot be
// written is withheld (a JSON-RPC error naming the log's problem), every
// later call is refused the same way, stderr says so once, and the torn
// record is cut off so `audit verify` still finds the chain intact. The
// filesystem is a 1 MiB tmpfs in a private mount namespace (root only).
test('relay attack: a cell that fills the audit log\'s filesystem cannot make its calls go unrecorded',
  { timeout: 60_000 },
  async (t) => {
    if (process.getuid() !== 0) return t.skip('needs root: mounts a small tmpfs in a private mount namespace');
    if (await skipWithoutCell(t)) return;
    const base = makeTempDir('adv-full');
    const server = String.raw`
      const fs = require('fs');
      let buf = '';
      process.stdin.on('data', (d) => {
        buf += d;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const req = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          if (req.params.name === 'fill') try { fs.writeFileSync(process.argv[1] + '/fill', Buffer.alloc(4 << 20)); } catch {}
          process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: req.id, result: { content: [] } }) + '\n');
        }
      });
      process.stdin.on('end', () => process.exit(0));`;
    const call = (id, name) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
    const log = `${base}/calls.jsonl`;
    // The fill leaves the log's last page (tmpfs allocates 4 KiB pages) with room for a few records:
    // 12 calls' records (~450 bytes each) cannot all fit in it.
    const calls = [call(1, 'fill'), ...Array.from({ length: 11 }, (_, i) => call(i + 2, 'read_file'))];
    const argv = runArgv(['--relay=on', '--write', `${base}/w`, '--audit-log', log], [NODE_BIN, '-e', server, `${base}/w`]);
    const script = `mount -t tmpfs -o size=1m,mode=0755 none "${base}" && mkdir -m 0777 "${base}/w" && "$0" "$@";
      echo "=== verify" >&2; "$0" audit verify "${log}" >&2; echo "=== log" >&2; cat "${log}" >&2`;
    const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script, MCPCELL_BIN, ...argv],
      { input: calls.join('\n') + '\n', encoding: 'utf8', timeout: 50_000 });
    const answered = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const [, verify = '', logText = ''] = r.stderr.split(/=== verify\n|=== log\n/);
    const recorded = logText.split('\n').flatMap((l) => { try { return [JSON.parse(l)]; } catch { return []; } })
      .filter((e) => e.event === 'tool_call').map((e) => e.id);
    // Every call the server ran is on the record, or was refused because it could not be.
    for (const a of answered.filter((m) => m.result)) {
      assert.ok(recorded.includes(a.id), `call ${a.id} ran and is not in the log; verify said: ${verify.trim()}\n${r.stderr}`);
    }
    // The log's last page may still hold a record or two after the fill; from the first record that does
    // not fit, every answer is withheld or every call refused, each with the log's problem.
    const first = answered.findIndex((m) => m.error);
    assert.ok(first >= 0, `the filesystem filled and no call was refused: ${r.stdout}`);
    const failed = answered.slice(first);
    assert.deepEqual(failed.map((m) => m.error?.code), failed.map(() => -32004), r.stdout);
    assert.deepEqual(answered.map((m) => m.id), Array.from({ length: 12 }, (_, i) => i + 1), r.stdout);
    for (const m of failed) assert.match(m.error.message, /cannot be written \(.*calls\.jsonl.*No space left on device/);
    assert.match(r.stderr, /mcpcell: relay: the audit log cannot be written .*No space left on device/);
    assert.match(verify, /^ok: \d+ records, \d+ runs, chain intact/, verify);
  });
