// caps.cc: a plugin's privileges. no_new_privs, then every capability not kept is
// dropped from the bounding set and from effective/permitted/inheritable, so neither
// this process nor anything it executes can take them back.
#include <napi.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "errors.h"

namespace appliance {

static Napi::Value DropCapabilities(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array keepArr = info[0].As<Napi::Array>();
  uint64_t keep = 0;
  for (uint32_t i = 0; i < keepArr.Length(); i++) {
    int c = keepArr.Get(i).As<Napi::Number>().Int32Value();
    if (c < 0 || c > 63) { Napi::RangeError::New(env, "capability number out of range: " + std::to_string(c)).ThrowAsJavaScriptException(); return env.Undefined(); }
    keep |= (1ULL << c);
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) { ThrowErrno(env, "prctl", "PR_SET_NO_NEW_PRIVS", errno); return env.Undefined(); }
  for (int c = 0; c <= 63; c++) {
    if (keep & (1ULL << c)) continue;
    if (::prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0) break;  // past the kernel's last capability
    if (::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) { ThrowErrno(env, "prctl", "PR_CAPBSET_DROP " + std::to_string(c), errno); return env.Undefined(); }
  }
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  data[0].effective = data[0].permitted = static_cast<uint32_t>(keep);
  data[1].effective = data[1].permitted = static_cast<uint32_t>(keep >> 32);
  if (::syscall(SYS_capset, &hdr, data) != 0) ThrowErrno(env, "capset", "", errno);
  return env.Undefined();
}

void InitCaps(Napi::Env env, Napi::Object exports) {
  exports.Set("dropCapabilities", Napi::Function::New(env, DropCapabilities));
}

}  // namespace appliance
