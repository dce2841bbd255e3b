// Issue 14 item 7: `mcpcell run [OPTIONS] SERVER [ARGS...]` needs no `--`.
// The rule (README "Server arguments", src/cli/commands.h): with no `--` on
// the line, every word after SERVER is the server's, verbatim, flags
// included, as in `docker run IMAGE ARGS`; with a `--`, the words before it
// are mcpcell's options and SERVER in any order (the seed's spelling) and the
// server's arguments follow it. The MCP Inspector drops a single `--`, so
// its users could not reach a server's arguments at all; here the real
// Inspector CLI (tests/e2e/node_modules) starts mcpcell and the server
// reports the argv it got.
//
// The server is an npx:// package put in the npx cache by the test (a pinned
// version that is present is not installed again, so no network): a
// dependency-free MCP server whose one tool answers with its own argv.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { EXIT, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, NODE_MODULES } from './lib/paths.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);

const PKG = 'argv-echo';
const SOURCE = `npx://${PKG}@1.0.0`;
/** A hang guard for the Inspector's run, not a measurement. */
const INSPECTOR_GUARD_MS = 90_000;

// A newline-delimited JSON-RPC MCP server in plain node: initialize,
// tools/list with one tool, tools/call answering JSON.stringify(argv).
const SERVER_JS = `#!/usr/bin/env node
const argv = process.argv.slice(2);
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
let buf = '';
process.stdin.setEncoding('utf8').on('data', (d) => {
  buf += d;
  for (let nl; (nl = buf.indexOf('\\n')) >= 0;) {
    const line = buf.slice(0, nl).trim();
    buf = buf.slice(nl + 1);
    if (!line) continue;
    const m = JSON.parse(line);
    if (m.id === undefined) continue;
    if (m.method === 'initialize') {
      send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion,
        capabilities: { tools: {} }, serverInfo: { name: 'argv-echo', version: '1.0.0' } } });
    } else if (m.method === 'tools/list') {
      send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'argv', description: 'the argv this server got',
        inputSchema: { type: 'object', properties: {} } }] } });
    } else if (m.method === 'tools/call') {
      send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'ARGV=' + JSON.stringify(argv) }] } });
    } else {
      send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no such method' } });
    }
  }
});
`;

/** A HOME whose ~/.cache/mcpcell/npx holds argv-echo@1.0.0, readable by any uid (a root run's cell uid). */
function homeWithServer() {
  const home = makeTempDir('argv-home');
  const pkg = path.join(home, '.cache', 'mcpcell', 'npx', `${PKG}@1.0.0`, 'node_modules', PKG);
  mkdirSync(pkg, { recursive: true });
  for (let d = pkg; d !== home; d = path.dirname(d)) chmodSync(d, 0o755);
  writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: PKG, version: '1.0.0', bin: { [PKG]: 'cli.js' } }));
  writeFileSync(path.join(pkg, 'cli.js'), SERVER_JS);
  chmodSync(path.join(pkg, 'package.json'), 0o644);
  chmodSync(path.join(pkg, 'cli.js'), 0o755);
  return home;
}

const HOME = homeWithServer();
const ENV = { ...process.env, HOME };
delete ENV.XDG_CACHE_HOME;

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '0' } } });
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'argv', arguments: {} } });

/** The argv the server reported, from mcpcell's stdout (null when it reported none). */
function reportedArgv(stdout) {
  const m = stdout.match(/ARGV=(\[.*?\])"/);
  return m ? JSON.parse(JSON.parse(`"${m[1]}"`)) : null;
}

async function argvOf(args) {
  const r = await runMcpcell(args, { env: ENV, input: `${INIT}\n${CALL}\n` });
  return { ...r, argv: reportedArgv(r.stdout) };
}

const FLAGS = ['/data', '--read-only', '--verbose', '-v', '--policy=x.json', '--port', '8080'];

test('no --: every word after SERVER is the server\'s, flags included (mcpcell run SERVER ARGS)',
  { timeout: 60_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const r = await argvOf(['run', SOURCE, ...FLAGS]);
    assert.deepEqual(r.argv, FLAGS, `exit ${r.code}; stderr:\n${r.stderr}`);
    // --verbose spells one of mcpcell's own options: it went to the server, and mcpcell says so.
    assert.match(r.stderr, /note: '--verbose' comes after SERVER, so it goes to the server/, r.stderr);
    assert.doesNotMatch(r.stderr, /cell: backend/, 'mcpcell took the server\'s --verbose as its own -v');
  });

test('no --: mcpcell\'s options go before SERVER, and --isolate[=LEVEL] before SERVER still reads SERVER',
  { timeout: 60_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const before = await argvOf(['run', '--relay=off', '--timeout', '30s', SOURCE, 'alpha', '--read-only']);
    assert.deepEqual(before.argv, ['alpha', '--read-only'], before.stderr);
    // `--isolate SERVER ARGS`: the optional level swallows SERVER; the words after it stay the server's.
    const isolate = await argvOf(['run', '--isolate', SOURCE, 'alpha', '--read-only']);
    assert.deepEqual(isolate.argv, ['alpha', '--read-only'], isolate.stderr);
  });

test('with --: the seed\'s spelling (options after SERVER, then --) keeps working', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const seed = await argvOf(['run', SOURCE, '--relay=off', '--timeout', '30s', '--', 'alpha', '--read-only', '--', 'x']);
  assert.deepEqual(seed.argv, ['alpha', '--read-only', '--', 'x'], seed.stderr);
  const empty = await argvOf(['run', SOURCE, '--relay', 'off', '--']);
  assert.deepEqual(empty.argv, [], empty.stderr);
});

