// Policy end to end: the real binary decides from a policy file, the real
// @modelcontextprotocol/server-filesystem is installed from npm by mcpcell
// (outside the cell, into a test-owned cache) and driven by the real SDK
// client, and every run's decision is on the audit log.
//
// The npm install happens once per run of this file (the first subtest); the
// later ones reuse the cache through XDG_CACHE_HOME.

import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { EXIT, resultText, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, NODE_BIN, nodeCellArgs } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const FS_SERVER = 'npx://@modelcontextprotocol/server-filesystem';
const STORY_POLICY = '{ "rules": [{ "condition": "untrusted_source", "action": "isolate" }] }\n';
/** Generous: the first run installs the server from npm (~20 s), later ones reuse the cache. */
const NPX_TIMEOUT_MS = 120_000;

// One npx cache for the whole file, owned by this run (root and the
// unprivileged run never share it). World-traversable: the cell's uid is not
// ours when running as root, and the cache dir is bound into the cell.
const CACHE_HOME = makeTempDir('policy-xdg-cache');

/**
 * Where npm (run by mcpcell to install npx sources) finds the CAs this machine
 * trusts. Node trusts only its bundled CAs unless NODE_EXTRA_CA_CERTS says
 * otherwise; scripts/test.sh runs the unprivileged pass under `env -i`, which
 * drops it, so behind a TLS-inspecting proxy npm would fail (and retry for
 * minutes). The system bundle adds nothing the machine does not already trust.
 */
function caEnv() {
  if (process.env.NODE_EXTRA_CA_CERTS) return { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS };
  const bundle = '/etc/ssl/certs/ca-certificates.crt';
  return existsSync(bundle) ? { NODE_EXTRA_CA_CERTS: bundle } : {};
}

/** The environment mcpcell gets: ours plus the test-owned npx cache. */
function mcpcellEnv() {
  return { ...process.env, ...caEnv(), XDG_CACHE_HOME: CACHE_HOME };
}

/**
 * Processes started for this file's npx cache (their environment names
 * CACHE_HOME, unique to this run): an npm that outlived a killed mcpcell
 * would hold the client's pipes open and keep the test file from ending.
 */
function killLeftoverInstallers() {
  const mark = `XDG_CACHE_HOME=${CACHE_HOME}`;
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    if (Number(pid) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(mark)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // exited meanwhile, or not ours
    }
  }
}
after(killLeftoverInstallers);

/** A policy file (world-readable) in a fresh directory; returns its absolute path. */
function writePolicy(text, name = 'policy.json') {
  const file = path.join(makeTempDir('policy'), name);
  writeReadableFile(file, text);
  return file;
}

/** Events of a JSON-lines audit log, each line parsed (a bad line fails the test). */
function auditEvents(file) {
  const text = readFileSync(file, 'utf8');
  return text.split('\n').filter(Boolean).map((line, i) => {
    try {
      return JSON.parse(line);
    } catch (e) {
      throw new Error(`audit log ${file} line ${i + 1} is not JSON (${e.message}): ${line}`);
    }
  });
}

/** The one event of `kind` in `events` (fails when there is not exactly one). */
function onlyEvent(events, kind) {
  const found = events.filter((e) => e.event === kind);
  assert.equal(found.length, 1, `expected one "${kind}" event, got ${found.length}: ${JSON.stringify(events)}`);
  return found[0];
}

/** A shell command that prints uid and user namespace, then tries to create `marker`. */
function probeCommand(marker) {
  return ['/bin/sh', '-c', `id -u; readlink /proc/self/ns/user; touch '${marker}' 2>/dev/null; echo probed`];
}

/**
 * Starts `mcpcell <args>` as the SDK client's stdio server (cwd `cwd`), with a
 * client that offers MCP roots (answered by `roots()`). Returns
 * { client, connect(), stderr(), exited } where `exited` resolves to mcpcell's
 * own {code, signal}. A mcpcell still running when the test ends is killed.
 */
