// Adversary pass adv13 (session 13): the adv11 fixes for policy `allow`
// runs of npx:// and uvx:// sources (src/cli/launch_plan.cc
// WhySourceIsSwappable / RefuseSwappableSourceOnAPlainRun, RunPlainly in
// src/cli/run_cmd.cc). An allow run is refused when the package cache is not
// the account's, npm's `registry` is not https://registry.npmjs.org/, or a
// PIP_/UV_ index variable is set. The attacker is, as in adv11, whatever sets
// mcpcell's own environment (an MCP client's env block, a project's config).
//
// Each finding is a `todo` test that fails on the binary it was found on and
// asserts what a fixed mcpcell would do. The runs use the account's own cache
// (HOME = the account's home, no XDG_CACHE_HOME), which is the only cache an
// allow run accepts; every package name is unique to the run and its cache
// entry is removed afterwards.
//
// Findings:
//   high   `@scope:registry` (npm_config_@scope:registry, or an npmrc) sends a
//          scoped package to another registry; only the default `registry`
//          is compared with the public one. The other registry's code runs
//          with no cell as the trusted npx://@scope/pkg@VERSION.
//   high   HTTPS_PROXY with npm_config_strict_ssl=false (or a CA of the
//          attacker's in an npm cafile) keeps `registry` public and
//          puts a man in the middle: the proxy's package runs with no cell.
//   high   uvx: pip's index from a pip.conf under $XDG_CONFIG_HOME (or HOME,
//          with XDG_CACHE_HOME naming the account's cache) is not looked at;
//          only PIP_*/UV_* index variables are (PIP_REQUIREMENT's file,
//          whose `--index-url` line pip obeys, is not either). Another index's wheel is
//          installed and run with no cell as the trusted uvx:// package.
//   high   the `node` that runs an npx:// package on an allow run is the one
//          mcpcell's PATH finds, relative entries included
//          (PATH=node_modules/.bin:... finds the cwd repo's own `node`): the
//          package is trusted, the interpreter is whatever PATH says.
//   high   the check looks at this run's environment, but the cache entry
//          (keyed by name@version only) was filled by whatever ran before:
//          `mcpcell install` or an isolated run with npm_config_registry set
//          installs another registry's package into the account's cache, and
//          a later allow run with a clean environment runs it with no cell.
//          (The same holds for uvx:// and pip's index.)
//   medium a version glob in trusted_sources (npx://PKG@1.0.*) is matched
//          against the spec as written: `1.0.0||9.0.0` matches it, and npm
//          resolves it to 9.0.0 after the policy allowed it.

import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { ACCOUNT_HOME, RUN_ID, accountEnv, cacheEntry, removeCacheEntries } from './lib/account_cache.mjs';
import { runMcpcell } from './lib/mcpcell.mjs';
import { markingPackage, mitmCertificate, mitmRegistry } from './lib/mitm.mjs';
import { startPackageRegistry } from './lib/npm_registry.mjs';
import { BASE_PATH, policyRunner } from './lib/policy_run.mjs';
import { PY_PROJECT, startIndex } from './lib/pypi_index.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);
after(removeCacheEntries);

const ROOT = makeTempDir('adv13-allow');
const ID = RUN_ID;
const { trusting } = policyRunner({ root: ROOT });

// The account's cache, as an allow run requires: HOME is the account's home, no XDG_CACHE_HOME.
const env = (extra = {}) => accountEnv({ npm_config_update_notifier: 'false', npm_config_fetch_retries: '0', ...extra });

const npxEntry = (name) => cacheEntry('npx', name);

test('adv13: npm_config_@scope:registry (or an npmrc\'s @scope:registry) installs a trusted scoped npx:// package from another registry, run with no cell', {
  timeout: 120_000,
}, async (t) => {
  const ran = [];
  for (const how of ['env', 'npmrc']) {
    const scope = `@adv13${how}${ID}`;
    const name = `${scope}/srv`;
    const reg = await startPackageRegistry([markingPackage(name, `ADV13-SCOPE-REGISTRY-RAN-${how}`)]);
    t.after(() => reg.close());
    const extra = {};
    if (how === 'env') extra[`npm_config_${scope}:registry`] = reg.url;
    else {
      const rc = path.join(ROOT, `scope-${how}.npmrc`);
      writeReadableFile(rc, `${scope}:registry=${reg.url}\n`);
      extra.npm_config_userconfig = rc;
    }
    const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
      { input: '', env: env(extra), guardMs: 55_000 });
    rmSync(npxEntry(name), { recursive: true, force: true });
    if (/ADV13-SCOPE-REGISTRY-RAN/.test(r.stderr)) {
      ran.push(`${how}: the scope's registry (${reg.requests.join(', ')}) chose the code, run ${/WITHOUT a cell/.test(r.stderr) ? 'with no cell' : ''}:\n${r.stderr}`);
    }
  }
  assert.deepEqual(ran, []);
});

