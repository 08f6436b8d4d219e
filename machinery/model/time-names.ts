// time-names: the names of the time plugin's resources the engine watches (health wants the clock
// synced when servers are configured). plugins/time/types.ts defines the types with these names.
export const TIME_NS = 'time';
export const TIME_STATUS_TYPE = 'TimeStatuses.time.appliance.dev';
/** The one TimeStatus. */
export const TIME_STATUS_ID = 'clock';
