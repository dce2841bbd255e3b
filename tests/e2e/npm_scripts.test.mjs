// Issue 14 item 2: npm install scripts of an npx:// package run in a native
// cell of their own, never on the host. The host's npm installs with
// --ignore-scripts; then each package with scripts has them run (as
// mcpcell planned them: source/script_plan.h) in a cell that can write that package's directory only, with a private HOME and
// /tmp and network only to the npm registry the install used (through
// mcpcell's egress proxy). Here a local registry (lib/npm_registry.mjs) on the
// host's loopback serves:
//   - an N-API C addon with a binding.gyp (npm's implicit `node-gyp rebuild`,
//     built from source with the host's g++ and /usr/include/node) and a
//     postinstall script;
//   - a hostile package whose install script tries the host's ~/.bashrc,
//     another package's directory, the install's package.json, the host's
//     /tmp, ~/.ssh and ~/.npmrc's token, the network (the internet, another
//     host port, the proxy asked for other hosts) and the registry itself —
//     and writes what happened into its own directory (the one place it
//     may write);
//   - a plain package, and a tiny MCP server that depends on all three and
//     answers a tool call with the addon's result.
// A real SDK client launches the server through `mcpcell run npx://...`: the
// addon loads in the server's cell. Run as root and as mcpcell-test.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { pidsWithArg, pollUntilClean } from './lib/host.mjs';
import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { scriptsEnv, startPackageRegistry, startRegistry } from './lib/npm_registry.mjs';
import { MCPCELL_BIN } from './lib/paths.mjs';
import { makeWritableDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

const id = randomBytes(4).toString('hex');
const ADDON = `e2e-addon-${id}`;
const HOSTILE = `e2e-hostile-${id}`;
const PLAIN = `e2e-plain-${id}`;
const SERVER = `e2e-addon-server-${id}`;
const TOKEN = `npm_e2eSECRET${randomBytes(8).toString('hex')}`;
const SSH_KEY = `-----BEGIN OPENSSH PRIVATE KEY-----\ne2e-${randomBytes(8).toString('hex')}\n`;
const MARK = `pwned-${id}`;

const ADDON_C = `#include <node_api.h>
static napi_value Answer(napi_env env, napi_callback_info info) {
  napi_value v;
  napi_create_int32(env, 6 * 7 * 1000 + 7, &v);
  return v;
}
NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "answer", NAPI_AUTO_LENGTH, Answer, NULL, &fn);
  napi_set_named_property(env, exports, "answer", fn);
  return exports;
}
`;

/** The hostile install script: every attempt's outcome goes into report.json in its own directory. */
function hostileScript(targets) {
  return `const fs = require('fs'); const net = require('net'); const dns = require('dns'); const path = require('path');
const t = ${JSON.stringify(targets)};
const report = {};
const attempt = (name, fn) => { try { const v = fn(); report[name] = 'ok' + (v === undefined ? '' : ': ' + String(v).slice(0, 200)); } catch (e) { report[name] = 'error ' + (e.code || e.message); } };
process.stderr.write('\\x1b]0;title-${MARK}\\x07\\n');
attempt('write_host_bashrc', () => fs.appendFileSync(t.bashrc, '\\n# ${MARK}\\n'));
attempt('write_home_bashrc', () => fs.appendFileSync(require('os').homedir() + '/.bashrc', '# ${MARK}\\n'));
attempt('write_other_package', () => fs.writeFileSync(path.resolve(__dirname, '..', t.plain, '${MARK}'), 'x'));
attempt('overwrite_other_package_file', () => fs.writeFileSync(path.resolve(__dirname, '..', t.plain, 'index.js'), '${MARK}'));
attempt('write_addon_package', () => fs.writeFileSync(path.resolve(__dirname, '..', t.addon, '${MARK}'), 'x'));
attempt('write_install_package_json', () => fs.appendFileSync(path.resolve(__dirname, '..', '..', 'package.json'), '${MARK}'));
attempt('write_install_dir', () => fs.writeFileSync(path.resolve(__dirname, '..', '..', '${MARK}'), 'x'));
attempt('write_host_tmp_dir', () => fs.writeFileSync(path.join(t.hostTmp, '${MARK}'), 'x'));
attempt('write_tmp', () => fs.writeFileSync('/tmp/${MARK}', 'x'));
attempt('write_usr', () => fs.writeFileSync('/usr/lib/${MARK}', 'x'));
attempt('read_ssh_key', () => fs.readFileSync(t.ssh, 'utf8'));
attempt('read_npmrc', () => fs.readFileSync(t.npmrc, 'utf8'));
attempt('list_host_home', () => fs.readdirSync(t.home).join(','));
attempt('setuid_own_file', () => { const f = path.join(__dirname, 'setuid-file'); fs.writeFileSync(f, 'x'); fs.chmodSync(f, 0o6755); return fs.statSync(f).mode.toString(8); });
attempt('symlink_own_dir_to_host', () => fs.symlinkSync(t.home, path.join(__dirname, 'host-home-link')));
report.env_has_token = JSON.stringify(process.env).includes(t.token);
report.home = require('os').homedir();
report.own_write = (() => { try { fs.writeFileSync(path.join(__dirname, 'own-file'), 'x'); return 'ok'; } catch (e) { return 'error ' + e.code; } })();
// A TCP connect alone proves nothing in a cell whose connections all go to
// the egress proxy (it accepts, then judges): each probe sends a request and
// reports the first line of an answer, or why there was none.
const talk = (host, port, request) => new Promise((resolve) => {
  const s = net.connect({ host, port, timeout: 5000 });
  let got = '';
  const done = (why) => { s.destroy(); resolve(got ? 'ok: ' + got.split('\\r\\n')[0] : 'error ' + why); };
  s.on('connect', () => s.write(request));
  s.on('data', (d) => { got += d.toString('latin1'); });
  s.on('timeout', () => done('timeout'));
  s.on('error', (e) => done(e.code));
  s.on('end', () => done('closed without an answer'));
});
const proxy = new URL(process.env.HTTP_PROXY || 'http://0.0.0.0:1');
(async () => {
  report.registry_get = await talk('127.0.0.1', t.registryPort, 'GET /' + t.plain + ' HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n');
  report.talk_internet = await talk('1.1.1.1', 443, 'GET / HTTP/1.0\\r\\nHost: 1.1.1.1\\r\\n\\r\\n');
  report.talk_other_host_port = await talk('127.0.0.1', t.otherPort, 'GET / HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n');
  report.proxy_get_elsewhere = await talk(proxy.hostname, Number(proxy.port), 'GET http://example.com/ HTTP/1.1\\r\\nHost: example.com\\r\\n\\r\\n');
  report.proxy_connect_elsewhere = await talk(proxy.hostname, Number(proxy.port), 'CONNECT example.com:443 HTTP/1.1\\r\\nHost: example.com:443\\r\\n\\r\\n');
  report.proxy_to_other_host_port = await talk(proxy.hostname, Number(proxy.port), 'GET http://127.0.0.1:' + t.otherPort + '/ HTTP/1.1\\r\\nHost: 127.0.0.1:' + t.otherPort + '\\r\\n\\r\\n');
  report.dns = await new Promise((resolve) => dns.lookup('registry.npmjs.org', (e, a) => resolve(e ? 'error ' + e.code : 'ok ' + a)));
  fs.writeFileSync(path.join(__dirname, 'report.json'), JSON.stringify(report, null, 2));
  console.error('hostile report: ' + JSON.stringify(report));
})();
`;
}

const SERVER_JS = `#!/usr/bin/env node
const readline = require('readline');
const addon = require('${ADDON}');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (msg.id === undefined) return;
  if (msg.method === 'initialize') {
    send({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'addon-server', version: '1.0.0' } } });
  } else if (msg.method === 'tools/list') {
    send({ jsonrpc: '2.0', id: msg.id, result: { tools: [{ name: 'answer', description: 'what the native addon says', inputSchema: { type: 'object' } }] } });
  } else if (msg.method === 'tools/call') {
    send({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: String(addon.answer()) }] } });
  } else {
    send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'no such method' } });
  }
});
`;

let registry;
let other;        // a service on another port of the host's loopback, which no script may reach
let otherHits = 0;
let home;
let hostTmp;
let env;
const cacheDir = () => path.join(home, '.cache', 'mcpcell', 'npx', `${SERVER}@1.0.0`);

before(async () => {
  // A home outside /tmp, as a user's is: under /tmp it would lie inside
  // the cell's own /tmp tmpfs, where a write succeeds harmlessly.
  home = mkdtempSync('/var/tmp/e2e-scripts-home-');
  chmodSync(home, 0o777);
  hostTmp = makeWritableDir('scripts-hosttmp');
  writeReadableFile(path.join(home, '.bashrc'), '# the user\'s bashrc\n');
  mkdirSync(path.join(home, '.ssh'), { mode: 0o700 });
  writeReadableFile(path.join(home, '.ssh', 'id_ed25519'), SSH_KEY);
  other = createServer((req, res) => { otherHits += 1; res.end('the host\'s other service\n'); });
  await new Promise((resolve) => other.listen(0, '127.0.0.1', resolve));
  registry = await startPackageRegistry([
    {
      name: ADDON, version: '1.0.0',
      manifest: { main: 'index.js', gypfile: true, scripts: { postinstall: 'node -e "require(\'fs\').writeFileSync(\'postinstall-ran\', process.env.npm_lifecycle_event)"' } },
      files: {
        'binding.gyp': JSON.stringify({ targets: [{ target_name: 'addon', sources: ['addon.c'] }] }),
        'addon.c': ADDON_C,
        'index.js': 'module.exports = require(\'./build/Release/addon.node\');\n',
      },
    },
    { name: PLAIN, version: '1.0.0', manifest: { main: 'index.js' }, files: { 'index.js': 'module.exports = 1;\n' } },
    { name: HOSTILE, version: '1.0.0', manifest: { scripts: { install: 'node hostile.js' } }, files: { 'hostile.js': '// replaced below\n' } },
    {
      name: SERVER, version: '1.0.0',
      manifest: { bin: { [SERVER]: 'server.js' }, dependencies: { [ADDON]: '1.0.0', [HOSTILE]: '1.0.0', [PLAIN]: '1.0.0' } },
      files: { 'server.js': SERVER_JS },
    },
  ].map((p) => (p.name !== HOSTILE ? p : {
    ...p,
    files: ({ port }) => ({
      'hostile.js': hostileScript({
        bashrc: path.join(home, '.bashrc'), ssh: path.join(home, '.ssh', 'id_ed25519'), npmrc: path.join(home, '.npmrc'),
        home, hostTmp, plain: PLAIN, addon: ADDON, token: TOKEN, registryPort: port, otherPort: other.address().port,
      }),
    }),
  })));
  // The registry's port is known only now: the user's ~/.npmrc carries a token for it.
  writeReadableFile(path.join(home, '.npmrc'), `registry=${registry.url}\n//127.0.0.1:${registry.port}/:_authToken=${TOKEN}\nfetch-retries=0\n`);
  env = scriptsEnv(home);
});
after(async () => {
  await registry?.close();
  other?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  removeTempDirs();
});

/** The host facts a script must not be able to change. */
function hostSnapshot() {
  return {
    bashrc: readFileSync(path.join(home, '.bashrc'), 'utf8'),
    // .cache and npm-cache: mcpcell's package cache and the host npm's own.
    homeEntries: readdirSync(home).filter((e) => e !== '.cache' && e !== 'npm-cache').sort(),
    hostTmp: readdirSync(hostTmp),
    tmpMark: existsSync(`/tmp/${MARK}`),
    usrMark: existsSync(`/usr/lib/${MARK}`),
  };
}

test('an addon with a binding.gyp builds in a cell of its own; hostile install scripts reach nothing of the host', { timeout: 300_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const before = hostSnapshot();
  const r = await runMcpcell(['install', `npx://${SERVER}@1.0.0`], { env, guardMs: 280_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`running the install scripts of ${ADDON} \\(install, postinstall\\) in a native cell of their own`));
  assert.match(r.stderr, new RegExp(`running the install scripts of ${HOSTILE} \\(install\\)`));
  assert.doesNotMatch(r.stderr, new RegExp(`install scripts of ${PLAIN}|install scripts of ${SERVER}`), 'packages without scripts get no cell');
  assert.ok(r.stderr.includes(`network only to the npm registry ${registry.url.replace(/\/$/, "")};`), r.stderr);
  assert.match(r.stderr, /gyp info ok/, 'node-gyp\'s output is on stderr');

  const nm = path.join(cacheDir(), 'node_modules');
  assert.ok(existsSync(path.join(nm, ADDON, 'build', 'Release', 'addon.node')), 'the addon was compiled');
  assert.equal(readFileSync(path.join(nm, ADDON, 'postinstall-ran'), 'utf8'), 'postinstall');
  const report = JSON.parse(readFileSync(path.join(nm, HOSTILE, 'report.json'), 'utf8'));
  t.diagnostic(`hostile report: ${JSON.stringify(report)}`);
  assert.equal(report.write_tmp, 'ok', 'the cell has a /tmp of its own (the host\'s is checked below)');
  for (const k of ['write_host_bashrc', 'write_other_package', 'overwrite_other_package_file', 'write_addon_package',
    'write_install_package_json', 'write_install_dir', 'write_host_tmp_dir', 'write_usr', 'read_ssh_key', 'read_npmrc',
    'talk_internet', 'talk_other_host_port', 'dns']) {
    assert.match(report[k], /^error /, `${k}: ${report[k]} (report: ${JSON.stringify(report)})`);
  }
  // The registry is the one place it reaches (npm in the cell needs it); the
  // proxy answers every other host with a refusal, never with the host's answer.
  assert.match(report.registry_get, /^ok: HTTP\/1\.[01] 200/, JSON.stringify(report));
  for (const k of ['proxy_get_elsewhere', 'proxy_connect_elsewhere', 'proxy_to_other_host_port']) {
    assert.match(report[k], /^(error |ok: HTTP\/1\.[01] 403)/, `${k}: ${report[k]}`);
  }
  assert.equal(otherHits, 0, 'the host\'s other service was never reached');
  // Each denial says why and what to do: the registry is all it gets, no flag widens it.
  assert.match(r.stderr, /egress denied.*install scripts reach only the npm registry/s, r.stderr);
  assert.doesNotMatch(r.stderr, /--allow-host/, 'no flag reaches this cell, so none is offered');
  // The home's path exists in the cell only as the way to the install directory.
  assert.match(report.list_host_home, /^(error |ok: \.cache$)/, report.list_host_home);
  // A setuid bit set in the cell does not reach the host's file.
  const setuid = path.join(nm, HOSTILE, 'setuid-file');
  if (existsSync(setuid)) assert.equal(statSync(setuid).mode & 0o6000, 0, `setuid/setgid bits on the host: ${report.setuid_own_file}`);
  assert.equal(report.env_has_token, false, 'the npmrc token is not in the script\'s environment');
  assert.equal(report.own_write, 'ok', 'the script may write its own package directory');
  assert.notEqual(report.home, home, 'HOME is the cell\'s own');
  assert.ok(!r.stderr.includes(`\x1b]0;title-${MARK}`), 'an escape sequence from the script is not passed to the terminal raw');
  assert.ok(r.stderr.includes(`^[]0;title-${MARK}^G`), 'it is shown instead');
  assert.ok(!r.stderr.includes(TOKEN) && !r.stderr.includes(SSH_KEY.split('\n')[1]), 'no secret reached the output');

  // The host is unchanged: the home, its /tmp, the other packages, the install's own files.
  assert.deepEqual(hostSnapshot(), before);
  assert.deepEqual(readdirSync(path.join(nm, PLAIN)).sort(), ['index.js', 'package.json']);
  assert.equal(readFileSync(path.join(nm, PLAIN, 'index.js'), 'utf8'), 'module.exports = 1;\n');
  assert.ok(!readdirSync(path.join(nm, ADDON)).includes(MARK));
  assert.ok(!readFileSync(path.join(cacheDir(), 'package.json'), 'utf8').includes(MARK));
  assert.ok(!readdirSync(cacheDir()).includes(MARK));
  const record = JSON.parse(readFileSync(path.join(cacheDir(), '.mcpcell-install-scripts.json'), 'utf8'));
  assert.equal(record.install_scripts, 'ran');
  assert.deepEqual(record.packages.map((p) => p.package).sort(), [ADDON, HOSTILE].sort());
});

test('the server loads the addon in its own cell (a real SDK client through mcpcell run npx://); the scripts do not run again', { timeout: 300_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const transport = new StdioClientTransport({ command: MCPCELL_BIN, args: ['run', `npx://${SERVER}@1.0.0`], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const client = new Client({ name: 'npm-scripts-e2e', version: '0.0.0' });
  t.after(() => client.close().catch(() => {}));
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`connect failed: ${e.message}\nmcpcell stderr:\n${stderr}`);
  }
  const res = await client.callTool({ name: 'answer', arguments: {} });
  assert.equal(res.content[0].text, '42007', `the N-API addon answered; stderr:\n${stderr}`);
  await client.close();
  assert.doesNotMatch(stderr, /running the install scripts/, 'the install recorded that its scripts ran');
});

test('a failing install script: the install fails naming the package and its last lines, and nothing is published', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const name = `e2e-failing-${id}`;
  const reg = await startRegistry(name, '1.0.0', 'serve', { scripts: { install: 'echo "compiler says: boom-' + id + '" >&2; exit 3' } });
  t.after(() => reg.close());
  const failEnv = { ...env, npm_config_registry: reg.url };
  const r = await runMcpcell(['install', `npx://${name}@1.0.0`], { env: failEnv, guardMs: 120_000 });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`run the install scripts of ${name}.*they failed in their cell \\(a script exited with status \\d+`));
  assert.match(r.stderr, new RegExp(`\\| .*compiler says: boom-${id}`), 'the script\'s last lines are in the error');
  assert.match(r.stderr, /--install-scripts=skip installs without running them/);
  assert.equal(existsSync(path.join(home, '.cache', 'mcpcell', 'npx', `${name}@1.0.0`)), false, 'nothing published');

  // --install-scripts=skip: installed, the script not run, the user told which.
  const s = await runMcpcell(['install', '--install-scripts=skip', `npx://${name}@1.0.0`], { env: failEnv, guardMs: 120_000 });
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stderr, new RegExp(`warning: install scripts not run \\(--install-scripts=skip\\): ${name};`));
  assert.doesNotMatch(s.stderr, /boom-/);
  // ...and the next default launch runs them (in place) and fails the same way, without publishing a record.
  const again = await runMcpcell(['install', `npx://${name}@1.0.0`], { env: failEnv, guardMs: 120_000 });
  assert.equal(again.code, 1, again.stderr);
  assert.match(again.stderr, /was installed without running its install scripts; running them now/);
  assert.equal(existsSync(path.join(home, '.cache', 'mcpcell', 'npx', `${name}@1.0.0`, '.mcpcell-install-scripts.json')), false);
  // `run` says the same, as an install failure (exit 125), without blaming the network.
  const run = await runMcpcell(['run', `npx://${name}@1.0.0`], { env: failEnv, input: '', guardMs: 120_000 });
  assert.equal(run.code, 125, run.stderr);
  assert.match(run.stderr, new RegExp(`could not install npx://${name}@1\\.0\\.0 \\(run the install scripts of ${name}\\)`));
  assert.doesNotMatch(run.stderr, /check the network/);
  // ...and runs with --install-scripts=skip.
  const skipped = await runMcpcell(['run', '--install-scripts=skip', `npx://${name}@1.0.0`], { env: failEnv, input: '', guardMs: 120_000 });
  assert.doesNotMatch(skipped.stderr, /install scripts of|could not install/, skipped.stderr);
});