function startMcpcellServer(t, args, { cwd, roots }) {
  const transport = new StdioClientTransport({
    command: MCPCELL_BIN,
    args,
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', LANG: 'C.UTF-8',
      ...caEnv(), XDG_CACHE_HOME: CACHE_HOME },
    stderr: 'pipe',
  });
  let stderrText = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderrText += d));
  let child = null;
  let resolveExit;
  const exited = new Promise((r) => (resolveExit = r));
  t.after(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    killLeftoverInstallers();
    transport.stderr?.destroy();
  });
  // Same as lib/mcpcell.mjs: the SDK keeps its child private; mcpcell's exit
  // status is part of what is tested.
  const originalStart = transport.start.bind(transport);
  transport.start = () => {
    const started = originalStart();
    child = transport._process;
    if (!child || typeof child.on !== 'function') {
      throw new Error('SDK StdioClientTransport no longer exposes _process: update policy.test.mjs');
    }
    child.on('exit', (code, signal) => resolveExit({ code, signal }));
    return started;
  };
  const client = new Client({ name: 'mcpcell-policy-e2e', version: '0.0.0' },
    { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots() }));
  return {
    client,
    exited,
    // initialize waits for the npm install that precedes the server's start.
    connect: () => client.connect(transport, { timeout: NPX_TIMEOUT_MS }),
    stderr: () => stderrText,
  };
}

const readText = (client, p) => client.callTool({ name: 'read_text_file', arguments: { path: p } });

