/**
 * Which deployment this Worker is, from the ENVIRONMENT var: "development" for `wrangler dev` and
 * the tests (wrangler.toml's top level), "staging" or "production" for the environments that
 * `npm run deploy` provisions. A deployed Worker never honours the settings meant for this machine.
 */
export interface EnvironmentEnv {
  ENVIRONMENT?: string | undefined;
  ALLOW_PRIVATE_TARGETS?: string | undefined;
}

/** Settings of `.dev.vars` that only local development may have (see outbound.ts). */
export const LOCAL_ONLY_SETTINGS = ["ALLOW_PRIVATE_TARGETS"] as const;

/** The deployed environment's name, or undefined in local development (ENVIRONMENT unset or "development"). */
export function deployedEnvironment(env: EnvironmentEnv): string | undefined {
  const name = env.ENVIRONMENT?.trim();
  return name && name !== "development" ? name : undefined;
}

/** The local-only settings a deployed Worker was given anyway (a secret put by hand): their names. */
export function localOnlySettingsDeployed(env: EnvironmentEnv): string[] {
  if (deployedEnvironment(env) === undefined) return [];
  return LOCAL_ONLY_SETTINGS.filter((name) => env[name] !== undefined);
}
