// namespaces.cc: unshare(2) for the calling thread (Node's main thread). Tests use
// private network, UTS and mount namespaces so they never touch the host's.
#include <napi.h>
#include <sched.h>
#include <sys/mount.h>
#include "errors.h"

namespace appliance {

// unshareNet(): this thread (Node's main thread) enters a new network namespace.
// Tests use it to get a private set of links; sockets opened afterwards live there.
static Napi::Value UnshareNet(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (::unshare(CLONE_NEWNET) != 0) ThrowErrno(env, "unshare", "CLONE_NEWNET", errno);
  return env.Undefined();
}

// unshareUts(): a private hostname for this thread (tests of sethostname).
static Napi::Value UnshareUts(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (::unshare(CLONE_NEWUTS) != 0) ThrowErrno(env, "unshare", "CLONE_NEWUTS", errno);
  return env.Undefined();
}

// unshareMounts(): a private mount namespace for this thread, propagation private,
// so mounts made by tests stay theirs.
static Napi::Value UnshareMounts(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (::unshare(CLONE_NEWNS) != 0) { ThrowErrno(env, "unshare", "CLONE_NEWNS", errno); return env.Undefined(); }
  if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ThrowErrno(env, "mount", "make / rprivate", errno);
  return env.Undefined();
}

void InitNamespaces(Napi::Env env, Napi::Object exports) {
  exports.Set("unshareNet", Napi::Function::New(env, UnshareNet));
  exports.Set("unshareUts", Napi::Function::New(env, UnshareUts));
  exports.Set("unshareMounts", Napi::Function::New(env, UnshareMounts));
}

}  // namespace appliance
