import { createApp } from "./app";
import type { Env } from "./env";

export { AssetMonitor } from "./monitor/asset-monitor";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
