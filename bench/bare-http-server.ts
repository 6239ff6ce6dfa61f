/**
 * The reference server of bench/http: bare Node `http` answering every request with one JSON
 * body and the headers a JSON answer needs. Run as a child process of the bench, like the
 * server under test, so both get a process of their own and the load generator neither.
 * Reads the body from BARE_BODY, listens on 127.0.0.1 on a free port and prints the port.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const body = process.env.BARE_BODY ?? '{}';
const length = Buffer.byteLength(body);
const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