test('--install-scripts takes cell or skip, and only for npx:// sources', { timeout: 60_000 }, async () => {
  const bad = await runMcpcell(['install', '--install-scripts=host', `npx://${SERVER}@1.0.0`], { env });
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--install-scripts: host not in \{cell,skip\}/);
  const notNpx = await runMcpcell(['run', '--install-scripts=skip', '--dry-run', '--', '/bin/true'], { env });
  assert.equal(notNpx.code, 2, notNpx.stderr);
  assert.match(notNpx.stderr, /--install-scripts skip: applies to npx:\/\/ sources only/);
});

test('an install script that turns the server\'s bin into a symlink to a host file: the launch refuses it', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const name = `e2e-binlink-${id}`;
  const secret = path.join(home, 'project', 'notes.txt');
  mkdirSync(path.dirname(secret), { recursive: true });
  writeReadableFile(path.join(path.dirname(secret), 'package.json'), '{}');
  writeReadableFile(secret, 'private notes\n');
  const reg = await startRegistry(name, '1.0.0', 'serve', { scripts: { install: `ln -sf ${secret} server.js` } });
  t.after(() => reg.close());
  const linkEnv = { ...env, npm_config_registry: reg.url };
  const r = await runMcpcell(['run', `npx://${name}@1.0.0`], { env: linkEnv, input: '', guardMs: 120_000 });
  assert.notEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, /its "bin" server\.js resolves outside the package, to .*notes\.txt .*refusing to run it/);
  assert.doesNotMatch(r.stderr, /auto-mounted/);
});

