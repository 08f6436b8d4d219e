// service-types: the `service` blocks of proto/appliance -> proto/gen/services.ts: per service, each method's
// HTTP/2 path and its request and response messages, typed by the interfaces of spec-types.ts. The engine, which
// serves them, and cosictl read the wire from there (machinery/model/service-wire.ts adds the codecs).
import protobuf from 'protobufjs';
import { screamingSnake } from './resource-types.ts';

/** ApplyConfig -> applyConfig. */
const camel = (name: string) => name[0]!.toLowerCase() + name.slice(1);

function services(root: protobuf.Namespace): protobuf.Service[] {
  const out: protobuf.Service[] = [];
  const walk = (ns: protobuf.NamespaceBase) => {
    for (const o of ns.nestedArray) {
      if (o instanceof protobuf.Service) out.push(o);
      if (o instanceof protobuf.Namespace || o instanceof protobuf.Type) walk(o);
    }
  };
  walk(root);
  return out;
}

/** The text of proto/gen/services.ts. */
export function serviceTypes(
  root: protobuf.Namespace, header: string, fileOf: (s: protobuf.Service) => string,
): string {
  const all = services(root);
  const shortName = (full: string | undefined, m: protobuf.Method) => {
    const t = full ? root.lookupType(full) : undefined;
    if (!t) throw new Error(`gen-proto: ${m.fullName.slice(1)} names an unknown message`);
    return t;
  };
  const imports = new Set<string>();
  let body = '';
  for (const s of all) {
    const service = s.fullName.slice(1);
    body += `\n/** ${service} (${fileOf(s)}). */\n`;
    body += `export const ${screamingSnake(s.name)} = {\n`;
    for (const m of s.methodsArray) {
      m.resolve();
      const req = shortName(m.resolvedRequestType?.fullName, m);
      const res = shortName(m.resolvedResponseType?.fullName, m);
      imports.add(req.name);
      imports.add(res.name);
      body += `  ${camel(m.name)}: method<${req.name}, ${res.name}>('/${service}/${m.name}', `
        + `'${req.fullName.slice(1)}', '${res.fullName.slice(1)}', ${Boolean(m.responseStream)}),\n`;
    }
    body += '} as const;\n';
  }
  return `${header}// Data only: proto/ imports nothing but its own generated types.\n`
    + `import type {\n  ${[...imports].sort().join(', ')},\n} from './spec-types.ts';\n\n`
    + '/** A method of one of our services: its path, its messages (full names), whether it answers with a stream. */\n'
    + 'export interface ServiceMethod<Req, Res> {\n'
    + '  readonly path: string;\n  readonly request: string;\n  readonly response: string;\n'
    + '  readonly responseStream: boolean;\n'
    + '  /** Never set: carries the message types to the codecs. */\n  readonly types?: [Req, Res];\n}\n\n'
    + 'const method = <Req, Res>(path: string, request: string, response: string, responseStream: boolean):\n'
    + '  ServiceMethod<Req, Res> => ({ path, request, response, responseStream });\n'
    + body;
}
