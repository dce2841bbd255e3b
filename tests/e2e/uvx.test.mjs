// Issue 14 item 9: uvx:// (Python) servers. mcpcell installs the package
// outside the cell into a per-version venv (Debian's python3 -m venv + pip,
// wheels only, reading the user's own pip.conf), the cell gets the venv
// read-only and runs its console script. No public index is reachable here:
// lib/pypi_index.mjs serves a pure-Python stdio MCP server, built as a wheel,
// from 127.0.0.1. Run as root and as mcpcell-test (scripts/test.sh does both).

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { EXIT, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { PY_PROJECT, pipConfigHome, startIndex } from './lib/pypi_index.mjs';
import { removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

let index;
before(async () => { index = await startIndex(['1.0', '2.0']); });
after(async () => { await index?.close(); removeTempDirs(); });

/** Connects a real SDK client to `mcpcell run SOURCE` and calls the one tool; returns what it said. */
async function callWhoami(t, source, env) {
  const transport = new StdioClientTransport({ command: MCPCELL_BIN, args: ['run', source], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const client = new Client({ name: 'uvx-e2e', version: '0.0.0' });
  t.after(() => client.close().catch(() => {}));
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`connect failed: ${e.message}\nmcpcell stderr:\n${stderr}`);
  }
  const tools = await client.listTools();
  assert.deepEqual(tools.tools.map((x) => x.name), ['whoami']);
  const r = await client.callTool({ name: 'whoami', arguments: {} });
  await client.close();
  return { who: JSON.parse(r.content[0].text), stderr };
}

test('uvx://NAME (unpinned) installs the newest wheel through the user\'s pip.conf and answers a real SDK client from a cell', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const { env, cache } = pipConfigHome(index.url, 'uvx-latest');
  const { who, stderr } = await callWhoami(t, `uvx://${PY_PROJECT}`, env);
  assert.equal(who.version, '2.0', 'the newest version the index offers');
  const venv = path.join(cache, 'mcpcell', 'uvx', `${PY_PROJECT}@2.0`);
  assert.equal(who.prefix, venv, 'the server\'s Python runs in the cached venv (sys.prefix)');
  assert.ok(who.module.startsWith(`${venv}/lib/`), who.module);
  assert.equal(who.can_write_module, false, 'the venv is read-only in the cell');
  assert.match(stderr, /installing e2e-pyserver==2\.0 outside the cell/);
  assert.match(stderr, /Successfully installed e2e-pyserver-2\.0/, 'pip\'s progress is on stderr');
  assert.ok(index.requests.some((q) => q.includes('e2e_pyserver-2.0-py3-none-any.whl')), index.requests.join(', '));
});

test('uvx://NAME@1.0: the pin installs that version; install, run and cache list agree; the run after install fetches nothing', { timeout: 180_000 }, async (t) => {
  const { env, cache } = pipConfigHome(index.url, 'uvx-pin');
  const source = `uvx://${PY_PROJECT}@1.0`;
  const inst = await runMcpcell(['install', source], { env, guardMs: 120_000 });
  assert.equal(inst.code, 0, inst.stderr);
  assert.match(inst.stderr, /e2e-pyserver@1\.0 installed in /);
  assert.equal(inst.stdout, '');
  const again = await runMcpcell(['install', source], { env });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /already installed/);

  const list = await runMcpcell(['cache', 'list', '--json'], { env });
  assert.equal(list.code, 0, list.stderr);
  const listed = JSON.parse(list.stdout).map((p) => [p.kind, p.package, p.version]);
  assert.deepEqual(listed, [['uvx', PY_PROJECT, '1.0']]);

  if (await skipWithoutCell(t)) return;
  const before = index.requests.length;
  const { who, stderr } = await callWhoami(t, source, env);
  assert.equal(who.version, '1.0');
  assert.equal(who.prefix, path.join(cache, 'mcpcell', 'uvx', `${PY_PROJECT}@1.0`));
  assert.doesNotMatch(stderr, /installing/);
  assert.equal(index.requests.length, before, 'a pinned, installed version asks the index nothing');

  const pruned = await runMcpcell(['cache', 'prune', '--all'], { env });
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.match(pruned.stderr, /removed e2e-pyserver@1\.0/);
  assert.deepEqual(readdirSync(path.join(cache, 'mcpcell', 'uvx')), []);
});

