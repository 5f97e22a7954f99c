/**
 * The explorer page at `/v1/spec`: Swagger UI, with its assets served by this node (no CDN, so it
 * works offline; docs/decisions.md §16). It loads the relative `spec.json` and sends `Accept:
 * application/json` on its "try it" calls.
 */
import { readFileSync } from "node:fs";
import { EncodedBody } from "../http/compression.js";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const uiDir = dirname(require.resolve("swagger-ui-dist/package.json"));

/** Asset name → [content type, bytes], read once and encoded once per encoding. */
export const explorerAssets: Record<string, [string, EncodedBody]> = {
  "swagger-ui.css": ["text/css; charset=utf-8", new EncodedBody(readFileSync(join(uiDir, "swagger-ui.css")))],
  "swagger-ui-bundle.js": ["application/javascript; charset=utf-8", new EncodedBody(readFileSync(join(uiDir, "swagger-ui-bundle.js")))],
};

export const explorerHtml = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>ledger-node API</title>
  <link rel="stylesheet" href="spec/assets/swagger-ui.css">
</head>
<body>
  <div id="ui"></div>
  <script src="spec/assets/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: "spec.json",
      dom_id: "#ui",
      deepLinking: true,
      tryItOutEnabled: true,
      requestInterceptor: function (req) {
        var name = Object.keys(req.headers).find(function (k) { return k.toLowerCase() === "accept"; }) || "Accept";
        var accept = req.headers[name];
        if (!accept || accept === "*/*") req.headers[name] = "application/json";
        return req;
      }
    });
  </script>
</body>
</html>
`;
