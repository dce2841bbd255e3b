// Adversary pass adv10 (session 10): where the policy's view of a command
// (commit bbc715a: an interpreter's command is judged as the script it runs,
// src/source/interpreted_script.cc), a policy `allow` (a run with no cell,
// src/cli/launch_plan.cc) and `mcpcell client wrap` (src/client/*) can be
// made to say one thing and do another.
//
// Each finding is a test marked `todo` that fails on the binary it was found
// on and asserts what a fixed mcpcell would do, so it starts passing (and the
// runner says so) once the finding is fixed. The "adv10 held" tests pin what
// withstood the attack. Runs use `policy explain`, `--dry-run`, or a policy
// `allow` rule (no cell); no network beyond loopback.
//
// Findings, by severity (details in each test):
//   high   docker:// allowed by a policy runs the image's ARGS on the host
//          (RunPlainly), and crashes with none; `bash +x EVIL` is judged as
//          "+x" (a trusted glob allows EVIL, a deny-by-name misses it);
//          NODE_OPTIONS in mcpcell's environment (a wrapped entry's env
//          block) runs code on the host through the npm mcpcell runs; a
//          planted npx cache (XDG_CACHE_HOME) runs as the trusted official
//          package; an allowed browser server keeps --no-sandbox.
//   medium --env NODE_OPTIONS/BASH_ENV unseen by the policy; relative option
//          values (-r ./hook.js), php -f, `command://./server` and
//          `python3 -m` depend on the cwd but not their source; "*" crosses
//          words (command:///usr/bin/* trusts `node -e`); deny-by-name fails
//          open on unread command lines and subcommands (node inspect, tsx
//          watch) and deno's optional-value options; wrap leaves stdio
//          entries with a url key, pre-wrapped entries under another policy,
//          npm_config_registry entries, LD_PRELOAD env blocks.
//          Programs not in the table (poetry run, lua) are judged by name.
//   low    ruby -C / bun --cwd; `node` found on PATH; explain/-v claim
//          enforcement on allow runs; wrap's "in a cell" under an allow
//          policy; envFile dropped silently; explain prints control characters.

import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { EXIT, runMcpcell } from './lib/mcpcell.mjs';
import { MCPCELL_BIN, NODE_BIN } from './lib/paths.mjs';
import { BASE_PATH, env, policyRunner } from './lib/policy_run.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const GUARD = { guardMs: 60_000 };

// SRV: the directory of servers the policy trusts. EVIL: a directory the
// attacker controls (a cloned repo, a download).
const ROOT = makeTempDir('adv10');
const SRV = path.join(ROOT, 'srv');
const EVIL = path.join(ROOT, 'evil');
mkdirSync(SRV);
mkdirSync(EVIL);
chmodSync(SRV, 0o755);
chmodSync(EVIL, 0o755);

writeReadableFile(path.join(SRV, 'server.mjs'), 'console.error("ADV10-SERVER-RAN");\n');
writeReadableFile(path.join(SRV, 'ok.sh'), 'echo ADV10-OK-RAN >&2\n');
writeReadableFile(path.join(EVIL, 'adv10-evil.sh'), 'echo ADV10-EVIL-RAN >&2\n');
writeReadableFile(path.join(EVIL, 'adv10-evil.js'), 'console.error("ADV10-EVIL-RAN");\n');
writeReadableFile(path.join(EVIL, 'hook.js'), 'console.error("ADV10-HOOK-RAN");\n');
writeReadableFile(path.join(EVIL, 'x.js'), 'console.error("ADV10-X-RAN");\n');
writeReadableFile(path.join(EVIL, 'x.sh'), 'echo ADV10-X-RAN >&2\n');
writeReadableFile(path.join(SRV, 'a b.js'), '\n');
writeReadableFile(path.join(SRV, "a' 'b.js"), '\n');
writeReadableFile(path.join(EVIL, 'adv10_mod.py'), 'import sys; print("ADV10-SHADOW-RAN", file=sys.stderr)\n');

// The policy: deny anything named adv10-evil*, allow what a test trusts, isolate the rest.
const { file, trustPolicy, explain, runByPolicy } = policyRunner({ root: ROOT, srv: SRV, denyName: 'adv10-evil*' });


// ---------------------------------------------------------------------------
// 1. The policy's view of a command
// ---------------------------------------------------------------------------

