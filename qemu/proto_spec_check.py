"""Decodes the proto_spec of every resource a machine serves with classes protoc
generated from our own .proto files, and compares it, field by field, with the
resource's yaml_spec. An independent reading of the rules in cosi/spec/proto-object.ts:
lowerCamelCase keys, enums as their short lowercase names (0 = not set), timestamps as
RFC 3339, scalars without `optional` always present, everything else only when set.

usage: python3 proto_spec_check.py GENERATED_DIR HOST:PORT CA.pem CERT.pem KEY.pem SERVER_NAME
(mutual TLS, as every client of the machine; an admin certificate reads every type)
prints `ok TYPE: N resources` per type with resources, `FAIL TYPE/ID: why`, and a summary.
"""
import datetime
import importlib
import os
import re
import sys

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
import yaml  # noqa: E402
from google.protobuf import descriptor as d  # noqa: E402
from google.protobuf import descriptor_pool, message_factory  # noqa: E402
from v1alpha1 import meta_pb2, state_pb2  # noqa: E402

# Import every generated module so the pool knows every message.
for root, _, files in os.walk(os.path.join(sys.argv[1], "appliance")):
    for f in files:
        if f.endswith("_pb2.py"):
            importlib.import_module(os.path.relpath(os.path.join(root, f[:-3]), sys.argv[1]).replace(os.sep, "."))
pool = descriptor_pool.Default()



def read(path):
    with open(path, "rb") as f:
        return f.read()


credentials = grpc.ssl_channel_credentials(
    root_certificates=read(sys.argv[3]), private_key=read(sys.argv[5]), certificate_chain=read(sys.argv[4]))
channel = grpc.secure_channel(sys.argv[2], credentials, options=[("grpc.ssl_target_name_override", sys.argv[6])])
list_ = channel.unary_stream("/cosi.resource.State/List", request_serializer=state_pb2.ListRequest.SerializeToString,
                             response_deserializer=state_pb2.ListResponse.FromString)


def short_enum(enum_desc, number):
    name = enum_desc.values_by_number[number].name
    prefix = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", enum_desc.name).upper() + "_"
    return (name[len(prefix):] if name.startswith(prefix) else name).lower().replace("_", "-")


def value_of(field, v):
    if field.type == d.FieldDescriptor.TYPE_ENUM:
        return short_enum(field.enum_type, v)
    if field.type == d.FieldDescriptor.TYPE_MESSAGE:
        if field.message_type.full_name == "google.protobuf.Timestamp":
            return v.ToDatetime().replace(tzinfo=datetime.timezone.utc)
        return object_of(v)
    return v


def object_of(msg):
    out = {}
    for field in msg.DESCRIPTOR.fields:
        key = field.json_name
        v = getattr(msg, field.name)
        if field.label == d.FieldDescriptor.LABEL_REPEATED:
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                if len(v):
                    out[key] = {k: value_of(field.message_type.fields_by_name["value"], x) for k, x in v.items()}
            elif len(v):
                out[key] = [value_of(field, x) for x in v]
        elif field.type == d.FieldDescriptor.TYPE_ENUM:
            if v != 0:
                out[key] = short_enum(field.enum_type, v)
        elif field.type == d.FieldDescriptor.TYPE_MESSAGE or field.containing_oneof is not None:
            if msg.HasField(field.name):
                out[key] = value_of(field, v)
        else:
            out[key] = v
    return out


def definition_object(spec):
    return {"type": spec.resource_type, "displayType": spec.display_type, "defaultNamespace": spec.default_namespace,
            "aliases": list(spec.aliases), "allAliases": list(spec.all_aliases),
            "printColumns": [{"name": c.name, "jsonPath": c.json_path} for c in spec.print_columns],
            **({"sensitivity": "sensitive"} if spec.sensitivity == 1 else {})}


def differences(a, b, path="spec"):
    """Where the decoded proto (a) and the YAML (b) differ; times compared as instants, numbers as numbers."""
    if isinstance(a, datetime.datetime):
        try:
            bt = datetime.datetime.fromisoformat(str(b).replace("Z", "+00:00"))
        except ValueError:
            return [f"{path}: {a} vs {b!r}"]
        return [] if abs((a - bt).total_seconds()) < 0.001 else [f"{path}: {a} vs {b}"]
    if isinstance(a, dict) and isinstance(b, dict):
        return [x for k in sorted(set(a) | set(b)) for x in differences(a.get(k, "<unset>"), b.get(k, "<unset>"), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items vs {len(b)}"]
        return [x for i, (p, q) in enumerate(zip(a, b)) for x in differences(p, q, f"{path}[{i}]")]
    if isinstance(a, bool) or isinstance(b, bool):
        return [] if a is b else [f"{path}: {a!r} vs {b!r}"]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return [] if a == b else [f"{path}: {a!r} vs {b!r}"]
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


failures = 0
compared = {}
defs = [r.resource for r in list_(state_pb2.ListRequest(namespace="meta", type="ResourceDefinitions.meta.cosi.dev"))]
for rd in defs:
    spec = meta_pb2.ResourceDefinitionSpec.FromString(rd.spec.proto_spec)
    extension = yaml.safe_load(rd.spec.yaml_spec) or {}
    message = extension.get("protoMessage")
    if spec.resource_type == "ResourceDefinitions.meta.cosi.dev":
        decode = lambda b: definition_object(meta_pb2.ResourceDefinitionSpec.FromString(b))  # noqa: E731
        keep = ("type", "displayType", "defaultNamespace", "aliases", "allAliases", "printColumns", "sensitivity")
    elif spec.resource_type == "Namespaces.meta.cosi.dev":
        decode = lambda b: {"description": meta_pb2.NamespaceSpec.FromString(b).description}  # noqa: E731
        keep = None
    elif message:
        cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(message)) if hasattr(message_factory, "GetMessageClass") \
            else message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName(message))
        decode = lambda b, cls=cls: object_of(cls.FromString(b))  # noqa: E731
        keep = None
    else:
        continue
    n = 0
    namespaces = [r.resource.metadata.id for r in list_(state_pb2.ListRequest(namespace="meta", type="Namespaces.meta.cosi.dev"))]
    for ns in namespaces:
        for item in list_(state_pb2.ListRequest(namespace=ns, type=spec.resource_type)):
            r = item.resource
            from_proto = decode(r.spec.proto_spec)
            from_yaml = yaml.safe_load(r.spec.yaml_spec) or {}
            if keep:  # the definition's extension (protoMessage, schema) is in the YAML only
                from_yaml = {k: v for k, v in from_yaml.items() if k in keep}
            diff = differences(from_proto, from_yaml)
            if diff:
                failures += 1
                print(f"FAIL {spec.resource_type}/{r.metadata.id}: {'; '.join(diff[:4])}")
            n += 1
    if n:
        compared[spec.resource_type] = n
        print(f"ok {spec.resource_type}: {n} resources")
print(f"summary: {len(compared)} types, {sum(compared.values())} resources, {failures} disagreeing")
sys.exit(1 if failures else 0)
