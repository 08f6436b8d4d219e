// seccomp.cc: installs a seccomp BPF filter built in TypeScript (machinery/sys/seccomp.ts),
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

static std::vector<std::string> Strings(const Napi::Value& v) {
  std::vector<std::string> out;
  Napi::Array arr = v.As<Napi::Array>();
  for (uint32_t i = 0; i < arr.Length(); i++) out.push_back(arr.Get(i).As<Napi::String>().Utf8Value());
  return out;
}

static std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// execProgram(file, argv, env?): execve(file, argv, env), or this environment when env is not given.
// A plugin re-executes itself (/proc/self/exe) after unshare(CLONE_NEWNS) so that every thread of the new
// image lives in the new namespace; an extension's launcher becomes the extension's program.
static Napi::Value ExecProgram(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string file = info[0].As<Napi::String>().Utf8Value();
  std::vector<std::string> args = Strings(info[1]);
  std::vector<char*> argv = Pointers(args);
  bool ownEnv = info.Length() > 2 && info[2].IsArray();
  std::vector<std::string> vars = ownEnv ? Strings(info[2]) : std::vector<std::string>{};
  std::vector<char*> envp = Pointers(vars);
  // libuv marks the stdio it took over close-on-exec: without this the new image would write to /dev/null.
  for (int fd = 0; fd <= 2; fd++) ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) & ~FD_CLOEXEC);
  if (ownEnv) ::execve(file.c_str(), argv.data(), envp.data()); else ::execv(file.c_str(), argv.data());
  ThrowErrno(env, "execve", file, errno);
  return env.Undefined();
}

void InitSeccomp(Napi::Env env, Napi::Object exports) {
  exports.Set("seccompFilter", Napi::Function::New(env, SeccompFilter));
  exports.Set("execProgram", Napi::Function::New(env, ExecProgram));
}

}  // namespace appliance