test('adv10: `bash +x EVIL` is judged as a script named "+x" in the cwd, so a trusted glob allows EVIL and a deny-by-name misses it', {
}, async () => {
  // "Trust the scripts in SRV", run from SRV, as a client config would.
  const policy = trustPolicy([`command://bash ${SRV}/*`]);
  const evil = path.join(EVIL, 'adv10-evil.sh');
  // The control: the same script without "+x" is denied by name.
  const control = await explain(policy, ['bash', evil]);
  assert.equal(control.action, 'deny', `control: ${control.r.stderr}`);
  const e = await explain(policy, ['bash', '+x', evil]);
  assert.match(e.source ?? '', /adv10-evil\.sh/, `the source the policy judged must name what runs; it was ${e.source}`);
  const r = await runByPolicy(policy, ['bash', '+x', evil]);
  assert.doesNotMatch(r.stderr, /ADV10-EVIL-RAN/, `the denied script ran with no cell; stderr:\n${r.stderr}`);
  assert.equal(r.code, EXIT.denied, `expected the deny-by-name rule; stderr:\n${r.stderr}`);
});

test('adv10: a subcommand word (`node inspect F`, `tsx watch F`) is judged as a script of that name', {
}, async () => {
  const policy = trustPolicy([`command://node ${SRV}/*`, `command://tsx ${SRV}/*`]);
  const evil = path.join(EVIL, 'adv10-evil.js');
  for (const command of [['node', 'inspect', evil], ['tsx', 'watch', evil]]) {
    const e = await explain(policy, command);
    assert.notEqual(e.action, 'allow', `${command.join(' ')}: allowed with no cell as ${e.source}`);
    assert.equal(e.action, 'deny', `${command.join(' ')}: the deny-by-name rule must see ${evil}; source ${e.source}`);
  }
});

test('adv10: `ruby -C DIR server.rb` is judged as CWD/server.rb, but ruby runs DIR/server.rb', {
}, async () => {
  const policy = trustPolicy([]);
  const e = await explain(policy, ['ruby', '-C', EVIL, 'server.rb']);
  assert.notEqual(e.script, path.join(SRV, 'server.rb'),
    `the policy was shown ${e.source}, a file ruby does not run (it runs ${path.join(EVIL, 'server.rb')})`);
  const b = await explain(policy, ['bun', '--cwd', EVIL, 'run', 'server.ts']);
  assert.notEqual(b.script, path.join(SRV, 'server.ts'),
    `the policy was shown ${b.source}, a file bun does not run (it runs ${path.join(EVIL, 'server.ts')})`);
});

test('adv10: `deno run --env-file F SCRIPT` is judged as SCRIPT, but --env-file\'s value is optional: deno runs F', {
}, async () => {
  const policy = trustPolicy([`command://deno run --env-file * ${SRV}/*`]);
  const evil = path.join(EVIL, 'adv10-evil.ts');
  for (const option of ['--env-file', '--lock']) {
    const e = await explain(policy, ['deno', 'run', option, evil, path.join(SRV, 'server.ts')]);
    assert.notEqual(e.script, path.join(SRV, 'server.ts'), `${option}: the policy judged a script deno does not run (${e.source})`);
    assert.equal(e.action, 'deny', `${option}: the deny-by-name rule did not see ${evil} (${e.action}, ${e.source})`);
  }
});

test('adv10: a deny-by-name rule is dodged by an option the table does not know or by a launcher', {
}, async () => {
  const policy = trustPolicy([]);
  const evil = path.join(EVIL, 'adv10-evil.js');
  const control = await explain(policy, [NODE_BIN, evil]);
  assert.equal(control.action, 'deny', `control: ${control.r.stderr}`);
  for (const command of [[NODE_BIN, '--test', evil], ['env', NODE_BIN, evil], [NODE_BIN, '--no-experimental-global-navigator', evil]]) {
    const e = await explain(policy, command);
    assert.equal(e.action, 'deny', `${command.join(' ')}: not denied (${e.action}, source ${e.source})`);
  }
});

test('adv10: a trusted_sources glob with "*" after a directory trusts every interpreter there with any code', {
}, async () => {
  // A plausible glob: "the servers installed in node's directory".
  const policy = trustPolicy([`command://${path.dirname(NODE_BIN)}/*`]);
  const e = await explain(policy, [NODE_BIN, '-e', 'console.log(1)']);
  assert.notEqual(e.action, 'allow', `inline code was trusted as ${e.source} by a path glob`);
  const bashNext = path.join(path.dirname(NODE_BIN), 'bash');
  if (existsSync(bashNext)) {
    const bash = await explain(policy, [bashNext, path.join(EVIL, 'x.sh')]);
    assert.notEqual(bash.action, 'allow', `a script outside the directory was trusted as ${bash.source}`);
  }
});

