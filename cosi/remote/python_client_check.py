"""An independent COSI client: Python grpcio (C-core) with message classes that
protoc generated from proto/. Drives a running server through the cases a foreign
client depends on and prints one line per check: `ok <name>` or `FAIL <name>: why`.

usage: python3 python_client_check.py GENERATED_DIR HOST:PORT CA.pem CERT.pem KEY.pem
(mutual TLS, as every client of the machine; the server's certificate names 127.0.0.1)
"""
import sys

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
from v1alpha1 import resource_pb2, state_pb2  # noqa: E402


def read(path):
    with open(path, "rb") as f:
        return f.read()


credentials = grpc.ssl_channel_credentials(
    root_certificates=read(sys.argv[3]), private_key=read(sys.argv[5]), certificate_chain=read(sys.argv[4]))
channel = grpc.secure_channel(sys.argv[2], credentials)
S = "/cosi.resource.State/"


def unary(name, req_cls, res_cls):
    return channel.unary_unary(S + name, request_serializer=req_cls.SerializeToString, response_deserializer=res_cls.FromString)


get = unary("Get", state_pb2.GetRequest, state_pb2.GetResponse)
create = unary("Create", state_pb2.CreateRequest, state_pb2.CreateResponse)
update = unary("Update", state_pb2.UpdateRequest, state_pb2.UpdateResponse)
teardown = unary("Teardown", state_pb2.TeardownRequest, state_pb2.TeardownResponse)
destroy = unary("Destroy", state_pb2.DestroyRequest, state_pb2.DestroyResponse)
list_ = channel.unary_stream(S + "List", request_serializer=state_pb2.ListRequest.SerializeToString, response_deserializer=state_pb2.ListResponse.FromString)
watch = channel.unary_stream(S + "Watch", request_serializer=state_pb2.WatchRequest.SerializeToString, response_deserializer=state_pb2.WatchResponse.FromString)

failures = 0


def check(name, cond, why=""):
    global failures
    if cond:
        print(f"ok {name}")
    else:
        failures += 1
        print(f"FAIL {name}: {why}")


def code_of(fn):
    try:
        fn()
        return grpc.StatusCode.OK
    except grpc.RpcError as e:
        return e.code()


NS, TYPE = "config", "Motds.config.appliance.dev"
md = resource_pb2.Metadata(namespace=NS, type=TYPE, id="py", version="undefined", phase="running")
res = create(state_pb2.CreateRequest(resource=resource_pb2.Resource(metadata=md, spec=resource_pb2.Spec(yaml_spec="text: from python\n")), options=state_pb2.CreateOptions(owner=""))).resource
check("create returns version 1", res.metadata.version == "1", res.metadata.version)
check("create sets phase running", res.metadata.phase == "running", res.metadata.phase)
check("created timestamp set", res.metadata.created.seconds > 0)

got = get(state_pb2.GetRequest(namespace=NS, type=TYPE, id="py")).resource
check("get returns the yaml spec", "from python" in got.spec.yaml_spec, got.spec.yaml_spec)
from appliance.config.v1alpha1 import config_pb2  # noqa: E402
check("get returns the proto spec too", config_pb2.MotdSpec.FromString(got.spec.proto_spec).text == "from python", got.spec.proto_spec)

# A spec sent as proto_spec alone; and both, disagreeing.
pmd = resource_pb2.Metadata(namespace=NS, type=TYPE, id="py-proto", version="undefined", phase="running")
pres = create(state_pb2.CreateRequest(resource=resource_pb2.Resource(metadata=pmd, spec=resource_pb2.Spec(proto_spec=config_pb2.MotdSpec(text="in protobuf", priority=7).SerializeToString())))).resource
check("create from proto_spec alone", "text: \"in protobuf\"" in pres.spec.yaml_spec and "priority: 7" in pres.spec.yaml_spec, pres.spec.yaml_spec)
dmd = resource_pb2.Metadata(namespace=NS, type=TYPE, id="py-disagree", version="undefined", phase="running")
disagree = resource_pb2.Resource(metadata=dmd, spec=resource_pb2.Spec(yaml_spec="text: one\n", proto_spec=config_pb2.MotdSpec(text="two").SerializeToString()))
check("proto_spec and yaml_spec that disagree are INVALID_ARGUMENT", code_of(lambda: create(state_pb2.CreateRequest(resource=disagree))) == grpc.StatusCode.INVALID_ARGUMENT)
destroy(state_pb2.DestroyRequest(namespace=NS, type=TYPE, id="py-proto"))

