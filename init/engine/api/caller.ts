// api-caller: who is on the other end of a connection of the API, kept on the connection.
// The users' port and the plugin socket mark each connection once, when they admit it;
// every call reads the mark. A connection without a mark may do nothing: none gets past
// the users' port or the plugin socket unmarked, and if one did, REFUSE_ALL is all it
// could do.
import type { X509Certificate } from 'node:crypto';
import type { Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { CallAccess } from '../../../cosi/remote/server.ts';
import { StateError } from '../../../cosi/state/errors.ts';
import { roleOf, type Caller } from '../../../machinery/model/access.ts';
import { parseSubject } from '../../../machinery/pki/certificate.ts';
import { TIME_VERIFY_CODES, validityProblem } from '../../../machinery/pki/validity.ts';
import { clockNote } from '../../../machinery/sys/clock-floor.ts';

const CALLER = Symbol('caller');
type Marked = { [CALLER]?: Caller };

/** Marks a connection just admitted with its caller, for every call it makes. */
export function markCaller(socket: Socket, caller: Caller): void {
  (socket as Socket & Marked)[CALLER] = caller;
}

/** The caller of a call: set on its connection when the connection was admitted. */
export function callerOf(session: Http2Session): Caller | undefined {
  return (session.socket as unknown as Marked)[CALLER];
}

/** How a caller appears in the log: their certificate's subject and role, or the plugin. */
export function describeCaller(c: Caller | undefined): string {
  if (!c) return 'caller=unknown';
  if (c.kind === 'plugin') return `plugin=${c.name}`;
  if (c.kind === 'maintenance') return `caller="${c.subject}" role=maintenance`;
  if (c.kind === 'refused') return `caller="${c.subject}" refused`;
  return `subject="${c.subject}" role=${c.role}`;
}

/** What a connection without a caller may do: nothing. */
export const REFUSE_ALL: CallAccess = {
  read: (type) => { throw new StateError('permission-denied', `an unidentified connection may not read ${type}`); },
  write: (w) => { throw new StateError('permission-denied', `an unidentified connection may not write ${w.type}`); },
};

/**
 * The caller a TLS connection makes: a user with the role its certificate names, or a refused client with why. The
 * TLS server verifies the chain but lets every client finish its handshake, so that a refusal can be said in words:
 * a certificate refused for its dates names the machine's clock (machinery/pki/validity.ts).
 */
export function callerOfConnection(socket: TLSSocket): Caller {
  const peer = socket.getPeerX509Certificate();
  const subject = peer?.subject.replace(/\n/g, ',') ?? `${socket.remoteAddress}:${socket.remotePort}`;
  if (!peer) {
    return { kind: 'refused', subject, why: 'this machine requires a client certificate (a context made by '
      + '`cosictl gen config --secrets`), and this client sent none' };
  }
  if (!socket.authorized) {
    const code = String((socket.authorizationError as Error & { code?: string } | null)?.code
      ?? socket.authorizationError ?? 'unverified');
    const why = TIME_VERIFY_CODES.has(code)
      ? validityProblem(`this client's certificate "${subject}"`, peer) ?? `a certificate in this client's chain is `
        + `not valid now (${code}), ${clockNote(Date.now())}`
      : `this client's certificate "${subject}" is not signed by a CA this machine accepts (${code})`;
    return { kind: 'refused', subject, why: `the machine refused this client's certificate: ${why}` };
  }
  const who = userFromCertificate(peer);
  if (typeof who !== 'string') return who;
  return { kind: 'refused', subject, why: `the machine refused this client's certificate: ${who}` };
}

/** The caller a verified client certificate makes, or why it makes none. */
function userFromCertificate(cert: X509Certificate): Caller | string {
  const subject = parseSubject(cert.subject);
  const role = roleOf(subject.organization ?? []);
  const text = cert.subject.replace(/\n/g, ',');
  if (!role) return `certificate "${text}" names no role (Organization admin, operator or reader)`;
  return { kind: 'user', role, subject: text };
}
