// HPACK: the RFC's examples, hostile blocks, and the real call: node's http2 (nghttp2) encodes header values
// with every byte a value may hold, our session decodes them; our encoder's fields reach node's server intact.
import t from 'tap';
import { createServer, type IncomingHttpHeaders } from 'node:http2';
import { connect, type AddressInfo } from 'node:net';
import { EOS, HUFFMAN_CODE_LENGTHS, huffmanCode, huffmanDecode } from './hpack-huffman.ts';
import { encodeHeaders, encodeInteger, HpackDecoder, STATIC_TABLE } from './hpack.ts';
import { H2Session, type Headers } from './h2-session.ts';

const hex = (s: string) => Buffer.from(s.replace(/\s/g, ''), 'hex');

t.test('the Huffman code is complete and canonical, and matches the RFC where it is printed', async (t) => {
  t.equal(HUFFMAN_CODE_LENGTHS.length, 257);
  // Kraft: a complete prefix code's 2^-length sum to exactly 1 (in units of 2^-30, the longest code).
  t.equal(HUFFMAN_CODE_LENGTHS.reduce((sum, l) => sum + 2 ** (30 - l), 0), 2 ** 30);
  const cases: [number, number, number][] = [
    [0, 0x1ff8, 13], [1, 0x7fffd8, 23], [9, 0xffffea, 24], [10, 0x3ffffffc, 30], [32, 0x14, 6], [48, 0x0, 5],
    [97, 0x3, 5], [EOS, 0x3fffffff, 30],
  ];
  for (const [symbol, code, length] of cases) t.same(huffmanCode(symbol), [code, length], `symbol ${symbol}`);
});

t.test('RFC 7541 appendix C: integers, raw and Huffman requests, the dynamic table across blocks', async (t) => {
  const out: number[] = [];
  encodeInteger(out, 10, 5);
  encodeInteger(out, 1337, 5);
  encodeInteger(out, 42, 8);
  t.same(out, [10, 31, 154, 10, 42], 'C.1: 10 and 1337 in a 5-bit prefix, 42 at an octet boundary');
  const raw = new HpackDecoder();
  t.same(raw.decode(hex('828684410f7777772e6578616d706c652e636f6d')),
    [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']], 'C.3.1');
  t.same(raw.decode(hex('828684be58086e6f2d6361636865')),
    [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com'],
      ['cache-control', 'no-cache']], 'C.3.2: index 62 is the first block\'s :authority');
  t.same(raw.decode(hex('828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565')),
    [[':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], [':authority', 'www.example.com'],
      ['custom-key', 'custom-value']], 'C.3.3');
  const huffman = new HpackDecoder();
  t.same(huffman.decode(hex('828684418cf1e3c2e5f23a6ba0ab90f4ff')),
    [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']], 'C.4.1');
  t.same(huffman.decode(hex('828684be5886a8eb10649cbf')),
    [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com'],
      ['cache-control', 'no-cache']], 'C.4.2');
});

t.test('hostile blocks are refused with what is wrong, the block kept', async (t) => {
  const refused: [string, string, RegExp][] = [
    ['80', 'index 0', /index 0/],
    ['be', 'an index past both tables', /index 62 past the tables \(61 static, 0 dynamic\)/],
    ['1f', 'an integer cut short', /ends inside an integer/],
    ['1fffffffffff0f', 'an integer over 2^31', /over 2\^31/],
    ['1f' + '80'.repeat(10) + '00', 'an integer padded with bytes that add nothing', /over 2\^31/],
    ['0003616263', 'a string past the end', /ends before a string/],
    ['000a6162', 'a length past the end', /10 bytes past the block's end/],
    ['3fe11f', 'a table bigger than advertised', /a dynamic table of 4096 bytes \(at most 4095\)/],
    ['8220', 'a size update after a field', /size update after a field/],
  ];
  for (const [block, what, why] of refused) {
    t.throws(() => new HpackDecoder(4095).decode(hex(block)), { name: 'HpackError', message: why }, what);
  }
  t.throws(() => huffmanDecode(hex('ffffffff')), /EOS symbol/, 'EOS inside');
  t.throws(() => huffmanDecode(hex('1fff')), /padding/, 'padding past 7 bits');
  t.throws(() => huffmanDecode(hex('00')), /padding that is not/, 'padding of zeros');
  t.equal(huffmanDecode(hex('f1e3c2e5f23a6ba0ab90f4ff')).toString(), 'www.example.com');
});

t.test('the real call: node encodes every byte a value may hold, we decode it; our fields reach node', async (t) => {
  const allowed = Buffer.from([9, ...Array.from({ length: 256 }, (_, b) => b).filter((b) => b >= 0x20 && b !== 0x7f)]);
  let seen: IncomingHttpHeaders | undefined;
  const server = createServer();
  server.on('stream', (stream, headers) => {
    seen = headers;
    // Each value twice: the second is an index into the dynamic table node's encoder filled.
    const value = allowed.toString('latin1');
    stream.respond({ ':status': 200, 'x-all': value.trim(), 'x-again': value.trim(), 'x-short': 'grpc' });
    stream.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const session = new H2Session(connect(port, '127.0.0.1'), { authority: `http://127.0.0.1:${port}` });
  t.teardown(() => session.destroy());
  const call = () => new Promise<Headers>((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': '/p?q=1', 'x-mixed-Case': 'Value \t"quoted"' });
    stream.on('response', resolve);
    stream.on('error', reject);
    stream.end(Buffer.alloc(0));
  });
  const expected = allowed.toString('latin1').trim();
  // The second response on the connection is mostly indexes into the dynamic table the first one filled.
  for (const which of ['first', 'second']) {
    const response = await call();
    t.equal(response['x-all'], expected, `${which}: all 223 bytes, through Huffman where node chose it`);
    t.equal(response['x-again'], expected);
    t.equal(response['x-short'], 'grpc');
    t.equal(response[':status'], '200');
  }
  t.match(seen, { ':method': 'POST', ':path': '/p?q=1', ':scheme': 'http', ':authority': `127.0.0.1:${port}`,
    'x-mixed-case': 'Value \t"quoted"' }, 'node read our literals');
  t.same(STATIC_TABLE.length, 61);
  t.same(encodeHeaders([['a', 'b']]), Buffer.from([0x10, 1, 0x61, 1, 0x62]), 'a literal never indexed, raw');
});
