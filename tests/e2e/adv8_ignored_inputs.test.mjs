// Adversary pass on accepted-and-ignored inputs (session 9, adv8;
// docs/ATTACKS.md). The project's rule: every flag, profile key and argument
// is enforced (with a test) or refused; bad input gets an error naming what is
// wrong and where; every denial says what rule denied it and how to allow it.
//
// Each test below either shows a property that holds (a normal test) or pins
// a finding: an input mcpcell accepts (exit 0, no refusal) whose effect does
// not happen, marked `todo` so the suite stays green until it is fixed. Every
// todo asserts what the fixed mcpcell would do (refuse with exit 2, or enforce),
// so it starts passing, and says so, when the finding is fixed.
//
// The server is tests/e2e/servers/adv8_tools_server.mjs (standard library
// only). Runs that need no cell use --dry-run, `policy explain` or a policy
// `allow` rule; the rest are native cells (skipped where none can be built).

import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, test } from 'node:test';

import { cgroupDirsNamed } from './lib/host.mjs';
import { EXIT, runArgv, runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { E2E_DIR, NODE_BIN } from './lib/paths.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const SERVER = path.join(E2E_DIR, 'servers', 'adv8_tools_server.mjs');
const DIR = makeTempDir('adv8');
let fileCount = 0;

/** Writes `text` (a string, or JSON of an object) to a fresh readable file in DIR. */
function file(name, text) {
  const p = path.join(DIR, `${fileCount++}-${name}`);
  writeReadableFile(p, typeof text === 'string' ? text : JSON.stringify(text));
  return p;
}

const ALLOW_ALL_POLICY = () => file('allow.json', { rules: [{ name: 'trusted', condition: 'always', action: 'allow' }] });

/** An MCP session as stdin: initialize, tools/list, then one tools/call per entry ({name, args}). */
function session(calls) {
  const lines = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'adv8', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ...calls.map((c, i) => ({ jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: c.name, arguments: c.args ?? {} } })),
  ];
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

/** The JSON-RPC answers on stdout, by id. */
function answers(stdout) {
  const byId = new Map();
  for (const line of stdout.split('\n')) {
    try {
      const m = JSON.parse(line);
      if (m && m.id !== undefined) byId.set(m.id, m);
    } catch {
      // plain text
    }
  }
  return byId;
}

/** The text of the answer to call number `i` of session(), or its error message. */
function callOutcome(stdout, i) {
  const m = answers(stdout).get(10 + i);
  if (!m) return 'no answer';
  if (m.error) return `error: ${m.error.message}`;
  return m.result?.content?.[0]?.text ?? JSON.stringify(m.result);
}

/** `mcpcell run --isolate <flags> -- node SERVER` with the session on stdin. */
function runServer(flags, calls, options = {}) {
  return runMcpcell(runArgv(flags, [NODE_BIN, SERVER]), { input: session(calls), ...options });
}

/** `mcpcell run <flags> -- node SERVER` WITHOUT --isolate (a policy decides), the session on stdin. */
function runServerByPolicy(flags, calls, options = {}) {
  return runMcpcell(['run', ...flags, '--', NODE_BIN, SERVER], { input: session(calls), ...options });
}

/** --dry-run of `mcpcell run <args>` (no cell is built); resolves to runMcpcell's result. */
function dryRun(args) {
  const cut = args.indexOf('--');
  return runMcpcell(['run', ...args.slice(0, cut), '--dry-run', ...args.slice(cut)]);
}

function refusedOrFail(r, why) {
  assert.equal(r.code, EXIT.usage, `${why}: expected a refusal (exit 2), got exit ${r.code}; stderr:\n${r.stderr}`);
}

// ---------------------------------------------------------------------------
// Findings (todo until fixed)
// ---------------------------------------------------------------------------

test('adv8: a policy with "rules" twice is refused, not decided by the last copy', {
}, async () => {
  // Reviewed top to bottom, this policy denies everything.
  const policy = file('dup-rules.json', '{ "rules": [{ "condition": "always", "action": "deny" }],\n  "rules": [] }\n');
  const r = await dryRun(['--policy', policy, '--', '/bin/true']);
  refusedOrFail(r, 'a policy with a duplicate key');
  assert.match(r.stderr, /rules/, 'the refusal names the duplicated key');
});

