// A static file server for build-wasm/web on 127.0.0.1, for the browser test and for trying the
// page locally (any static host serves the folder as well):
//   node tests/web/serve.mjs build-wasm/web 8080
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import {fileURLToPath} from "node:url";

const TYPES = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm", ".svg": "image/svg+xml", ".png": "image/png", ".json": "application/json",
};

/// Serves `folder`; resolves to the listening server (port 0: any free port).
export function serve(folder, port = 0) {
  const base = path.resolve(folder);
  const server = http.createServer((request, response) => {
    const url = new URL(request.url, "http://localhost");
    let file = path.normalize(path.join(base, decodeURIComponent(url.pathname)));
    if (!file.startsWith(base)) { response.writeHead(403).end(); return; }
    if (file.endsWith(path.sep)) file = path.join(file, "index.html");
    fs.readFile(file, (error, data) => {
      if (error) { response.writeHead(404, {"Content-Type": "text/plain"}).end("not found\n"); return; }
      response.writeHead(200, {"Content-Type": TYPES[path.extname(file)] || "application/octet-stream", "Cache-Control": "no-cache"});
      response.end(data);
    });
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const folder = process.argv[2] || "build-wasm/web";
  serve(folder, Number(process.argv[3] || 8080)).then((server) => {
    console.log(`serving ${folder} at http://127.0.0.1:${server.address().port}/`);
  });
}
