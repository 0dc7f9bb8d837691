import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { sendJson } from '../../src-api/http/send-json';

describe('sendJson', () => {
  it('returns nothing once the answer is out, and the reply while an async onSend hook holds it', async () => {
    for (const asyncHook of [false, true]) {
      const app = Fastify();
      if (asyncHook) app.addHook('onSend', async (_request, reply) => void reply.header('x-hook', 'ran'));
      const returned: unknown[] = [];
      let sends = 0;
      app.addHook('onSend', (_request, _reply, payload, done) => {
        sends++;
        done(null, payload);
      });
      app.get('/', async (_request, reply) => {
        const result = sendJson<unknown>(reply, Buffer.from('{"a":1}'));
        returned.push(result);
        return result;
      });
      const response = await app.inject({ method: 'GET', url: '/' });
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('{"a":1}');
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(sends).toBe(1);
      // A returned reply is a thenable: its `then` is looked up and called in a promise job of its own.
      expect(returned[0] === undefined).toBe(!asyncHook);
      await app.close();
    }
  });
});
