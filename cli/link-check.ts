// link-check: what apply says of documents that name a link the machine does not have (`link: eth9`): applied
// (a link may appear later: a USB NIC, a VLAN another spec makes), but said at once with the links there are,
// as kubectl prints an admission warning, rather than found later by `health`.
import { loadDocuments } from '../machinery/config/documents.ts';
import { isMap } from '../machinery/config/safe-yaml.ts';
import { LINK_STATUS_TYPE, NETWORK_NS } from '../proto/gen/resource-types.ts';
import type { Session } from './session.ts';

/**
 * One warning per document whose spec.link names no link on the machine nor one the same input makes (a LinkSpec
 * with a kind: a bond, bridge or VLAN); none from a machine that reports none.
 */
export async function missingLinkWarnings(s: Session, inputs: readonly { text: string }[]): Promise<string[]> {
  const naming: { name: string; link: string }[] = [];
  const made = new Set<string>();
  for (const file of inputs) {
    const loaded = loadDocuments(file.text, Infinity, Infinity);
    for (const doc of 'docs' in loaded ? loaded.docs : []) {
      if (!('value' in doc) || !isMap(doc.value) || !isMap(doc.value.metadata) || !isMap(doc.value.spec)) continue;
      const { type, id } = doc.value.metadata;
      const link = doc.value.spec.link;
      if (typeof doc.value.spec.kind === 'string') {
        made.add(typeof link === 'string' && link ? link : String(id));
        continue;
      }
      if (typeof link === 'string' && link) naming.push({ name: `${String(type).toLowerCase()}/${String(id)}`, link });
    }
  }
  if (!naming.length) return [];
  const links = (await s.state.list({ namespace: NETWORK_NS, type: LINK_STATUS_TYPE })).map((r) => r.metadata.id);
  // No links at all: nothing observes them (an engine without its network plugin), so nothing can be said.
  if (!links.length) return [];
  const have = new Set([...links, ...made]);
  return naming.filter((n) => !have.has(n.link)).map((n) => `${n.name}: the machine has no link "${n.link}" `
    + `(it has ${links.sort().join(', ')}); applied, it takes effect when such a link appears`);
}