test('an argument between SERVER and a later -- is refused, naming it and both spellings', { timeout: 30_000 }, async () => {
  const r = await runMcpcell(['run', SOURCE, 'alpha', '--', 'beta'], { env: ENV, input: '' });
  assert.equal(r.code, EXIT.usage, r.stderr);
  assert.match(r.stderr, /'alpha' follows SERVER, and a -- comes later/, r.stderr);
  assert.match(r.stderr, /leave out the -- to give the server every word after SERVER/, r.stderr);
});

test('--dry-run and policy explain read the line by the same rule', { timeout: 30_000 }, async () => {
  const dry = await runMcpcell(['run', '--dry-run', SOURCE, 'alpha', '--read-only'], { env: ENV });
  assert.equal(dry.code, 0, dry.stderr);
  const argv = JSON.parse(dry.stdout).cell.argv;
  assert.deepEqual(argv.slice(-2), ['alpha', '--read-only'], dry.stdout);
  const explained = await runMcpcell(['policy', 'explain', '--json', SOURCE, 'alpha', '--read-only'], { env: ENV });
  assert.equal(explained.code, 0, explained.stderr);
  assert.equal(JSON.parse(explained.stdout).source.source, SOURCE);
  // After SERVER, even mcpcell's --dry-run is the server's: the note says so.
  const late = await runMcpcell(['policy', 'explain', SOURCE, '--json'], { env: ENV });
  assert.match(late.stderr, /note: '--json' comes after SERVER/, late.stderr);
});

/** Runs the real Inspector CLI (node_modules/.bin would need npx: run its entry with node). */
function inspector(args) {
  const entry = path.join(NODE_MODULES, '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, ...args], {
      cwd: HOME,
      env: { ...ENV, PATH: `${path.dirname(MCPCELL_BIN)}:${ENV.PATH ?? '/usr/bin:/bin'}`, MCP_INSPECTOR_SECRET_STORE: 'memory' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the Inspector still ran after ${INSPECTOR_GUARD_MS} ms; stderr:\n${stderr}`));
    }, INSPECTOR_GUARD_MS);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

const CALL_ARGV = ['--cli', '--method', 'tools/call', '--tool-name', 'argv'];

/** The argv in the Inspector's printed tool result. */
function inspectorArgv(stdout) {
  const m = stdout.match(/ARGV=(\[.*?\])"/);
  return m ? JSON.parse(JSON.parse(`"${m[1]}"`)) : null;
}

test('the real MCP Inspector: a server\'s arguments arrive intact, from its command line and from a config file',
  { timeout: 300_000 }, async (t) => {
    if (await skipWithoutCell(t)) return;
    const serverArgs = ['/data', '--read-only', '--port', '8080'];
    // The Inspector's own `--` goes first: it drops one, and then nothing of mcpcell's line is lost.
    const dashed = await inspector([...CALL_ARGV, '--', 'mcpcell', 'run', SOURCE, ...serverArgs]);
    assert.deepEqual(inspectorArgv(dashed.stdout), serverArgs, `exit ${dashed.code}\n${dashed.stdout}\n${dashed.stderr}`);
    // The seed's spelling through the Inspector: it drops mcpcell's `--`, and the server still gets its words.
    const dropped = await inspector([...CALL_ARGV, 'mcpcell', 'run', SOURCE, '--', 'alpha', 'beta']);
    assert.deepEqual(inspectorArgv(dropped.stdout), ['alpha', 'beta'], `exit ${dropped.code}\n${dropped.stdout}\n${dropped.stderr}`);
    // A client's config: args as a client passes them, no shell, no `--`.
    const config = path.join(HOME, 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { echo: { command: 'mcpcell', args: ['run', '--relay=off', SOURCE, ...serverArgs] } } }));
    const viaConfig = await inspector([...CALL_ARGV, '--config', config, '--server', 'echo']);
    assert.deepEqual(inspectorArgv(viaConfig.stdout), serverArgs, `exit ${viaConfig.code}\n${viaConfig.stdout}\n${viaConfig.stderr}`);
  });
