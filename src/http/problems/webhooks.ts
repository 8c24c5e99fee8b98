import type { ProblemExplanations } from "./explanation.js";

/** Problems of webhook endpoints and their deliveries. */
export const webhookProblems = {
  webhook_endpoint_not_found: {
    means: "No webhook endpoint has this id that this key may see: a marketplace or operator sees its own endpoints, finance and admin keys the platform's.",
    causes: ["a mistyped or truncated endpoint id", "an endpoint of another tenant", "an endpoint that was deleted"],
    action: "fix_request",
    todo: "Use the `id` answered by POST /v1/webhook-endpoints, or find it with GET /v1/webhook-endpoints.",
    example: "webhook endpoint 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
  webhook_delivery_not_found: {
    means: "The endpoint has no delivery with this id, and no event with this id that it would receive.",
    causes: ["a delivery id of another endpoint", "an event of another tenant, or of a type the endpoint does not receive"],
    action: "fix_request",
    todo: "Use an `id` from GET /v1/webhook-endpoints/{id}/deliveries, or the `webhook-id` header of a delivery (the event's id).",
    example: "webhook endpoint 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e has no delivery or event evt_000000000042",
  },
  webhook_url_refused: {
    means:
      "The service does not send webhooks to this URL: only http and https URLs whose host resolves to public addresses are accepted (no private, loopback, link-local or unspecified address), so that an endpoint cannot reach the service's own network.",
    causes: ["a URL on localhost or a private network", "a host name that does not resolve", "a scheme other than http or https, or credentials in the URL"],
    action: "fix_request",
    todo: "Give a public https URL of your receiver. (A deployment that must deliver inside its own network sets WEBHOOKS_ALLOW_PRIVATE=true.)",
    example: "url https://10.0.0.5/hooks resolves to 10.0.0.5, a private address: webhooks are sent to public addresses only",
    exampleErrors: [{ path: "url", message: "resolves to 10.0.0.5, a private address" }],
  },
} satisfies ProblemExplanations;