test('adv8: a profile with "tools" twice is refused, not filtered by the last copy', {
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const profile = file('dup-tools.json',
    '{ "mcpcell": { "tools": { "deny": ["delete_*"] }, "timeout": "60s", "tools": { "allow": ["*"] } } }\n');
  const r = await runServer(['--permission-profile', profile], [{ name: 'delete_x' }]);
  if (r.code === EXIT.usage) {
    assert.match(r.stderr, /tools/, 'the refusal names the duplicated key');
    return;
  }
  assert.equal(r.code, 0, `sanity: the server ran; stderr:\n${r.stderr}`);
  assert.doesNotMatch(callOutcome(r.stdout, 0), /^called delete_x/, `delete_x reached the server; stderr:\n${r.stderr}`);
});

test('adv8: a profile secret inside a --write directory is refused like --secret', {
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  // A host file the cell is never granted: what the cell must not get.
  const hidden = makeTempDir('adv8-hidden');
  writeFileSync(path.join(hidden, 'token.txt'), 'adv8-host-only-canary\n');
  chmodSync(path.join(hidden, 'token.txt'), 0o600);
  // The profile's secret lies below a directory the run grants writable.
  const rw = makeWritableDir('adv8-secret-rw');
  mkdirSync(path.join(rw, 'd'));
  chmodSync(path.join(rw, 'd'), 0o777);
  writeReadableFile(path.join(rw, 'd', 'token.txt'), 'the-real-secret\n');
  const profile = file('secret-in-grant.json', { mcpcell: { secrets: { S: path.join(rw, 'd', 'token.txt') } } });
  // The control: the same file as --secret is refused.
  const flag = await dryRun(['--isolate', '--write', rw, '--secret', `S=${path.join(rw, 'd', 'token.txt')}`, '--', '/bin/true']);
  refusedOrFail(flag, '--secret inside --write (control)');
  // Run 1 re-points the secret's directory at the hidden one; run 2 reads the secret.
  const first = await runMcpcell(runArgv(['--relay=off', '--write', rw, '--permission-profile', profile],
    ['/bin/sh', '-c', `rm -rf ${rw}/d && ln -s ${hidden} ${rw}/d && echo REPOINTED`]));
  if (first.code === EXIT.usage) {
    assert.match(first.stderr, /secret/, 'the refusal names the secret');
    return;
  }
  assert.match(first.stdout, /REPOINTED/, `sanity: run 1 re-pointed the directory; stderr:\n${first.stderr}`);
  const second = await runMcpcell(runArgv(['--relay=off', '--permission-profile', profile], ['/bin/cat', '/run/secrets/S']));
  assert.doesNotMatch(second.stdout, /adv8-host-only-canary/, 'a host file the cell was never granted reached /run/secrets');
});

