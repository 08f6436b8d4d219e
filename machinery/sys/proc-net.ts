// proc-net: the kernel's socket tables (/proc/net/tcp, tcp6, udp, udp6): addresses in hex, each
// 32-bit word in the host's byte order (little-endian on x86), states as TCP's numbers.
export interface ProcSocket { protocol: string; local: string; remote: string; state: string; inode: number }

const TCP_STATES = [
  '', 'ESTABLISHED', 'SYN_SENT', 'SYN_RECV', 'FIN_WAIT1', 'FIN_WAIT2', 'TIME_WAIT', 'CLOSE', 'CLOSE_WAIT', 'LAST_ACK',
  'LISTEN', 'CLOSING', 'NEW_SYN_RECV',
];

/** One 32-bit word as the kernel prints it (host order, little-endian) -> its 4 bytes in network order. */
const wordBytes = (hex: string) => [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16));

/** "0100007F:1F90" -> 127.0.0.1:8080; 32 hex digits -> [v6]:port (zeros compressed). */
export function decodeSocketAddress(text: string): string {
  const [hex = '', portHex = ''] = text.split(':');
  const port = parseInt(portHex, 16);
  if (hex.length === 8) return `${wordBytes(hex).join('.')}:${port}`;
  const bytes = [0, 8, 16, 24].flatMap((i) => wordBytes(hex.slice(i, i + 8)));
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
  // The longest run of two or more zero groups becomes "::".
  let best = { at: -1, len: 1 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const addr = best.at < 0 ? groups.join(':')
    : `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.len).join(':')}`;
  return `[${addr}]:${port}`;
}

/** The rows of one table; `protocol` is its name (tcp, tcp6, udp, udp6). */
export function parseProcNet(text: string, protocol: string): ProcSocket[] {
  return text.split('\n').slice(1).filter((l) => l.trim()).map((line) => {
    const f = line.trim().split(/\s+/);
    const code = parseInt(f[3] ?? '0', 16);
    const udp = protocol.startsWith('udp');
    return {
      protocol, local: decodeSocketAddress(f[1] ?? ''), remote: decodeSocketAddress(f[2] ?? ''),
      state: udp ? (code === 1 ? 'ESTABLISHED' : 'UNCONN') : TCP_STATES[code] ?? `state ${code}`,
      inode: Number(f[9] ?? 0),
    };
  });
}
