import { ERROR_RESPONSES, jsonBody, jsonResponse, publicRoute } from "../openapi";
import { TokenRequestSchema, TokenResponseSchema } from "./token.schemas";

const tags = ["Auth"];

export const issueToken = publicRoute({
  operationId: "issueToken",
  method: "post",
  path: "/auth/token",
  tags,
  // Anonymous with {api_key}; the administrator's key for {user}.
  security: [{}, { ApiKey: [] }] as Record<string, string[]>[],
  summary: "Authenticate: exchange an API key for a short-lived access token",
  description:
    "With `{api_key}`: returns a JWT acting as that key. With `{user}`: the platform administrator " +
    "(X-SVC-Key) mints a token for that user; refused when an external OIDC issuer is configured.",
  request: { body: jsonBody(TokenRequestSchema) },
  responses: {
    200: jsonResponse(TokenResponseSchema, "Access token"),
    400: ERROR_RESPONSES[400],
    401: ERROR_RESPONSES[401],
    403: ERROR_RESPONSES[403],
    429: ERROR_RESPONSES[429],
  },
});
