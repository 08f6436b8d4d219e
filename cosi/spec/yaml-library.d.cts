/** The `yaml` package, loaded at the first call. */
export declare function yamlLibrary(): typeof import('yaml');
