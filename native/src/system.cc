// system.cc: mount/umount2, sync (each also on the thread pool), reboot, sethostname/setdomainname.
#include <napi.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <linux/reboot.h>
#include <unistd.h>
#include "blocking.h"
#include "errors.h"

namespace appliance {

// A mount(2) as its JS arguments give it (source, target, fstype, flags, data): run here or on the thread pool.
struct MountCall {
  std::string source, target, fstype, data;
  unsigned long flags;
  explicit MountCall(const Napi::CallbackInfo& info)
      : source(info[0].As<Napi::String>()), target(info[1].As<Napi::String>()),
        fstype(info[2].As<Napi::String>()), data(info[4].IsString() ? info[4].As<Napi::String>().Utf8Value() : ""),
        flags(info[3].As<Napi::Number>().Int64Value()) {}
  Failure operator()() const {
    if (::mount(source.c_str(), target.c_str(), fstype.empty() ? nullptr : fstype.c_str(), flags,
                data.empty() ? nullptr : data.c_str()) != 0) {
      int err = errno;  // before the detail is made: an allocation may set errno
      return {"mount", fstype + " " + source + " on " + target, err};
    }
    return {};
  }
};

// umount2(2) of (target, flags).
struct Umount2Call {
  std::string target;
  int flags;
  explicit Umount2Call(const Napi::CallbackInfo& info)
      : target(info[0].As<Napi::String>()), flags(info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : 0) {}
  Failure operator()() const {
    if (::umount2(target.c_str(), flags) != 0) {
      int err = errno;
      return {"umount2", target, err};
    }
    return {};
  }
};

static Failure SyncCall() {
  ::sync();
  return {};
}

// mount(source, target, fstype, flags, data); mountAsync: the same on the thread pool, a Promise.
static Napi::Value Mount(const Napi::CallbackInfo& info) { return RunHere(info.Env(), MountCall(info)); }
static Napi::Value MountAsync(const Napi::CallbackInfo& info) {
  return BlockingCall::Start(info.Env(), MountCall(info));
}

// umount2(target, flags); umount2Async: the same on the thread pool (it writes the filesystem's dirty data back).
static Napi::Value Umount2(const Napi::CallbackInfo& info) { return RunHere(info.Env(), Umount2Call(info)); }
static Napi::Value Umount2Async(const Napi::CallbackInfo& info) {
  return BlockingCall::Start(info.Env(), Umount2Call(info));
}

// sync(); syncAsync: the same on the thread pool.
static Napi::Value Sync(const Napi::CallbackInfo& info) { return RunHere(info.Env(), SyncCall); }
static Napi::Value SyncAsync(const Napi::CallbackInfo& info) { return BlockingCall::Start(info.Env(), SyncCall); }

// reboot(cmd): "restart" | "halt" | "poweroff" | "cad_on" | "cad_off". Always syncs
// first for the three that end the system, so no caller can forget it.
static Napi::Value Reboot(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string what = info[0].As<Napi::String>();
  int cmd;
  bool ends = true;
  if (what == "restart") cmd = LINUX_REBOOT_CMD_RESTART;
  else if (what == "halt") cmd = LINUX_REBOOT_CMD_HALT;
  else if (what == "poweroff") cmd = LINUX_REBOOT_CMD_POWER_OFF;
  else if (what == "cad_on") { cmd = LINUX_REBOOT_CMD_CAD_ON; ends = false; }
  else if (what == "cad_off") { cmd = LINUX_REBOOT_CMD_CAD_OFF; ends = false; }
  else {
    Napi::TypeError::New(env, "reboot: unknown command \"" + what + "\" (restart|halt|poweroff|cad_on|cad_off)")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (ends) ::sync();
  if (::reboot(cmd) != 0) ThrowErrno(env, "reboot", what, errno);
  return env.Undefined();
}

static Napi::Value SetHostname(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = info[0].As<Napi::String>();
  if (::sethostname(name.c_str(), name.size()) != 0) ThrowErrno(env, "sethostname", name, errno);
  return env.Undefined();
}

static Napi::Value SetDomainname(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = info[0].As<Napi::String>();
  if (::setdomainname(name.c_str(), name.size()) != 0) ThrowErrno(env, "setdomainname", name, errno);
  return env.Undefined();
}

void InitSystem(Napi::Env env, Napi::Object exports) {
  exports.Set("mount", Napi::Function::New(env, Mount));
  exports.Set("umount2", Napi::Function::New(env, Umount2));
  exports.Set("sync", Napi::Function::New(env, Sync));
  exports.Set("mountAsync", Napi::Function::New(env, MountAsync));
  exports.Set("umount2Async", Napi::Function::New(env, Umount2Async));
  exports.Set("syncAsync", Napi::Function::New(env, SyncAsync));
  exports.Set("reboot", Napi::Function::New(env, Reboot));
  exports.Set("sethostname", Napi::Function::New(env, SetHostname));
  exports.Set("setdomainname", Napi::Function::New(env, SetDomainname));
}

}  // namespace appliance
