/** The response serializers: fast-json-stringify compiled from a response schema, once. */
import fastJson from "fast-json-stringify";
import { DOC_FORMATS, sharedSchemas } from "../schemas.js";

/** Shared schemas by id, for the response serializers' `$ref`s. */
const REFERENCED = Object.fromEntries(sharedSchemas.map((s) => [s.$id, s]));

/** A serializer compiled from a response schema (its `$ref`s to the shared schemas resolved). */
export function jsonSerializer<T>(schema: object): (value: T) => string {
  return fastJson(schema as fastJson.AnySchema, { schema: REFERENCED, ajv: { formats: DOC_FORMATS } } as fastJson.Options) as (value: T) => string;
}

