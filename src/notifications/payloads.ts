/**
 * What a notification says: the Standard Webhooks body of each event (`{type, timestamp, data}`),
 * and the Slack Block Kit message made from the same body. The body is built once, when the event
 * happens, and stored with its delivery, so every attempt sends the same bytes.
 */

import { alertView, incidentView } from "../contracts/incident-views";
import type { IncidentRow, KeptAlert, NotificationEvent } from "../db/schema";

/** The event types a channel subscribes to, and the one a channel test sends. */
export type EventType = NotificationEvent | "channel.test";

export interface AssetRef {
  id: number;
  name: string;
  project_id: number;
}

export interface IncidentEventData {
  incident: ReturnType<typeof incidentView>;
  asset: { id: string; name: string; project_id: number };
  /** The alerts that caused the event (the scan's alerts of the incident); [] for a manual close. */
  alerts: ReturnType<typeof alertView>[];
  /** Who closed the incident, for incident.closed. */
  closed_by?: string;
  link: string;
}

export interface ScanFailedData {
  job: {
    id: string;
    kind: string;
    status: "FAILED";
    error: string | null;
    created_at: string;
    finished_at: string | null;
  };
  asset: { id: string; name: string; project_id: number };
  link: string;
}

export interface ChannelTestData {
  channel: { id: number; name: string };
  message: string;
}

export interface WebhookPayload<T extends EventType = EventType> {
  type: T;
  /** When the event happened (ISO 8601). */
  timestamp: string;
  data: T extends "scan.failed" ? ScanFailedData : T extends "channel.test" ? ChannelTestData : IncidentEventData;
}

/** The API URL of an incident (GET returns it with its history). */
export function incidentLink(baseUrl: string, tenantId: string, incidentId: number): string {
  return `${baseUrl.replace(/\/+$/, "")}/api/backend/${tenantId}/incidents/${incidentId}`;
}

export function incidentPayload(
  type: NotificationEvent,
  input: {
    baseUrl: string;
    at: string;
    incident: IncidentRow;
    alerts: Array<KeptAlert & { assetId: number }>;
    assetName: string;
    closedBy?: string;
  },
): WebhookPayload {
  const { incident } = input;
  return {
    type,
    timestamp: input.at,
    data: {
      incident: incidentView(incident),
      asset: { id: String(incident.assetId), name: input.assetName, project_id: incident.projectId },
      alerts: input.alerts.map(alertView),
      ...(input.closedBy !== undefined ? { closed_by: input.closedBy } : {}),
      link: incidentLink(input.baseUrl, incident.tenantId, incident.id),
    },
  } as WebhookPayload;
}

export function scanFailedPayload(input: {
  baseUrl: string;
  at: string;
  tenantId: string;
  asset: AssetRef;
  job: { id: string; kind: string; error: string | null; createdAt: string; finishedAt: string | null };
}): WebhookPayload<"scan.failed"> {
  const base = input.baseUrl.replace(/\/+$/, "");
  return {
    type: "scan.failed",
    timestamp: input.at,
    data: {
      job: {
        id: input.job.id,
        kind: input.job.kind,
        status: "FAILED",
        error: input.job.error,
        created_at: input.job.createdAt,
        finished_at: input.job.finishedAt,
      },
      asset: { id: String(input.asset.id), name: input.asset.name, project_id: input.asset.project_id },
      link: `${base}/api/backend/${input.tenantId}/configuration/assets/${input.asset.id}/scans/${input.job.id}`,
    },
  };
}

export function channelTestPayload(channel: { id: number; name: string }, at: string): WebhookPayload<"channel.test"> {
  return {
    type: "channel.test",
    timestamp: at,
    data: { channel, message: "A test event: the channel reaches its receiver." },
  };
}

// ---- Slack -------------------------------------------------------------------------------------

const SEVERITY_MARK: Record<string, string> = {
  HIGH: ":red_circle:",
  MEDIUM: ":large_orange_circle:",
  LOW: ":white_circle:",
};
const TITLES: Record<EventType, string> = {
  "incident.opened": "Incident opened",
  "incident.escalated": "Incident escalated",
  "incident.closed": "Incident closed",
  "scan.failed": "Scan failed",
  "channel.test": "Test notification",
};

