// singleton-ids: the ids of resources there is one of (one HealthStatus, one TimeStatus, ...), which the engine and
// the plugins both name: the engine writes HealthStatus and reads TimeStatus, the time plugin the other way round.
// A plugin's own singletons (HOSTNAME_ID, ...) stay next to the controller that writes them.
export const SHUTDOWN_REQUEST_ID = 'shutdown';
export const MACHINE_STATUS_ID = 'machine';
/** The id of the one HealthStatus. */
export const HEALTH_ID = 'machine';
/** The Version of a system not booted from a slot (a kernel, the ISO, PXE). */
export const RUNNING_VERSION_ID = 'appliance';
/** The id of the one ConfigStatus. */
export const CONFIG_STATUS_ID = 'machine';
/** The id of each of the three security types (ApiCertificateAuthority, ApiCertificateStatus, ApiLimits): one API. */
export const API_ID = 'api';
/** The one TimeStatus. */
export const TIME_STATUS_ID = 'clock';
/** The id of the one UserData. */
export const USER_DATA_ID = 'machine';
/** The id of the one PlatformMetadata and PlatformNetwork. */
export const PLATFORM_ID = 'platform';
