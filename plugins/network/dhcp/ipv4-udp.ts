// ipv4-udp: the IPv4 and UDP headers around a DHCP message (the packet socket hands
// us bare IP packets). Checksums per RFC 791 / RFC 768.
import { ipBytes, ipString } from '../rtnetlink/addr.ts';

function checksum(...parts: Buffer[]): number {
  let sum = 0;
  for (const b of parts) {
    for (let i = 0; i + 1 < b.length; i += 2) sum += b.readUInt16BE(i);
    if (b.length % 2) sum += b[b.length - 1]! << 8;
  }
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return ~sum & 0xffff;
}

export interface UdpPacket { src: string; dst: string; srcPort: number; dstPort: number; payload: Buffer }

export function encodeUdp(p: UdpPacket): Buffer {
  const udpLen = 8 + p.payload.length;
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(20 + udpLen, 2);
  ip[8] = 64;
  ip[9] = 17;
  ipBytes(p.src).copy(ip, 12);
  ipBytes(p.dst).copy(ip, 16);
  ip.writeUInt16BE(checksum(ip), 10);
  const udp = Buffer.alloc(8);
  udp.writeUInt16BE(p.srcPort, 0);
  udp.writeUInt16BE(p.dstPort, 2);
  udp.writeUInt16BE(udpLen, 4);
  const pseudo = Buffer.alloc(12);
  ip.copy(pseudo, 0, 12, 20);
  pseudo[9] = 17;
  pseudo.writeUInt16BE(udpLen, 10);
  udp.writeUInt16BE(checksum(pseudo, udp, p.payload) || 0xffff, 6);
  return Buffer.concat([ip, udp, p.payload]);
}

/** The UDP datagram in an IPv4 packet, or null (not UDP, fragment, truncated, bad header checksum). */
export function decodeUdp(pkt: Buffer): UdpPacket | null {
  if (pkt.length < 28 || pkt[0]! >> 4 !== 4 || pkt[9] !== 17) return null;
  const ihl = (pkt[0]! & 0xf) * 4;
  if ((pkt.readUInt16BE(6) & 0x3fff) !== 0) return null; // fragments: DHCP never needs them
  if (checksum(pkt.subarray(0, ihl)) !== 0) return null;
  const total = Math.min(pkt.readUInt16BE(2), pkt.length);
  const udpLen = pkt.readUInt16BE(ihl + 4);
  if (ihl + udpLen > total) return null;
  return {
    src: ipString(pkt.subarray(12, 16)), dst: ipString(pkt.subarray(16, 20)),
    srcPort: pkt.readUInt16BE(ihl), dstPort: pkt.readUInt16BE(ihl + 2), payload: pkt.subarray(ihl + 8, ihl + udpLen),
  };
}
