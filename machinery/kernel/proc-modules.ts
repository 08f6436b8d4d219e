// proc-modules: the kernel's list of loaded modules, /proc/modules:
//   "vxlan 106496 0 - Live 0x0000000000000000"
//   "udp_tunnel 28672 1 vxlan, Live 0x0000000000000000"

export interface LoadedModule { name: string; size: number; refCount: number; usedBy: string[]; state: string }

export function parseProcModules(text: string): LoadedModule[] {
  return text.split('\n').filter(Boolean).map((line) => {
    const [name = '', size = '0', refs = '0', users = '-', state = ''] = line.split(/\s+/);
    return {
      name, size: Number(size), refCount: Number(refs), usedBy: users === '-' ? [] : users.split(',').filter(Boolean),
      state: state.toLowerCase(),
    };
  });
}
