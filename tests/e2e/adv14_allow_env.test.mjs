// Adversary pass adv14 (session 14): `--env` on a policy `allow` run
// (src/cli/launch_plan.cc RefuseCellFlagsOnAPlainRun, the name lists of
// src/util/code_injecting_env.cc). An allow run refuses --env of a name that
// injects code (InjectsCode), chooses config (ChoosesWhatRuns) or a package
// index (PicksPackageIndex). The lists name variables one by one, and the
// tools a trusted server starts read others that run code of the caller's
// choosing with no cell.
//
// Findings (todo tests, fail on the binary they were found on):
//   high   `--env GOENV=FILE` is accepted: go reads its settings from FILE,
//          GOFLAGS=-toolexec=PROG among them (GOFLAGS itself is refused), so
//          a trusted `go run` runs PROG for every compile step. GOPROXY /
//          GOSUMDB=off / GONOSUMDB / GOTOOLCHAIN (go fetches a toolchain or a
//          module of another proxy's) are accepted too.
//   high   `--env KUBECONFIG=FILE` is accepted: client-go (kubectl, every
//          Kubernetes MCP server) runs the exec credential plugin FILE names.
//   medium more names that pick a program or config that runs code:
//          AWS_CONFIG_FILE (credential_process), DOCKER_CONFIG
//          (credsStore/credHelpers), PUPPETEER_EXECUTABLE_PATH /
//          CHROME_PATH (the browser a browser server starts), JAVA_HOME,
//          PSQLRC (\! commands), VIMINIT/EXINIT, SYSTEMD_PAGER, GH_BROWSER,
//          CARGO_HOME/RUSTC_WRAPPER/RUSTUP_TOOLCHAIN, TCLLIBPATH,
//          R_PROFILE_USER, NODE_EXTRA_CA_CERTS / SSL_CERT_FILE (who may answer
//          for a registry), RUBYGEMS_GEMDEPS (a Gemfile, Ruby code),
//          BUNDLE_APP_CONFIG, MAVEN_OPTS/GRADLE_OPTS (-javaagent),
//          GRADLE_USER_HOME (init scripts), REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE
//          (with HTTPS_PROXY: the server's API calls, token and all).

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { runMcpcell } from './lib/mcpcell.mjs';
import { policyRunner } from './lib/policy_run.mjs';
import { makeTempDir, removeTempDirs, writeReadableFile } from './lib/tmp.mjs';

after(removeTempDirs);

