// bookmark: an opaque position in one kind's event history. It names the state
// instance and the kind, so a bookmark from elsewhere is refused rather than misread.
//   byte 0: format (1) | 1..8: instance id | 9..12: kind hash | 13..20: event number
import { createHash, randomBytes } from 'node:crypto';
import { StateError } from './errors.ts';

const FORMAT = 1;
const SIZE = 21;

export class BookmarkCodec {
  private readonly instance = randomBytes(8);

  kindHash(kind: string): Buffer {
    return createHash('sha256').update(kind).digest().subarray(0, 4);
  }

  encode(kindHash: Buffer, seq: number): Uint8Array {
    const b = Buffer.alloc(SIZE);
    b[0] = FORMAT;
    this.instance.copy(b, 1);
    kindHash.copy(b, 9);
    b.writeBigUInt64BE(BigInt(seq), 13);
    return b;
  }

  /** The event number a bookmark points at; invalid-bookmark if it is not ours. */
  decode(kindHash: Buffer, bookmark: Uint8Array): number {
    const b = Buffer.from(bookmark);
    if (b.length !== SIZE || b[0] !== FORMAT) {
      throw new StateError('invalid-bookmark', `invalid bookmark: ${b.length} bytes, format ${b[0]}`,
        b.toString('hex'));
    }
    if (!b.subarray(1, 9).equals(this.instance)) {
      throw new StateError('invalid-bookmark', 'invalid bookmark: from another state instance (the machine restarted?)',
        b.toString('hex'));
    }
    if (!b.subarray(9, 13).equals(kindHash)) {
      throw new StateError('invalid-bookmark', 'invalid bookmark: from another resource kind', b.toString('hex'));
    }
    return Number(b.readBigUInt64BE(13));
  }
}