/** Polls list_allowed_directories until `want` is among them (bounded wait, not a timing check). */
async function waitForAllowedDir(client, want) {
  let last = '';
  for (let i = 0; i < 100; i++) {
    last = resultText(await client.callTool({ name: 'list_allowed_directories', arguments: {} }));
    if (last.split('\n').map((l) => l.trim()).includes(want)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`the server never listed ${want} as allowed after the roots change; last answer:\n${last}`);
}

/** Set by the user-story test: the installed server's entry script (from the launch event). */
let installedEntry = null;

test('user story: policy "untrusted_source → isolate" runs npx server-filesystem in a cell, decided by rule 0, on the audit log', { timeout: NPX_TIMEOUT_MS + 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const work = makeTempDir('story-cwd');
  writeReadableFile(path.join(work, 'policy.json'), STORY_POLICY);
  const auditLog = path.join(work, 'audit.jsonl');
  // Bound read-write by the registry entry's path_args: as root the cell user
  // (a host uid of its own for the run) must be able to write it, so it is world-writable.
  const data = makeWritableDir('story-data');
  writeReadableFile(path.join(data, 'inside.txt'), 'alpha-inside-data');
  const outside = makeTempDir('story-outside'); // exists on the host, never given to the cell
  const outsideFile = path.join(outside, 'host-only.txt');
  writeReadableFile(outsideFile, 'beta-host-only');

  let roots = [{ uri: pathToFileURL(data).href, name: 'data' }];
  const s = startMcpcellServer(t, ['run', FS_SERVER, '--relay=on', '--policy', './policy.json', '--audit-log', auditLog, '--', data],
    { cwd: work, roots: () => roots });
  try {
    await s.connect();
  } catch (e) {
    assert.fail(`connect through mcpcell failed: ${e.message}\nmcpcell stderr:\n${s.stderr()}`);
  }
  const { client } = s;

  const tools = (await client.listTools()).tools.map((x) => x.name);
  for (const name of ['read_text_file', 'write_file', 'list_allowed_directories']) {
    assert.ok(tools.includes(name), `tool ${name} not listed: ${tools.join(', ')}`);
  }
  const inside = await readText(client, path.join(data, 'inside.txt'));
  assert.equal(inside.isError, undefined, resultText(inside));
  assert.equal(resultText(inside), 'alpha-inside-data');
  const written = await client.callTool({ name: 'write_file',
    arguments: { path: path.join(data, 'from-cell.txt'), content: 'gamma-written' } });
  assert.equal(written.isError, undefined, resultText(written));
  assert.equal(readFileSync(path.join(data, 'from-cell.txt'), 'utf8'), 'gamma-written');

  // The cell, not the server, decides: the client now offers "/" as a root, so
  // the SERVER allows every path (the control below shows this very install
  // reading the host file when it runs without a cell). Inside the cell the
  // outside directory does not exist.
  roots = [{ uri: pathToFileURL(data).href, name: 'data' }, { uri: 'file:///', name: 'everything' }];
  await client.sendRootsListChanged();
  await waitForAllowedDir(client, '/');
  const blocked = await readText(client, outsideFile);
  assert.equal(blocked.isError, true, `the cell let the server read ${outsideFile}: ${resultText(blocked)}`);
  assert.doesNotMatch(resultText(blocked), /beta-host-only/);
  assert.match(resultText(blocked), /ENOENT|no such file|Parent directory does not exist|EACCES: permission denied, scandir '\/'/i);
  const listed = await client.callTool({ name: 'list_directory', arguments: { path: path.dirname(outside) } });
  assert.doesNotMatch(resultText(listed), new RegExp(path.basename(outside)),
    `the cell shows the host's ${path.dirname(outside)}: ${resultText(listed)}`);

  await client.close();
  assert.deepEqual(await s.exited, { code: 0, signal: null }, `mcpcell stderr:\n${s.stderr()}`);
  // A fresh cache: this run installed the server, outside the cell, and said so.
  assert.match(s.stderr(), /installing @modelcontextprotocol\/server-filesystem@\S+ outside the cell/);

  // The audit log: file 0600, decision by rule 0, a native launch, the exit.
  assert.equal(statSync(auditLog).mode & 0o777, 0o600, 'audit log not created 0600');
  const events = auditEvents(auditLog);
  const decision = onlyEvent(events, 'decision');
  assert.equal(decision.server, FS_SERVER);
  assert.equal(decision.action, 'isolate');
  assert.equal(decision.rule, './policy.json rule 0');
  assert.match(decision.reason, /^\.\/policy\.json rule 0 \(isolate\): .*matches no trusted_sources glob/);
  assert.equal(decision.trust_facts.kind, 'npx');
  assert.equal(decision.trust_facts.pinned, false);
  assert.equal(decision.trust_facts.registry_name, 'filesystem');
  assert.deepEqual(decision.permissions.write, [data]);
  assert.equal(decision.permissions.network.mode, 'none');
  const launch = onlyEvent(events, 'launch');
  assert.equal(launch.backend, 'native');
  assert.ok(launch.cell_id, `launch event without cell_id: ${JSON.stringify(launch)}`);
  const exit = onlyEvent(events, 'exit');
  assert.equal(exit.cell_id, launch.cell_id);
  assert.equal(exit.status, 0);
  // The run's lifecycle, in order; the relay's records of the conversation lie between launch and exit.
  const kinds = events.map((e) => e.event);
  assert.deepEqual(kinds.filter((k) => ['decision', 'launch', 'exit'].includes(k)), ['decision', 'launch', 'exit']);
  assert.ok(kinds.indexOf('session_start') > kinds.indexOf('launch') && kinds.indexOf('session_end') < kinds.indexOf('exit'),
    kinds.join(','));

  // The install lives in the test's cache, outside the cell's writable paths.
  const entry = launch.argv?.find((a) => a.startsWith(path.join(CACHE_HOME, 'mcpcell', 'npx') + '/'));
  assert.ok(entry && existsSync(entry), `launch argv does not run from ${CACHE_HOME}: ${JSON.stringify(launch.argv)}`);
  installedEntry = entry;

  // Control: the same installed server with the same roots, without a cell,
  // reads the host file — so the refusal above was the cell's.
  const plain = new Client({ name: 'policy-e2e-control', version: '0' }, { capabilities: { roots: {} } });
  plain.setRequestHandler(ListRootsRequestSchema, async () => ({ roots }));
  try {
    await plain.connect(new StdioClientTransport({ command: NODE_BIN, args: [entry, data], stderr: 'ignore' }));
    await waitForAllowedDir(plain, '/');
    const control = await readText(plain, outsideFile);
    assert.equal(resultText(control), 'beta-host-only', `control run could not read the host file: ${resultText(control)}`);
  } finally {
    await plain.close();
  }
});

test('policy explain --json: the rule trace for the user story, from the same cache (no install)', { timeout: 60_000 }, async () => {
  const policy = writePolicy(STORY_POLICY);
  for (const spelling of [FS_SERVER, 'npx/@modelcontextprotocol/server-filesystem']) {
    const r = await runMcpcell(['policy', 'explain', '--policy', policy, '--json', spelling], { env: mcpcellEnv() });
    assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
    let doc;
    try {
      doc = JSON.parse(r.stdout);
    } catch (e) {
      assert.fail(`explain --json is not JSON (${e.message}):\n${r.stdout}`);
    }
    assert.equal(doc.source.source, FS_SERVER, `${spelling} is not read as ${FS_SERVER}`);
    assert.equal(doc.registry_entry, 'filesystem');
    assert.equal(doc.decision.action, 'isolate');
    assert.equal(doc.decision.rule_index, 0);
    assert.deepEqual(doc.decision.rules.map((x) => [x.index, x.condition, x.result]), [[0, 'untrusted_source', 'held']]);
    assert.match(doc.decision.rules[0].why, /trusted_sources/);
    assert.equal(doc.trust_facts.in_registry, true);
    assert.equal(doc.trust_facts.registry_tier, 'official');
    assert.equal(doc.permissions.network.mode, 'none');
  }
});

// `policy explain` takes the arguments after `--` as run does: a registry
// entry's directory arguments make requests_write hold in both.
test('explain agrees with run for a registry entry\'s directory arguments (requests_write)', { timeout: 30_000 }, async () => {
  const policy = writePolicy('{"rules":[{"condition":"requests_write","action":"deny"}]}\n');
  const dir = makeTempDir('explain-args');
  const explained = await runMcpcell(['policy', 'explain', 'filesystem', '--policy', policy, '--json', '--', dir], { env: mcpcellEnv() });
  assert.equal(explained.code, 0, explained.stderr);
  const dry = await runMcpcell(['run', 'filesystem', '--policy', policy, '--dry-run', '--', dir], { env: mcpcellEnv() });
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(JSON.parse(dry.stdout).decision.action, 'deny');
  assert.equal(JSON.parse(explained.stdout).decision.action, 'deny', 'explain and run decide differently');
});

test('registry: list has at least 20 servers; info filesystem shows its permissions', { timeout: 30_000 }, async () => {
  const list = await runMcpcell(['registry', 'list']);
  assert.equal(list.code, 0, list.stderr);
  const rows = list.stdout.split('\n').filter((l) => /^\S+\s+(official|verified|community)\s/.test(l));
  assert.ok(rows.length >= 20, `registry list has ${rows.length} entries:\n${list.stdout}`);
  assert.ok(rows.some((l) => l.startsWith('filesystem ') && l.includes(FS_SERVER)), list.stdout);

  const info = await runMcpcell(['registry', 'info', 'filesystem']);
  assert.equal(info.code, 0, info.stderr);
  assert.match(info.stdout, /source:\s+npx:\/\/@modelcontextprotocol\/server-filesystem@\d/);
  assert.match(info.stdout, /tier:\s+official/);
  assert.match(info.stdout, /permissions/);
  assert.match(info.stdout, /write:\s+the directories given as arguments/);
  assert.match(info.stdout, /network:\s+none/);
});

test('deny: {"source":"command"} → exit 123 naming the rule; the command never ran', { timeout: 30_000 }, async () => {
  const policy = writePolicy('{"rules":[{"condition":{"source":"command"},"action":"deny"}]}\n');
  const dir = makeWritableDir('deny-marker');
  const marker = path.join(dir, 'ran');
  const auditLog = path.join(makeTempDir('deny-audit'), 'audit.jsonl');
  const r = await runMcpcell(['run', '--policy', policy, '--audit-log', auditLog, '--', '/bin/sh', '-c', `touch '${marker}'`]);
  assert.equal(r.code, EXIT.denied, `stderr:\n${r.stderr}`);
  assert.ok(r.stderr.includes(`denied by ${policy} rule 0`), r.stderr);
  assert.match(r.stderr, /source kind is command/);
  assert.equal(existsSync(marker), false, 'a denied command ran');
  const events = auditEvents(auditLog);
  assert.deepEqual(events.map((e) => e.event), ['decision']);
  assert.equal(events[0].action, 'deny');
  assert.equal(events[0].rule, `${policy} rule 0`);
});

test('deny also wins over --isolate (which only tightens)', { timeout: 30_000 }, async () => {
  const policy = writePolicy('{"rules":[{"condition":{"source":"command"},"action":"deny"}]}\n');
  const marker = path.join(makeWritableDir('deny-isolate'), 'ran');
  const r = await runMcpcell(['run', '--isolate', '--policy', policy, '--', '/bin/sh', '-c', `touch '${marker}'`]);
  assert.equal(r.code, EXIT.denied, `stderr:\n${r.stderr}`);
  assert.equal(existsSync(marker), false);
});

test('allow only by a rule: "always → allow" runs without a cell (same uid, same user namespace)', { timeout: 30_000 }, async () => {
  const policy = writePolicy('{"rules":[{"condition":"always","action":"allow"}]}\n');
  const marker = path.join(makeTempDir('allow-marker'), 'ran'); // ours, not world-writable
  const auditLog = path.join(makeTempDir('allow-audit'), 'audit.jsonl');
  const r = await runMcpcell(['run', '--relay=off', '--policy', policy, '--audit-log', auditLog, '--', ...probeCommand(marker)]);
  assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
  const [uid, ns] = r.stdout.split('\n');
  assert.equal(uid, String(process.getuid()));
  assert.equal(ns, readlinkSync('/proc/self/ns/user'));
  assert.ok(existsSync(marker), 'the allowed command could not write to the host');
  assert.ok(r.stderr.includes(`running WITHOUT a cell, allowed by ${policy} rule 0`), r.stderr);
  const decision = onlyEvent(auditEvents(auditLog), 'decision');
  assert.equal(decision.action, 'allow');
  assert.equal(decision.rule, `${policy} rule 0`);
});

// One PATH lookup (src/util/path_search.h): the program a run without a cell
// executes is the file the decision names (trust_facts.local_path). Before,
// the policy's lookup skipped an empty PATH entry while execvpe read it as the
// cwd, so ./NAME ran while the decision named another file.
test('allowed without a cell: the program that runs is the file the decision names, for empty, ./ and relative PATH entries', { timeout: 60_000 }, async () => {
  const policy = writePolicy('{"rules":[{"condition":"always","action":"allow"}]}\n');
  const cwd = makeTempDir('path-cwd');
  const bin = makeTempDir('path-bin');
  const name = 'mcpcell-path-probe';
  for (const [dir, word] of [[cwd, 'cwd'], [bin, 'bin'], [path.join(cwd, 'rel'), 'rel']]) {
    if (word === 'rel') mkdirSync(dir);
    writeFileSync(path.join(dir, name), `#!/bin/sh\necho ${word}\n`, { mode: 0o755 });
  }
  const cases = [
    [`:${bin}:/usr/bin:/bin`, 'cwd', path.join(cwd, name)],
    [`${bin}::/usr/bin:/bin`, 'bin', path.join(bin, name)],
    [`/usr/bin:/bin:`, 'cwd', path.join(cwd, name)],
    [`./:${bin}`, 'cwd', path.join(cwd, name)],
    [`rel:${bin}`, 'rel', path.join(cwd, 'rel', name)],
  ];
  for (const [PATH, ran, file] of cases) {
    const auditLog = path.join(makeTempDir('path-audit'), 'audit.jsonl');
    const r = await runMcpcell(['run', '--relay=off', '--policy', policy, '--audit-log', auditLog, '--', name],
      { cwd, env: { ...process.env, PATH } });
    assert.equal(r.code, 0, `PATH=${PATH} stderr:\n${r.stderr}`);
    assert.equal(r.stdout.trim(), ran, `PATH=${PATH}: another program ran`);
    const decision = onlyEvent(auditEvents(auditLog), 'decision');
    assert.equal(decision.trust_facts.local_path, file, `PATH=${PATH}: the decision names another file than the one that ran`);
  }
});

test('"default": "allow" is refused: only a rule can allow; nothing runs', { timeout: 30_000 }, async () => {
  const policy = writePolicy('{"rules":[],"default":"allow"}\n');
  const marker = path.join(makeWritableDir('default-allow'), 'ran');
  const r = await runMcpcell(['run', '--policy', policy, '--', '/bin/sh', '-c', `touch '${marker}'`]);
  assert.equal(r.code, EXIT.usage, `stderr:\n${r.stderr}`);
  assert.ok(r.stderr.includes(`${policy}: at $.default`), r.stderr);
  assert.match(r.stderr, /default cannot be allow/);
  assert.equal(existsSync(marker), false);
});

test('warn falls through to the default (isolate): warned, then run in a cell', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const policy = writePolicy(JSON.stringify({
    rules: [{ name: 'note-it', condition: 'always', action: 'warn', message: 'warn-message-7f3' }],
    default: 'isolate',
  }));
  const marker = path.join(makeTempDir('warn-marker'), 'ran');
  const auditLog = path.join(makeTempDir('warn-audit'), 'audit.jsonl');
  const r = await runMcpcell(['run', '--relay=off', '--policy', policy, '--audit-log', auditLog, '--', ...probeCommand(marker)]);
  assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
  const [uid, ns, probed] = r.stdout.split('\n');
  assert.equal(probed, 'probed', r.stdout);
  assert.equal(uid, '1000', 'not the cell user');
  assert.notEqual(ns, readlinkSync('/proc/self/ns/user'), 'ran in our own user namespace');
  assert.equal(existsSync(marker), false, 'the cell wrote to a host directory it was not given');
  assert.match(r.stderr, /warning: .*rule 0 "note-it": warn-message-7f3/);
  const events = auditEvents(auditLog);
  const decision = onlyEvent(events, 'decision');
  assert.equal(decision.action, 'isolate');
  assert.equal(decision.rule, `${policy} default`);
  assert.ok(decision.warnings.some((w) => w.includes('warn-message-7f3')), JSON.stringify(decision.warnings));
  assert.equal(onlyEvent(events, 'launch').backend, 'native');
});

