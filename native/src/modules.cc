// modules.cc: finit_module/delete_module. Which modules to load, and in what order
// (modules.dep), is decided in TypeScript (plugins/system/kernel-modules).
#include <napi.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "errors.h"

namespace appliance {

// finitModule(path, params): loads the module file at path (uncompressed .ko).
static Napi::Value FinitModule(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string path = info[0].As<Napi::String>();
  std::string params = info.Length() > 1 && info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : "";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) { ThrowErrno(env, "open", path, errno); return env.Undefined(); }
  long r = ::syscall(SYS_finit_module, fd, params.c_str(), 0);
  int e = errno;
  ::close(fd);
  if (r != 0) ThrowErrno(env, "finit_module", path, e);
  return env.Undefined();
}

// deleteModule(name): unloads a module nobody uses (O_NONBLOCK: fail with EWOULDBLOCK
// instead of waiting for its users to go away).
static Napi::Value DeleteModule(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = info[0].As<Napi::String>();
  if (::syscall(SYS_delete_module, name.c_str(), O_NONBLOCK) != 0) ThrowErrno(env, "delete_module", name, errno);
  return env.Undefined();
}

void InitModules(Napi::Env env, Napi::Object exports) {
  exports.Set("finitModule", Napi::Function::New(env, FinitModule));
  exports.Set("deleteModule", Napi::Function::New(env, DeleteModule));
}

}  // namespace appliance
