export * from "./assets";
export * from "./auth";
export * from "./connections";
export * from "./monitoring";
export * from "./settings";
export * from "./tenancy";
