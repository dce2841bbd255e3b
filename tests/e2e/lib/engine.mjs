// The container engine's HTTP API over its unix socket, for tests that check
// what mcpcell created (labels, hardening, cleanup) behind its back.

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
