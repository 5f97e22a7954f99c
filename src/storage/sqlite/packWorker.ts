/**
 * The resource packer's thread (`ResourcePacker`): packs resource JSON with `packResourceValue`
 * and sends the packed values back as one transferred buffer.
 */
import { parentPort } from "node:worker_threads";
import { packResourceValue } from "../common/resourceValue.js";
import type { PackReply, PackRequest } from "./resourcePacker.js";

const port = parentPort!;
port.on("message", (m: PackRequest) => {
  const values = m.jsons.map((json, i) => packResourceValue(m.owners.subarray(i * 32, i * 32 + 32), json));
  const ends = new Uint32Array(values.length);
  let end = 0;
  for (let i = 0; i < values.length; i++) {
    end += values[i]!.length;
    ends[i] = end;
  }
  const data = new Uint8Array(end);
  let at = 0;
  for (const v of values) {
    data.set(v, at);
    at += v.length;
  }
  const reply: PackReply = { id: m.id, data, ends };
  port.postMessage(reply, [data.buffer, ends.buffer]);
});
