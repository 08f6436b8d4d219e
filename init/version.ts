// version: build identity, injected by the bundler (esbuild `define`); "dev" when run from source.
declare const __APPLIANCE_VERSION__: string | undefined;
declare const __APPLIANCE_COMMIT__: string | undefined;

export const VERSION: string = typeof __APPLIANCE_VERSION__ === 'string' ? __APPLIANCE_VERSION__ : 'dev';
export const COMMIT: string = typeof __APPLIANCE_COMMIT__ === 'string' ? __APPLIANCE_COMMIT__ : 'unknown';
