/** The prebuilt policies' checks, one module per family. */
export * from "./categories";
export * from "./common";
export * from "./quantities";
export * from "./schema";
export * from "./shares";
export * from "./volume";