test('warn falls through to the next rule: rule 1 (deny) decides', { timeout: 30_000 }, async () => {
  const policy = writePolicy(JSON.stringify({
    rules: [
      { condition: 'always', action: 'warn', message: 'first-warn' },
      { condition: { source: 'command' }, action: 'deny' },
      { condition: 'always', action: 'allow' },
    ],
  }));
  const marker = path.join(makeWritableDir('warn-deny'), 'ran');
  const r = await runMcpcell(['run', '--policy', policy, '--', '/bin/sh', '-c', `touch '${marker}'`]);
  assert.equal(r.code, EXIT.denied, `stderr:\n${r.stderr}`);
  assert.ok(r.stderr.includes(`denied by ${policy} rule 1`), r.stderr);
  assert.match(r.stderr, /first-warn/);
  assert.equal(existsSync(marker), false);
});

test('no policy and no --isolate: the built-in default isolates', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const marker = path.join(makeTempDir('default-marker'), 'ran');
  const auditLog = path.join(makeTempDir('default-audit'), 'audit.jsonl');
  const r = await runMcpcell(['run', '--relay=off', '--audit-log', auditLog, '--', ...probeCommand(marker)]);
  assert.equal(r.code, 0, `stderr:\n${r.stderr}`);
  const [uid, ns, probed] = r.stdout.split('\n');
  assert.equal(probed, 'probed', r.stdout);
  assert.equal(uid, '1000');
  assert.notEqual(ns, readlinkSync('/proc/self/ns/user'));
  assert.equal(existsSync(marker), false, 'the default ran the command without a cell');
  const decision = onlyEvent(auditEvents(auditLog), 'decision');
  assert.equal(decision.action, 'isolate');
  assert.equal(decision.rule, 'built-in default default');
});

