// Adversary pass adv13 (session 13): command sources on a policy `allow`
// run (no cell): what the policy judges (src/source/interpreted_script.cc,
// src/policy/condition.cc CommandGlobMatch) against what then runs
// (src/cli/run_cmd.cc RunPlainly), and the `--env` refusal
// (src/cli/launch_plan.cc RefuseCellFlagsOnAPlainRun: InjectsCode,
// ChoosesWhatRuns).
//
// Findings (each a `todo` test that fails on the binary it was found on):
//   high   RunPlainly hands the server mcpcell's own $HOME: `--env HOME` is
//          refused (adv11), but HOME set on mcpcell (a client's env block) is
//          the server's: Python runs HOME/.local/lib/pythonX.Y/site-packages/*.pth
//          before the trusted script.
//   medium An interpreter under another file name is read as a plain program,
//          so its code arguments are not part of the source:
//          /usr/bin/perl5.36.0 (a hard link of perl) -e CODE and /usr/bin/rbash
//          (a link to bash) -c CODE are `command:///usr/bin/perl5.36.0` and
//          `command:///usr/bin/rbash`; POLICY.md's own example glob
//          `command:///usr/bin/*` (which "does not trust /usr/bin/node -e
//          CODE") allows them, and the code runs with no cell.
//   medium The same glob allows any code through a program that runs another
//          (setarch, x86_64, prlimit, setpriv, fakeroot, run-parts: not
//          in kLaunchers) or runs commands from its arguments (sed's `e`,
//          find -exec): a plain program is judged without its arguments.
//   medium `--env GIT_COMMON_DIR=DIR` on an allow run is accepted: the git a
//          trusted script runs reads DIR/config and runs its core.fsmonitor.
//          `--env BROWSER=PROG`: Python's webbrowser (an OAuth login) runs PROG.
//          `--env COREPACK_HOME=DIR`: a trusted `corepack pnpm@9.0.0 ...` runs
//          the "pnpm" planted in DIR (no check of a cached entry).
//   medium node --import/--loader VALUE with a "/" is made absolute against
//          the cwd in the source, but node reads a URL: `--import
//          file:///tmp/evil.mjs` is judged `--import /CWD/file:/tmp/evil.mjs`,
//          `--import data:text/javascript,CODE` a file under the cwd; a glob
//          trusting the server directory's hooks (`--import /app/*`) allows both.
//   medium An allow rule by {"name": "/srv/*"} holds for `node -r /tmp/evil.js
//          /srv/server.js` (and --import data:CODE): the script's name matches
//          and the preload runs first with no cell; adv11 made those files
//          names for deny rules only.
//   low    `--audit-log` on an allow run is accepted and records the decision
//          only (no launch, exit or calls), silently: a flag accepted and
//          (mostly) ignored, where --audit-content is refused.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { policyRunner } from './lib/policy_run.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const GUARD = { guardMs: 30_000 };
const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';
const PYTHON = '/usr/bin/python3';
const NODE = ['/usr/local/bin/node', '/usr/bin/node', '/bin/node'].find((p) => existsSync(p)) ?? 'node';
const env = (extra = {}) => ({ PATH: BASE_PATH, HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', ...extra });

// SRV: the servers the policy trusts; EVIL: what the attacker controls.
const ROOT = makeTempDir('adv13-cmd');
const SRV = path.join(ROOT, 'srv');
mkdirSync(SRV);
chmodSync(SRV, 0o755);

const { trusting: policy, file } = policyRunner({ root: ROOT, srv: SRV });

test('adv13: an allow run gives the server mcpcell\'s own HOME (a client env block sets it): Python runs that HOME\'s user-site .pth before the trusted script, with no cell', {
}, async () => {
  const script = path.join(SRV, 'server.py');
  writeReadableFile(script, 'import sys\nprint("ADV13-TRUSTED-PY", file=sys.stderr)\n');
  const home = makeTempDir('adv13-evil-home');
  const version = path.basename(realpathSync(PYTHON)); // python3.11
  const site = path.join(home, '.local', 'lib', version, 'site-packages');
  mkdirSync(site, { recursive: true });
  writeReadableFile(path.join(site, 'adv13.pth'), 'import sys; sys.stderr.write("ADV13-HOME-PTH-RAN\\n")\n');
  const r = await runMcpcell(['run', '--policy', policy(`command://${PYTHON} ${script}`), '--', PYTHON, script],
    { input: '', cwd: ROOT, env: env({ HOME: home }), ...GUARD });
  assert.match(r.stderr, /WITHOUT a cell/, r.stderr);
  assert.doesNotMatch(r.stderr, /ADV13-HOME-PTH-RAN/, `the .pth of mcpcell's HOME ran in the trusted server, no cell:\n${r.stderr}`);
});

test('adv13: an interpreter under another name (perl5.36.0, rbash) is judged as a plain program: `command:///usr/bin/*` allows its -e/-c code with no cell', {
}, async (t) => {
  const cases = [
    ['/usr/bin/perl5.36.0', '-e', 'print STDERR "ADV13-ALIAS-RAN perl\\n"'],
    ['/usr/bin/rbash', '-c', 'echo ADV13-ALIAS-RAN rbash >&2'],
  ].filter((c) => existsSync(c[0]));
  if (cases.length === 0) return t.skip('no perl5.36.0 or rbash on this host');
  const p = policy('command:///usr/bin/*');
  // What the glob is documented not to trust: node -e.
  const node = await runMcpcell(['policy', 'explain', '--policy', p, '--', '/usr/bin/node', '-e', '1'], { input: '', cwd: ROOT, env: env(), ...GUARD });
  assert.match(node.stdout + node.stderr, /decision:\s+isolate/, node.stdout);
  const ran = [];
  for (const argv of cases) {
    const r = await runMcpcell(['run', '--policy', p, '--', ...argv], { input: '', cwd: ROOT, env: env(), ...GUARD });
    // In a cell it may run (the policy isolates what it does not trust); with no cell it must not.
    if (/WITHOUT a cell/.test(r.stderr) && /ADV13-ALIAS-RAN/.test(r.stderr)) ran.push(`${argv.join(' ')}:\n${r.stderr}`);
  }
  assert.deepEqual(ran, [], 'inline code of an interpreter under another name ran with no cell');
});

test('adv13: a program that runs another (setarch, x86_64, prlimit, setpriv, fakeroot) or runs commands from its arguments (sed e, find -exec) is judged as the program alone: `command:///usr/bin/*` allows any code through it', {
}, async (t) => {
  const code = 'echo ADV13-VIA-RAN >&2';
  const cases = [
    ['/usr/bin/setarch', 'x86_64', '/usr/bin/sh', '-c', code],
    ['/usr/bin/x86_64', '/usr/bin/sh', '-c', code],
    ['/usr/bin/prlimit', '/usr/bin/sh', '-c', code],
    ['/usr/bin/setpriv', '/usr/bin/sh', '-c', code],
    ['/usr/bin/fakeroot', '/usr/bin/sh', '-c', code],
    ['/usr/bin/sed', '-n', `1e ${code}`, '/etc/hostname'],
    ['/usr/bin/find', '/etc/hostname', '-exec', '/usr/bin/sh', '-c', code, ';'],
  ].filter((c) => existsSync(c[0]));
  if (cases.length === 0) return t.skip('none of the programs is on this host');
  const p = policy('command:///usr/bin/*');
  const ran = [];
  for (const argv of cases) {
    const r = await runMcpcell(['run', '--policy', p, '--', ...argv], { input: '', cwd: ROOT, env: env(), ...GUARD });
    if (/WITHOUT a cell/.test(r.stderr) && /ADV13-VIA-RAN/.test(r.stderr)) ran.push(`${argv[0]}: ${/command:\/\/\S+/.exec(r.stderr)?.[0]}`);
  }
  assert.deepEqual(ran, [], 'code named in the arguments of a program judged alone ran with no cell');
});

test('adv13: `--env GIT_COMMON_DIR` (git reads DIR/config: core.fsmonitor), `--env BROWSER` (Python\'s webbrowser runs it) and `--env COREPACK_HOME` (corepack runs the package manager it finds there) are accepted on an allow run', {
}, async () => {
  // A trusted server that looks at the repository it is started in, and one that opens a login page.
  const gitScript = path.join(SRV, 'git_status.py');
  writeReadableFile(gitScript, 'import subprocess\nsubprocess.run(["git", "status", "--short"])\n');
  const loginScript = path.join(SRV, 'login.py');
  writeReadableFile(loginScript, 'import webbrowser\nwebbrowser.open("https://login.example/")\n');
  const repo = makeTempDir('adv13-repo');
  const git = spawnSync('git', ['init', '-q', repo]).status === 0;
  const common = makeTempDir('adv13-common');
  if (git) execFileSync('cp', ['-r', `${repo}/.git/.`, common]);
  writeReadableFile(path.join(common, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "echo ADV13-FSMONITOR-RAN >&2; false"\n');
  const evil = path.join(makeTempDir('adv13-browser'), 'browser');
  writeReadableFile(evil, '#!/bin/sh\necho ADV13-BROWSER-RAN >&2\n');
  chmodSync(evil, 0o755);
  const ran = [];
  const cases = [[loginScript, `BROWSER=${evil}`, /ADV13-BROWSER-RAN/]];
  if (git) cases.unshift([gitScript, `GIT_COMMON_DIR=${common}`, /ADV13-FSMONITOR-RAN/]);
  for (const [script, flag, mark] of cases) {
    const r = await runMcpcell(['run', '--policy', policy(`command://${PYTHON} ${script}`), '--env', flag, '--', PYTHON, script],
      { input: '', cwd: repo, env: env(), ...GUARD });
    if (mark.test(r.stderr)) ran.push(`--env ${flag}:\n${r.stderr}`);
  }
  // A launcher the policy trusts in its directory: corepack's pnpm, from COREPACK_HOME's cache.
  if (existsSync('/usr/bin/corepack')) {
    const corepackHome = makeTempDir('adv13-corepack');
    const dir = path.join(corepackHome, 'v1', 'pnpm', '9.0.0');
    mkdirSync(dir, { recursive: true });
    writeReadableFile(path.join(dir, '.corepack'), JSON.stringify({ locator: { name: 'pnpm', reference: '9.0.0' }, bin: { pnpm: 'evil.cjs' }, hash: 'sha512.00' }));
    writeReadableFile(path.join(dir, 'evil.cjs'), 'process.stderr.write("ADV13-COREPACK-HOME-RAN\\n");\n');
    const proj = makeTempDir('adv13-proj');
    const r = await runMcpcell(['run', '--policy', policy(`command://cd ${proj} && /usr/bin/corepack pnpm@9.0.0 --version`),
      '--env', `COREPACK_HOME=${corepackHome}`, '--', 'corepack', 'pnpm@9.0.0', '--version'], { input: '', cwd: proj, env: env(), ...GUARD });
    if (/ADV13-COREPACK-HOME-RAN/.test(r.stderr)) ran.push(`--env COREPACK_HOME=${corepackHome}:\n${r.stderr}`);
  }
  assert.deepEqual(ran, [], 'a variable that chooses a command the trusted server runs was accepted on an allow run');
});

test('adv13: node --import/--loader takes a URL (file:///elsewhere, data:CODE), which the source rewrites into a path under the cwd: a glob trusting hooks from the server\'s directory allows any file or inline code', {
}, async () => {
  const app = path.join(ROOT, 'app');
  mkdirSync(app, { recursive: true });
  const server = path.join(app, 'server.mjs');
  writeReadableFile(server, 'process.stderr.write("ADV13-TRUSTED-NODE\\n");\n');
  writeReadableFile(path.join(app, 'instrument.mjs'), '');
  const evil = path.join(makeTempDir('adv13-hook'), 'evil.mjs');
  writeReadableFile(evil, 'process.stderr.write("ADV13-URL-HOOK-RAN file\\n");\n');
  // The user trusts the app's own hooks (explain showed `--import /app/instrument.mjs` for ./instrument.mjs).
  const p = policy(`command://${NODE} --import ${app}/* ${server}`);
  const ran = [];
  for (const hook of [`file://${evil}`, 'data:text/javascript,process.stderr.write("ADV13-URL-HOOK-RAN data\\n")']) {
    const r = await runMcpcell(['run', '--policy', p, '--', NODE, '--import', hook, server], { input: '', cwd: app, env: env(), ...GUARD });
    // In a cell it may run (the policy isolates what it does not trust); with no cell it must not.
    if (/WITHOUT a cell/.test(r.stderr) && /ADV13-URL-HOOK-RAN/.test(r.stderr)) ran.push(`--import ${hook}: judged as ${/command:\/\/.*? matches/.exec(r.stderr)?.[0]}`);
  }
  assert.deepEqual(ran, [], 'a URL hook outside the trusted directory ran with no cell');
});

test('adv13: an allow rule by {"name": GLOB} matches the script while a preload (node -r FILE, --import data:CODE) from elsewhere runs first, with no cell', {
}, async () => {
  const server = path.join(SRV, 'named.js');
  writeReadableFile(server, 'process.stderr.write("ADV13-TRUSTED-NAMED\\n");\n');
  const evil = path.join(makeTempDir('adv13-preload'), 'evil.js');
  writeReadableFile(evil, 'process.stderr.write("ADV13-NAME-PRELOAD-RAN\\n");\n');
  const p = file('name-policy.json', { rules: [{ name: 'our-servers', condition: { all: [{ source: 'command' }, { name: `${SRV}/*` }] }, action: 'allow' }] });
  const ran = [];
  for (const pre of [['-r', evil], ['--import', 'data:text/javascript,process.stderr.write("ADV13-NAME-PRELOAD-RAN\\n")']]) {
    const r = await runMcpcell(['run', '--policy', p, '--', NODE, ...pre, server], { input: '', cwd: ROOT, env: env(), ...GUARD });
    if (/WITHOUT a cell/.test(r.stderr) && /ADV13-NAME-PRELOAD-RAN/.test(r.stderr)) ran.push(`${pre.join(' ')}:\n${r.stderr}`);
  }
  assert.deepEqual(ran, [], 'code loaded before the named script ran with no cell');
});

test('adv13: `--audit-log` on an allow run is accepted and records only the decision: no launch, no exit, none of the calls, and nothing says so', {
}, async () => {
  const log = path.join(makeTempDir('adv13-audit'), 'audit.jsonl');
  const script = path.join(SRV, 'echo.py');
  writeReadableFile(script, 'import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n');
  const call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}\n';
  const r = await runMcpcell(['run', '--policy', policy(`command://${PYTHON} ${script}`), '--audit-log', log, '--', PYTHON, script],
    { input: call, cwd: ROOT, env: env(), ...GUARD });
  assert.match(r.stderr, /WITHOUT a cell/, r.stderr);
  const events = (existsSync(log) ? readFileSync(log, 'utf8') : '').split('\n').filter(Boolean).map((l) => JSON.parse(l).event);
  const said = /audit/i.test(r.stderr.replace(/--audit-log/g, ''));
  assert.ok(r.code !== 0 || said || events.includes('tool_call'),
    `--audit-log was accepted; the log holds ${JSON.stringify(events)} and stderr says nothing of it:\n${r.stderr}`);
});

// ---------------------------------------------------------------------------
// Held
// ---------------------------------------------------------------------------

test('adv13 held: a path through a symlink and `..` (lnk/../../..) is judged and run as the same lexical path, not the one the kernel would find', async () => {
  // The kernel reads lnk/.. as the parent of lnk's target; the policy reads
  // the path lexically. What runs must be what was judged.
  const repo = makeTempDir('adv13-dotdot');
  const deep = path.join(repo, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l');
  mkdirSync(deep, { recursive: true });
  symlinkSync('a/b/c/d/e/f/g/h/i/j/k/l', path.join(repo, 'lnk'));
  const trusted = path.join(SRV, 's.sh');
  writeReadableFile(trusted, 'echo ADV13-TRUSTED-SH >&2\n');
  const ups = path.join(repo, 'lnk').split('/').length - 1; // climbs to "/" lexically
  const rel = `lnk/${'../'.repeat(ups)}${trusted.slice(1)}`;
  // Where the kernel would land: `ups` levels above lnk's target.
  const kernel = path.join(path.join(repo, 'a/b/c/d/e/f/g/h/i/j/k/l', ...Array(ups).fill('..')), trusted.slice(1));
  mkdirSync(path.dirname(kernel), { recursive: true });
  writeReadableFile(kernel, 'echo ADV13-KERNEL-PATH-RAN >&2\n');
  const r = await runMcpcell(['run', '--policy', policy(`command:///usr/bin/bash ${trusted}`), '--', '/usr/bin/bash', rel],
    { input: '', cwd: repo, env: env(), ...GUARD });
  // The attack's premise: bash itself, given the path, runs the kernel's file.
  const direct = spawnSync('/usr/bin/bash', [rel], { cwd: repo, encoding: 'utf8' });
  assert.match(direct.stderr, /ADV13-KERNEL-PATH-RAN/, `bash ${rel}: ${direct.stderr}`);
  assert.doesNotMatch(r.stderr, /ADV13-KERNEL-PATH-RAN/, r.stderr);
  assert.match(r.stderr, /ADV13-TRUSTED-SH/, r.stderr);
});

test('adv13 held: npx:// allow runs refuse a HOME that only spells the account\'s home differently (trailing slash)', async () => {
  const home = process.env.HOME ?? '/root';
  const p = policy('npx://adv13-none@1.0.0');
  const r = await runMcpcell(['run', '--policy', p, 'npx://adv13-none@1.0.0'], { input: '', env: env({ HOME: `${home}/` }), ...GUARD });
  assert.notEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, /not your account's/, r.stderr);
});
