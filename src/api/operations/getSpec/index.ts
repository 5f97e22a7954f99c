/**
 * GET /v1/spec — the explorer page of this interface; the document itself is at `/v1/spec.json`
 * and `/v1/spec.yaml`, generated from the route schemas at start-up (docs/decisions.md §16).
 *
 * @example open http://127.0.0.1:8080/v1/spec
 */
import { EncodedBody } from "../../http/compression.js";
import { ApiError, quote } from "../../http/apiError.js";
import { explorerAssets, explorerHtml } from "../../openapi/explorer.js";
import { defineOperation } from "../../http/operation.js";

export const getSpec = defineOperation({
  operationId: "spec",
  method: "GET",
  url: "/v1/spec",
  summary: "Show OpenAPI explorer",
  description: "Provides a UI that you can use to explore the API. You can also retrieve the API directly at `/spec.yaml` and `/spec.json`.",
  tags: ["General"],
  formats: [],
  response: { description: "The explorer page", type: "text/html" },
  errors: [],
  ledger: "none",
  failure: "Failed to show the explorer",
  read: () => {
    // encoded once per encoding
    const page = { body: new EncodedBody(Buffer.from(explorerHtml)), type: "text/html; charset=utf-8" };
    return () => page;
  },
});

/** `/v1/spec.json`, `/v1/spec.yaml` and the page's assets: served, but not operations of their own. */
export const specDocuments = [
  defineOperation({
    operationId: "spec_json",
    method: "GET",
    url: "/v1/spec.json",
    summary: "OpenAPI document (JSON)",
    description: "",
    tags: ["General"],
    hidden: true,
    formats: [],
    response: { description: "The OpenAPI document", type: "application/json" },
    errors: [],
    ledger: "none",
    failure: "Failed to send the OpenAPI document",
    read: (ctx) => () => ({ body: ctx.spec!.json, type: "application/json" }),
  }),
  defineOperation({
    operationId: "spec_yaml",
    method: "GET",
    url: "/v1/spec.yaml",
    summary: "OpenAPI document (YAML)",
    description: "",
    tags: ["General"],
    hidden: true,
    formats: [],
    response: { description: "The OpenAPI document", type: "application/x-yaml" },
    errors: [],
    ledger: "none",
    failure: "Failed to send the OpenAPI document",
    read: (ctx) => () => ({
      body: ctx.spec!.yaml,
      type: "application/x-yaml",
      headers: { "content-disposition": 'inline; filename="spec.yaml"' },
    }),
  }),
  defineOperation({
    operationId: "spec_asset",
    method: "GET",
    url: "/v1/spec/assets/:name",
    summary: "Explorer asset",
    description: "",
    tags: ["General"],
    hidden: true,
    params: { type: "object", required: ["name"], properties: { name: { type: "string" } } } as const,
    formats: [],
    response: { description: "A file of the explorer page" },
    errors: [404],
    ledger: "none",
    failure: "Failed to send an explorer asset",
    read: () =>
      function specAsset({ params }) {
        const asset = Object.hasOwn(explorerAssets, params.name) ? explorerAssets[params.name] : undefined;
        if (!asset) throw new ApiError(404, "web_framework_error", `no explorer asset named ${quote(params.name)}`);
        return { body: asset[1], type: asset[0], headers: { "cache-control": "public, max-age=86400" } };
      },
  }),
];
