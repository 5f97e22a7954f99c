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

/**
 * Asks for `url` with `Accept-Encoding: <encoding>` until the body comes smaller than the first
 * answer (a body the node sends often is made again at the encoding's best level in the
 * background), or until `withinMs` has passed. Anything but 200 is an error.
 */
export async function untilEncodingShrinks(url: string, encoding: string, withinMs: number): Promise<{ first: RawResponse; last: RawResponse }> {
  const ask = async () => {
    const r = await rawRequest(url, { "accept-encoding": encoding });
    if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
    return r;
  };
  const first = await ask();
  let last = first;
  for (const end = Date.now() + withinMs; last.body.length >= first.body.length && Date.now() < end; ) {
    await new Promise((r) => setTimeout(r, 10));
    last = await ask();
  }
  return { first, last };
}
