export * from "./assets";
export * from "./auth";
export * from "./connections";
export * from "./incidents";
export * from "./monitoring";
export * from "./rows";
export * from "./settings";
export * from "./tenancy";