test('adv13: HTTPS_PROXY with strict-ssl off, or with a CA of the proxy\'s own, man-in-the-middles the public registry; the trusted npx:// package is the proxy\'s, run with no cell', {
  timeout: 120_000,
}, async (t) => {
  const ran = [];
  const dir = makeTempDir('adv13-mitm');
  const cert = mitmCertificate(dir, 'adv13 mitm ca', ['registry.npmjs.org']);
  for (const how of ['strict-ssl=false', 'NODE_EXTRA_CA_CERTS', 'npm_config_cafile']) {
    const name = `adv13-mitm-${how.replace(/\W/g, '').toLowerCase()}-${ID}`;
    const proxy = await mitmRegistry(t, name, `ADV13-MITM-RAN-${how}`, cert.tls);
    const extra = { HTTPS_PROXY: proxy.url };
    if (how === 'strict-ssl=false') extra.npm_config_strict_ssl = 'false';
    if (how === 'NODE_EXTRA_CA_CERTS') extra.NODE_EXTRA_CA_CERTS = cert.ca;
    if (how === 'npm_config_cafile') extra.npm_config_cafile = cert.ca;
    const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
      { input: '', env: env(extra), guardMs: 55_000 });
    rmSync(npxEntry(name), { recursive: true, force: true });
    t.diagnostic(`${how}: CONNECTs ${proxy.connects.join(', ')}`);
    if (/ADV13-MITM-RAN/.test(r.stderr)) {
      ran.push(`${how}: the proxy answered for registry.npmjs.org and its package ran ${/WITHOUT a cell/.test(r.stderr) ? 'with no cell' : ''}:\n${r.stderr}`);
    }
  }
  assert.deepEqual(ran, []);
});

test('adv13: a pip.conf under $XDG_CONFIG_HOME, or under a HOME that is not the account\'s (XDG_CACHE_HOME naming the account\'s cache), or PIP_REQUIREMENT\'s file, picks the index of a trusted uvx:// package run with no cell', {
  timeout: 120_000,
}, async (t) => {
  const ran = [];
  for (const how of ['XDG_CONFIG_HOME', 'HOME', 'PIP_REQUIREMENT']) {
    const version = `13.${ID}.${['XDG_CONFIG_HOME', 'HOME', 'PIP_REQUIREMENT'].indexOf(how)}`;
    const idx = await startIndex([version]);
    t.after(() => idx.close());
    const entry = cacheEntry('uvx', PY_PROJECT, version);
    const dir = makeTempDir(`adv13-pip-${how}`);
    const conf = how === 'XDG_CONFIG_HOME' ? path.join(dir, 'pip', 'pip.conf') : path.join(dir, '.config', 'pip', 'pip.conf');
    mkdirSync(path.dirname(conf), { recursive: true });
    writeReadableFile(conf, `[global]\nindex-url = ${idx.url}\nretries = 0\n`);
    // A requirements file pip reads from PIP_REQUIREMENT may name its own index.
    const req = path.join(dir, 'req.txt');
    writeReadableFile(req, `--index-url ${idx.url}\n`);
    const extra = how === 'XDG_CONFIG_HOME' ? { XDG_CONFIG_HOME: dir }
      : how === 'HOME' ? { HOME: dir, XDG_CACHE_HOME: path.join(ACCOUNT_HOME, '.cache') } : { PIP_REQUIREMENT: req };
    const r = await runMcpcell(['run', '--policy', trusting(`uvx://${PY_PROJECT}@${version}`), `uvx://${PY_PROJECT}@${version}`],
      { input: '', env: env(extra), guardMs: 55_000 });
    rmSync(entry, { recursive: true, force: true });
    const fetched = idx.requests.some((q) => q.includes('.whl'));
    if (fetched && /WITHOUT a cell/.test(r.stderr)) {
      ran.push(`${how}: the wheel came from the pip.conf's index (${idx.requests.join(', ')}) and ran with no cell:\n${r.stderr}`);
    }
  }
  assert.deepEqual(ran, []);
});