test('adv8: the profile\'s call_rate, max_message, max_inflight and call_timeout are enforced like their flags', {
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const profile = file('limits.json', { mcpcell: { call_rate: '1/h', max_message: '4k', max_inflight: 1, call_timeout: '30s' } });
  // What the plan says, then what the relay does.
  const dry = await dryRun(['--isolate', '--permission-profile', profile, '--', NODE_BIN, SERVER]);
  assert.equal(dry.code, 0, dry.stderr);
  const relay = JSON.parse(dry.stdout).cell.relay;
  const r = await runServer(['--permission-profile', profile],
    [{ name: 'read_x' }, { name: 'read_x' }, { name: 'read_x', args: { blob: 'z'.repeat(8192) } }]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(callOutcome(r.stdout, 0), 'called read_x 2', 'sanity: the first call passes');
  assert.deepEqual(
    { burst: relay.call_burst, max_message: relay.max_message_bytes, inflight: relay.max_inflight, timeout: relay.call_timeout_ms,
      second: /^called/.test(callOutcome(r.stdout, 1)), big: /^called/.test(callOutcome(r.stdout, 2)) },
    { burst: 1, max_message: 4096, inflight: 1, timeout: 30_000, second: false, big: false },
    'the profile\'s limits in the plan (--dry-run) and on the calls');
});

test('adv8: the profile\'s relay limits are refused with --relay=off, as PROFILES.md says', {
}, async () => {
  const profile = file('limits-off.json', { mcpcell: { call_rate: '10/s' } });
  const r = await dryRun(['--isolate', '--relay=off', '--permission-profile', profile, '--', '/bin/true']);
  refusedOrFail(r, 'profile call_rate with --relay=off');
});

test('adv8: mcpcell.tools.allow: [] lets no tool through (or is refused)', {
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const profile = file('empty-allow.json', { mcpcell: { tools: { allow: [] } } });
  const r = await runServer(['--permission-profile', profile], [{ name: 'delete_x' }]);
  if (r.code === EXIT.usage) return;
  assert.equal(r.code, 0, `sanity: the server ran; stderr:\n${r.stderr}`);
  assert.doesNotMatch(callOutcome(r.stdout, 0), /^called delete_x/, `an empty allow list let delete_x through; stderr:\n${r.stderr}`);
});

test('adv8: --relay=off with --max-message is refused like the other relay limits', {
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const big = { blob: 'x'.repeat(16 * 1024) };
  const r = await runServer(['--relay=off', '--max-message', '4k'], [{ name: 'read_x', args: big }]);
  if (r.code !== EXIT.usage) {
    assert.notEqual(callOutcome(r.stdout, 0), 'no answer', 'sanity: the 16 KiB call was answered (it passed a 4k limit)');
  }
  refusedOrFail(r, '--relay=off --max-message 4k');
});

test('adv8: a policy allow run refuses --timeout instead of ignoring it', {
}, async () => {
  const started = Date.now();
  const r = await runMcpcell(['run', '--policy', ALLOW_ALL_POLICY(), '--timeout', '500ms', '--', NODE_BIN, '-e', 'setTimeout(() => {}, 2500)']);
  const elapsed = Date.now() - started;
  if (r.code === EXIT.usage) return;
  assert.equal(r.code, EXIT.timeout, `--timeout 500ms: exit ${r.code} after ${elapsed} ms; stderr:\n${r.stderr}`);
});

test('adv8: a policy allow run refuses the relay\'s call limits instead of ignoring them', {
}, async () => {
  const r = await runServerByPolicy(['--policy', ALLOW_ALL_POLICY(), '--call-rate', '1/h', '--max-message', '4k'],
    [{ name: 'read_x' }, { name: 'read_x', args: { blob: 'y'.repeat(8192) } }]);
  if (r.code === EXIT.usage) return;
  assert.doesNotMatch(callOutcome(r.stdout, 1), /^called read_x/,
    `a second call within 1/h, 8 KiB over --max-message 4k, reached the server; stderr:\n${r.stderr}`);
});

test('adv8: a policy allow run does not claim an enforced egress allow-list', {
}, async () => {
  const r = await runMcpcell(['run', '--policy', ALLOW_ALL_POLICY(), '--allow-host', 'example.com', '--', '/bin/true']);
  if (r.code === EXIT.usage) return;
  assert.match(r.stderr, /WITHOUT a cell/, 'sanity: the run had no cell');
  assert.doesNotMatch(r.stderr, /enforced/, `a run without a cell claimed an enforced network:\n${r.stderr}`);
});

test('adv8 (session 10): a policy allow run refuses a permission profile and grant-refining flags, and claims no enforced network for a registry server', async () => {
  const profile = file('allow-list.json', { network: { outbound: { allow_host: ['example.com'] } } });
  for (const args of [['--permission-profile', profile], ['--permission-profile', 'none'], ['--no-auto-mount'],
    ['--force-credentials'], ['--fallback', 'native']]) {
    const r = await dryRun(['--policy', ALLOW_ALL_POLICY(), ...args, '--', '/bin/true']);
    refusedOrFail(r, `allow + ${args.join(' ')}`);
    assert.match(r.stderr, new RegExp(`${args[0]} would be ignored; add --isolate`), r.stderr);
  }
  // The account's own cache: an allow run refuses a package cache the environment chose (adv11).
  const env = { ...process.env };
  delete env.XDG_CACHE_HOME;
  delete env.GITHUB_PERSONAL_ACCESS_TOKEN;
  const r = await runMcpcell(['run', '--dry-run', '--policy', ALLOW_ALL_POLICY(), 'github'], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /enforced/, `a run without a cell claimed an enforced network:\n${r.stderr}`);
  assert.match(r.stderr, /network: not restricted/);
  // The way to pass the token must be one this run takes (--secret is refused without a cell).
  assert.match(r.stderr, /pass it with --env GITHUB_PERSONAL_ACCESS_TOKEN/);
});

test('adv8: a policy allow run refuses --secret instead of dropping it', {
}, async () => {
  const name = `ADV8_${process.pid}_${Date.now()}`;
  const secret = file('secret.txt', 'adv8-value\n');
  const r = await runMcpcell(['run', '--policy', ALLOW_ALL_POLICY(), '--secret', `${name}=${secret}`, '--secret-env', name,
    '--', '/bin/sh', '-c', `cat /run/secrets/${name} 2>/dev/null; echo "env=\${${name}}"`]);
  if (r.code === EXIT.usage) return;
  assert.match(r.stdout, /adv8-value/, `the secret reached the server neither as a file nor a variable: ${r.stdout}`);
});

test('adv8: --isolate=native does not loosen a policy rule\'s level "gvisor" silently', {
}, async () => {
  const policy = file('gvisor.json', { rules: [{ condition: 'always', action: 'isolate', level: 'gvisor' }] });
  const r = await dryRun(['--policy', policy, '--isolate=native', '--', '/bin/true']);
  if (r.code !== 0) {
    assert.match(r.stderr, /gvisor/, 'a refusal names the policy\'s level');
    return;
  }
  const level = JSON.parse(r.stdout).decision.level;
  assert.equal(level, 'gvisor', `the policy asked for gvisor, the plan runs ${level}; stderr:\n${r.stderr}`);
});

test('adv8: mcpcell.pins.poisoning "block" is refused where the relay cannot hold tools back', {
}, async () => {
  const profile = file('block.json', { mcpcell: { pins: { poisoning: 'block' } } });
  const off = await dryRun(['--isolate', '--relay=off', '--permission-profile', profile, '--', '/bin/true']);
  refusedOrFail(off, 'pins.poisoning block with --relay=off');
});

test('adv8: --install-timeout is checked (or refused) for a source that installs nothing', {
}, async () => {
  const r = await dryRun(['--isolate', '--install-timeout', 'bogus', '--', '/bin/true']);
  refusedOrFail(r, '--install-timeout bogus');
  assert.match(r.stderr, /--install-timeout/);
});

test('adv8: --dry-run and policy explain refuse a bad --fallback as run does', {
}, async () => {
  const dry = await dryRun(['--isolate', '--fallback', 'bogus', '--', '/bin/true']);
  refusedOrFail(dry, 'run --dry-run --fallback bogus');
  const explain = await runMcpcell(['policy', 'explain', '--fallback', 'bogus', '--', '/bin/true']);
  refusedOrFail(explain, 'policy explain --fallback bogus');
});

/** Starts `mcpcell egress-proxy ARGS`, stops it after `ms`; resolves to runMcpcell's result. */
function egressProxyFor(args, ms = 1500) {
  return runMcpcell(['egress-proxy', ...args], {
    onSpawn: (child) => setTimeout(() => child.kill('SIGTERM'), ms),
    guardMs: 15_000,
  });
}

test('adv8: egress-proxy --listen ADDRESS:0 listens on any port, as its help says', {
}, async () => {
  const r = await egressProxyFor(['--listen', '127.0.0.1:0']);
  assert.match(r.stderr, /listening on 127\.0\.0\.1:\d+/, `exit ${r.code}:\n${r.stderr}`);
});

test('adv8: egress-proxy refuses (or names) the profile keys it does not enforce', {
}, async () => {
  const profile = file('mixed.json', {
    read: ['/etc'],
    network: { outbound: { allow_host: ['example.com'] } },
    mcpcell: { tools: { deny: ['*'] }, memory: '64m' },
  });
  const port = 20000 + (process.pid % 20000);
  const r = await egressProxyFor(['--listen', `127.0.0.1:${port}`, '--permission-profile', profile]);
  if (r.code === EXIT.usage) return;
  const said = r.stderr.split('\n').filter((l) => !/listening on/.test(l)).join('\n');
  assert.match(said, /read|tools|mcpcell\./, `nothing said about the keys the proxy ignores:\n${r.stderr}`);
});

/** The CPU share (quota / period) a cell's cgroup directories set, or null. */
function cpuShare(dirs) {
  for (const d of dirs) {
    try {
      const [quota, period] = readFileSync(path.join(d, 'cpu.max'), 'utf8').trim().split(/\s+/);
      if (quota !== 'max') return Number(quota) / Number(period);
    } catch {
      // not v2
    }
    try {
      const quota = Number(readFileSync(path.join(d, 'cpu.cfs_quota_us'), 'utf8'));
      const period = Number(readFileSync(path.join(d, 'cpu.cfs_period_us'), 'utf8'));
      if (quota > 0) return quota / period;
    } catch {
      // not this controller
    }
  }
  return null;
}

test('adv8: --cpus 0.001 is enforced as asked (or refused), not rounded up tenfold', {
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  let share = null;
  let dirs = [];
  const r = await runMcpcell(runArgv(['--relay=off', '--cpus', '0.001'], ['/bin/sleep', '3']), {
    onSpawn: (child) => {
      setTimeout(() => {
        dirs = cgroupDirsNamed(`mcpcell-${child.pid}-`, 4);
        share = cpuShare(dirs);
      }, 1200);
    },
  });
  if (r.code === EXIT.usage) return;
  if (share === null) {
    t.skip(`no cgroup of this run found (exit ${r.code}; dirs ${dirs.join(', ') || 'none'})`);
    return;
  }
  assert.ok(share <= 0.00101, `--cpus 0.001 set a CPU share of ${share}`);
});

/**
 * A fake container engine on a unix socket of ours (DOCKER_HOST=unix://...):
 * enough of the Engine API for mcpcell to reach POST /containers/create, whose
 * body it keeps; that answer carries `warnings`; anything after it fails
 * (HTTP 500), so no container ever runs. Returns { socket, requests, creates, close() }.
 */
async function fakeEngine(warnings = []) {
  const socket = path.join(makeTempDir('adv8-engine'), 'engine.sock');
  const requests = [];
  const creates = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d) => (body += d));
    req.on('end', () => {
      const u = req.url.replace(/^\/v[0-9.]+/, '');
      requests.push(`${req.method} ${u}`);
      const send = (status, obj) => {
        res.writeHead(status, { 'Content-Type': 'application/json', 'Api-Version': '1.41' });
        res.end(JSON.stringify(obj));
      };
      if (u.startsWith('/_ping')) return send(200, 'OK');
      if (u.startsWith('/images/')) {
        return send(200, { Id: `sha256:${'a'.repeat(64)}`, Os: 'linux', Architecture: 'amd64',
          Config: { User: '', Env: ['PATH=/usr/bin:/bin'], Cmd: ['sh'], Entrypoint: null, WorkingDir: '' } });
      }
      if (u.startsWith('/containers/create')) {
        creates.push(JSON.parse(body));
        return send(201, { Id: 'c'.repeat(64), Warnings: warnings });
      }
      return send(500, { message: `adv8 fake engine: ${req.method} ${u}` });
    });
  });
  await new Promise((resolve) => server.listen(socket, resolve));
  return { socket, requests, creates, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** `mcpcell run --isolate=docker ARGS -- /bin/true` against a fake engine. */
async function runOnFakeEngine(engine, args) {
  return runMcpcell(['run', '--isolate=docker', '--relay=off', ...args, '--', '/bin/true'], {
    env: { ...process.env, DOCKER_HOST: `unix://${engine.socket}` },
    guardMs: 30_000,
  });
}

test('adv8: a docker cell refuses --cpus its engine would read as no limit', {
}, async (t) => {
  // --dry-run plans the container cell without an engine...
  const r = await dryRun(['--isolate=docker', '--cpus', '1e-10', '--', '/bin/true']);
  if (r.code === EXIT.usage) {
    assert.match(r.stderr, /--cpus/);
    return;
  }
  // ...and the create body a (fake) engine receives.
  const engine = await fakeEngine();
  t.after(() => engine.close());
  const run = await runOnFakeEngine(engine, ['--cpus', '1e-10']);
  assert.equal(engine.creates.length, 1, `no container create reached the engine (exit ${run.code}):\n${run.stderr}`);
  const nano = engine.creates[0].HostConfig.NanoCpus;
  assert.ok(nano > 0, `--cpus 1e-10 was sent as HostConfig.NanoCpus ${nano} (0 = no limit)`);
});

test('adv8: a limit the engine says it discarded stops the run, as a native cell refuses one it cannot set', async (t) => {
  const engine = await fakeEngine([
    'Your kernel does not support memory limit capabilities or the cgroup is not mounted. Limitation discarded.',
  ]);
  t.after(() => engine.close());
  const r = await runOnFakeEngine(engine, ['--memory', '512m']);
  assert.equal(engine.creates.length, 1, `no container create reached the engine (exit ${r.code}):\n${r.stderr}`);
  assert.equal(engine.creates[0].HostConfig.Memory, 512 * 1024 * 1024, 'sanity: the limit was asked for');
  const after = engine.requests.slice(engine.requests.findIndex((x) => x.startsWith('POST /containers/create')) + 1);
  const went_on = after.filter((x) => /\/(attach|start)\b/.test(x));
  assert.deepEqual(went_on, [], `after the engine discarded --memory, mcpcell went on:\n${after.join('\n')}\n${r.stderr}`);
  assert.match(r.stderr, /discarded this limit/, r.stderr);
  assert.ok(after.some((x) => x.startsWith('DELETE /containers/')), `the created container was not removed:\n${after.join('\n')}`);
});

test('adv8: --resolve for a host no allow rule names is refused or noted', {
}, async () => {
  const r = await dryRun(['--isolate', '--allow-host', 'a.example.com', '--resolve', 'b.example.com:443:203.0.113.7', '--', '/bin/true']);
  if (r.code === EXIT.usage) return;
  assert.match(r.stderr, /--resolve/, `nothing said about a pin for a host that is not allowed:\n${r.stderr}`);
});

test('adv8: an allow_host or --resolve naming a cloud metadata address is refused at launch', {
}, async () => {
  for (const args of [['--allow-host', '169.254.169.254'], ['--allow-host', 'fd00:ec2::254'],
    ['--allow-host', 'x.example.com', '--resolve', 'x.example.com:443:169.254.169.254']]) {
    const r = await dryRun(['--isolate', ...args, '--', '/bin/true']);
    refusedOrFail(r, args.join(' '));
    assert.match(r.stderr, /metadata/, args.join(' '));
  }
});

test('adv8: network.inbound.allow_host is refused or said to have no effect', {
}, async () => {
  const profile = file('inbound.json', { network: { inbound: { allow_host: ['evil.example.com'] } } });
  const r = await dryRun(['--isolate', '--permission-profile', profile, '--', '/bin/true']);
  if (r.code === EXIT.usage) return;
  assert.match(r.stderr, /inbound/, `nothing said about inbound rules that do nothing:\n${r.stderr}`);
});

test('adv8: --secret-env NAME=A --secret-env NAME=B is refused, not half dropped', {
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const secret = file('secret-env.txt', 'adv8-secret\n');
  const r = await runMcpcell(runArgv(['--relay=off', '--secret', `TOK=${secret}`, '--secret-env', 'TOK=FIRST_VAR',
    '--secret-env', 'TOK=SECOND_VAR'], ['/bin/sh', '-c', 'echo "first=$FIRST_VAR second=$SECOND_VAR"']));
  if (r.code === EXIT.usage) return;
  assert.match(r.stdout, /first=adv8-secret/, `the first mapping was dropped: ${r.stdout} ${r.stderr}`);
});

test('adv8: a policy "version" other than 1 is refused, also 2^32+1', {
}, async () => {
  const policy = file('version.json', '{ "version": 4294967297, "rules": [] }');
  refusedOrFail(await dryRun(['--policy', policy, '--', '/bin/true']), 'version 4294967297');
});

test('adv8: a policy "description" that is not a string is refused', {
}, async () => {
  const policy = file('description.json', '{ "description": 42, "rules": [] }');
  const r = await dryRun(['--policy', policy, '--', '/bin/true']);
  refusedOrFail(r, 'description 42');
  assert.match(r.stderr, /\$\.description/);
});

test('adv8: secret_scan rules with mode "off" are refused or said to do nothing', {
}, async () => {
  const profile = file('scan-off.json', {
    mcpcell: { secret_scan: { mode: 'off', rules: [{ name: 'acme-key', regex: 'ACME-[0-9]{8}' }] } },
  });
  const r = await dryRun(['--isolate', '--relay=off', '--permission-profile', profile, '--', '/bin/true']);
  if (r.code === EXIT.usage) return;
  assert.match(r.stderr, /acme-key|rules/, `nothing said about rules that scan nothing:\n${r.stderr}`);
});

test('adv8: client wrap --policy refuses a policy that every wrapped server would refuse', {
}, async () => {
  const dir = makeTempDir('adv8-wrap');
  const config = path.join(dir, 'claude_desktop_config.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { x: { command: NODE_BIN, args: [SERVER] } } }));
  const policy = file('bad-policy.json', { rules: [], bogus: 1 });
  const r = await runMcpcell(['client', 'wrap', 'claude-desktop', '--file', config, '--policy', policy, '--dry-run']);
  refusedOrFail(r, 'client wrap with an invalid policy');
  assert.match(r.stderr, /bogus/);
});

test('adv8: a registry entry\'s required variable that nobody passes is said on run', {
}, async () => {
  const env = { ...process.env, XDG_CACHE_HOME: makeTempDir('adv8-cache') };
  delete env.GITHUB_PERSONAL_ACCESS_TOKEN;
  const r = await runMcpcell(['run', '--dry-run', 'github'], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /GITHUB_PERSONAL_ACCESS_TOKEN/, `nothing said about the required variable:\n${r.stderr}`);
});

test('adv8: a policy name rule matches the script an interpreter runs', {
}, async () => {
  const policy = file('name.json', { rules: [{ name: 'no-adv8', condition: { name: 'adv8_tools_server*' }, action: 'deny' }] });
  const r = await runMcpcell(['policy', 'explain', '--json', '--policy', policy, '--', NODE_BIN, SERVER]);
  assert.equal(r.code, 0, r.stderr);
  const explained = JSON.parse(r.stdout);
  const action = explained.action ?? explained.decision?.action;
  assert.equal(action, 'deny', `the deny rule on the script's name did not hold: ${JSON.stringify(explained.trust_facts ?? explained.decision?.trust_facts)}`);
  // Trusting the interpreter trusts no script; trusting the script trusts it.
  const decide = async (trusted) => {
    const p = file(`trust-${trusted.length}.json`, {
      trusted_sources: [trusted], rules: [{ name: 'untrusted', condition: 'untrusted_source', action: 'deny' }], default: 'isolate' });
    const e = await runMcpcell(['policy', 'explain', '--json', '--policy', p, '--', NODE_BIN, SERVER, '/data']);
    assert.equal(e.code, 0, e.stderr);
    const j = JSON.parse(e.stdout);
    return j.action ?? j.decision?.action;
  };
  assert.equal(await decide(`command://${NODE_BIN}`), 'deny', 'command://node trusted every script');
  assert.equal(await decide(`command://${NODE_BIN} ${path.resolve(SERVER)}`), 'isolate', 'the script itself was not trusted');
});

test('adv8: a policy denial says how to allow the server', {
}, async () => {
  const policy = file('deny.json', { rules: [{ name: 'no-commands', condition: { source: 'command' }, action: 'deny' }] });
  const r = await runMcpcell(['run', '--policy', policy, '--', '/bin/true']);
  assert.equal(r.code, EXIT.denied, r.stderr);
  assert.match(r.stderr, /no-commands/, 'names the rule');
  assert.match(r.stderr, /to allow|allow it/i, `says nothing on how to allow it:\n${r.stderr}`);
});

// ---------------------------------------------------------------------------
// What held
// ---------------------------------------------------------------------------

test('adv8 held: a tools.deny rule hides and refuses the tool, naming the rule and how to allow it', async (t) => {
  if (await skipWithoutCell(t)) return;
  const profile = file('deny-tools.json', { mcpcell: { tools: { deny: ['delete_*'] } } });
  const r = await runServer(['--permission-profile', profile], [{ name: 'delete_x' }, { name: 'read_x' }]);
  assert.equal(r.code, 0, r.stderr);
  const listed = answers(r.stdout).get(2)?.result?.tools?.map((x) => x.name);
  assert.deepEqual(listed, ['read_x']);
  assert.match(callOutcome(r.stdout, 0), /denied by mcpcell\.tools\.deny\[0\].*remove that entry to allow it/);
  assert.equal(callOutcome(r.stdout, 1), 'called read_x 2');
});

test('adv8 held: relay limits and tool rules are refused with --relay=off, naming what to drop', async () => {
  const profile = file('rules-off.json', { mcpcell: { tools: { deny: ['x'] } } });
  for (const args of [['--call-rate', '1/s'], ['--max-inflight', '1'], ['--call-timeout', '1s'], ['--permission-profile', profile]]) {
    const r = await dryRun(['--isolate', '--relay=off', ...args, '--', '/bin/true']);
    refusedOrFail(r, `--relay=off ${args.join(' ')}`);
    assert.match(r.stderr, /--relay=off/);
  }
});

test('adv8 held: tool rules and secret_scan are refused for a server a policy allows without a cell', async () => {
  const rules = file('rules-allow.json', { mcpcell: { tools: { deny: ['x'] } } });
  const scan = file('scan-allow.json', { mcpcell: { secret_scan: { mode: 'block' } } });
  const pinsOn = file('pins-allow.json', { mcpcell: { pins: { mode: 'on' } } });
  for (const profile of [rules, scan, pinsOn]) {
    const r = await dryRun(['--policy', ALLOW_ALL_POLICY(), '--permission-profile', profile, '--', '/bin/true']);
    refusedOrFail(r, `allow rule with ${path.basename(profile)}`);
    assert.match(r.stderr, /without a cell/);
  }
});

test('adv8 held: unknown keys, case variants, comments, trailing commas and strings for numbers are refused with where', async () => {
  const cases = [
    ['case.json', '{ "Read": ["/etc"] }', /\$\.Read.*unknown key/],
    ['nested.json', '{ "network": { "outbound": { "allow_hosts": ["x.com"] } } }', /\$\.network\.outbound\.allow_hosts/],
    ['ext.json', '{ "mcpcell": { "tool": { "deny": ["x"] } } }', /\$\.mcpcell\.tool/],
    ['comment.json', '{ // ports\n "read": [] }', /comment\.json:1:\d+: invalid JSON/],
    ['comma.json', '{ "read": ["/etc"], }', /comma\.json:1:\d+: invalid JSON/],
    ['port.json', '{ "network": { "outbound": { "allow_host": ["x.com"], "allow_port": ["443"] } } }', /\$\.network\.outbound\.allow_port\[0\]/],
    ['pids.json', '{ "mcpcell": { "pids": "128" } }', /\$\.mcpcell\.pids/],
    ['negative.json', '{ "mcpcell": { "max_inflight": -1 } }', /\$\.mcpcell\.max_inflight/],
    ['huge.json', '{ "mcpcell": { "pids": 18446744073709551615 } }', /\$\.mcpcell\.pids/],
  ];
  for (const [name, text, where] of cases) {
    const r = await dryRun(['--isolate', '--permission-profile', file(name, text), '--', '/bin/true']);
    refusedOrFail(r, name);
    assert.match(r.stderr, where, name);
  }
  const policy = file('rule-key.json', '{ "rules": [{ "condition": "always", "action": "deny", "when": "now" }] }');
  const r = await dryRun(['--policy', policy, '--', '/bin/true']);
  refusedOrFail(r, 'a rule with an unknown field');
  assert.match(r.stderr, /\$\.rules\[0\]\.when/);
});

test('adv8 held: --read DIR narrows a profile\'s write of DIR however DIR is spelled', async (t) => {
  if (await skipWithoutCell(t)) return;
  const rw = makeWritableDir('adv8-rw');
  const profile = file('write.json', { write: [rw] });
  for (const spelled of [rw, `${rw}/`, `${rw}/.`, rw.replace(/\/([^/]+)$/, '//$1'), `${rw}/../${path.basename(rw)}`]) {
    const r = await runMcpcell(runArgv(['--relay=off', '--permission-profile', profile, '--read', spelled],
      ['/bin/sh', '-c', `echo x > ${rw}/probe && echo WROTE`]));
    assert.doesNotMatch(r.stdout, /WROTE/, `--read ${spelled} left ${rw} writable`);
    assert.ok(!existsSync(path.join(rw, 'probe')), `--read ${spelled}: the probe file was written`);
  }
});

test('adv8 held: contradictory or incomplete flags are refused with what to do', async () => {
  const secret = file('held-secret.txt', 'v\n');
  const cases = [
    [['--secret-env', 'NOPE'], /no secret named 'NOPE'; give --secret NOPE=FILE first/],
    [['--env', 'ADV8_X=1', '--drop-env', 'ADV8_X'], /--drop-env ADV8_X: is also passed with --env ADV8_X; keep one/],
    [['--secret', `S=${secret}`, '--secret-env', 'S=ADV8_V', '--env', 'ADV8_V=1'], /already sets ADV8_V/],
    [['--memory', '1m'], /--memory 1m: below 8m/],
    [['--audit-content'], /no --audit-log/],
    [['--allow-host', 'localhost'], /named ports/],
    [['--allow-host', '*.example.com'], /can never match/],
    [['--idmap', 'maybe'], /expected auto, on or off/],
  ];
  for (const [args, why] of cases) {
    const r = await dryRun(['--isolate', ...args, '--', '/bin/true']);
    refusedOrFail(r, args.join(' '));
    assert.match(r.stderr, why, args.join(' '));
  }
});
