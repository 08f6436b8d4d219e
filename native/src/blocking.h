// blocking.h: a system call that may wait on a device (a flush, a mount, sync), run on libuv's thread pool
// and answered with a Promise: PID 1's own thread goes on serving the API meanwhile. Under TCG on 256 MiB,
// BLKFLSBUF, mount, umount and sync made on that thread during an install kept the API silent for seconds.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <napi.h>
#include "errors.h"

namespace appliance {

// What failed in a blocking call: the system call, what it was given, and errno (0: nothing failed).
struct Failure {
  const char* syscall = "";
  std::string detail;
  int err = 0;
};

// Runs `work` on this thread, for the synchronous form of a call: throws its Failure, if any.
inline Napi::Value RunHere(Napi::Env env, const std::function<Failure()>& work) {
  if (env.IsExceptionPending()) return env.Undefined();  // an argument did not convert
  Failure f = work();
  if (f.err != 0) ThrowErrno(env, f.syscall, f.detail, f.err);
  return env.Undefined();
}

// Runs `work` off the JS thread; the Promise resolves, or rejects with ErrnoError from the Failure it returns.
// `work` must not touch JS values: it copies what it needs before it is queued.
class BlockingCall : public Napi::AsyncWorker {
 public:
  static Napi::Value Start(Napi::Env env, std::function<Failure()> work) {
    // An argument that did not convert left its TypeError pending: that is the answer, and nothing is queued.
    if (env.IsExceptionPending()) return env.Undefined();
    auto* call = new BlockingCall(env, std::move(work));
    Napi::Promise promise = call->deferred_.Promise();
    call->Queue();  // the worker deletes itself once settled
    return promise;
  }

 protected:
  void Execute() override { failure_ = work_(); }
  void OnOK() override {
    if (failure_.err != 0) {
      deferred_.Reject(ErrnoError(Env(), failure_.syscall, failure_.detail, failure_.err).Value());
    } else {
      deferred_.Resolve(Env().Undefined());
    }
  }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  BlockingCall(Napi::Env env, std::function<Failure()> work)
      : Napi::AsyncWorker(env, "appliance:blocking-call"),
        deferred_(Napi::Promise::Deferred::New(env)),
        work_(std::move(work)) {}

  Napi::Promise::Deferred deferred_;
  std::function<Failure()> work_;
  Failure failure_;
};

}  // namespace appliance
