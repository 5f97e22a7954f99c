/**
 * GET /v1/spec — the explorer page of this interface; the document itself is at `/v1/spec.json`
 * and `/v1/spec.yaml`, generated from the route schemas at start-up (DECISIONS §15).
 *
 * @example open http://127.0.0.1:8080/v1/spec
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { EncodedBody, sendBody } from "../compression.js";
import { ApiError, quote } from "../errors.js";
import { JSON_TYPE } from "../negotiate.js";
import { explorerAssets, explorerHtml } from "../openapi/explorer.js";
import type { RouteDef } from "../route.js";

/** The explorer page, encoded once per encoding. */
const page = new EncodedBody(Buffer.from(explorerHtml));

export const getSpec: RouteDef = {
  method: "GET",
  url: "/v1/spec",
  ledgerHeaders: false,
  schema: {
    operationId: "spec",
    summary: "Show OpenAPI explorer",
    description:
      "Provides a UI that you can use to explore the API. You can also retrieve the API directly at `/spec.yaml` and `/spec.json`.",
    tags: ["General"],
    response: {
      200: { description: "The explorer page", content: { "text/html": { schema: { type: "string" } } } },
    },
  },
  handler: (ctx) =>
    async function getSpecHandler(req: FastifyRequest, reply: FastifyReply) {
      return sendBody(ctx.config, req, reply, page, "text/html; charset=utf-8");
    },
};

/** `/v1/spec.json`, `/v1/spec.yaml` and the page's assets: served, but not operations of their own. */
export const specDocuments: RouteDef[] = [
  {
    method: "GET",
    url: "/v1/spec.json",
    ledgerHeaders: false,
    schema: { operationId: "spec_json", summary: "OpenAPI document (JSON)", description: "", tags: ["General"], hide: true } as RouteDef["schema"],
    handler: (ctx) =>
      async function specJsonHandler(req: FastifyRequest, reply: FastifyReply) {
        return sendBody(ctx.config, req, reply, ctx.spec!.json, JSON_TYPE);
      },
  },
  {
    method: "GET",
    url: "/v1/spec.yaml",
    ledgerHeaders: false,
    schema: { operationId: "spec_yaml", summary: "OpenAPI document (YAML)", description: "", tags: ["General"], hide: true } as RouteDef["schema"],
    handler: (ctx) =>
      async function specYamlHandler(req: FastifyRequest, reply: FastifyReply) {
        reply.header("content-disposition", 'inline; filename="spec.yaml"');
        return sendBody(ctx.config, req, reply, ctx.spec!.yaml, "application/x-yaml");
      },
  },
  {
    method: "GET",
    url: "/v1/spec/assets/:name",
    ledgerHeaders: false,
    schema: { operationId: "spec_asset", summary: "Explorer asset", description: "", tags: ["General"], hide: true } as RouteDef["schema"],
    handler: (ctx) =>
      async function specAssetHandler(req: FastifyRequest, reply: FastifyReply) {
        const name = (req.params as { name: string }).name;
        const asset = Object.hasOwn(explorerAssets, name) ? explorerAssets[name] : undefined;
        if (!asset) throw new ApiError(404, "web_framework_error", `no explorer asset named ${quote(name)}`);
        reply.header("cache-control", "public, max-age=86400");
        return sendBody(ctx.config, req, reply, asset[1], asset[0]);
      },
  },
];
