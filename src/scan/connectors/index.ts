/** Object stores of the file connections; which one a connection opens is its type's module's (src/connections). */

export { AzureBlobStore } from "./azure";
export { GcsStore } from "./gcs";
export { compileKeyPattern } from "./glob";
export { R2Store } from "./r2";
export { S3Store } from "./s3";
export { ConnectorError, type ObjectStore, type StoredObject, type WritableObjectStore } from "./types";
