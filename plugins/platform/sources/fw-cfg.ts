// fw-cfg: QEMU's firmware config file opt/dev.appliance/config (-fw_cfg name=...,file=...),
// which the kernel shows under /sys/firmware/qemu_fw_cfg (CONFIG_FW_CFG_SYSFS).
import { absent, type ConfigSourceDef } from './source.ts';

export const FW_CFG_NAME = 'opt/dev.appliance/config';
export const FW_CFG_FILE = `/sys/firmware/qemu_fw_cfg/by_name/${FW_CFG_NAME}/raw`;

export const fwCfg: ConfigSourceDef = {
  name: 'fw-cfg',
  network: () => false,
  location: () => FW_CFG_NAME,
  present: (env) => env.exists(FW_CFG_FILE),
  async fetch(env) {
    const b = env.readFile(FW_CFG_FILE);
    if (!b) return absent(`no fw_cfg file ${FW_CFG_NAME}`);
    return { kind: 'found', userData: b, meta: { platform: 'qemu' }, ignored: [], message: `${b.length} bytes` };
  },
};