test('adv10: a program not in the table (poetry run, bundle exec, lua, Rscript, nodemon) is judged by its name alone', {
}, async () => {
  const runners = [['poetry', 'run', 'python'], ['bundle', 'exec', 'ruby'], ['lua'], ['Rscript'], ['nodemon']];
  const policy = trustPolicy(runners.map((r) => `command://${r[0]}`));
  for (const runner of runners) {
    const e = await explain(policy, [...runner, path.join(EVIL, 'x.js')]);
    assert.notEqual(e.action, 'allow', `${runner.join(' ')} EVIL/x.js: trusted with no cell as ${e.source}`);
  }
});

test('adv10: `node -r ./hook.js SERVER` keeps ./hook.js relative, so the trusted source runs any cwd\'s hook with no cell', {
}, async () => {
  const server = path.join(SRV, 'server.mjs');
  // The source as the user saw it when run from SRV, where hook.js is theirs.
  const control = await explain(trustPolicy([]), [NODE_BIN, '-r', './hook.js', server], { cwd: SRV });
  const policy = trustPolicy([control.source]);
  assert.equal((await explain(policy, [NODE_BIN, '-r', './hook.js', server], { cwd: SRV })).action, 'allow',
    `control: the source as the user saw it is trusted (${control.source})`);
  // The same command line from EVIL, where hook.js is the attacker's: another source, never allowed.
  const e = await explain(policy, [NODE_BIN, '-r', './hook.js', server], { cwd: EVIL });
  assert.notEqual(e.action, 'allow', `the attacker's hook is trusted as ${e.source}`);
  const r = await runByPolicy(policy, [NODE_BIN, '-r', './hook.js', server], { cwd: EVIL });
  assert.doesNotMatch(r.stderr, /running WITHOUT a cell/, `the attacker's hook ran with no cell; stderr:\n${r.stderr}`);
});

test('adv10: `python3 -m MOD` trusted runs a MOD.py from the working directory with no cell', {
}, async (t) => {
  if (!existsSync('/usr/bin/python3')) {
    t.skip('no /usr/bin/python3');
    return;
  }
  const policy = trustPolicy(['command://python3 -m adv10_mod']);
  const r = await runByPolicy(policy, ['python3', '-m', 'adv10_mod'], { cwd: EVIL, extraEnv: { PATH: '/usr/bin:/bin' } });
  assert.doesNotMatch(r.stderr, /ADV10-SHADOW-RAN/, `the cwd's module ran with no cell; stderr:\n${r.stderr}`);
});

test('adv10: `command://./server` (the docs\' own example) trusts ./server in whatever directory the run starts', {
}, async () => {
  for (const dir of [SRV, EVIL]) {
    writeFileSync(path.join(dir, 'server'), `#!/bin/sh\necho ADV10-${dir === EVIL ? 'EVIL' : 'OK'}-RAN >&2\n`);
    chmodSync(path.join(dir, 'server'), 0o755);
  }
  // A relative glob can never match (sources are absolute): refused when the policy is read.
  const relative = await explain(trustPolicy(['command://./server']), ['./server'], { cwd: SRV });
  assert.equal(relative.r.code, EXIT.usage, `a glob that can never match was accepted: ${relative.r.stderr}`);
  assert.match(relative.r.stderr, /absolute/);
  const policy = trustPolicy([`command://${SRV}/server`]);
  const control = await explain(policy, ['./server'], { cwd: SRV });
  assert.equal(control.action, 'allow', `control: ${control.r.stderr}`);
  const r = await runByPolicy(policy, ['./server'], { cwd: EVIL });
  assert.doesNotMatch(r.stderr, /running WITHOUT a cell/, `another directory's ./server ran with no cell:\n${r.stderr}`);
});

test('adv10: `php -f server.php` is read as a module, so its source is the same from every directory', {
}, async () => {
  const policy = trustPolicy([]);
  const a = await explain(policy, ['php', '-f', 'server.php'], { cwd: SRV });
  const b = await explain(policy, ['php', '-f', 'server.php'], { cwd: EVIL });
  assert.ok(a.source && b.source, `explain answered: ${a.r.stderr} ${b.r.stderr}`);
  assert.notEqual(a.source, b.source, `two files, one source: ${a.source}`);
});

