// The container engine's HTTP API over its unix socket, for tests that check
// what mcpcell created (labels, hardening, cleanup) behind its back.

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';

/** METHOD path (without the /v1.41 prefix) on the engine at `socketPath`;
 *  resolves {status, body} with the body parsed when it is JSON. */
export function engineRequest(socketPath, method, p) {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, path: `/v1.41${p}`, method }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (d) => (data += d));
      res.on('end', () => {
        let body = data;
        try {
          body = JSON.parse(data);
        } catch {}
        resolve({ status: res.statusCode, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * The pid of the container watcher (src/cell/docker/container_watcher.h) of
 * supervisor `pid`, or 0: a process named mcpcell-watcher holding a pidfd of
 * `pid` (its /proc/W/fdinfo says "Pid:\t<pid>").
 */
export function watcherOf(pid) {
  for (const w of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${w}/comm`, 'utf8').trim() !== 'mcpcell-watcher') continue;
      for (const fd of readdirSync(`/proc/${w}/fdinfo`)) {
        if (new RegExp(`^Pid:\\s+${pid}$`, 'm').test(readFileSync(`/proc/${w}/fdinfo/${fd}`, 'utf8'))) return Number(w);
      }
    } catch {}  // gone meanwhile, or not ours to read
  }
  return 0;
}

/**
 * `image` (e.g. mcpcell-test/egress-node:1) imported from the host's `node` and /bin/sh with
 * their libraries (no image can be pulled here), unless the engine has it already. Each test
 * file that runs it calls this itself: `node --test` runs the files in name order, and a file
 * that relied on another one building it failed on a fresh engine (docker_dns_report before
 * docker_egress). Returns the bash result ({status, stderr}).
 */
export function ensureNodeImage(image, nodeBin) {
  const files = new Set();
  for (const bin of [nodeBin, '/bin/sh']) {
    files.add(bin);
    const ldd = spawnSync('ldd', [bin], { encoding: 'utf8' });
    for (const m of ldd.stdout.matchAll(/(\/\S+) \(0x/g)) files.add(m[1]);
  }
  const rel = [...files].map((f) => f.replace(/^\//, ''));
  return spawnSync('bash', ['-c', `docker image inspect ${image} >/dev/null 2>&1 || ` +
    `tar -C / -c --dereference "$@" | docker import --change 'ENTRYPOINT ["${nodeBin}"]' --change 'USER 2000' - ${image}`,
  'build', ...rel], { encoding: 'utf8' });
}
