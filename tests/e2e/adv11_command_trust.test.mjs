// Adversary pass adv11 (session 11): the fixes of adv10 (commit 55c0966):
// what the policy judges for a command (src/source/interpreted_script.cc),
// `--env` of a code-injecting variable on a policy `allow` run
// (src/cli/launch_plan.cc RefuseCellFlagsOnAPlainRun with
// src/util/code_injecting_env.cc InjectsCode).
//
// Each finding is a test marked `todo` that fails on the binary it was found
// on and asserts what a fixed mcpcell would do, so it starts passing (and the
// runner says so) once the finding is fixed. The "adv11 held" tests pin what
// withstood the attack. Runs use `policy explain` or a policy `allow` rule
// (no cell); no network.
//
// Findings, by severity (details in each test):
//   high   `--env HOME=DIR` on an allow run is accepted: Python runs
//          DIR/.local/lib/pythonX.Y/site-packages/usercustomize.py (and .pth
//          files) before the trusted script, with no cell. InjectsCode misses HOME.
//   medium `--env PATH=DIR:...` on an allow run is accepted: every command a
//          trusted script runs by name (id, git, cat) is then DIR's.
//          `--env XDG_CONFIG_HOME=DIR`: the git a trusted script runs reads
//          DIR/git/config and runs its core.fsmonitor, with no cell.
//          A deny-by-name rule misses a file run by node -r/--import and
//          `bash -c FILE` (only "the script" is a name).
//          A bare program name on a PATH with an empty or "." entry (":/usr/bin",
//          "/usr/bin:", ".:...") runs the cwd's file with no cell: the source
//          is `command://node ...`, no `cd CWD`.
//          A run with no cell gets the CellSpec environment: HOME=/home/mcp
//          on the host (RunPlainly), i.e. whichever host account owns that path.
//          `python3 -X pycache_prefix=REL SCRIPT` resolves REL against the
//          cwd and Python loads the bytecode it finds there for every module
//          the script imports: the source names no cwd, so a planted
//          .pyc in the cwd runs as the trusted script's module.
//          Relative path values the table does not know as paths
//          (php -d auto_prepend_file=x.php, deno run --env-file=.env) and
//          interpreters that read a config from the cwd (tsx's
//          tsconfig.json paths, bun's bunfig.toml preload, deno's deno.json
//          imports) give the same source from any directory.

import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, statSync, utimesSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, test } from 'node:test';

import { EXIT } from './lib/mcpcell.mjs';
import { BASE_PATH, policyRunner } from './lib/policy_run.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const PYTHON = '/usr/bin/python3';
// A bare program in a source is the file PATH finds (the file that runs).
const onPath = (name) => BASE_PATH.split(':').map((d) => path.join(d, name)).find((p) => existsSync(p)) ?? name;
const BASH = onPath('bash');
const NODE = onPath('node');

// SRV: the directory of servers the policy trusts. EVIL: a directory the
// attacker controls (a cloned repo, a download, a pasted config's paths).
const ROOT = makeTempDir('adv11');
const SRV = path.join(ROOT, 'srv');
const EVIL = path.join(ROOT, 'evil');
mkdirSync(SRV);
mkdirSync(EVIL);
chmodSync(SRV, 0o755);
chmodSync(EVIL, 0o755);

writeReadableFile(path.join(SRV, 'server.mjs'), 'console.error("ADV11-SERVER-RAN");\n');
writeReadableFile(path.join(SRV, 'server.py'), 'import helper\n');
writeReadableFile(path.join(SRV, 'helper.py'), `import sys; print("ADV11-HELPER-OK", file=sys.stderr)\n${'#'.repeat(80)}\n`);
writeReadableFile(path.join(SRV, 'uses-id.sh'), 'id -u >&2\n');
writeReadableFile(path.join(SRV, 'server.ts'), 'console.error("ADV11-TS");\n');
writeReadableFile(path.join(SRV, 'server.php'), '<?php\n');
for (const name of ['id', 'node']) {
  writeReadableFile(path.join(EVIL, name), `#!/bin/sh\necho ADV11-EVIL-${name.toUpperCase()}-RAN >&2\n`);
  chmodSync(path.join(EVIL, name), 0o755);
}

