export * from "./assets";
export * from "./auth";
export * from "./connections";
export * from "./settings";
export * from "./tenancy";