test('an install script that never ends: its cell is stopped at --install-timeout, the error says so, nothing is left running', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const name = `e2e-hanging-${id}`;
  const marker = `hang-${id}`;
  const reg = await startRegistry(name, '1.0.0', 'serve', { scripts: { install: `echo started-${marker}; exec node -e "setInterval(() => {}, 1000)" ${marker}` } });
  t.after(() => reg.close());
  const r = await runMcpcell(['install', '--install-timeout', '4s', `npx://${name}@1.0.0`],
    { env: { ...env, npm_config_registry: reg.url }, guardMs: 120_000 });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`run the install scripts of ${name}: they did not finish within 4s and their cell was stopped; allow longer with --install-timeout, e\\.g\\. 8s`));
  assert.match(r.stderr, new RegExp(`\\| .*started-${marker}`), 'the last lines it printed');
  const left = await pollUntilClean(() => (pidsWithArg(marker).length ? `pids ${pidsWithArg(marker).join(', ')}` : null));
  assert.equal(left, null, 'no process of the script outlives its cell');
  assert.equal(existsSync(path.join(home, '.cache', 'mcpcell', 'npx', `${name}@1.0.0`)), false, 'nothing published');
});

test('an optional dependency whose install script fails is removed, as npm does, and the install goes on', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const top = `e2e-withopt-${id}`;
  const opt = `e2e-optfail-${id}`;
  const reg = await startPackageRegistry([
    { name: opt, version: '1.0.0', manifest: { scripts: { install: `echo "no compiler for ${opt}" >&2; exit 1` } } },
    { name: top, version: '1.0.0', manifest: { bin: { [top]: 'server.js' }, optionalDependencies: { [opt]: '1.0.0' } }, files: { 'server.js': '#!/usr/bin/env node\n' } },
  ]);
  t.after(() => reg.close());
  const r = await runMcpcell(['install', `npx://${top}@1.0.0`], { env: { ...env, npm_config_registry: reg.url }, guardMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`warning: run the install scripts of ${opt}: they failed in their cell`));
  assert.match(r.stderr, new RegExp(`${opt} is an optional dependency: removed, as npm does, and the install goes on`));
  const dir = path.join(home, '.cache', 'mcpcell', 'npx', `${top}@1.0.0`);
  assert.equal(existsSync(path.join(dir, 'node_modules', opt)), false);
  assert.ok(existsSync(path.join(dir, 'node_modules', top, 'server.js')));
  const record = JSON.parse(readFileSync(path.join(dir, '.mcpcell-install-scripts.json'), 'utf8'));
  assert.deepEqual(record.optional_removed, [`/node_modules/${opt}`]);
});

