// sameSpec has a walk of its own (no paths built): it must say what specDifferences says, on every shape of data.
import t from 'tap';
import { sameSpec, specDifferences } from './spec-equal.ts';

/** A small deterministic generator (xorshift32): the same cases every run. */
function random(seed: number) {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const KEYS = ['a', 'b', 'mtu', 'addresses', 'link'];

function value(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 2 ? 8 : 11));
  switch (k) {
    case 0: return undefined;
    case 1: return null;
    case 2: return Math.floor(r() * 3);
    case 3: return NaN;
    case 4: return ['x', 'y', ''][Math.floor(r() * 3)];
    case 5: return r() < 0.5;
    case 6: return Uint8Array.from({ length: Math.floor(r() * 3) }, () => Math.floor(r() * 2));
    case 7: return BigInt(Math.floor(r() * 2));
    case 8:
    case 9: {
      const o: Record<string, unknown> = {};
      for (const key of KEYS) if (r() < 0.4) o[key] = value(r, depth + 1);
      return o;
    }
    default: return Array.from({ length: Math.floor(r() * 3) }, () => value(r, depth + 1));
  }
}

/** A copy of v with, now and then, one thing changed (or an undefined key added, which changes nothing). */
function nearCopy(v: unknown, r: () => number): unknown {
  if (r() < 0.08) return value(r, 3);
  if (Array.isArray(v)) return v.map((x) => nearCopy(x, r));
  if (v instanceof Uint8Array) return r() < 0.1 ? Uint8Array.from([...v, 1]) : Uint8Array.from(v);
  if (v !== null && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (r() > 0.05) o[k] = nearCopy(x, r);
    if (r() < 0.1) o.added = undefined;
    return o;
  }
  return v;
}

t.test('sameSpec agrees with specDifferences on 20000 pairs, both ways', async (t) => {
  const r = random(0x5eed);
  let same = 0;
  let wrong = 0;
  for (let i = 0; i < 20_000; i++) {
    const a = value(r, 0);
    const b = nearCopy(a, r);
    for (const [x, y] of [[a, b], [b, a]] as const) {
      const expected = specDifferences(x, y).length === 0;
      if (sameSpec(x, y) !== expected) {
        wrong++;
        if (wrong < 5) t.fail(`sameSpec is not ${expected}: ${specDifferences(x, y).join('; ')}`);
      }
      if (expected) same++;
    }
  }
  t.equal(wrong, 0);
  // Both answers occur often enough for the agreement to mean something.
  t.ok(same > 4000 && same < 36000, `${same} of 40000 the same`);
});

t.test('sameSpec on the cases people write by hand', async (t) => {
  t.ok(sameSpec({ a: 1, b: undefined }, { a: 1 }), 'an undefined key is a missing one');
  t.ok(sameSpec({ a: 1 }, { a: 1, b: undefined }), 'either way round');
  t.notOk(sameSpec({ a: 1 }, { a: 1, b: 0 }), 'a key only b has');
  t.ok(sameSpec({ b: 2, a: 1 }, { a: 1, b: 2 }), 'key order');
  t.ok(sameSpec([NaN], [NaN]), 'NaN is NaN');
  t.ok(sameSpec(new Uint8Array([1, 2]), Buffer.from([1, 2])), 'bytes by content');
  t.notOk(sameSpec(new Uint8Array([1, 2]), new Uint8Array([1, 3])), 'other bytes');
  t.notOk(sameSpec([], {}), 'a list is not a map');
  t.notOk(sameSpec(null, {}), 'null is not a map');
  t.notOk(sameSpec([1, 2], [1, 2, 3]), 'lengths');
  t.notOk(sameSpec(1, '1'), 'types');
  t.strictSame(specDifferences({ a: 1n }, { a: 2n }), ['spec.a: "1n" vs "2n"'], 'a bigint is shown, not thrown at');
});

t.test('sameSpec and specDifferences agree where plain objects are not plain', async (t) => {
  const hidden = Object.defineProperty({}, 'k', { value: 1, enumerable: false });
  const sparse: unknown[] = [];
  sparse[1] = 1;
  const cases: [unknown, unknown, boolean, string][] = [
    [{}, JSON.parse('{"__proto__":{}}'), false, 'an own __proto__ key (YAML and JSON make one) is data'],
    [{}, { constructor: Object }, false, 'an own constructor key is data'],
    [{ a: 1 }, { a: 1, constructor: undefined }, true, 'an own key set to undefined is none, whatever its name'],
    [sparse, [undefined, 1], true, 'a hole is an undefined item'],
    [sparse, [5, 1], false, 'a hole is not a value'],
    [hidden, { k: 2 }, false, 'a key Object.keys does not list is no field'],
    [hidden, {}, true, 'and the same as none'],
  ];
  for (const [a, b, same, why] of cases) {
    t.equal(sameSpec(a, b), same, `sameSpec: ${why}`);
    t.equal(sameSpec(b, a), same, `sameSpec, the other way: ${why}`);
    t.equal(specDifferences(a, b).length === 0, same, `specDifferences: ${why}`);
  }
});