test('an index that refuses connections: exit 125 naming the source and pip\'s index setting, nothing left in the cache', { timeout: 120_000 }, async () => {
  const { env, cache } = pipConfigHome('http://127.0.0.1:9/simple/', 'uvx-down');
  for (const source of [`uvx://${PY_PROJECT}@1.0`, `uvx://${PY_PROJECT}`]) {
    const r = await runMcpcell(['run', source], { env, input: '', guardMs: 90_000 });
    assert.equal(r.code, EXIT.setupFailed, r.stderr);
    assert.match(r.stderr, new RegExp(`could not install ${source.replace(/[.@/]/g, '\\$&')} .*pip's index setting \\(pip config list; PIP_INDEX_URL\\)`));
    assert.equal(r.stdout, '');
  }
  const uvx = path.join(cache, 'mcpcell', 'uvx');
  assert.deepEqual(existsSync(uvx) ? readdirSync(uvx) : [], [], 'no half-made venv is left');
});

test('an index that accepts and never answers: stopped at --install-timeout with a message naming it', { timeout: 120_000 }, async (t) => {
  const silent = await startIndex([], 'silent');
  t.after(() => silent.close());
  const { env } = pipConfigHome(silent.url, 'uvx-hang');
  const r = await runMcpcell(['run', '--install-timeout', '4s', `uvx://${PY_PROJECT}@1.0`], { env, input: '', guardMs: 90_000 });
  assert.equal(r.code, EXIT.setupFailed, r.stderr);
  assert.match(r.stderr, /did not finish within 4s and was stopped: is the package index reachable/);
  assert.match(r.stderr, /--install-timeout, e\.g\. 8s/);
  assert.ok(silent.requests.length > 0, 'pip did ask the index');
});

test('names and versions with shell or path metacharacters are refused before pip runs', { timeout: 120_000 }, async () => {
  const { env, home } = pipConfigHome(index.url, 'uvx-names');
  const before = index.requests.length;
  const bad = ['uvx://foo;touch${IFS}/tmp/pwned', 'uvx://$(id)', 'uvx://../../etc/passwd', 'uvx://-rrequirements.txt',
    'uvx://--index-url=http://127.0.0.1:9/', 'uvx://foo@1.0;id', 'uvx://foo@--index-url=http://127.0.0.1:9/',
    'uvx://foo@>=1', 'uvx://foo@1.0/../../x', 'uvx://foo[bar]', 'uvx://foo bar', 'uvx://foo/bar', 'uvx://foo\nbar',
    'uvx://http://127.0.0.1:9/x.whl', 'uvx://./x.whl', 'uvx://foo@1.0+local', 'uvx://foo%2f..'];
  for (const source of bad) {
    const r = await runMcpcell(['run', source], { env, input: '' });
    assert.equal(r.code, EXIT.usage, `${JSON.stringify(source)}: ${r.stderr}`);
    assert.match(r.stderr, /parse server|unknown server spelling/, JSON.stringify(source));
    const i = await runMcpcell(['install', source], { env });
    assert.notEqual(i.code, 0, `install ${JSON.stringify(source)}`);
  }
  assert.equal(index.requests.length, before, 'pip never ran');
  assert.ok(!existsSync(path.join(home, '.cache', 'mcpcell', 'uvx')), 'nothing was installed');
});

test('the policy judges uvx sources: {"source":"uvx"} deny refuses before anything is installed', { timeout: 60_000 }, async () => {
  const { env, home } = pipConfigHome(index.url, 'uvx-policy');
  const policy = path.join(home, 'policy.json');
  writeReadableFile(policy, '{"rules":[{"condition":{"source":"uvx"},"action":"deny"}]}\n');
  const before = index.requests.length;
  const r = await runMcpcell(['run', '--policy', policy, `uvx://${PY_PROJECT}@1.0`], { env, input: '' });
  assert.equal(r.code, EXIT.denied, r.stderr);
  assert.match(r.stderr, /source kind is uvx/);
  assert.equal(index.requests.length, before, 'a denied server is not installed');
});

test('a cell may not write the uvx cache (its code would run in a later launch of any uvx server)', { timeout: 60_000 }, async () => {
  const { env, cache } = pipConfigHome(index.url, 'uvx-reach');
  const uvx = path.join(cache, 'mcpcell', 'uvx');
  mkdirSync(uvx, { recursive: true });
  const r = await runMcpcell(['run', '--dry-run', '--write', uvx, `uvx://${PY_PROJECT}@1.0`], { env, input: '' });
  assert.notEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, /mcpcell's uvx cache/);
});