# A type registered with the upstream meta.proto alone: ResourceDefinitionSpec's fields, no YAML, no schema.
from v1alpha1 import meta_pb2  # noqa: E402
rd = meta_pb2.ResourceDefinitionSpec(resource_type="Widgets.python.example", default_namespace="widgets", aliases=["wdg"],
                                     print_columns=[meta_pb2.ResourceDefinitionSpec.PrintColumn(name="Size", json_path="{.size}")])
dres = create(state_pb2.CreateRequest(resource=resource_pb2.Resource(
    metadata=resource_pb2.Metadata(namespace="meta", type="ResourceDefinitions.meta.cosi.dev", id="widgets.python.example", version="undefined", phase="running"),
    spec=resource_pb2.Spec(proto_spec=rd.SerializeToString())))).resource
filled = meta_pb2.ResourceDefinitionSpec.FromString(dres.spec.proto_spec)
check("definition from proto_spec alone is filled in", filled.display_type == "Widget" and "widget" in filled.aliases and "wdg" in filled.aliases, filled)
wmd = resource_pb2.Metadata(namespace="widgets", type="Widgets.python.example", id="w1", version="undefined", phase="running")
w = create(state_pb2.CreateRequest(resource=resource_pb2.Resource(metadata=wmd, spec=resource_pb2.Spec(yaml_spec="size: 3\ncolor: red\n")))).resource
check("its free-form resources are created in its namespace, created as needed", w.metadata.version == "1" and "size: 3" in w.spec.yaml_spec, w)
check("deleting a definition with live resources is FAILED_PRECONDITION", code_of(lambda: destroy(state_pb2.DestroyRequest(namespace="meta", type="ResourceDefinitions.meta.cosi.dev", id="widgets.python.example"))) == grpc.StatusCode.FAILED_PRECONDITION)
destroy(state_pb2.DestroyRequest(namespace="widgets", type="Widgets.python.example", id="w1"))
destroy(state_pb2.DestroyRequest(namespace="meta", type="ResourceDefinitions.meta.cosi.dev", id="widgets.python.example"))
check("then it can be deleted", code_of(lambda: get(state_pb2.GetRequest(namespace="meta", type="ResourceDefinitions.meta.cosi.dev", id="widgets.python.example"))) == grpc.StatusCode.NOT_FOUND)
check("a built-in definition cannot be deleted", code_of(lambda: destroy(state_pb2.DestroyRequest(namespace="meta", type="ResourceDefinitions.meta.cosi.dev", id=TYPE.lower()))) == grpc.StatusCode.PERMISSION_DENIED)
check("get missing is NOT_FOUND", code_of(lambda: get(state_pb2.GetRequest(namespace=NS, type=TYPE, id="nope"))) == grpc.StatusCode.NOT_FOUND)
check("create twice is ALREADY_EXISTS", code_of(lambda: create(state_pb2.CreateRequest(resource=resource_pb2.Resource(metadata=md, spec=resource_pb2.Spec(yaml_spec="text: x\n"))))) == grpc.StatusCode.ALREADY_EXISTS)

