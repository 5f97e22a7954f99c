/** HTTP requests that return the response bytes as sent: fetch would decode a compressed body. */
import { request } from "node:http";

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET (or a POST with a JSON `body`) and its response, bytes as sent. */
export function rawRequest(url: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const method = body === undefined ? "GET" : "POST";
    const req = request(url, { method, headers: body === undefined ? headers : { ...headers, "content-type": "application/json" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}