test('adv13: an allow run of a trusted npx:// package runs the `node` a relative PATH entry finds in the cwd (a repo\'s node_modules/.bin/node)', {
}, async () => {
  const ran = [];
  const name = `adv13-pathnode-${ID}`;
  const entry = npxEntry(name);
  // A package installed earlier in the account's cache (what `mcpcell install` leaves).
  const dir = path.join(entry, 'node_modules', name);
  mkdirSync(dir, { recursive: true });
  writeReadableFile(path.join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', bin: { srv: 'index.js' } }));
  writeReadableFile(path.join(dir, 'index.js'), 'console.error("ADV13-TRUSTED-PACKAGE");\n');
  // The repository the client runs in: its own node_modules/.bin/node and ./node.
  const repo = makeTempDir('adv13-repo');
  mkdirSync(path.join(repo, 'node_modules', '.bin'), { recursive: true });
  for (const rel of ['node_modules/.bin/node', 'node']) {
    writeReadableFile(path.join(repo, rel), `#!/bin/sh\necho ADV13-REPO-NODE-RAN ${rel} "$@" >&2\n`);
    chmodSync(path.join(repo, rel), 0o755);
  }
  // A relative entry, and an empty one (the cwd, as execvp reads it).
  for (const PATH of [`node_modules/.bin:${BASE_PATH}`, `:${BASE_PATH}`]) {
    const r = await runMcpcell(['run', '--install-scripts=skip', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
      { input: '', cwd: repo, env: env({ PATH }), guardMs: 30_000 });
    if (/ADV13-REPO-NODE-RAN/.test(r.stderr)) ran.push(`PATH=${PATH}: the repo's node ran the trusted package with no cell:\n${r.stderr}`);
  }
  assert.deepEqual(ran, []);
});

test('adv13: the check is made at run time, the cache filled earlier: `mcpcell install` (or an isolated run) with another registry puts its package in the account\'s cache, and a later allow run with a clean environment runs it with no cell', {
  timeout: 120_000,
}, async (t) => {
  const ran = [];
  for (const how of ['install', 'run --isolate']) {
    const name = `adv13-poison-${how.replace(/\W/g, '')}-${ID}`;
    const reg = await startPackageRegistry([markingPackage(name, `ADV13-POISONED-CACHE-RAN-${how}`)]);
    t.after(() => reg.close());
    // Step 1: any install under another registry (an env block of another entry, a setup script).
    const first = how === 'install'
      ? ['install', '--install-scripts=skip', `npx://${name}@1.0.0`]
      : ['run', '--isolate', '--install-scripts=skip', `npx://${name}@1.0.0`];
    const a = await runMcpcell(first, { input: '', env: env({ npm_config_registry: reg.url }), guardMs: 55_000 });
    t.diagnostic(`${how}: exit ${a.code}, registry asked: ${reg.requests.join(', ')}`);
    // Step 2: the allow run, nothing in its environment but the account's own settings.
    const r = await runMcpcell(['run', '--policy', trusting(`npx://${name}@1.0.0`), `npx://${name}@1.0.0`],
      { input: '', env: env(), guardMs: 30_000 });
    rmSync(npxEntry(name), { recursive: true, force: true });
    if (/WITHOUT a cell/.test(r.stderr) && new RegExp(`ADV13-POISONED-CACHE-RAN-${how}`).test(r.stderr)) {
      ran.push(`${how}: the other registry's package ran with no cell:\n${r.stderr}`);
    }
  }
  assert.deepEqual(ran, []);
});

test('adv13: a trusted_sources version glob (npx://PKG@1.0.*) matches the range `1.0.0||9.0.0`, which npm resolves to 9.0.0: the policy allows a version it never named', {
  timeout: 60_000,
}, async (t) => {
  const name = `adv13-range-${ID}`;
  const reg = await startPackageRegistry([{ name, version: '9.0.0', manifest: { bin: { srv: 'index.js' } }, files: { 'index.js': '' } }]);
  t.after(() => reg.close());
  // Explained with --isolate and a cache of its own (nothing runs, nothing of the account's is touched):
  // the record shows both the policy's own decision and the version npm resolves.
  const home = makeTempDir('adv13-range-home');
  const r = await runMcpcell(['policy', 'explain', '--json', '--isolate', '--policy', trusting(`npx://${name}@1.0.*`), `npx://${name}@1.0.0||9.0.0`], {
    input: '', env: env({ HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), npm_config_registry: reg.url }), guardMs: 30_000,
  });
  assert.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  t.diagnostic(`policy: ${j.decision?.action}; npm resolves ${j.install?.version}`);
  assert.equal(j.install?.version, '9.0.0', r.stdout);
  assert.notEqual(j.decision?.action, 'allow', `the glob npx://${name}@1.0.* allowed ${name}@9.0.0: ${j.decision?.reason}`);
});
