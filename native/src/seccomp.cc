// seccomp.cc: installs a seccomp BPF filter built in TypeScript (init/sys/seccomp.ts),
// on every thread of the process at once (SECCOMP_FILTER_FLAG_TSYNC): Node runs its
// libuv and V8 threads before any of our code, and a filter on one thread would leave
// them free. no_new_privs must be set already (dropCapabilities does it).
#include <napi.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <unistd.h>
#include <string>
#include <vector>
#include "errors.h"

namespace appliance {

static Napi::Value SeccompFilter(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Buffer<uint8_t> program = info[0].As<Napi::Buffer<uint8_t>>();
  if (program.Length() == 0 || program.Length() % sizeof(sock_filter) != 0 ||
      program.Length() / sizeof(sock_filter) > BPF_MAXINSNS) {
    Napi::RangeError::New(env, "seccomp program: a whole number of 8-byte instructions, at most 4096")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  sock_fprog prog{static_cast<unsigned short>(program.Length() / sizeof(sock_filter)),
                  reinterpret_cast<sock_filter*>(program.Data())};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
    ThrowErrno(env, "seccomp", "SECCOMP_SET_MODE_FILTER (TSYNC)", errno);
  }
  return env.Undefined();
}

// execSelf(argv): execve(/proc/self/exe, argv, environ). A plugin re-executes itself after
// unshare(CLONE_NEWNS) so that every thread of the new image lives in the new namespace.
static Napi::Value ExecSelf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array arr = info[0].As<Napi::Array>();
  std::vector<std::string> args;
  for (uint32_t i = 0; i < arr.Length(); i++) args.push_back(arr.Get(i).As<Napi::String>().Utf8Value());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // libuv marks the stdio it took over close-on-exec: without this the new image would write to /dev/null.
  for (int fd = 0; fd <= 2; fd++) ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) & ~FD_CLOEXEC);
  ::execv("/proc/self/exe", argv.data());
  ThrowErrno(env, "execv", "/proc/self/exe", errno);
  return env.Undefined();
}

void InitSeccomp(Napi::Env env, Napi::Object exports) {
  exports.Set("seccompFilter", Napi::Function::New(env, SeccompFilter));
  exports.Set("execSelf", Napi::Function::New(env, ExecSelf));
}

}  // namespace appliance