test('adv10: NODE_OPTIONS / BASH_ENV passed with --env make a trusted source run other code with no cell', {
}, async () => {
  const policy = trustPolicy([`command://${NODE_BIN} ${SRV}/*`, `command://bash ${SRV}/*`]);
  const node = await runByPolicy(policy, [NODE_BIN, path.join(SRV, 'server.mjs')],
    { flags: ['--env', `NODE_OPTIONS=--require=${path.join(EVIL, 'hook.js')}`] });
  assert.doesNotMatch(node.stderr, /ADV10-HOOK-RAN/, `NODE_OPTIONS ran the hook with no cell; stderr:\n${node.stderr}`);
  const bash = await runByPolicy(policy, ['bash', path.join(SRV, 'ok.sh')],
    { flags: ['--env', `BASH_ENV=${path.join(EVIL, 'adv10-evil.sh')}`] });
  assert.doesNotMatch(bash.stderr, /ADV10-EVIL-RAN/, `BASH_ENV ran another script with no cell; stderr:\n${bash.stderr}`);
});

test('adv10: `node` in a trusted source is whatever `node` comes first on PATH', {
}, async () => {
  const bin = makeTempDir('adv10-bin');
  writeFileSync(path.join(bin, 'node'), '#!/bin/sh\necho ADV10-FAKE-NODE-RAN >&2\n');
  chmodSync(path.join(bin, 'node'), 0o755);
  const policy = trustPolicy([`command://node ${SRV}/*`]);
  const r = await runByPolicy(policy, ['node', path.join(SRV, 'server.mjs')], { extraEnv: { PATH: `${bin}:${BASE_PATH}` } });
  assert.doesNotMatch(r.stderr, /ADV10-FAKE-NODE-RAN/, `another program named node ran with no cell; stderr:\n${r.stderr}`);
});

test('adv10: policy explain prints a script path\'s control characters raw, so a file name can rewrite what the terminal shows', {
}, async () => {
  // A script whose name returns the cursor, erases the line and prints a friendlier source.
  const name = 'x\r\x1b[2K  (command:';
  const dir = path.join(EVIL, name, '');
  mkdirSync(path.join(dir, 'node '), { recursive: true });
  const script = path.join(dir, 'node ', 'ok.js)');
  writeReadableFile(script, '\n');
  const r = await runMcpcell(['policy', 'explain', '--policy', trustPolicy([]), '--', NODE_BIN, script],
    { cwd: SRV, env: env(), ...GUARD });
  const out = r.stdout + r.stderr;
  assert.ok(out.includes('x'), `sanity: ${out}`);
  assert.ok(!out.includes('\x1b') && !out.includes('\r'), `raw control characters reach the terminal:\n${JSON.stringify(out.slice(0, 300))}`);
});

test('adv10 held: `..`, unknown options and a bare `node` do not widen a trusted glob', async () => {
  const policy = trustPolicy([`command://${NODE_BIN} ${SRV}/*`]);
  const inside = await explain(policy, [NODE_BIN, path.join(SRV, 'server.mjs')]);
  assert.equal(inside.action, 'allow', `control: ${inside.r.stderr}`);
  // `..` out of SRV: judged at the normalized path, so the glob misses and the deny-by-name sees it.
  const dotdot = await explain(policy, [NODE_BIN, `${SRV}/../evil/adv10-evil.js`]);
  assert.equal(dotdot.source, `command://${NODE_BIN} ${path.join(EVIL, 'adv10-evil.js')}`);
  assert.equal(dotdot.action, 'deny');
  const unknown = await explain(policy, [NODE_BIN, '--some-unknown-option', path.join(SRV, 'server.mjs')]);
  assert.notEqual(unknown.action, 'allow', `an option the table does not know was trusted: ${unknown.source}`);
  const bare = await explain(trustPolicy([`command://${NODE_BIN}`]), [NODE_BIN, path.join(EVIL, 'x.js')]);
  assert.notEqual(bare.action, 'allow', 'command://node trusts every script');
  // Two different argv spell two different sources (ShellQuote is injective).
  const a = await explain(policy, [NODE_BIN, path.join(SRV, 'a b.js')]);
  const b = await explain(policy, [NODE_BIN, path.join(SRV, "a' 'b.js")]);
  assert.notEqual(a.source, b.source);
  // Globs match word by word (a quoted word is one word), so both are scripts in SRV.
  assert.equal(a.action, 'allow', `a script in SRV with a blank in its name: ${a.source}`);
});

test('adv10 held: npm aliases, file: and git specs, ranges with spaces are refused as sources, not judged as the package', async () => {
  const policy = file('official2.json', { rules: [{ name: 'official-pinned', condition: { not: 'untrusted_source' }, action: 'allow' }] });
  for (const spec of ['npx://@modelcontextprotocol/server-memory@npm:adv10-evil@1.0.0', 'npx://@modelcontextprotocol/server-memory@file:/tmp/x',
    'npx://@modelcontextprotocol/server-memory@2026.8.31 ', 'uvx://mcp-server-fetch@git+https://127.0.0.1:9/x']) {
    const r = await runMcpcell(['policy', 'explain', '--json', '--policy', policy, spec], { env: env(), ...GUARD });
    assert.equal(r.code, EXIT.usage, `${spec}: ${r.stdout.slice(0, 200)} ${r.stderr}`);
  }
});

