// version: build identity, injected by the bundler (esbuild `define`); "dev" when run from source.
declare const __APPLIANCE_VERSION__: string | undefined;
declare const __APPLIANCE_COMMIT__: string | undefined;
declare const __APPLIANCE_BUILD_EPOCH__: number | undefined;

export const VERSION: string = typeof __APPLIANCE_VERSION__ === 'string' ? __APPLIANCE_VERSION__ : 'dev';
export const COMMIT: string = typeof __APPLIANCE_COMMIT__ === 'string' ? __APPLIANCE_COMMIT__ : 'unknown';
/**
 * When this build's source was made, in ms since the epoch (SOURCE_DATE_EPOCH, else the commit's time): no clock on
 * a machine running it can be right before then (machinery/sys/clock-floor.ts). 0 when run from source: no floor.
 */
export const BUILD_EPOCH_MS: number = typeof __APPLIANCE_BUILD_EPOCH__ === 'number'
  ? __APPLIANCE_BUILD_EPOCH__ * 1000 : 0;
