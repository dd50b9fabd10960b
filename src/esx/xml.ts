import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** An element as the parser gives it: child elements by name, attributes as `@name`, text as `#text`. */
export type XmlNode = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  // Values stay strings: a version such as 9.0 or a checksum of digits is never a number.
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  htmlEntities: false,
});

/**
 * Parses one document of an ESX depot. A DOCTYPE is refused: none of the format's documents carries
 * one, and entity declarations are how an XML bomb grows. Throws an Error whose message says where
 * the document is broken.
 */
export function parseXml(text: string): XmlNode {
  if (/<!DOCTYPE/i.test(text)) throw new Error('it declares a DOCTYPE, which no depot document has');
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw new Error(`${valid.err.msg} (line ${valid.err.line})`);
  return parser.parse(text) as XmlNode;
}

/** The child elements of that name, none, one or many alike. */
export function children(node: unknown, name: string): XmlNode[] {
  if (!node || typeof node !== 'object') return [];
  const value = (node as XmlNode)[name];
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((item) => (item !== null && typeof item === 'object' ? (item as XmlNode) : { '#text': String(item) }));
}

/** The text of the first child of that name (or of the node itself when no name is given). */
export function textOf(node: unknown, name?: string): string | undefined {
  const target = name === undefined ? node : children(node, name)[0];
  if (target === undefined || target === null) return undefined;
  if (typeof target !== 'object') return String(target).trim() || undefined;
  const text = (target as XmlNode)['#text'];
  return text === undefined ? undefined : String(text).trim() || undefined;
}

export function attributeOf(node: unknown, name: string): string | undefined {
  if (!node || typeof node !== 'object') return undefined;
  const value = (node as XmlNode)[`@${name}`];
  return value === undefined ? undefined : String(value);
}