test('adv10 held: the caller\'s NODE_OPTIONS does not reach a server run with no cell unless passed', async () => {
  const policy = trustPolicy([`command://${NODE_BIN} ${SRV}/*`]);
  const r = await runByPolicy(policy, [NODE_BIN, path.join(SRV, 'server.mjs')],
    { extraEnv: { NODE_OPTIONS: `--require=${path.join(EVIL, 'hook.js')}` } });
  assert.match(r.stderr, /ADV10-SERVER-RAN/, `control: the server ran; stderr:\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /ADV10-HOOK-RAN/);
});

// ---------------------------------------------------------------------------
// 2. A policy `allow`: no cell
// ---------------------------------------------------------------------------

const ALLOW_ALL = () => file('allow.json', { rules: [{ name: 'trusted', condition: 'always', action: 'allow' }] });

test('adv10: an allowed browser server still gets its entry\'s --no-sandbox, and stderr says "the cell is the sandbox"', {
}, async () => {
  const home = makeWritableDir('adv10-home');
  const r = await runMcpcell(['run', '--dry-run', '--policy', ALLOW_ALL(), 'chrome-devtools'],
    { env: env({ HOME: home, XDG_CACHE_HOME: path.join(home, '.cache') }), ...GUARD });
  if (r.code === EXIT.usage) return;  // refused: a fix
  assert.equal(r.code, 0, r.stderr);
  const argv = JSON.parse(r.stdout).argv ?? [];
  assert.ok(!argv.some((a) => a.includes('--no-sandbox')),
    `Chromium would run with its own sandbox off and no cell: ${argv.join(' ')}`);
  assert.doesNotMatch(r.stderr, /the cell is the sandbox/, 'stderr claims a cell on a run without one');
});

test('adv10: a docker:// source allowed by the policy runs its arguments as a command ON THE HOST', {
}, async () => {
  // "Trust our own images": the image is on a registry at a closed loopback port (nothing is pulled).
  const policy = file('trust-images.json', {
    trusted_sources: ['docker://127.0.0.1:9/adv10/*'],
    rules: [{ name: 'our-images', condition: { not: 'untrusted_source' }, action: 'allow' }],
  });
  const marks = makeWritableDir('adv10-docker-marks');
  const mark = path.join(marks, 'host-ran');
  const r = await runMcpcell(['run', '--policy', policy, 'docker://127.0.0.1:9/adv10/none:1', '--',
    '/bin/sh', '-c', `echo ADV10-HOST-RAN >&2; touch ${mark}`], { input: '', env: env(), ...GUARD });
  assert.ok(!existsSync(mark), `the image's arguments ran on the host as ${process.getuid?.()}; stderr:\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /ADV10-HOST-RAN/);
});

test('adv10: a docker:// source allowed by the policy with no arguments crashes mcpcell (SIGSEGV)', {
}, async () => {
  const policy = file('trust-images.json', {
    trusted_sources: ['docker://127.0.0.1:9/adv10/*'],
    rules: [{ name: 'our-images', condition: { not: 'untrusted_source' }, action: 'allow' }],
  });
  const r = await runMcpcell(['run', '--policy', policy, 'docker://127.0.0.1:9/adv10/none:1'], { input: '', env: env(), ...GUARD });
  assert.equal(r.signal, null, `mcpcell died of ${r.signal}; stderr:\n${r.stderr}`);
  assert.ok(r.code !== null && r.code < 128, `mcpcell died (exit ${r.code}); stderr:\n${r.stderr}`);
});

test('adv10: policy explain --json of an allowed server says its network allow-list is "enforced"', {
}, async () => {
  // The account's own cache: an allow run refuses a package cache the environment chose (adv11).
  const r = await runMcpcell(['policy', 'explain', '--json', '--policy', ALLOW_ALL(), 'github'], { env: env(), ...GUARD });
  assert.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.action, 'allow');
  const net = j.permissions?.network ?? {};
  assert.doesNotMatch(String(net.enforced ?? ''), /enforced|only way out/,
    `an allow run has the host's network, but explain says: ${net.enforced}`);
});

test('adv10: -v on an allowed registry server says its directory "is bound read-write"', {
}, async () => {
  const site = makeTempDir('adv10-site');
  const home = makeWritableDir('adv10-home');
  const r = await runMcpcell(['run', '--dry-run', '-v', '--policy', ALLOW_ALL(), 'filesystem', site],
    { env: env({ HOME: home, XDG_CACHE_HOME: path.join(home, '.cache') }), ...GUARD });
  if (r.code === EXIT.usage) return;
  assert.doesNotMatch(r.stderr, /is bound read-(write|only)/, `stderr:\n${r.stderr}`);
});