// The policy: allow what a test trusts, isolate the rest.
const { file, trustPolicy, explain, runByPolicy } = policyRunner({ root: ROOT, srv: SRV });

/** Python's X.Y, for the user site path. */
function pythonVersion() {
  const r = spawnSync(PYTHON, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
  return r.stdout.trim();
}

// ---------------------------------------------------------------------------
// 1. --env on a policy `allow` run: names InjectsCode misses
// ---------------------------------------------------------------------------

test('adv11: `--env HOME=DIR` on an allow run makes a trusted Python script run DIR\'s usercustomize.py with no cell', {
}, async () => {
  const home = path.join(ROOT, 'evil-home');
  const site = path.join(home, '.local', 'lib', `python${pythonVersion()}`, 'site-packages');
  mkdirSync(site, { recursive: true });
  writeReadableFile(path.join(site, 'usercustomize.py'), 'import sys; print("ADV11-USERCUSTOMIZE-RAN", file=sys.stderr)\n');
  const policy = trustPolicy([`command://${PYTHON} ${SRV}/*`]);
  // The control: without --env HOME the trusted script runs with no cell, as the policy says.
  const control = await runByPolicy(policy, [PYTHON, path.join(SRV, 'server.py')]);
  assert.match(control.stderr, /ADV11-HELPER-OK/, `control: ${control.stderr}`);
  assert.doesNotMatch(control.stderr, /ADV11-USERCUSTOMIZE-RAN/);
  const r = await runByPolicy(policy, [PYTHON, path.join(SRV, 'server.py')], { flags: ['--env', `HOME=${home}`] });
  assert.doesNotMatch(r.stderr, /ADV11-USERCUSTOMIZE-RAN/, `--env HOME ran other code with no cell; stderr:\n${r.stderr}`);
  assert.equal(r.code, EXIT.usage, `expected the --env refusal of an allow run; stderr:\n${r.stderr}`);
});

test('adv11: `--env PATH=DIR:...` on an allow run makes every command a trusted script runs by name DIR\'s', {
}, async () => {
  const policy = trustPolicy([`command://${BASH} ${SRV}/*`]);
  const command = ['bash', path.join(SRV, 'uses-id.sh')];
  const control = await runByPolicy(policy, command);
  assert.doesNotMatch(control.stderr, /ADV11-EVIL-ID-RAN/, `control: ${control.stderr}`);
  assert.equal(control.code, 0, `control: ${control.stderr}`);
  const r = await runByPolicy(policy, command, { flags: ['--env', `PATH=${EVIL}:${BASE_PATH}`] });
  assert.doesNotMatch(r.stderr, /ADV11-EVIL-ID-RAN/, `--env PATH ran EVIL/id with no cell; stderr:\n${r.stderr}`);
  assert.equal(r.code, EXIT.usage, `expected the --env refusal of an allow run; stderr:\n${r.stderr}`);
});

test('adv11: `--env XDG_CONFIG_HOME=DIR` on an allow run makes the git a trusted script runs load DIR/git/config (core.fsmonitor runs)', {
}, async (t) => {
  const git = ['/usr/bin/git', '/usr/local/bin/git'].find((g) => existsSync(g));
  if (!git) return t.skip('no git');
  const repo = path.join(SRV, 'repo');
  mkdirSync(repo, { recursive: true });
  assert.equal(spawnSync(git, ['init', '-q', repo]).status, 0);
  writeReadableFile(path.join(SRV, 'uses-git.sh'), `${git} -C ${repo} status --short >/dev/null; echo ADV11-GIT-DONE >&2\n`);
  const xdg = path.join(ROOT, 'evil-xdg');
  mkdirSync(path.join(xdg, 'git'), { recursive: true });
  writeReadableFile(path.join(xdg, 'git', 'config'), '[core]\n\tfsmonitor = "echo ADV11-FSMONITOR-RAN >&2; false"\n');
  const policy = trustPolicy([`command://${BASH} ${SRV}/*`]);
  const command = ['bash', path.join(SRV, 'uses-git.sh')];
  const control = await runByPolicy(policy, command);
  assert.match(control.stderr, /ADV11-GIT-DONE/, `control: ${control.stderr}`);
  assert.doesNotMatch(control.stderr, /ADV11-FSMONITOR-RAN/, `control: ${control.stderr}`);
  const r = await runByPolicy(policy, command, { flags: ['--env', `XDG_CONFIG_HOME=${xdg}`] });
  assert.doesNotMatch(r.stderr, /ADV11-FSMONITOR-RAN/, `--env XDG_CONFIG_HOME ran git config's command with no cell; stderr:\n${r.stderr}`);
  assert.equal(r.code, EXIT.usage, `expected the --env refusal of an allow run; stderr:\n${r.stderr}`);
});

test('adv11 held: `--env PATH=DIR:...` does not change which program argv[0] names; on an allow run it is refused', async () => {
  const policy = trustPolicy([`command://${NODE} ${SRV}/*`]);
  const r = await runByPolicy(policy, ['node', path.join(SRV, 'server.mjs')], { flags: ['--env', `PATH=${EVIL}:${BASE_PATH}`] });
  assert.doesNotMatch(r.stderr, /ADV11-EVIL-NODE-RAN/, `EVIL/node ran: ${r.stderr}`);
  assert.equal(r.code, EXIT.usage, r.stderr);
  const plain = await runByPolicy(policy, ['node', path.join(SRV, 'server.mjs')]);
  assert.match(plain.stderr, /ADV11-SERVER-RAN/, `control: ${plain.stderr}`);
});

test('adv11: a bare `node` on a PATH with an empty or "." entry runs the cwd\'s ./node with no cell; its source says nothing of the cwd', {
}, async () => {
  const policy = trustPolicy([`command://${NODE} ${SRV}/*`]);
  for (const PATH of [`:${BASE_PATH}`, `${BASE_PATH}:`, `.:${BASE_PATH}`, `/nonexistent::${BASE_PATH}`]) {
    const e = await explain(policy, ['node', path.join(SRV, 'server.mjs')], { cwd: EVIL, extraEnv: { PATH } });
    const r = await runByPolicy(policy, ['node', path.join(SRV, 'server.mjs')], { cwd: EVIL, extraEnv: { PATH } });
    assert.doesNotMatch(r.stderr, /ADV11-EVIL-NODE-RAN/,
      `PATH=${PATH}: EVIL/node ran with no cell, judged as ${e.source}; stderr:\n${r.stderr}`);
  }
});

test('adv11 held: `--env` of NODE_OPTIONS / LD_PRELOAD / PYTHONPATH / BASH_ENV on an allow run is refused', async () => {
  const policy = trustPolicy([`command://${NODE} ${SRV}/*`]);
  for (const v of ['NODE_OPTIONS=--require=/x.js', 'LD_PRELOAD=/x.so', 'PYTHONPATH=/x', 'BASH_ENV=/x', 'GCONV_PATH=/x']) {
    const r = await runByPolicy(policy, ['node', path.join(SRV, 'server.mjs')], { flags: ['--env', v] });
    assert.equal(r.code, EXIT.usage, `${v}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /ADV11-SERVER-RAN/, `${v}: the server ran`);
  }
});

// ---------------------------------------------------------------------------
// 2. The policy's view of a command: things found from the cwd the source does not name
// ---------------------------------------------------------------------------

/**
 * Plants in `dir`/pc the bytecode Python would load for SRV/helper.py under
 * `-X pycache_prefix=pc` run from `dir`: other code, with the header (source
 * mtime and size) of the real helper.py, so Python takes it as up to date.
 */
function plantPycache(dir) {
  const real = path.join(SRV, 'helper.py');
  const st = statSync(real);
  let bad = 'import sys; print("ADV11-PYC-EVIL-RAN", file=sys.stderr)';
  bad = `${bad}${' '.repeat(st.size - bad.length - 1)}\n`;
  assert.equal(bad.length, st.size);
  const tmp = path.join(dir, 'bad.py');
  writeReadableFile(tmp, bad);
  utimesSync(tmp, st.atime, st.mtime);
  const script = [
    'import sys, os, importlib.util, py_compile',
    'real, tmp, prefix = sys.argv[1:4]',
    'sys.pycache_prefix = prefix',
    'target = importlib.util.cache_from_source(real)',
    'os.makedirs(os.path.dirname(target), exist_ok=True)',
    'py_compile.compile(tmp, cfile=target, doraise=True)',
    'os.unlink(tmp)',
  ].join('\n');
  const r = spawnSync(PYTHON, ['-c', script, real, tmp, path.join(dir, 'pc')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

test('adv11: `python3 -X pycache_prefix=pc SCRIPT` loads the bytecode the cwd holds, but its source names no cwd', {
}, async () => {
  plantPycache(EVIL);
  const command = [PYTHON, '-X', 'pycache_prefix=pc', path.join(SRV, 'server.py')];
  // The user's client config runs exactly this, from SRV; they trust exactly it.
  const fromSrv = await explain(trustPolicy([]), command, { cwd: SRV });
  assert.ok(fromSrv.source, `explain: ${fromSrv.r.stderr}`);
  const policy = trustPolicy([fromSrv.source]);
  const control = await runByPolicy(policy, command, { cwd: SRV });
  assert.match(control.stderr, /ADV11-HELPER-OK/, `control: ${control.stderr}`);
  // The same command line from EVIL runs EVIL's bytecode as SRV/helper.py.
  const r = await runByPolicy(policy, command, { cwd: EVIL });
  assert.doesNotMatch(r.stderr, /ADV11-PYC-EVIL-RAN/, `EVIL's bytecode ran with no cell; stderr:\n${r.stderr}`);
  const fromEvil = await explain(policy, command, { cwd: EVIL });
  assert.notEqual(fromEvil.source, fromSrv.source, 'two directories, two programs, one source');
});

test('adv11: relative path values the table does not know as paths (php -d auto_prepend_file=, deno --env-file=) give one source from any cwd', {
}, async () => {
  const policy = trustPolicy([]);
  for (const command of [
    ['php', '-d', 'auto_prepend_file=prepend.php', path.join(SRV, 'server.php')],
    ['deno', 'run', '--env-file=.env', path.join(SRV, 'server.ts')],
  ]) {
    const a = await explain(policy, command, { cwd: SRV });
    const b = await explain(policy, command, { cwd: EVIL });
    assert.ok(a.source && b.source, `${command.join(' ')}: ${a.r.stderr}${b.r.stderr}`);
    assert.notEqual(a.source, b.source, `${command.join(' ')}: the same source ${a.source} from ${SRV} and ${EVIL}`);
  }
});

test('adv11: tsx / bun / deno read a config from the cwd (tsconfig.json paths, bunfig.toml preload, deno.json imports) that their source does not name', {
}, async () => {
  const policy = trustPolicy([]);
  for (const command of [
    ['tsx', path.join(SRV, 'server.ts')],
    ['bun', 'run', path.join(SRV, 'server.ts')],
    ['deno', 'run', path.join(SRV, 'server.ts')],
  ]) {
    const a = await explain(policy, command, { cwd: SRV });
    const b = await explain(policy, command, { cwd: EVIL });
    assert.ok(a.source && b.source, `${command.join(' ')}: ${a.r.stderr}${b.r.stderr}`);
    assert.notEqual(a.source, b.source, `${command.join(' ')}: the same source ${a.source} from ${SRV} and ${EVIL}`);
  }
});

test('adv11 held: `node --env-file=.env SCRIPT` (a bare file name) says the cwd in its source', async () => {
  const e = await explain(trustPolicy([]), ['node', '--env-file=.env', path.join(SRV, 'server.mjs')], { cwd: EVIL });
  assert.ok(e.source?.startsWith(`command://cd ${EVIL} && `), `source: ${e.source}`);
});

// ---------------------------------------------------------------------------
// 3. `{"name": G}` deny rules: files that run but are not "the script"
// ---------------------------------------------------------------------------

test('adv11: a deny-by-name rule misses the file a preload option runs (node -r/--import F) and inline code that is only a path (bash -c F)', {
}, async () => {
  writeReadableFile(path.join(EVIL, 'adv11-evil.js'), 'console.error("ADV11-EVIL-RAN");\n');
  writeReadableFile(path.join(EVIL, 'adv11-evil.mjs'), 'console.error("ADV11-EVIL-RAN");\n');
  writeReadableFile(path.join(EVIL, 'adv11-evil.sh'), 'echo ADV11-EVIL-RAN >&2\n');
  chmodSync(path.join(EVIL, 'adv11-evil.sh'), 0o755);
  const policy = file('deny.json', {
    rules: [{ name: 'no-evil', condition: { name: 'adv11-evil*' }, action: 'deny' }],
    default: 'isolate',
  });
  // The control: run as the script, it is denied by name.
  const control = await explain(policy, ['node', path.join(EVIL, 'adv11-evil.js')]);
  assert.equal(control.action, 'deny', `control: ${control.r.stderr}`);
  for (const command of [
    ['node', '-r', path.join(EVIL, 'adv11-evil.js'), path.join(SRV, 'server.mjs')],
    ['node', '--import', path.join(EVIL, 'adv11-evil.mjs'), path.join(SRV, 'server.mjs')],
    ['bash', '-c', path.join(EVIL, 'adv11-evil.sh')],
    // Unread lines, whose words a deny rule's name is documented to see: a
    // word that starts with '-' is skipped whole, value and all.
    ['node', `--require=${path.join(EVIL, 'adv11-evil.js')}`, '--adv11-unknown', path.join(SRV, 'server.mjs')],
    ['env', `--split-string=node ${path.join(EVIL, 'adv11-evil.js')}`],
  ]) {
    const e = await explain(policy, command);
    assert.equal(e.action, 'deny', `${command.join(' ')} runs adv11-evil*, judged ${e.action} as ${e.source}`);
  }
});

// ---------------------------------------------------------------------------
// 4. The environment of a run with no cell
// ---------------------------------------------------------------------------

test('adv11: a policy `allow` run gives the host process the cell\'s HOME=/home/mcp, whichever host account owns that directory', {
}, async () => {
  // printenv, not env: env is a launcher, judged as its whole line in its directory.
  const policy = trustPolicy(['command:///usr/bin/printenv']);
  const home = path.join(ROOT, 'caller-home');
  mkdirSync(home, { recursive: true });
  const r = await runByPolicy(policy, ['/usr/bin/printenv'], { extraEnv: { HOME: home } });
  assert.equal(r.code, 0, r.stderr);
  const got = r.stdout.match(/^HOME=(.*)$/m)?.[1];
  // With no cell, /home/mcp is a path on the host: if it exists it is some account's home, not the caller's.
  assert.notEqual(got, '/home/mcp', `the server ran on the host with HOME=/home/mcp:\n${r.stdout}`);
  // The account's home (passwd), not the HOME set on mcpcell: a client's env
  // block sets that one, and its user-site .pth ran first (adv13).
  const account = execFileSync('getent', ['passwd', String(process.getuid())], { encoding: 'utf8' }).split(':')[5];
  assert.ok(got === undefined || got === account, `HOME on a run with no cell: ${got} (the account's is ${account}, mcpcell's ${home})`);
});

test('adv11 held: `bash NAME.sh` with no NAME.sh in the cwd (bash would search PATH for it) is not run as CWD/NAME.sh', async () => {
  const policy = trustPolicy([`command://${BASH} ${SRV}/*`]);
  const r = await runByPolicy(policy, ['bash', 'adv11-not-here.sh']);
  assert.notEqual(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /running WITHOUT a cell/, r.stderr);
});

test('adv11 held: launchers and subcommands (`bun x`, `env`, `npx`) are judged as the whole line, with the cwd', async () => {
  const policy = trustPolicy([`command://bun ${SRV}/*`, `command://env ${SRV}/*`]);
  for (const command of [['bun', 'x', 'adv11-pkg'], ['env', 'node', path.join(SRV, 'server.mjs')], ['npx', '-y', 'adv11-pkg']]) {
    const e = await explain(policy, command, { cwd: EVIL });
    assert.ok(e.source?.startsWith(`command://cd ${EVIL} && `), `${command.join(' ')}: ${e.source}`);
    assert.notEqual(e.action, 'allow', `${command.join(' ')}: ${e.source}`);
  }
});
