// process.cc: what a reaper needs: waitpid on one pid without blocking, and
// PR_SET_CHILD_SUBREAPER so the reaper also works (and is testable) outside PID 1.
#include <napi.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "errors.h"

namespace appliance {

// waitpid(pid) with WNOHANG: null while the child runs, else {pid, code, signal}.
// Only ever called with a pid the caller saw as a zombie child, never -1, so
// libuv's own children keep their exit status.
static Napi::Value WaitPid(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  pid_t pid = info[0].As<Napi::Number>().Int32Value();
  if (pid <= 0) {
    Napi::RangeError::New(env, "waitpid: pid must be > 0 (waiting on any child would steal libuv's)")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int status = 0;
  pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r < 0) { ThrowErrno(env, "waitpid", std::to_string(pid), errno); return env.Undefined(); }
  if (r == 0) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("pid", r);
  o.Set("code", WIFEXITED(status) ? Napi::Value(Napi::Number::New(env, WEXITSTATUS(status))) : env.Null());
  o.Set("signal", WIFSIGNALED(status) ? Napi::Value(Napi::Number::New(env, WTERMSIG(status))) : env.Null());
  return o;
}

static Napi::Value SetChildSubreaper(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) ThrowErrno(env, "prctl", "PR_SET_CHILD_SUBREAPER", errno);
  return env.Undefined();
}

void InitProcess(Napi::Env env, Napi::Object exports) {
  exports.Set("waitpid", Napi::Function::New(env, WaitPid));
  exports.Set("setChildSubreaper", Napi::Function::New(env, SetChildSubreaper));
}

}  // namespace appliance
