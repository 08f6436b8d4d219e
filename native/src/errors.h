// errors.h: one way to turn a failed syscall into a JS Error carrying errno's name.
#pragma once
#include <napi.h>
#include <cerrno>
#include <cstring>
#include <string>
#include "errno-names.h"

namespace appliance {

// Error("<syscall> <detail>: <strerror> (<ENAME>)") with .code = "ENAME", .errno = number and .syscall, like
// Node's own fs errors, so TS maps it in one place. Names come from the kernel's list (errno-names.h, generated
// with native/gen/errno-table.ts), the same table native/errno.ts reads.
inline Napi::Error ErrnoError(Napi::Env env, const char* syscall, const std::string& detail, int err) {
  const char* name = ErrnoName(err);
  std::string code = name ? name : ("E" + std::to_string(err));
  std::string msg = std::string(syscall) + (detail.empty() ? "" : " " + detail) + ": " +
                    strerror(err) + " (" + code + ")";
  Napi::Error e = Napi::Error::New(env, msg);
  e.Set("code", Napi::String::New(env, code));
  e.Set("errno", Napi::Number::New(env, err));
  e.Set("syscall", Napi::String::New(env, syscall));
  return e;
}

// Throws ErrnoError.
inline void ThrowErrno(Napi::Env env, const char* syscall, const std::string& detail, int err) {
  ErrnoError(env, syscall, detail, err).ThrowAsJavaScriptException();
}

}  // namespace appliance
