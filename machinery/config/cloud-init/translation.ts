// translation: what a translator of cloud-init input gives back: the documents of this system it made, and the
// keys it did not take, each with why (cloud-config.ts and write-files.ts both answer so).
export interface ConfigDocument { type: string; id: string; spec: Record<string, unknown> }
export interface Translation { docs: ConfigDocument[]; ignored: string[] }
