/**
 * The follower's page parsing thread (`PageParser` in `pages.ts`): parses each page body it is
 * sent (`parsePage`) and sends back the page with its transactions in their flat form, resource
 * values packed into their stored form (storage's `packResourceValue`) and the transactions' texts
 * into their history chunks, transferred.
 */
import { parentPort } from "node:worker_threads";
import { packResourceValue } from "../../storage/common/resourceValue.js";
import { encodeParsed } from "../parsedCodec.js";
import { type PageReply, type PageRequest, parsePage } from "./pages.js";

const port = parentPort!;
port.on("message", (m: PageRequest) => {
  const page = parsePage(m.body, m.limit);
  if (page.t !== "page") {
    port.postMessage({ id: m.id, page } satisfies PageReply);
    return;
  }
  // Resource values are packed here, into the bytes transferred: the follower's thread neither
  // copies their texts nor hands them to a packer.
  const txns = encodeParsed(page.txns, packResourceValue, true);
  port.postMessage({ id: m.id, page: { ...page, txns } } satisfies PageReply, [txns.ints.buffer, txns.u64s.buffer, txns.bytes.buffer]);
});
