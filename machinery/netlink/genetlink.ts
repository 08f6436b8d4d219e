// genetlink: generic netlink (NETLINK_GENERIC): a 4-byte header (cmd, version) after the
// netlink header, and families found by name through the "nlctrl" controller family,
// which also says which multicast groups a family has and their ids.
import { attr, attrMap, decodeAttrs, encodeMessage, NLM_F, readStr, readU32, type NetlinkMessage } from './netlink.ts';

export const NETLINK_GENERIC = 16;
export const GENL_ID_CTRL = 0x10;
const CTRL_CMD_NEWFAMILY = 1;
const CTRL_CMD_GETFAMILY = 3;
const CTRL_ATTR = { FAMILY_ID: 1, FAMILY_NAME: 2, MCAST_GROUPS: 7 } as const;
const CTRL_ATTR_MCAST_GRP = { NAME: 1, ID: 2 } as const;

export interface GenlMessage { family: number; cmd: number; version: number; attrs: Buffer }

export function encodeGenl(
  family: number, cmd: number, version: number, flags: number, seq: number, attrs: Buffer,
): Buffer {
  const header = Buffer.from([cmd, version, 0, 0]);
  return encodeMessage(family, flags, seq, Buffer.concat([header, attrs]));
}

export function decodeGenl(m: NetlinkMessage): GenlMessage {
  if (m.payload.length < 4) {
    throw new Error(`genetlink: message of type ${m.type} has ${m.payload.length} payload bytes, need 4`);
  }
  return { family: m.type, cmd: m.payload[0]!, version: m.payload[1]!, attrs: m.payload.subarray(4) };
}

export function getFamilyRequest(seq: number, name: string): Buffer {
  return encodeGenl(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, NLM_F.REQUEST | NLM_F.ACK, seq,
    attr.str(CTRL_ATTR.FAMILY_NAME, name));
}

export interface GenlFamily { id: number; name: string; groups: Map<string, number> }

/** The controller's CTRL_CMD_NEWFAMILY answer to getFamilyRequest. */
export function decodeFamily(m: NetlinkMessage): GenlFamily {
  const g = decodeGenl(m);
  if (g.family !== GENL_ID_CTRL || g.cmd !== CTRL_CMD_NEWFAMILY) {
    throw new Error(`genetlink: expected a family description, got type ${g.family} cmd ${g.cmd}`);
  }
  const a = attrMap(g.attrs);
  const id = a.get(CTRL_ATTR.FAMILY_ID);
  const name = readStr(a.get(CTRL_ATTR.FAMILY_NAME));
  if (!id || name === undefined) throw new Error('genetlink: family description without an id or a name');
  const groups = new Map<string, number>();
  for (const grp of decodeAttrs(a.get(CTRL_ATTR.MCAST_GROUPS) ?? Buffer.alloc(0))) {
    const ga = attrMap(grp.value);
    const gname = readStr(ga.get(CTRL_ATTR_MCAST_GRP.NAME));
    const gid = readU32(ga.get(CTRL_ATTR_MCAST_GRP.ID));
    if (gname !== undefined && gid !== undefined) groups.set(gname, gid);
  }
  return { id: id.readUInt16LE(0), name, groups };
}