// ---------------------------------------------------------------------------
// 3. mcpcell client wrap
// ---------------------------------------------------------------------------

function clientHome(rel, text) {
  const home = makeTempDir('adv10-client');
  const p = path.join(home, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  writeReadableFile(p, text);
  return { home, file: p };
}
const client = (home, args) => runMcpcell(['client', ...args], { env: env({ HOME: home }), ...GUARD });

test('adv10: a stdio entry that also has a "url" key is left unwrapped as "nothing runs on this machine"', {
}, async () => {
  const { home, file: cfg } = clientHome('.config/Code/User/mcp.json', JSON.stringify({
    servers: { s: { type: 'stdio', command: 'node', args: [path.join(EVIL, 'adv10-evil.js')], url: 'http://127.0.0.1:9/' } },
  }, null, 2));
  const r = await client(home, ['wrap', 'vscode']);
  assert.equal(r.code, 0, r.stderr);
  const written = JSON.parse(readFileSync(cfg, 'utf8'));
  assert.equal(path.basename(written.servers.s.command), 'mcpcell',
    `VS Code runs "command" for type stdio; mcpcell said: ${r.stderr}`);
});

test('adv10: wrap --policy P leaves an entry that already runs mcpcell under another policy, and says only "unchanged"', {
}, async () => {
  const mine = file('mine.json', { rules: [{ condition: 'always', action: 'isolate' }] });
  const theirs = ALLOW_ALL();
  const { home, file: cfg } = clientHome('.cursor/mcp.json', JSON.stringify({
    mcpServers: { s: { command: 'mcpcell', args: ['run', `--policy=${theirs}`, '--', 'node', path.join(EVIL, 'adv10-evil.js')] } },
  }, null, 2));
  const r = await client(home, ['wrap', 'cursor', '--policy', mine]);
  const written = JSON.parse(readFileSync(cfg, 'utf8'));
  const applied = written.mcpServers.s;
  const carriesMine = applied.args.includes(`--policy=${mine}`) && !applied.args.includes(`--policy=${theirs}`);
  assert.ok(carriesMine || /polic/i.test(r.stderr.replace(/--policy/g, '')),
    `the entry still runs under ${theirs} (allow-all) and wrap said:\n${r.stderr}`);
});

test('adv10: a wrapped npx entry\'s env block (NODE_OPTIONS) runs code on the host through mcpcell\'s npm, before any cell', {
}, async () => {
  const home = makeWritableDir('adv10-npm-home');
  const marks = makeWritableDir('adv10-marks');
  const hook = path.join(ROOT, 'mark.js');
  writeReadableFile(hook, `require("fs").writeFileSync(${JSON.stringify(marks)} + "/ran-" + process.pid, process.argv.join(" "));\n`);
  // What a client does with {"command": "npx", "args": ["-y", PKG], "env": {"NODE_OPTIONS": ...}} once wrapped:
  // mcpcell run --env=NODE_OPTIONS npx://PKG, with NODE_OPTIONS in mcpcell's environment. The registry is a
  // closed loopback port: npm fails at once, after it started.
  const r = await runMcpcell(['run', '--env=NODE_OPTIONS', 'npx://adv10-not-a-real-package@1.0.0'], {
    input: '',
    env: env({ HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), NODE_OPTIONS: `--require=${hook}`,
      npm_config_registry: 'http://127.0.0.1:9/', npm_config_fetch_retries: '0' }),
    ...GUARD,
  });
  assert.notEqual(r.code, 0, 'sanity: the install cannot succeed');
  const ran = readdirSync(marks);
  assert.deepEqual(ran, [], `NODE_OPTIONS ran on the host (no cell): ${ran.map((f) => readFileSync(path.join(marks, f), 'utf8')).join('\n')}`);
});

test('adv10: wrap keeps an entry whose env block sets LD_PRELOAD, which the client then sets on mcpcell itself', {
}, async () => {
  const { home } = clientHome('.cursor/mcp.json', JSON.stringify({
    mcpServers: { s: { command: 'node', args: ['server.js'], env: { LD_PRELOAD: path.join(EVIL, 'x.so') } } },
  }, null, 2));
  const r = await client(home, ['wrap', 'cursor', '--dry-run']);
  const note = r.stderr.match(/^mcpcell client:\s+s: (.*)$/m)?.[1] ?? '';
  assert.match(note, /LD_PRELOAD/,
    `wrap rewrote the entry and said nothing about LD_PRELOAD, which the client sets on mcpcell itself:\n${r.stderr}`);
});

