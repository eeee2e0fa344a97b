/**
 * The Jira create-issue request we build, checked against jira.js's models of Jira Cloud's REST API v3
 * (generated from Atlassian's OpenAPI document) by the type checker: `npm run typecheck` fails when
 * createIssueRequest builds a field CreateIssue does not name, or a value of another type, and when
 * the description (our AdfDocument) has a field or a kind outside jira.js's Document. The
 * `@ts-expect-error` lines prove the check refuses a misspelt field and a wrong kind, so it cannot
 * pass vacuously. The Jira fake checks the same models at run time (test/support/jira.global.ts,
 * test/routes/jira.test.ts), and what a ticket request really sends goes through it.
 */

import type { createIssue, DocumentSchema } from "jira.js/cloud";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { type AdfDocument, adf, createIssueRequest, type JiraIssueFields } from "../../src/integrations/jira";
import type { Exact } from "../support/exact";

/** POST /rest/api/3/issue's parameters as jira.js's client takes them (body fields and updateHistory). */
type CreateIssue = Parameters<typeof createIssue>[1];
/** jira.js's ADF Document with only the fields it names (its loose schema's type admits any other key). */
type DocumentModel = z.input<z.ZodObject<(typeof DocumentSchema)["shape"]>>;

/** true when every field of `Actual` is one of `Shape`'s, of its type, at any depth. */
type Conforms<Shape, Actual> = [Actual] extends [Exact<Shape, Actual> & Shape] ? true : false;

// What we send: the body, and the description inside its fields.
const bodyConforms: Conforms<CreateIssue, ReturnType<typeof createIssueRequest>> = true;
const descriptionConforms: Conforms<DocumentModel, AdfDocument> = true;

// The same checks refuse a misspelt field ...
// @ts-expect-error field is not a CreateIssue field (fields is)
const misspelt: Conforms<CreateIssue, { field: JiraIssueFields }> = true;
// @ts-expect-error contents is not a Document field (content is)
const misspeltDoc: Conforms<DocumentModel, { type: "doc"; version: 1; contents: [] }> = true;
// ... and a value of the wrong type.
// @ts-expect-error updateHistory is a boolean
const wrongKind: Conforms<CreateIssue, { updateHistory: "yes" }> = true;
// @ts-expect-error version is a number
const wrongKindDoc: Conforms<DocumentModel, { type: "doc"; version: "1"; content: [] }> = true;

describe("the Jira create-issue body against jira.js's models", () => {
  it("is {fields} with an ADF description", () => {
    const body = createIssueRequest({
      project: { id: "10000" },
      issuetype: { id: "10004" },
      summary: "s",
      description: adf.doc(adf.paragraph("p")),
    });
    expect(Object.keys(body)).toEqual(["fields"]);
    expect(body.fields.description.version).toBe(1);
    expect([bodyConforms, descriptionConforms, misspelt, misspeltDoc, wrongKind, wrongKindDoc]).toHaveLength(6);
  });
});