const GUARD = { guardMs: 30_000 };
const BASE_PATH = '/usr/local/bin:/usr/bin:/bin';
const env = (extra = {}) => ({ PATH: BASE_PATH, HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', ...extra });
const ROOT = makeTempDir('adv14-env');
const SRV = path.join(ROOT, 'srv');
mkdirSync(SRV);
chmodSync(SRV, 0o755);

const { trusting: policy } = policyRunner({ root: ROOT, srv: SRV });

function evilProgram(mark) {
  const p = path.join(makeTempDir('adv14-evil'), 'evil.sh');
  writeReadableFile(p, `#!/bin/sh\necho ${mark} >&2\nexec "$@"\n`);
  chmodSync(p, 0o755);
  return p;
}

test('adv14: `--env GOENV=FILE` on an allow run of a trusted `go run`: FILE\'s GOFLAGS=-toolexec runs a program of the caller\'s with no cell (GOFLAGS itself is refused)', {
  skip: !existsSync('/usr/bin/go') && 'no /usr/bin/go',
}, async () => {
  const main = path.join(SRV, 'main.go');
  writeReadableFile(main, 'package main\nimport "fmt"\nfunc main() { fmt.Println("hi") }\n');
  const evil = evilProgram('ADV14-GOENV-TOOLEXEC-RAN');
  const goenv = path.join(makeTempDir('adv14-goenv'), 'env');
  writeReadableFile(goenv, `GOFLAGS=-toolexec=${evil}\n`);
  const r = await runMcpcell(['run', '--policy', policy(`command://cd ${SRV} && /usr/bin/go run ${main}`), '--env', `GOENV=${goenv}`, '--', '/usr/bin/go', 'run', main],
    { input: '', cwd: SRV, env: env(), ...GUARD });
  assert.ok(!(/ADV14-GOENV-TOOLEXEC-RAN/.test(r.stderr) && /WITHOUT a cell/.test(r.stderr)), `GOENV's -toolexec ran with no cell:\n${r.stderr}`);
});

test('adv14: `--env KUBECONFIG=FILE` on an allow run of a trusted kubectl: the exec credential plugin FILE names runs with no cell', {
  skip: !existsSync('/usr/bin/kubectl') && 'no /usr/bin/kubectl',
}, async () => {
  const kc = path.join(makeTempDir('adv14-kube'), 'config');
  writeReadableFile(kc, [
    'apiVersion: v1', 'kind: Config', 'clusters:', '- name: c', '  cluster: {server: "https://127.0.0.1:9"}', 'users:', '- name: u', '  user:',
    '    exec:', '      apiVersion: client.authentication.k8s.io/v1', '      command: /bin/sh',
    '      args: ["-c", "echo ADV14-KUBE-EXEC-RAN >&2; exit 1"]', '      interactiveMode: Never',
    'contexts:', '- name: x', '  context: {cluster: c, user: u}', 'current-context: x', ''].join('\n'));
  const r = await runMcpcell(['run', '--policy', policy('command:///usr/bin/kubectl'), '--env', `KUBECONFIG=${kc}`, '--',
    '/usr/bin/kubectl', 'version', '--request-timeout=3s'], { input: '', cwd: SRV, env: env(), ...GUARD });
  assert.ok(!(/ADV14-KUBE-EXEC-RAN/.test(r.stderr) && /WITHOUT a cell/.test(r.stderr)), `KUBECONFIG's exec plugin ran with no cell:\n${r.stderr}`);
});

const CODE_CHOOSING = [
  'GOENV', 'GOPROXY', 'GOSUMDB', 'GONOSUMDB', 'GOTOOLCHAIN', 'KUBECONFIG', 'AWS_CONFIG_FILE', 'DOCKER_CONFIG',
  'PUPPETEER_EXECUTABLE_PATH', 'CHROME_PATH', 'JAVA_HOME', 'PSQLRC', 'VIMINIT', 'EXINIT', 'SYSTEMD_PAGER', 'GH_BROWSER',
  'CARGO_HOME', 'RUSTC_WRAPPER', 'RUSTUP_TOOLCHAIN', 'TCLLIBPATH', 'R_PROFILE_USER', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE',
  'RUBYGEMS_GEMDEPS', 'BUNDLE_APP_CONFIG', 'GEMRC', 'MAVEN_OPTS', 'GRADLE_OPTS', 'GRADLE_USER_HOME', 'JULIA_LOAD_PATH',
  'R_LIBS_USER', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'SUDO_ASKPASS', 'GH_EDITOR',
];

test('adv14: names that pick a program, a config that runs commands, or a CA are accepted by --env on an allow run', {
}, async () => {
  const accepted = [];
  const pol = policy('command:///bin/true');
  for (const name of CODE_CHOOSING) {
    const r = await runMcpcell(['run', '--policy', pol, '--env', `${name}=/tmp/adv14-x`, '--', '/bin/true'], { input: '', cwd: SRV, env: env(), ...GUARD });
    if (r.code === 0 && !/run without a cell/.test(r.stderr)) accepted.push(name);
  }
  assert.deepEqual(accepted, [], `accepted on an allow run: ${accepted.join(' ')}`);
});

test('adv14 held: GOFLAGS, NODE_OPTIONS, PYTHONWARNINGS, GIT_CONFIG_COUNT and npm_config_* are refused by --env on an allow run', async () => {
  const pol = policy('command:///bin/true');
  for (const name of ['GOFLAGS', 'NODE_OPTIONS', 'PYTHONWARNINGS', 'GIT_CONFIG_COUNT', 'NPM_CONFIG_REGISTRY', 'PIP_INDEX_URL']) {
    const r = await runMcpcell(['run', '--policy', pol, '--env', `${name}=x`, '--', '/bin/true'], { input: '', cwd: SRV, env: env(), ...GUARD });
    assert.notEqual(r.code, 0, `${name} accepted:\n${r.stderr}`);
  }
});

test('adv14 held: --secret with --secret-env NODE_OPTIONS (a file\'s contents as the variable) is refused on an allow run', async () => {
  const file = path.join(makeTempDir('adv14-secret-env'), 'opts');
  writeReadableFile(file, '--require /tmp/adv14-nothing.cjs');
  const r = await runMcpcell(['run', '--policy', policy('command:///bin/true'), '--secret', `opts=${file}`, '--secret-env', 'opts=NODE_OPTIONS', '--', '/bin/true'],
    { input: '', cwd: SRV, env: env(), ...GUARD });
  assert.notEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, /--secret/, r.stderr);
});
