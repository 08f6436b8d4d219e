// namespaces.cc: unshare(2) for the calling thread (Node's main thread). Tests use
// private network, UTS and mount namespaces so they never touch the host's.
#include <fcntl.h>
#include <napi.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <string>
#include <unistd.h>
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

// unshareMounts(slave): a mount namespace of its own for this thread. Propagation private
// (tests: their mounts stay theirs, and the host's stay out), or slave (a plugin: the
// machine's mounts come in, its own do not go out).
static Napi::Value UnshareMounts(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  bool slave = info.Length() > 0 && info[0].ToBoolean().Value();
  if (::unshare(CLONE_NEWNS) != 0) { ThrowErrno(env, "unshare", "CLONE_NEWNS", errno); return env.Undefined(); }
  if (::mount("none", "/", nullptr, MS_REC | (slave ? MS_SLAVE : MS_PRIVATE), nullptr) != 0) {
    ThrowErrno(env, "mount", slave ? "make / rslave" : "make / rprivate", errno);
  }
  return env.Undefined();
}

// enterRoot(dir): the mount `dir` becomes this thread's root. pivot_root(".", ".") then detaching the old
// root, as pivot_root(2) shows: nothing of the machine's files stays in the namespace. The initramfs
// (rootfs) cannot be pivoted away from (EINVAL): there the mount is moved onto / and chroot'ed into, as
// switch_root does; the old root stays beneath it, unreachable without chroot or a mount, which the
// caller's seccomp filter refuses. Returns "pivot" or "move". Only in a private mount namespace of its own.
static Napi::Value EnterRoot(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string dir = info[0].As<Napi::String>().Utf8Value();
  if (::chdir(dir.c_str()) != 0) { ThrowErrno(env, "chdir", dir, errno); return env.Undefined(); }
  if (::syscall(SYS_pivot_root, ".", ".") == 0) {
    if (::umount2(".", MNT_DETACH) != 0) { ThrowErrno(env, "umount2", "the old root", errno); return env.Undefined(); }
    if (::chdir("/") != 0) { ThrowErrno(env, "chdir", "/", errno); return env.Undefined(); }
    return Napi::String::New(env, "pivot");
  }
  if (errno != EINVAL) { ThrowErrno(env, "pivot_root", dir, errno); return env.Undefined(); }
  if (::mount(".", "/", nullptr, MS_MOVE, nullptr) != 0) {
    ThrowErrno(env, "mount", "--move " + dir + " /", errno);
    return env.Undefined();
  }
  if (::chroot(".") != 0) { ThrowErrno(env, "chroot", dir, errno); return env.Undefined(); }
  if (::chdir("/") != 0) { ThrowErrno(env, "chdir", "/", errno); return env.Undefined(); }
  return Napi::String::New(env, "move");
}

// mountNamespaceFd(): a descriptor of this thread's mount namespace, to come back to it.
static Napi::Value MountNamespaceFd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = ::open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
  if (fd < 0) { ThrowErrno(env, "open", "/proc/thread-self/ns/mnt", errno); return env.Undefined(); }
  return Napi::Number::New(env, fd);
}

// setMountNamespace(fd): this thread enters the mount namespace `fd` refers to (setns(2)).
static Napi::Value SetMountNamespace(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = info[0].As<Napi::Number>().Int32Value();
  if (::setns(fd, CLONE_NEWNS) != 0) ThrowErrno(env, "setns", "CLONE_NEWNS", errno);
  return env.Undefined();
}

void InitNamespaces(Napi::Env env, Napi::Object exports) {
  exports.Set("unshareNet", Napi::Function::New(env, UnshareNet));
  exports.Set("unshareUts", Napi::Function::New(env, UnshareUts));
  exports.Set("unshareMounts", Napi::Function::New(env, UnshareMounts));
  exports.Set("enterRoot", Napi::Function::New(env, EnterRoot));
  exports.Set("mountNamespaceFd", Napi::Function::New(env, MountNamespaceFd));
  exports.Set("setMountNamespace", Napi::Function::New(env, SetMountNamespace));
}

}  // namespace appliance
