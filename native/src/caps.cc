// caps.cc: a plugin's privileges. no_new_privs, then every capability not kept is
// dropped from the bounding set and from effective/permitted/inheritable, so neither
// this process nor anything it executes can take them back. An extension also leaves
// uid 0 (becomeUser): the kept ones then pass execve as ambient capabilities.
#include <napi.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <string>
#include "errors.h"

namespace appliance {

// The capability mask of a JS array of numbers; false (and a thrown RangeError) on a bad one.
static bool KeepMask(Napi::Env env, const Napi::Value& v, uint64_t* keep) {
  Napi::Array keepArr = v.As<Napi::Array>();
  *keep = 0;
  for (uint32_t i = 0; i < keepArr.Length(); i++) {
    int c = keepArr.Get(i).As<Napi::Number>().Int32Value();
    if (c < 0 || c > 63) {
      Napi::RangeError::New(env, "capability number out of range: " + std::to_string(c)).ThrowAsJavaScriptException();
      return false;
    }
    *keep |= (1ULL << c);
  }
  return true;
}

// no_new_privs, and every capability not in `keep` out of the bounding set.
static bool NoNewPrivsAndBounding(Napi::Env env, uint64_t keep) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    ThrowErrno(env, "prctl", "PR_SET_NO_NEW_PRIVS", errno);
    return false;
  }
  for (int c = 0; c <= 63; c++) {
    if (keep & (1ULL << c)) continue;
    if (::prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0) break;  // past the kernel's last capability
    if (::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) {
      ThrowErrno(env, "prctl", "PR_CAPBSET_DROP " + std::to_string(c), errno);
      return false;
    }
  }
  return true;
}

static bool SetCapabilities(Napi::Env env, uint64_t effective, uint64_t inheritable) {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  data[0].effective = data[0].permitted = static_cast<uint32_t>(effective);
  data[1].effective = data[1].permitted = static_cast<uint32_t>(effective >> 32);
  data[0].inheritable = static_cast<uint32_t>(inheritable);
  data[1].inheritable = static_cast<uint32_t>(inheritable >> 32);
  if (::syscall(SYS_capset, &hdr, data) != 0) { ThrowErrno(env, "capset", "", errno); return false; }
  return true;
}

static Napi::Value DropCapabilities(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t keep;
  if (!KeepMask(env, info[0], &keep) || !NoNewPrivsAndBounding(env, keep)) return env.Undefined();
  SetCapabilities(env, keep, 0);
  return env.Undefined();
}

// becomeUser(uid, gid, keep): no_new_privs and the bounding set cut to `keep`, as dropCapabilities; then
// uid and gid `uid`/`gid` with no supplementary groups, `keep` held through the change (PR_SET_KEEPCAPS)
// and raised as ambient capabilities, so that a program executed next holds exactly `keep`.
static Napi::Value BecomeUser(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint32_t uid = info[0].As<Napi::Number>().Uint32Value();
  uint32_t gid = info[1].As<Napi::Number>().Uint32Value();
  uint64_t keep;
  if (uid == 0) {
    Napi::RangeError::New(env, "becomeUser: uid 0 is no other user").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (!KeepMask(env, info[2], &keep) || !NoNewPrivsAndBounding(env, keep)) return env.Undefined();
  if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) {
    ThrowErrno(env, "prctl", "PR_SET_KEEPCAPS", errno);
    return env.Undefined();
  }
  if (::setgroups(0, nullptr) != 0) { ThrowErrno(env, "setgroups", "", errno); return env.Undefined(); }
  // glibc applies these to every thread of the process (its setxid broadcast), as POSIX wants.
  if (::setresgid(gid, gid, gid) != 0) {
    ThrowErrno(env, "setresgid", std::to_string(gid), errno);
    return env.Undefined();
  }
  if (::setresuid(uid, uid, uid) != 0) {
    ThrowErrno(env, "setresuid", std::to_string(uid), errno);
    return env.Undefined();
  }
  // Permitted survived the change (keepcaps); effective did not. Ambient needs permitted and inheritable.
  if (!SetCapabilities(env, keep, keep)) return env.Undefined();
  for (int c = 0; c <= 63; c++) {
    if (!(keep & (1ULL << c))) continue;
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) != 0) {
      ThrowErrno(env, "prctl", "PR_CAP_AMBIENT_RAISE " + std::to_string(c), errno);
      return env.Undefined();
    }
  }
  if (::prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0) ThrowErrno(env, "prctl", "PR_SET_KEEPCAPS 0", errno);
  return env.Undefined();
}

void InitCaps(Napi::Env env, Napi::Object exports) {
  exports.Set("dropCapabilities", Napi::Function::New(env, DropCapabilities));
  exports.Set("becomeUser", Napi::Function::New(env, BecomeUser));
}

}  // namespace appliance
