// trust: which upgrade bundles this machine accepts. Their signature must verify with a key it trusts:
// one built into its image (/etc/appliance/upgrade-keys/*.pem, the public half of the build's signing
// key) or one an UpgradePolicy of its config names; and their version must not be below the highest
// minVersion of those policies.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UpgradePolicySpec } from '../../proto/gen/spec-types.ts';
import type { State } from '../../cosi/state/state.ts';
import { keyIdOf } from '../../machinery/disk/upgrade-bundle.ts';
import { compareVersions } from '../../machinery/update/versions.ts';
import { CONFIG_NS, UPGRADE_POLICY_TYPE } from '../../proto/gen/resource-types.ts';

/** Where the image build puts the public key(s) it trusts. */
export const IMAGE_KEYS_DIR = '/etc/appliance/upgrade-keys';

export interface Trust { keys: KeyObject[]; minVersion: string; describe(): string }

function publicKey(pem: string, where: string): KeyObject {
  let k: KeyObject;
  try {
    k = createPublicKey(pem);
  } catch (e) {
    throw new Error(`${where}: not a PEM public key (${(e as Error).message})`, { cause: e });
  }
  if (k.asymmetricKeyType !== 'ed25519') throw new Error(`${where}: a ${k.asymmetricKeyType} key, not ed25519`);
  return k;
}

export async function currentTrust(state: State, keysDir = IMAGE_KEYS_DIR): Promise<Trust> {
  const keys: { key: KeyObject; from: string }[] = [];
  if (existsSync(keysDir)) {
    for (const f of readdirSync(keysDir).filter((n) => n.endsWith('.pem')).sort()) {
      keys.push({ key: publicKey(readFileSync(join(keysDir, f), 'utf8'), join(keysDir, f)), from: 'image' });
    }
  }
  let minVersion = '';
  for (const p of await state.list({ namespace: CONFIG_NS, type: UPGRADE_POLICY_TYPE })) {
    const spec = p.spec as UpgradePolicySpec;
    (spec.trustedKeys ?? []).forEach((pem, i) => {
      keys.push({ key: publicKey(pem, `UpgradePolicy ${p.metadata.id} trustedKeys[${i}]`), from: p.metadata.id });
    });
    if (spec.minVersion && (!minVersion || compareVersions(spec.minVersion, minVersion) > 0)) {
      minVersion = spec.minVersion;
    }
  }
  return {
    keys: keys.map((k) => k.key), minVersion,
    describe: () => keys.map((k) => `${keyIdOf(k.key)} (${k.from})`).join(', ') || 'none',
  };
}