test('adv10: wrap turns an npx entry whose env sets npm_config_registry into the registry\'s trusted pinned npx:// source', {
}, async () => {
  // The package the policy trusts as the registry's pinned official entry, fetched from another registry.
  const { home } = clientHome('.cursor/mcp.json', JSON.stringify({
    mcpServers: { s: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory@2026.8.31'],
      env: { npm_config_registry: 'http://127.0.0.1:9/', NPM_CONFIG_REGISTRY: 'http://127.0.0.1:9/' } } },
  }, null, 2));
  const r = await client(home, ['wrap', 'cursor', '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  const note = r.stderr.match(/^mcpcell client:\s+s: (.*)$/m)?.[1] ?? '';
  assert.match(note, /left as it is.*npm_config_registry|npm_config_registry.*left/i,
    `wrapped as the trusted npx:// source, installed from the entry's registry: ${note}`);
});

test('adv10: wrap drops a VS Code entry\'s envFile variables without a word (the cell gets none of them)', {
}, async () => {
  const envFile = file('server.env', 'ADV10_API_KEY=k\n');
  const { home } = clientHome('.config/Code/User/mcp.json', JSON.stringify({
    servers: { s: { type: 'stdio', command: 'node', args: ['server.js'], envFile } },
  }, null, 2));
  const r = await client(home, ['wrap', 'vscode', '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  const note = r.stderr.match(/^mcpcell client:\s+s: (.*)$/m)?.[1] ?? '';
  assert.ok(/envFile/.test(note) || r.stderr.includes('--env=ADV10_API_KEY'),
    `the server loses ${envFile}'s variables and wrap said: ${note}`);
});

test('adv10: wrap --policy ALLOW says an npx entry "runs ... in a cell" though the policy runs it without one', {
}, async () => {
  const { home } = clientHome('.cursor/mcp.json', JSON.stringify({
    mcpServers: { s: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory@2025.4.25'] } },
  }, null, 2));
  const r = await client(home, ['wrap', 'cursor', '--policy', ALLOW_ALL(), '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /runs npx:\/\/\S+ in a cell/, `the policy allows it with no cell:\n${r.stderr}`);
});

test('adv10: XDG_CACHE_HOME (a client env block can set it) points mcpcell at a planted package, run as the trusted official one', {
}, async (t) => {
  // A world-writable directory anyone could have filled: the registry's pinned "memory" package, planted.
  const cache = makeWritableDir('adv10-cache');
  const pkg = path.join(cache, 'mcpcell', 'npx', '@modelcontextprotocol+server-memory@2026.8.31', 'node_modules',
    '@modelcontextprotocol', 'server-memory');
  mkdirSync(pkg, { recursive: true });
  writeReadableFile(path.join(pkg, 'package.json'),
    JSON.stringify({ name: '@modelcontextprotocol/server-memory', version: '2026.8.31', bin: { 'mcp-server-memory': 'index.js' } }));
  writeReadableFile(path.join(pkg, 'index.js'), 'console.error("ADV10-PLANTED-RAN");\n');
  // Planted by another user: as root the planted directories are given to nobody (65534).
  if (process.getuid() !== 0) return t.skip('planting as another user needs root');
  for (let d = pkg; d.startsWith(cache) && d !== cache; d = path.dirname(d)) {
    chmodSync(d, 0o755);
    chownSync(d, 65534, 65534);
  }
  // The policy trusts the registry's pinned official entries (the default trusted_tiers).
  const policy = file('official.json', { rules: [{ name: 'official-pinned', condition: { not: 'untrusted_source' }, action: 'allow' }] });
  const r = await runMcpcell(['run', '--policy', policy, 'memory'], { input: '', env: env({ XDG_CACHE_HOME: cache }), ...GUARD });
  assert.doesNotMatch(r.stderr, /ADV10-PLANTED-RAN/, `planted code ran as the trusted official package, with no cell:\n${r.stderr}`);
  assert.match(r.stderr, /package cache.*(not yours|another user|not your account's)/s, `the refusal names the cache and why:\n${r.stderr}`);
});

test('adv10 held: `SRV/link/../server.mjs` (a symlink out of SRV) is not run as SRV/server.mjs', async () => {
  const policy = trustPolicy([`command://${NODE_BIN} ${SRV}/*`]);
  const out = path.join(EVIL, 'sub');
  mkdirSync(out, { recursive: true });
  writeReadableFile(path.join(EVIL, 'server.mjs'), 'console.error("ADV10-EVIL-RAN");\n');
  const link = path.join(SRV, 'link');
  if (!existsSync(link)) symlinkSync(out, link);
  const r = await runByPolicy(policy, [NODE_BIN, `${link}/../server.mjs`]);
  assert.doesNotMatch(r.stderr, /ADV10-EVIL-RAN/, `the kernel's path ran, not the judged one:\n${r.stderr}`);
});

test('adv10 held: wrap keeps BOM, CRLF, comments and mode; --dry-run writes nothing; unwrap restores byte for byte; a symlink is refused', async () => {
  const text = '\ufeff{\r\n  // mine\r\n  "mcpServers": {\r\n    "a": { // inline\r\n      "command": "node", "args": ["x.js"], /* keep */ "env": {"K": "${input:k}"}\r\n    },\r\n    "b": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2025.4.25"]},\r\n  }\r\n}\r\n';
  const { home, file: cfg } = clientHome('.cursor/mcp.json', text);
  chmodSync(cfg, 0o640);
  const dir = path.dirname(cfg);
  const dry = await client(home, ['wrap', 'cursor', '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(readFileSync(cfg, 'utf8'), text, '--dry-run wrote the file');
  assert.deepEqual(readdirSync(dir), ['mcp.json'], '--dry-run left files');
  const w = await client(home, ['wrap', 'cursor']);
  assert.equal(w.code, 0, w.stderr);
  const wrapped = readFileSync(cfg, 'utf8');
  assert.ok(wrapped.startsWith('\ufeff{\r\n  // mine\r\n'), 'the BOM, CRLF and comment before the servers are kept');
  assert.ok(!wrapped.includes('"K": "<'), 'the env reference is kept as it was');
  assert.match(wrapped, /"K": "\$\{input:k\}"/);
  assert.equal(lstatSync(cfg).mode & 0o777, 0o640, 'the mode is kept');
  for (const f of readdirSync(dir).filter((n) => n !== 'mcp.json')) {
    assert.equal(lstatSync(path.join(dir, f)).mode & 0o777, 0o600, `${f} holds the env values: owner-only`);
  }
  const u = await client(home, ['unwrap', 'cursor']);
  assert.equal(u.code, 0, u.stderr);
  assert.equal(readFileSync(cfg, 'utf8'), text, 'unwrap restores the file byte for byte');
  // A symlinked config is refused, not written through.
  const target = file('target.json', text);
  const { home: h2, file: link } = clientHome('.cursor/placeholder', '');
  symlinkSync(target, path.join(path.dirname(link), 'mcp.json'));
  const s = await client(h2, ['wrap', 'cursor']);
  assert.notEqual(s.code, 0, 'a symlinked config was written through');
  assert.equal(readFileSync(target, 'utf8'), text, 'the link\'s target is untouched');
  assert.ok(MCPCELL_BIN.length > 0);
});

test('adv10 held: Codex TOML (CRLF, comments, inline tables) and Goose YAML (flow maps, comments) wrap and unwrap byte for byte', async () => {
  const cases = [
    ['codex', '.codex/config.toml',
      '# codex\r\n[mcp_servers.a]\r\ncommand = "node" # the server\r\n\r\n[mcp_servers.b]\r\ncommand = "npx"\r\nargs = [ # pkg\r\n  "-y", "@modelcontextprotocol/server-memory@2026.8.31",\r\n]\r\nenv = { K = "v" }\r\n'],
    ['goose', '.config/goose/config.yaml',
      'extensions:\n  a:\n    type: stdio\n    cmd: node   # srv\n    envs: {K: v}\n    enabled: true\n  b: {type: stdio, cmd: npx, args: [-y, "@modelcontextprotocol/server-memory@2026.8.31"], env_keys: [GH]}\n  c:\n    type: builtin\n    name: developer\nGOOSE_MODEL: x\n'],
  ];
  for (const [id, rel, text] of cases) {
    const { home, file: cfg } = clientHome(rel, text);
    const w = await client(home, ['wrap', id]);
    assert.equal(w.code, 0, `${id}: ${w.stderr}`);
    const wrapped = readFileSync(cfg, 'utf8');
    assert.notEqual(wrapped, text, `${id}: nothing was wrapped`);
    assert.ok(!wrapped.includes('"v"') || text.includes('"v"'), `${id}: an env value moved`);
    assert.match(wrapped, /--env=K/, `${id}: the env name is passed by name`);
    const u = await client(home, ['unwrap', id]);
    assert.equal(u.code, 0, `${id}: ${u.stderr}`);
    assert.equal(readFileSync(cfg, 'utf8'), text, `${id}: unwrap does not restore the file byte for byte`);
  }
});
