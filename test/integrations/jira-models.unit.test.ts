/**
 * The run-time walk of jira.js's zod models (test/support/zod-models.ts) that the Jira fake refuses
 * requests with (test/support/jira.global.ts): a create-issue body of the documented shape passes; a
 * misspelt field, a wrong kind and a missing required field do not, so the fake's check cannot pass
 * vacuously. (What a ticket request really sends goes through the fake in test/routes/jira.test.ts.)
 */

import { describe, expect, it } from "vitest";
import { jiraModels } from "../support/jira-models";
import { modelErrors } from "../support/zod-models";

const { CreatedIssueSchema, DocumentSchema, ErrorCollectionSchema, IssueUpdateDetailsSchema } = jiraModels;

const description = {
  type: "doc",
  version: 1,
  content: [{ type: "heading", attrs: { level: 2 }, content: [{ type: "text", text: "Incident #1" }] }],
};
const body = {
  fields: {
    project: { id: "10000" },
    issuetype: { id: "10004" },
    summary: "[HIGH] Completeness on email in orders",
    description,
    customfield_10010: "team-a",
  },
};

describe("jira.js's models, walked at run time", () => {
  it("pass the create-issue body we send, and Jira's documented answers", () => {
    expect(modelErrors(IssueUpdateDetailsSchema, body, "body")).toEqual([]);
    expect(modelErrors(DocumentSchema, description, "description")).toEqual([]);
    expect(
      modelErrors(CreatedIssueSchema, { id: "10001", key: "DQ-1", self: "https://x/rest/api/3/issue/10001" }, "a"),
    ).toEqual([]);
    expect(modelErrors(ErrorCollectionSchema, { errorMessages: ["m"], errors: { summary: "s" } }, "a")).toEqual([]);
  });

  it("refuse a misspelt field, a wrong kind and a missing required field, at any depth", () => {
    expect(modelErrors(IssueUpdateDetailsSchema, { ...body, feilds: {} }, "body")).toEqual([
      "body.feilds: no such field of the model",
    ]);
    expect(modelErrors(IssueUpdateDetailsSchema, { fields: "summary" }, "body")).toEqual([
      "body.fields: Invalid input: expected record, received string",
    ]);
    expect(
      modelErrors(IssueUpdateDetailsSchema, { ...body, transition: { id: 5, looped: false, too: {} } }, "body"),
    ).toEqual([
      "body.transition.id: Invalid input: expected string, received number",
      "body.transition.too: no such field of the model",
    ]);
    expect(modelErrors(DocumentSchema, { type: "doc", version: "1", contents: [] }, "d")).toEqual([
      "d.version: Invalid input: expected number, received string",
      "d.content: Invalid input: expected array, received undefined",
      "d.contents: no such field of the model",
    ]);
    expect(modelErrors(CreatedIssueSchema, { id: "10001", self: "https://x" }, "a")).toEqual([
      "a.key: Invalid input: expected string, received undefined",
    ]);
  });
});
