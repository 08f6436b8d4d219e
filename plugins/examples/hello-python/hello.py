"""hello: an example extension written in Python (grpcio). It defines two types (its manifest
registers them): Greetings, which users declare, and GreetingStatuses, which it writes. For each
Greeting it writes a GreetingStatus saying hello, and what the process sees of its own confinement
(its uid, capabilities, no_new_privs, seccomp, cgroup, its root) as /proc/self tells it. It talks to the
engine over the plugin socket (COSI_PLUGIN_SOCKET) with the COSI State service, as any plugin does,
and says COSI-PLUGIN-READY once it watches.

Before that it tries one write it is not allowed (a Greeting: not among its outputs) and logs how the
engine refused it, so whoever reads its log sees the guard at work.
"""
import ctypes
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))
import grpc  # noqa: E402
from v1alpha1 import resource_pb2, state_pb2  # noqa: E402

# The types it serves: its manifest's (env), so that one program can be shipped under several names.
NAMESPACE = os.environ.get("HELLO_NAMESPACE", "hello")
GREETING = os.environ.get("HELLO_INPUT_TYPE", "Greetings.hello.example.org")
STATUS = os.environ.get("HELLO_STATUS_TYPE", "GreetingStatuses.hello.example.org")
# An extension writes as its own name (COSI_PLUGIN_NAME): the engine refuses any other owner from it.
OWNER = os.environ["COSI_PLUGIN_NAME"]
S = "/cosi.resource.State/"

channel = grpc.insecure_channel("unix://" + os.environ["COSI_PLUGIN_SOCKET"])


def unary(name, req, res):
    return channel.unary_unary(S + name, request_serializer=req.SerializeToString, response_deserializer=res.FromString)


get = unary("Get", state_pb2.GetRequest, state_pb2.GetResponse)
create = unary("Create", state_pb2.CreateRequest, state_pb2.CreateResponse)
update = unary("Update", state_pb2.UpdateRequest, state_pb2.UpdateResponse)
destroy = unary("Destroy", state_pb2.DestroyRequest, state_pb2.DestroyResponse)
watch = channel.unary_stream(S + "Watch", request_serializer=state_pb2.WatchRequest.SerializeToString,
                             response_deserializer=state_pb2.WatchResponse.FromString)


def log(line):
    print(line, file=sys.stderr, flush=True)


def proc_status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return line.split(":", 1)[1].strip()
    return ""


def mount_errno():
    """What mount(2) of a tmpfs answers here: seccomp and the missing CAP_SYS_ADMIN both refuse it."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
        return "mounted"
    return os.strerror(ctypes.get_errno())


def root_mount_options():
    """The per-mount options of / as /proc/self/mountinfo says (e.g. ro,nosuid,nodev,relatime)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[4] == "/":
                return fields[5]
    return ""


def confinement():
    with open("/proc/self/cgroup") as f:
        cgroup = f.read().strip()
    return {
        "pid": str(os.getpid()), "uid": proc_status("Uid").split()[0], "capEff": proc_status("CapEff"),
        "capBnd": proc_status("CapBnd"), "noNewPrivs": proc_status("NoNewPrivs"),
        "seccomp": proc_status("Seccomp"), "cgroup": cgroup, "mount": mount_errno(),
        "rootOptions": root_mount_options(),
        "root": " ".join(sorted(os.listdir("/"))),
    }


def yaml_text(fields):
    # Plain "key: value" lines with each value quoted as JSON (a YAML subset): no YAML library needed.
    import json
    return "".join(f"{k}: {json.dumps(v)}\n" for k, v in fields.items())


def write_status(greeting_id, name):
    spec = resource_pb2.Spec(yaml_spec=yaml_text({"message": f"hello, {name}", **confinement()}))
    try:
        cur = get(state_pb2.GetRequest(namespace=NAMESPACE, type=STATUS, id=greeting_id)).resource
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.NOT_FOUND:
            raise
        md = resource_pb2.Metadata(namespace=NAMESPACE, type=STATUS, id=greeting_id, version="undefined",
                                   phase="running")
        create(state_pb2.CreateRequest(resource=resource_pb2.Resource(metadata=md, spec=spec),
                                       options=state_pb2.CreateOptions(owner=OWNER)))
        return
    cur.spec.CopyFrom(spec)
    update(state_pb2.UpdateRequest(new_resource=cur, options=state_pb2.UpdateOptions(owner=OWNER)))


def name_of(yaml_spec):
    for line in yaml_spec.splitlines():
        if line.startswith("name:"):
            return line.split(":", 1)[1].strip().strip("\"'")
    return "stranger"


def try_forbidden_write():
    md = resource_pb2.Metadata(namespace=NAMESPACE, type=GREETING, id="from-hello", version="undefined",
                               phase="running")
    try:
        forbidden = resource_pb2.Resource(metadata=md, spec=resource_pb2.Spec(yaml_spec="name: myself\n"))
        create(state_pb2.CreateRequest(resource=forbidden, options=state_pb2.CreateOptions(owner=OWNER)))
        log(f"ERROR a write of {GREETING} was accepted, though it is not among my outputs")
    except grpc.RpcError as e:
        log(f"WARN refused as it should be: {e.code().name}: {e.details()}")


def main():
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    try_forbidden_write()
    stream = watch(state_pb2.WatchRequest(namespace=NAMESPACE, type=GREETING, api_version=1,
                                          options=state_pb2.WatchOptions(bootstrap_contents=True)))
    ready = False
    for response in stream:
        for event in response.event:
            if event.event_type == state_pb2.BOOTSTRAPPED:
                if not ready:
                    print("COSI-PLUGIN-READY", flush=True)
                    log(f"watching {GREETING}")
                    ready = True
            elif event.event_type in (state_pb2.CREATED, state_pb2.UPDATED):
                r = event.resource
                write_status(r.metadata.id, name_of(r.spec.yaml_spec))
                log(f"greeted {r.metadata.id}")
            elif event.event_type == state_pb2.DESTROYED:
                try:
                    destroy(state_pb2.DestroyRequest(namespace=NAMESPACE, type=STATUS, id=event.resource.metadata.id,
                                                     options=state_pb2.DestroyOptions(owner=OWNER)))
                except grpc.RpcError as e:
                    if e.code() != grpc.StatusCode.NOT_FOUND:
                        raise
            elif event.event_type == state_pb2.ERRORED:
                log(f"ERROR the watch failed: {event.error}")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
