// socket.cc: SO_PEERCRED, so the engine knows which process is on the other end of
// a unix socket connection (plugins are identified by pid, not by what they claim).
#include <napi.h>
#include <sys/socket.h>
#include "errors.h"

namespace appliance {

static Napi::Value PeerCred(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = info[0].As<Napi::Number>().Int32Value();
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    ThrowErrno(env, "getsockopt", "SO_PEERCRED fd " + std::to_string(fd), errno);
    return env.Undefined();
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("pid", cred.pid);
  o.Set("uid", cred.uid);
  o.Set("gid", cred.gid);
  return o;
}

void InitSocket(Napi::Env env, Napi::Object exports) {
  exports.Set("peerCred", Napi::Function::New(env, PeerCred));
}

}  // namespace appliance