test('bad policies are refused with file:line:column or the JSON path; nothing runs', { timeout: 30_000 }, async () => {
  const cases = [
    // A syntax error on line 3, column 19 (the "a" after "condition": ).
    { text: '{\n  "rules": [\n    {"condition": a, "action": "isolate"}\n  ]\n}\n', expect: (f) => `${f}:3:19: invalid JSON` },
    { text: '{"rules":[{"condition":"sometimes","action":"isolate"}]}', expect: (f) => `${f}: at $.rules[0].condition: unknown condition "sometimes"` },
    { text: '{"rules":[{"condition":"always","action":"sandbox"}]}', expect: (f) => `${f}: at $.rules[0].action: unknown action "sandbox"` },
    { text: '{"rules":[],"colour":"blue"}', expect: (f) => `${f}: at $.colour` },
  ];
  for (const c of cases) {
    const policy = writePolicy(c.text);
    const marker = path.join(makeWritableDir('bad-policy'), 'ran');
    const r = await runMcpcell(['run', '--policy', policy, '--', '/bin/sh', '-c', `touch '${marker}'`]);
    assert.equal(r.code, EXIT.usage, `${c.text}\nstderr:\n${r.stderr}`);
    assert.ok(r.stderr.includes(c.expect(policy)), `for ${JSON.stringify(c.text)} expected "${c.expect(policy)}" in:\n${r.stderr}`);
    assert.equal(existsSync(marker), false, `ran despite the bad policy ${c.text}`);
  }
  const missing = path.join(makeTempDir('missing-policy'), 'nope.json');
  const r = await runMcpcell(['run', '--policy', missing, '--', '/bin/true']);
  assert.equal(r.code, EXIT.usage, r.stderr);
  assert.ok(r.stderr.includes(missing), r.stderr);
});