/** Slack mrkdwn escapes (api.slack.com/reference/surfaces/formatting#escaping), and a length bound. */
function mrkdwn(text: unknown, max = 300): string {
  const s = String(text ?? "")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;");
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

function shown(value: unknown): string {
  if (value === undefined || value === null) return "–";
  if (typeof value === "object") {
    const band = value as { low?: unknown; high?: unknown };
    if (typeof band.low === "number" && typeof band.high === "number") return `${band.low} .. ${band.high}`;
    return JSON.stringify(value);
  }
  return String(value);
}

type Block = Record<string, unknown>;

/**
 * A Block Kit message (api.slack.com/reference/block-kit/blocks) for an incoming webhook: a header,
 * the severity, asset, policy and attribute, observed vs expected, the investigation summary when
 * there is one, and a link. `text` is the fallback for notifications.
 */
export function slackMessage(payload: WebhookPayload): { text: string; blocks: Block[] } {
  const title = TITLES[payload.type];
  if (payload.type === "channel.test") {
    const data = payload.data as ChannelTestData;
    const text = `${title}: ${data.channel.name}`;
    return {
      text,
      blocks: [{ type: "section", text: { type: "mrkdwn", text: mrkdwn(`*${title}*\n${data.message}`) } }],
    };
  }
  if (payload.type === "scan.failed") {
    const data = payload.data as ScanFailedData;
    const text = `${title}: ${data.asset.name}`;
    return {
      text,
      blocks: [
        { type: "header", text: { type: "plain_text", text: mrkdwn(text, 150) } },
        {
          type: "section",
          fields: [
            { type: "mrkdwn", text: `*Asset*\n${mrkdwn(data.asset.name)}` },
            { type: "mrkdwn", text: `*Job*\n${mrkdwn(data.job.id)}` },
          ],
        },
        { type: "section", text: { type: "mrkdwn", text: `*Error*\n${mrkdwn(data.job.error ?? "unknown", 1000)}` } },
        { type: "context", elements: [{ type: "mrkdwn", text: `<${data.link}|Scan job>` }] },
      ],
    };
  }
  const data = payload.data as IncidentEventData;
  const { incident } = data;
  const alert = data.alerts[0];
  const details = (alert?.details ?? {}) as Record<string, unknown>;
  const text = `${title}: ${incident.policy_name} on ${data.asset.name}${incident.attribute ? `.${incident.attribute}` : ""}`;
  const fields = [
    { type: "mrkdwn", text: `*Severity*\n${SEVERITY_MARK[incident.severity] ?? ""} ${incident.severity}` },
    { type: "mrkdwn", text: `*Asset*\n${mrkdwn(data.asset.name)}` },
    { type: "mrkdwn", text: `*Policy*\n${mrkdwn(incident.policy_name)}` },
    { type: "mrkdwn", text: `*Attribute*\n${mrkdwn(incident.attribute ?? "–")}` },
  ];
  if (alert) {
    fields.push(
      { type: "mrkdwn", text: `*Observed*\n${mrkdwn(shown(details.observed))}` },
      { type: "mrkdwn", text: `*Expected*\n${mrkdwn(shown(details.expected))}` },
    );
  }
  const blocks: Block[] = [
    { type: "header", text: { type: "plain_text", text: mrkdwn(text, 150) } },
    { type: "section", fields },
  ];
  if (alert) blocks.push({ type: "section", text: { type: "mrkdwn", text: mrkdwn(alert.description, 1000) } });
  const summary = details.investigation_summary;
  if (typeof summary === "string" && summary.length > 0) {
    blocks.push({ type: "section", text: { type: "mrkdwn", text: `*Investigation*\n${mrkdwn(summary, 1000)}` } });
  }
  if (payload.type === "incident.closed") {
    const by = data.closed_by ? ` by ${mrkdwn(data.closed_by)}` : "";
    blocks.push({
      type: "context",
      elements: [{ type: "mrkdwn", text: `Closed${by} (${mrkdwn(incident.close_reason ?? "no reason")})` }],
    });
  }
  blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: `<${data.link}|Incident ${incident.id}>` }] });
  return { text, blocks };
}
