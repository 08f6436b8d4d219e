// mount-namespace: starting a child in a mount namespace of its own without a second exec.
// A namespace entered by unshare(2) holds for the calling thread only, and a forked child
// is a copy of that thread: so the spawning thread steps into a fresh namespace, spawns,
// and steps back (setns). The child and every thread it starts are born inside.
import type { Native } from '../../native/index.ts';

/** Set in a plugin's environment once it runs in its own mount namespace. */
export const OWN_MOUNTS_ENV = 'COSI_PLUGIN_OWN_MOUNTS';

/**
 * Runs `spawn` (synchronous: child_process.spawn forks before it returns) with this thread in a
 * new mount namespace whose mounts are slaves of the machine's (the machine's later mounts come in,
 * the child's never go out), then returns the thread to the namespace it was in.
 */
export function spawnInOwnMountNamespace<T>(n: Native, spawn: () => T): T {
  const home = n.mountNamespaceFd();
  try {
    n.unshareMounts(true);
    try {
      return spawn();
    } finally {
      n.setMountNamespace(home);
    }
  } finally { n.closeFd(home); }
}
