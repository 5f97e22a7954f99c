/** The response serializers: fast-json-stringify compiled from a response schema, once. */
import fastJson from "fast-json-stringify";
import { DOC_FORMATS, sharedSchemas } from "./schemas.js";

/** Shared schemas by id, for the response serializers' `$ref`s. */
const REFERENCED = Object.fromEntries(sharedSchemas.map((s) => [s.$id, s]));
/** The documentation-only formats, as fast-json-stringify's ajv takes them. */
const ANY_VALUE_FORMATS = Object.fromEntries(DOC_FORMATS.map((f) => [f, true]));

/** A serializer compiled from a response schema (its `$ref`s to the shared schemas resolved). */
export function jsonSerializer<T>(schema: object): (value: T) => string {
  return fastJson(schema as fastJson.AnySchema, { schema: REFERENCED, ajv: { formats: ANY_VALUE_FORMATS } } as fastJson.Options) as (value: T) => string;
}