test('secrets: /run/secrets/TOKEN is readable in the cell; the value is in no environment, argv or the audit log', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const value = `tok-${process.pid}-${Date.now().toString(36)}-value`;
  const secretFile = path.join(makeTempDir('secret'), 'token');
  writeFileSync(secretFile, value, { mode: 0o600 });
  chmodSync(secretFile, 0o600);
  const auditLog = path.join(makeTempDir('secret-audit'), 'audit.jsonl');
  // Prints what the server sees, then waits for stdin EOF so the host side
  // can look at every process while the cell is alive.
  const script = `
    const fs = require('fs');
    const v = fs.readFileSync('/run/secrets/TOKEN', 'utf8');
    const procs = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n));
    const inProc = (file) => procs.some((p) => { try { return fs.readFileSync('/proc/' + p + '/' + file, 'latin1').includes(v); } catch { return false; } });
    console.log(JSON.stringify({ value: v, mode: (fs.statSync('/run/secrets/TOKEN').mode & 0o777).toString(8),
      inEnv: Object.entries(process.env).some(([k, x]) => k.includes(v) || x.includes(v)),
      inArgv: process.argv.some((a) => a.includes(v)),
      inEnviron: inProc('environ'), inCmdline: inProc('cmdline'),
      selfEnviron: fs.readFileSync('/proc/self/environ', 'latin1').includes(v) }));
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));`;
  let hostView = null;
  const r = await runMcpcell(['run', '--relay=off', ...nodeCellArgs(), '--secret', `TOKEN=${secretFile}`, '--audit-log', auditLog,
    '--', NODE_BIN, '-e', script], {
    onSpawn: (child) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (hostView === null && out.includes('\n')) {
          // The cell is running: no host process we can read carries the value.
          hostView = [];
          for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
            for (const file of ['environ', 'cmdline']) {
              try {
                if (readFileSync(`/proc/${pid}/${file}`, 'latin1').includes(value)) hostView.push(`${pid}/${file}`);
              } catch {
                // exited, or not ours to read
              }
            }
          }
          child.stdin.end();
        }
      });
    },
  });
  assert.equal(r.code, 0, `stderr:\n${r.stderr}\nstdout:\n${r.stdout}`);
  const seen = JSON.parse(r.stdout.split('\n')[0]);
  assert.equal(seen.value, value, 'the server could not read /run/secrets/TOKEN');
  assert.equal(seen.mode.startsWith('4'), true, `secret file mode ${seen.mode} is not read-only`);
  assert.deepEqual({ env: seen.inEnv, argv: seen.inArgv, environ: seen.inEnviron, cmdline: seen.inCmdline, self: seen.selfEnviron },
    { env: false, argv: false, environ: false, cmdline: false, self: false });
  assert.deepEqual(hostView, [], `host processes carrying the secret: ${hostView}`);
  assert.ok(!r.stderr.includes(value), 'secret value on stderr');
  const log = readFileSync(auditLog, 'utf8');
  assert.ok(!log.includes(value), 'secret value in the audit log');
  const decision = onlyEvent(auditEvents(auditLog), 'decision');
  assert.deepEqual(decision.permissions.secrets, [{ name: 'TOKEN', path: '/run/secrets/TOKEN' }]);

  const dry = await runMcpcell(['run', '--dry-run', '--secret', `TOKEN=${secretFile}`, '--', '/bin/true']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.ok(!dry.stdout.includes(value) && !dry.stderr.includes(value), 'secret value in --dry-run output');
});

