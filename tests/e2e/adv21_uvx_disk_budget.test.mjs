// Adversary pass adv21: the host pip's install of a uvx:// package has no
// disk budget (adv19 bounded only npm's unpacking).
//
// Finding (MEDIUM): `mcpcell run uvx://PKG` installs the wheel on the host
// with the host's pip (src/source/uvx_install.cc, PipTool::Install), outside
// any cell, into ~/.cache/mcpcell/uvx. What a wheel unpacks to is the index's
// to choose: a wheel is a zip, and a 1.2 MiB deflated member unpacks to
// 1.2 GiB (a zip bomb; pip has no limit of its own). adv19 found the same
// with npm's tarballs and gave npm's install a disk budget (1 GiB or 250,000
// inodes of the filesystem's count, HostToolRun::disk, npx_install.cc
// kNpmUnpackBytes); pip's RunHostTool gets none (uvx_install.cc Run: no
// HostToolRun::Disk), so every version of a malicious project (or a man in
// the middle of an http index, or a compromised index) puts another 1.2 GiB
// (or many more: zip64 members, several members) into the user's cache, and
// the install is published and kept. An MCP client restarting a server
// whose index offers a new version each time fills the disk.
//   Reproduce: a PEP 503 index serving x-1.0-py3-none-any.whl whose member
//   x_blob.bin is 1.2 GiB of zeros (1.2 MiB deflated); `mcpcell install
//   uvx://x@1.0` exits 0 and ~/.cache/mcpcell/uvx/x@1.0 holds 1.2 GiB.
//   Fault: src/source/uvx_install.cc:81-84 (the pip install's RunHostTool,
//   through Run at :111, passes no HostToolRun::Disk).
//   Suggested fix: give the pip install the npm install's budget
//   ({venv_dir, 1 GiB, 250,000 inodes}: one constant for both tools in
//   host_run.h), and say the same on stderr when it stops pip.
//
// Bounded: one 1.2 GiB file on the host's disk at most, removed after the
// test; one install, a guard of 4 minutes.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';

import { startFileIndex } from './lib/file_index.mjs';
import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { pipConfigHome } from './lib/pypi_index.mjs';
import { makeTempDir, removeTempDirs } from './lib/tmp.mjs';

const id = randomBytes(3).toString('hex');
const BOMB_BYTES = 1200 * 1024 * 1024; // above the npm install's 1 GiB budget
after(removeTempDirs);

/** Writes DIST-1.0-py3-none-any.whl into `dir` with a `blob` member of `bytes` zeros; returns its file name. */
function buildBombWheel(dir, dist, bytes) {
  const script = `
import base64, hashlib, os, sys, zipfile
outdir, dist, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
esc = dist.replace('-', '_')
info = f'{esc}-1.0.dist-info'
name = f'{esc}-1.0-py3-none-any.whl'
def rec(p, d):
    return f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
small = {
    f'{esc}.py': b'def main():\\n    pass\\n',
    f'{info}/METADATA': f'Metadata-Version: 2.1\\nName: {dist}\\nVersion: 1.0\\n'.encode(),
    f'{info}/WHEEL': b'Wheel-Version: 1.0\\nGenerator: adv21\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',
    f'{info}/entry_points.txt': f'[console_scripts]\\n{dist} = {esc}:main\\n'.encode(),
}
h = hashlib.sha256()
chunk = bytes(1 << 20)
lines = [rec(p, d) for p, d in small.items()]
with zipfile.ZipFile(os.path.join(outdir, name), 'w', zipfile.ZIP_DEFLATED) as z:
    for p, d in small.items():
        z.writestr(p, d)
    with z.open(f'{esc}_blob.bin', 'w', force_zip64=True) as w:
        left = size
        while left > 0:
            n = min(left, len(chunk))
            w.write(chunk[:n])
            h.update(chunk[:n])
            left -= n
    digest = base64.urlsafe_b64encode(h.digest()).rstrip(b'=').decode()
    lines.append(f'{esc}_blob.bin,sha256={digest},{size}')
    lines.append(f'{info}/RECORD,,')
    z.writestr(f'{info}/RECORD', ('\\n'.join(lines) + '\\n').encode())
print(name)
`;
  return execFileSync('/usr/bin/python3', ['-c', script, dir, dist, String(bytes)], { encoding: 'utf8' }).trim();
}

test('adv21: the host pip\'s install of a uvx:// wheel is bounded like npm\'s (a 1.2 MiB wheel unpacks to 1.2 GiB)', {
  timeout: 300_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  const dist = `e2e-adv21-bomb-${id}`;
  const wheelDir = makeTempDir('adv21-wheel');
  const file = buildBombWheel(wheelDir, dist, BOMB_BYTES);
  const bytes = readFileSync(path.join(wheelDir, file));
  t.diagnostic(`wheel ${file}: ${bytes.length} bytes, unpacks to ${BOMB_BYTES} bytes`);
  const index = await startFileIndex(dist, new Map([[file, bytes]]), [file]);
  t.after(() => index.close());
  const { env, cache } = pipConfigHome(index.url, 'adv21-uvx-bomb');
  const r = await runMcpcell(['install', '--install-timeout=200s', `uvx://${dist}@1.0`], { env, guardMs: 240_000 });
  const uvx = path.join(cache, 'mcpcell', 'uvx');
  const du = spawnSync('du', ['-sm', uvx], { encoding: 'utf8' }).stdout.trim();
  t.diagnostic(`exit ${r.code}; du of the uvx cache: ${du}\n${r.stderr.split('\n').slice(-5).join('\n')}`);
  assert.doesNotMatch(r.stderr, /No matching distribution|could not find a version/i, `the index was not read (test setup): ${r.stderr.slice(-600)}`);
  const mib = Number(du.split(/\s/)[0] ?? 0);
  assert.ok(mib < 1100, `pip put ${mib} MiB of one ${bytes.length}-byte wheel into the cache (exit ${r.code}); npm's unpacking stops at 1 GiB`);
  assert.notEqual(r.code, 0, 'the install of a wheel past the budget is refused');
});
