// Adversary pass adv14 (session 14): allow runs of uvx:// refuse every
// PIP_*/UV_* variable (PIP_CERT among them) and pip config files. pip's
// HTTP library (requests) reads its CA bundle from the environment too:
// REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE, which neither the allow check
// (WhySourceIsSwappable in src/cli/launch_plan.cc) nor the host pip's
// dropped names (src/source/uvx_install.cc) cover.
//
// Finding:
//   high   HTTPS_PROXY + REQUESTS_CA_BUNDLE (a CA of the proxy's): the proxy
//          answers for pypi.org, and its wheel of the trusted uvx://PKG@V is
//          installed and run with no cell.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { after, test } from 'node:test';

import { RUN_ID, accountEnv, cacheEntry, removeCacheEntries } from './lib/account_cache.mjs';
import { runMcpcell } from './lib/mcpcell.mjs';
import { connectProxy, mitmCertificate } from './lib/mitm.mjs';
import { policyRunner } from './lib/policy_run.mjs';
import { PY_PROJECT, startIndex } from './lib/pypi_index.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

after(removeTempDirs);
after(removeCacheEntries);

const ROOT = makeTempDir('adv14-uvx-mitm');
const ID = RUN_ID;
const { trusting } = policyRunner({ root: ROOT });

/** A proxy that answers every CONNECT with a TLS server (pypi.org's name, the test's CA) in front of the http index. */
async function mitmIndex(t, idx, tls) {
  const port = Number(new URL(idx.url).port);
  const front = https.createServer(tls, (req, res) => {
    const up = http.request({ host: '127.0.0.1', port, path: req.url, method: req.method }, (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); });
    up.on('error', () => res.destroy());
    up.end();
  });
  await new Promise((resolve) => front.listen(0, '127.0.0.1', resolve));
  t.after(() => { front.close(); });
  return connectProxy(t, front.address().port);
}

test('adv14: HTTPS_PROXY + REQUESTS_CA_BUNDLE: a proxy answers for pypi.org and its wheel of a trusted uvx:// package runs with no cell', {
  timeout: 120_000,
}, async (t) => {
  const ran = [];
  const cert = mitmCertificate(makeTempDir('adv14-pypi-ca'), 'adv14 pypi mitm ca', ['pypi.org', 'files.pythonhosted.org']);
  for (const [i, name] of ['REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'].entries()) {
    const version = `14.${ID}.${7 + i}`;
    const idx = await startIndex([version]);
    t.after(() => idx.close());
    const proxy = await mitmIndex(t, idx, cert.tls);
    const entry = cacheEntry('uvx', PY_PROJECT, version);
    const policy = trusting(`uvx://${PY_PROJECT}@${version}`);
    const r = await runMcpcell(['run', '--policy', policy, `uvx://${PY_PROJECT}@${version}`], {
      input: '', env: accountEnv({ HTTPS_PROXY: proxy.url, [name]: cert.ca }), guardMs: 55_000,
    });
    rmSync(entry, { recursive: true, force: true });
    t.diagnostic(`${name}: exit ${r.code}; CONNECTs ${proxy.connects.join(', ')}; index asked ${idx.requests.join(', ')}`);
    if (idx.requests.some((q) => q.includes('.whl')) && /WITHOUT a cell/.test(r.stderr)) ran.push(`${name}: the proxy's wheel ran with no cell:\n${r.stderr}`);
  }
  assert.deepEqual(ran, []);
});
