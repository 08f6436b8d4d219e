// types: the issue plugin's resources. Motd (config) is what a user declares;
// Issue (runtime) is the login banner the plugin renders from it and the version.
// Each type is defined once, by its spec message's (appliance.v1alpha1.resource) option in the .proto:
// proto/gen/resource-types.ts has its constant and definition (this plugin's types() serves them).
export type { IssueSpec, MotdSpec } from '../../proto/gen/spec-types.ts';