stale = resource_pb2.Resource(metadata=resource_pb2.Metadata(namespace=NS, type=TYPE, id="py", version="7", phase="running"), spec=resource_pb2.Spec(yaml_spec="text: y\n"))
check("stale version is FAILED_PRECONDITION", code_of(lambda: update(state_pb2.UpdateRequest(new_resource=stale))) == grpc.StatusCode.FAILED_PRECONDITION)
bad = resource_pb2.Resource(metadata=resource_pb2.Metadata(namespace=NS, type=TYPE, id="bad", version="undefined", phase="running"), spec=resource_pb2.Spec(yaml_spec="text: 5\n"))
check("schema violation is INVALID_ARGUMENT", code_of(lambda: create(state_pb2.CreateRequest(resource=bad))) == grpc.StatusCode.INVALID_ARGUMENT)

ids = [r.resource.metadata.id for r in list_(state_pb2.ListRequest(namespace=NS, type=TYPE))]
check("list streams the resource", "py" in ids, ids)

defs = list(list_(state_pb2.ListRequest(namespace="meta", type="ResourceDefinitions.meta.cosi.dev")))
motd_def = [d for d in defs if d.resource.metadata.id == TYPE.lower()]
spec = meta_pb2.ResourceDefinitionSpec.FromString(motd_def[0].resource.spec.proto_spec) if motd_def else None
check("resource definitions carry proto_spec", spec is not None and spec.resource_type == TYPE and spec.default_namespace == NS, spec)

# Kind watch, api_version 1, bootstrap: empty first response, CREATED..., BOOTSTRAPPED with a bookmark.
stream = watch(state_pb2.WatchRequest(namespace=NS, type=TYPE, options=state_pb2.WatchOptions(bootstrap_contents=True), api_version=1))
first = next(stream)
check("first watch response is empty", len(first.event) == 0, first)
events = []
while not any(e.event_type == state_pb2.BOOTSTRAPPED for e in events):
    events.extend(next(stream).event)
check("bootstrap created then bootstrapped", [e.event_type for e in events] == [state_pb2.CREATED] * (len(events) - 1) + [state_pb2.BOOTSTRAPPED], events)
check("bootstrapped carries a bookmark", events[-1].HasField("bookmark"))
check("bootstrapped tombstone has a spec", events[-1].resource.HasField("spec"))
cur = get(state_pb2.GetRequest(namespace=NS, type=TYPE, id="py")).resource
cur.spec.yaml_spec = "text: changed\n"
check("an edited yaml_spec sent with the old proto_spec is refused", code_of(lambda: update(state_pb2.UpdateRequest(new_resource=cur, options=state_pb2.UpdateOptions(owner="")))) == grpc.StatusCode.INVALID_ARGUMENT)
cur.spec.ClearField("proto_spec")  # a YAML-only edit sends the YAML alone
update(state_pb2.UpdateRequest(new_resource=cur, options=state_pb2.UpdateOptions(owner="")))
ev = next(stream).event[0]
check("live update arrives with old", ev.event_type == state_pb2.UPDATED and "changed" in ev.resource.spec.yaml_spec and ev.old.metadata.version == "1", ev)
stream.cancel()

# Single watch of a missing id (presence of the optional id field matters).
single = watch(state_pb2.WatchRequest(namespace=NS, type=TYPE, id="ghost"))
next(single)
e = next(single).event[0]
check("single watch of a missing id: DESTROYED tombstone", e.event_type == state_pb2.DESTROYED and e.resource.metadata.version == "undefined", e)
single.cancel()
check("bootstrap on a single watch is UNIMPLEMENTED", code_of(lambda: next(watch(state_pb2.WatchRequest(namespace=NS, type=TYPE, id="py", options=state_pb2.WatchOptions(bootstrap_contents=True))))) == grpc.StatusCode.UNIMPLEMENTED)

ready = teardown(state_pb2.TeardownRequest(namespace=NS, type=TYPE, id="py")).destroy_ready
check("teardown answers destroy_ready", ready is True)
destroy(state_pb2.DestroyRequest(namespace=NS, type=TYPE, id="py"))
check("destroyed", code_of(lambda: get(state_pb2.GetRequest(namespace=NS, type=TYPE, id="py"))) == grpc.StatusCode.NOT_FOUND)
sys.exit(1 if failures else 0)
