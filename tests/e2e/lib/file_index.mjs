// A PEP 503 index on 127.0.0.1 serving files a test built (a wheel, an
// sdist): the project page of `dist` links `listed`, every file of `files`
// is served under <prefix>/files/ (prefix: a path token, Gemfury's shape).

import http from 'node:http';

/**
 * Starts it. `files`: Map name -> bytes; `listed`: the file names the
 * project page links. Returns { base, url (".../simple/"), requests, close() }.
 */
export async function startFileIndex(dist, files, listed, { prefix = '' } = {}) {
  const requests = [];
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    requests.push(req.url);
    if (req.url === `${prefix}/simple/${dist}/`) {
      const links = listed.map((f) => `<a href="${prefix}/files/${f}">${f}</a>`).join('\n');
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!DOCTYPE html><html><body>\n${links}\n</body></html>\n`);
      return;
    }
    const name = req.url.startsWith(`${prefix}/files/`) ? req.url.slice(`${prefix}/files/`.length) : null;
    const bytes = name === null ? undefined : files.get(name);
    if (bytes) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
      res.end(bytes);
      return;
    }
    res.writeHead(404);
    res.end('not found\n');
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}${prefix}`;
  return {
    base,
    url: `${base}/simple/`,
    requests,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}