test('no native cell to be had (user namespaces used up): the install is refused, saying what is missing; the script never runs on the host', { timeout: 180_000 }, async (t) => {
  if (await skipWithoutCell(t)) return;
  const probe = spawnSync('unshare', ['-Ur', 'sh', '-c', 'echo 0 > /proc/sys/user/max_user_namespaces'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    t.skip(`cannot make a user namespace whose own user namespaces are used up here: ${probe.stderr.trim()}`);
    return;
  }
  const name = `e2e-nocell-${id}`;
  const marker = path.join(hostTmp, `ran-on-host-${id}`);
  const reg = await startRegistry(name, '1.0.0', 'serve', { scripts: { install: `touch ${marker} ran-in-package` } });
  t.after(() => reg.close());
  // mcpcell runs in a user namespace of its own whose limit of nested user
  // namespaces is 0: clone(CLONE_NEWUSER) fails with ENOSPC, as on a machine
  // with user namespaces off (user.max_user_namespaces=0).
  const r = await new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-Ur', 'sh', '-c', 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" "$@"',
      MCPCELL_BIN, 'install', `npx://${name}@1.0.0`], { env: { ...env, npm_config_registry: reg.url }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (status) => { clearTimeout(guard); resolve({ status, stderr }); });
  });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`run the install scripts of ${name}: they run only in a native cell, and none can be made here \\(.*\\); they never run on the host\\. To install without them, add --install-scripts=skip`));
  assert.equal(existsSync(marker), false, 'the script did not run on the host');
  assert.equal(existsSync(path.join(home, '.cache', 'mcpcell', 'npx', `${name}@1.0.0`)), false, 'nothing published');
});
