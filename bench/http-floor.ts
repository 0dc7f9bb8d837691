/**
 * What HTTP itself leaves for a request's own work on this machine: bare node:http handlers that busy-wait a
 * fixed time and answer a fixed number of bytes, loaded as the bench loads the server (50 connections, the
 * client in its own process), beside raw node:http (no work, 1 KB) in the same run. Per row: req/s and its
 * ratio to raw, the server's CPU time per request from /proc, and that minus the work (the HTTP path's cost).
 *
 *   npx tsx bench/http-floor.ts [--seconds 5] [--work 0,50,100,150] [--bytes 1000,16000]
 *
 * On 2 cores over loopback the HTTP path is not a fixed cost: with answers spaced by real work the server pays
 * more a request than at raw's pace (each answer wakes a load generator that had gone idle). So a search class
 * needing a fifth of raw's req/s needs its work under what this table shows, not under raw's 1/0.2 × its cost.
 * Not a test: numbers depend on the machine; compare within one run.
 */
import { argument, loadAverage } from './lib/cli';
import { startLoadClient } from './lib/load-client';
import { processCpuMicros, startInlineServer } from './lib/server-process';

const seconds = Number(argument('seconds') ?? 5);
const numbers = (name: string, fallback: string) => (argument(name) ?? fallback).split(',').map(Number);
const works = numbers('work', '0,50,100,150');
const sizes = numbers('bytes', '1000,16000');

/** node:http busy-waiting `work` µs a request (the event loop's thread, as a search runs) and answering `bytes`. */
const WORKING_SERVER = `
const http = require('node:http');
const [port, work, bytes] = process.argv.slice(1).map(Number);
const body = JSON.stringify({ data: 'x'.repeat(Math.max(0, bytes - 11)) });
http.createServer((req, res) => {
  const until = process.hrtime.bigint() + BigInt(work * 1000);
  while (process.hrtime.bigint() < until);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}).listen(port, '127.0.0.1');
`;

const client = startLoadClient();
console.log(`50 connections, ${seconds} s a load, load ${loadAverage()}`);
console.log('work µs   bytes    req/s  of raw   p99   server µs/req   HTTP µs/req   client µs/req');
let raw = 0;
try {
  const rows = [
    [0, 1000] as const, // raw: the first row, what the others are measured against
    ...works.flatMap((work) => sizes.map((bytes) => [work, bytes] as const)).filter(([work, bytes]) => work > 0 || bytes !== 1000),
  ];
  for (const [work, bytes] of rows) {
    const { child, origin } = await startInlineServer(WORKING_SERVER, work, bytes);
    try {
      const requests = [{ method: 'GET' as const, path: '/' }];
      await client.run({ url: origin, requests, connections: 50, seconds: 1 }); // the JIT and the caches settle
      const serverBefore = processCpuMicros(child.pid!);
      const clientBefore = processCpuMicros(client.pid);
      const result = await client.run({ url: origin, requests, connections: 50, seconds });
      const server = (processCpuMicros(child.pid!) - serverBefore) / result.total;
      const clientCost = (processCpuMicros(client.pid) - clientBefore) / result.total;
      if (raw === 0) raw = result.rps;
      console.log(
        [
          String(work).padStart(7),
          String(bytes).padStart(7),
          String(Math.round(result.rps)).padStart(8),
          `${((100 * result.rps) / raw).toFixed(1)} %`.padStart(7),
          String(result.p99).padStart(5),
          server.toFixed(1).padStart(15),
          (server - work).toFixed(1).padStart(13),
          clientCost.toFixed(1).padStart(15),
        ].join(' '),
      );
    } finally {
      child.kill();
    }
  }
} finally {
  client.close();
}
console.log(`load ${loadAverage()}`);
