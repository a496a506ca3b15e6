import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../../../src/receipts/index.js';

describe('canonicalJson', () => {
  it('serialises numbers as ECMAScript does', () => {
    expect(canonicalJson([-0, 1e21, 1e-7, 0.1 + 0.2, 100, 1.5e-10])).toBe(
      '[0,1e+21,1e-7,0.30000000000000004,100,1.5e-10]',
    );
  });

  it('sorts keys by UTF-16 code units, not code points', () => {
    // U+1F600 is the surrogate pair D83D DE00, which sorts before U+FF61.
    expect(canonicalJson({ '\uff61': 1, '\u{1F600}': 2, z: 3, é: 4 })).toBe('{"z":3,"é":4,"😀":2,"｡":1}');
  });

  it('escapes control characters the JSON.stringify way', () => {
    expect(canonicalJson('\b\t\n\f\r\u0001/é')).toBe('"\\b\\t\\n\\f\\r\\u0001/é"');
  });

  it('keeps array order and has no whitespace', () => {
    expect(canonicalJson({ b: [3, 1, 2], a: { d: null, c: true } })).toBe('{"a":{"c":true,"d":null},"b":[3,1,2]}');
  });

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['a lone high surrogate', '\ud800'],
    ['a lone low surrogate in a key', { '\udc00': 1 }],
    ['a nested NaN', { a: [1, Number.NaN] }],
    ['a bigint', 1n],
    ['a function member', { f: () => 1 }],
    ['a symbol', Symbol('s')],
    ['undefined', undefined],
    ['undefined in an array', [1, undefined]],
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point of the case
    ['a sparse array', [1, , 2]],
  ])('throws on %s', (_name, value) => {
    expect(() => canonicalJson(value)).toThrow();
  });

  it('throws on circular structures', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => canonicalJson(a)).toThrow(/circular/i);
  });

  it('omits undefined object members like JSON.stringify', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
  });

  it('honours toJSON', () => {
    expect(canonicalJson({ t: new Date(0) })).toBe('{"t":"1970-01-01T00:00:00.000Z"}');
  });
});

describe('sha256Hex', () => {
  it('hashes strings as UTF-8 and bytes as is', () => {
    const abc = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(sha256Hex('abc')).toBe(abc);
    expect(sha256Hex(new Uint8Array([0x61, 0x62, 0x63]))).toBe(abc);
  });
});
