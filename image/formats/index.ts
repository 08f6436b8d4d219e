// The output formats, by name: `npm run image -- --format <name>[,<name>...]` or `all`.
import type { OutputFormat } from './format.ts';
import { aws } from './aws.ts';
import { gce } from './gce.ts';
import { iso } from './iso.ts';
import { pxe } from './pxe.ts';
import { qcow2 } from './qcow2.ts';
import { raw } from './raw.ts';
import { upgrade, upgradeSelfContained } from './upgrade.ts';

export const FORMATS: readonly OutputFormat[] = [raw, qcow2, iso, aws, gce, pxe, upgrade, upgradeSelfContained];

export const formatNamed = (name: string) => FORMATS.find((f) => f.name === name);