test('profiles: ToolHive\'s fetch allow-list runs, enforced by the egress proxy; "network" is audit-only and warns that the network is open', { timeout: 60_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  // The fetch example from ToolHive's documentation, unchanged.
  const profile = path.join(makeTempDir('profile'), 'fetch-profile.json');
  writeReadableFile(profile, JSON.stringify({
    network: {
      outbound: {
        insecure_allow_all: false,
        allow_host: ['localhost', '.acmecorp.com', 'acmecorp.atlassian.net'],
        allow_port: [80, 443],
      },
    },
  }, null, 2));
  const marker = path.join(makeWritableDir('profile-marker'), 'ran');
  const ran = await runMcpcell(['run', '--permission-profile', profile, '--write', path.dirname(marker), '--',
    '/bin/sh', '-c', `touch '${marker}'`]);
  assert.equal(ran.code, 0, `stderr:\n${ran.stderr}`);
  // "localhost" is the host's loopback, on the profile's ports (issue 14 item 3), and the line says so.
  assert.match(ran.stderr, /network: allow-list \(hosts \[\.acmecorp\.com, acmecorp\.atlassian\.net\] ports \[80, 443\]; the host's loopback on localhost:80, localhost:443 only .*\), enforced: the cell's only way out is mcpcell's egress proxy/);
  assert.doesNotMatch(ran.stderr, /not enforceable|cannot be enforced/);
  assert.equal(existsSync(marker), true, 'the server did not run under the allow-list');

  const open = await runMcpcell(['run', '--permission-profile', 'network', '--', '/bin/true']);
  assert.equal(open.code, 0, `stderr:\n${open.stderr}`);
  assert.match(open.stderr, /WARNING: network is OPEN/);
  assert.match(open.stderr, /network: allow-all, audit-only/);
});

test('the npx install happened once, into the test-owned cache', { timeout: 10_000 }, async (t) => {
  if (installedEntry === null) {
    t.skip('the user-story test did not run (no cell here)');
    return;
  }
  const npxDir = path.join(CACHE_HOME, 'mcpcell', 'npx');
  const installs = readdirSync(npxDir).filter((n) => !n.startsWith('.'));
  assert.deepEqual(installs.filter((n) => n.startsWith('@modelcontextprotocol+server-filesystem@')).length, 1,
    `installs in ${npxDir}: ${installs.join(', ')}`);
});
