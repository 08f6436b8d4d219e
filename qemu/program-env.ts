// program-env: the environment for a program a test runs the way a user would (`npm start`, a build): the test
// process's own without NODE_OPTIONS. tap puts its loader hooks there for the test files it runs; a program
// inherits them otherwise, and under Node 24 they make zx's named exports undefined in a tsx script (the
// upgrade test's variant build failed with "$ is not a function").
export function programEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _testRunnerHooks, ...env } = process.env;
  return { ...env, ...extra };
}
