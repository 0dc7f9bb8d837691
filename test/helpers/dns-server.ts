import { isIP, type AddressInfo } from 'node:net';
import dns2 from 'dns2';

// @types/dns2 leaves requests and responses untyped; what this server touches of them:
interface Question {
  name: string;
  type: number;
}
interface Message {
  questions: Question[];
  header: { rcode: number };
  answers: unknown[];
}
const Packet = dns2.Packet as unknown as {
  TYPE: { TXT: number; A: number; AAAA: number };
  CLASS: { IN: number };
  createResponseFromRequest(request: Message): Message;
};
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 };

/**
 * A real DNS server (dns2, UDP) on 127.0.0.1 answering TXT (and A/AAAA)
 * queries from tables the test fills. Names not in the table get NXDOMAIN; `mode` can make
 * it fail (SERVFAIL) or stay silent (queries never answered).
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for AGENTDIR_DNS_SERVERS / config.dnsServers. */
  address: string;
  /** Question names received, lower-cased, in order. */
  queries: string[];
  /** Sets (or with an empty list removes) the TXT records of `name`. */
  setTxt(name: string, values: string[]): void;
  /** Sets (or with an empty list removes) the A and AAAA records of `name`. */
  setAddresses(name: string, addresses: string[]): void;
  mode: 'answer' | 'silent' | 'servfail';
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const records = new Map<string, string[]>();
  const addresses = new Map<string, string[]>();
  const server = dns2.createUDPServer({ type: 'udp4' } as never);
  const result: TestDnsServer = {
    address: '',
    queries: [],
    mode: 'answer',
    setTxt(name, values) {
      if (values.length === 0) records.delete(name.toLowerCase());
      else records.set(name.toLowerCase(), values);
    },
    setAddresses(name, values) {
      if (values.length === 0) addresses.delete(name.toLowerCase());
      else addresses.set(name.toLowerCase(), values);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  server.on('request', (request: Message, send: (response: Message) => void) => {
    const question = request.questions[0];
    const name = question?.name.toLowerCase() ?? '';
    result.queries.push(name);
    if (result.mode === 'silent') return;
    const response = Packet.createResponseFromRequest(request);
    if (result.mode === 'servfail') {
      response.header.rcode = RCODE.SERVFAIL;
      send(response);
      return;
    }
    const hosts = addresses.get(name);
    if (hosts && (question?.type === Packet.TYPE.A || question?.type === Packet.TYPE.AAAA)) {
      const family = question.type === Packet.TYPE.A ? 4 : 6;
      for (const address of hosts.filter((a) => isIP(a) === family)) {
        response.answers.push({ name: question.name, type: question.type, class: Packet.CLASS.IN, ttl: 60, address });
      }
      send(response);
      return;
    }
    const values = records.get(name);
    if (!values) {
      response.header.rcode = RCODE.NXDOMAIN;
    } else if (question?.type === Packet.TYPE.TXT) {
      for (const value of values) {
        response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data: value });
      }
    }
    send(response);
  });

  await server.listen(0, '127.0.0.1');
  result.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return result;
}
