// kmsg: the kernel log as /dev/kmsg hands it out (Documentation/ABI/testing/dev-kmsg): one
// record per read(2), "PRI,SEQ,USEC,FLAGS[,...];MESSAGE\n" then " KEY=value" lines, bytes
// outside printable ASCII written as \xNN. The kernel's ring is the ring: nothing is copied
// until a reader asks, and each reader has its own position (its file descriptor).
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { isErrno } from '../../native/errno.ts';

export interface KmsgRecord {
  /** 0 is the kernel's own; 1 (user) is what processes wrote to /dev/kmsg. */
  facility: number;
  /** syslog level: 0 emerg .. 7 debug. */
  level: number;
  seq: number;
  /** Microseconds since boot (the kernel's clock). */
  usec: number;
  message: string;
}

/** One record's text, or undefined when it is not one (the header is malformed). */
export function parseKmsgRecord(text: string): KmsgRecord | undefined {
  const semi = text.indexOf(';');
  if (semi < 0) return undefined;
  const [pri, seq, usec] = text.slice(0, semi).split(',').map(Number);
  if (![pri, seq, usec].every((n) => Number.isInteger(n) && n! >= 0)) return undefined;
  const body = text.slice(semi + 1).split('\n')[0]!; // continuation lines (" KEY=value") are dictionary, not text
  const message = body.replace(/\\x([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return { facility: pri! >> 3, level: pri! & 7, seq: seq!, usec: usec!, message };
}

/** The longest record the kernel writes is about 8 KiB with its dictionary; a smaller buffer gets EINVAL. */
const RECORD_MAX = 16 * 1024;

/** A reader with its own position in the kernel log, from its oldest record still held. */
export interface KmsgReader {
  /** The records that arrived since the last call (all held ones, the first time). Never blocks. */
  readAvailable(): KmsgRecord[];
  close(): void;
}

export function openKmsg(path = '/dev/kmsg'): KmsgReader {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const buf = Buffer.alloc(RECORD_MAX);
  let open = true;
  return {
    readAvailable() {
      const out: KmsgRecord[] = [];
      while (open) {
        let n: number;
        try {
          n = readSync(fd, buf, 0, buf.length, null);
        } catch (e) {
          if (isErrno(e, 'EAGAIN')) break;
          if (isErrno(e, 'EPIPE')) continue; // records were overwritten under us; the next read resumes after them
          throw e;
        }
        if (n === 0) break;
        const r = parseKmsgRecord(buf.toString('utf8', 0, n));
        if (r) out.push(r);
      }
      return out;
    },
    close() {
      if (open) {
        open = false;
        closeSync(fd);
      }
    },
  };
}
