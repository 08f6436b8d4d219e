// platform-types: the names of the platform plugin's resources the engine reads
// (plugins/platform/types.ts defines them; the engine never imports plugins/).
export const PLATFORM_NS = 'platform';
export const USER_DATA_TYPE = 'UserDatas.platform.appliance.dev';
export const PLATFORM_METADATA_TYPE = 'PlatformMetadatas.platform.appliance.dev';
export const CONFIG_SOURCE_TYPE = 'ConfigSources.platform.appliance.dev';
/** The id of the one UserData. */
export const USER_DATA_ID = 'machine';
/** The id of the one PlatformMetadata and PlatformNetwork. */
export const PLATFORM_ID = 'platform';
