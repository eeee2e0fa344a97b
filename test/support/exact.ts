/**
 * `Actual` with every key the `Shape` lacks typed `never`, at any depth (arrays and unions too):
 * a value of `Actual` is assignable only when it has no field outside `Shape`. A Shape of `any`
 * (jira.js: an issue's `fields`, an ADF node) admits anything below it. The type-checker
 * half of the contract checks against providers' SDK types (test/scan/spark/provider-sdk-types.test.ts,
 * test/integrations/jira-contract.test.ts).
 */
export type Exact<Shape, Actual> = 0 extends 1 & Shape
  ? Actual
  : Actual extends readonly (infer E)[]
    ? NonNullable<Shape> extends readonly (infer S)[]
      ? Exact<S, E>[]
      : never
    : Actual extends object
      ? { [K in keyof Actual]: K extends keyof NonNullable<Shape> ? Exact<NonNullable<Shape>[K], Actual[K]> : never }
      : Actual;
