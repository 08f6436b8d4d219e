// addon.cc: module entry; each file registers its own group of wrappers.
#include <napi.h>

namespace appliance {
void InitSystem(Napi::Env env, Napi::Object exports);
void InitProcess(Napi::Env env, Napi::Object exports);
void InitSocket(Napi::Env env, Napi::Object exports);
void InitNetlink(Napi::Env env, Napi::Object exports);
void InitCaps(Napi::Env env, Napi::Object exports);
void InitNamespaces(Napi::Env env, Napi::Object exports);
void InitPacket(Napi::Env env, Napi::Object exports);
void InitModules(Napi::Env env, Napi::Object exports);
void InitClock(Napi::Env env, Napi::Object exports);
void InitSeccomp(Napi::Env env, Napi::Object exports);
void InitBlock(Napi::Env env, Napi::Object exports);
void InitQuota(Napi::Env env, Napi::Object exports);
}

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  appliance::InitSystem(env, exports);
  appliance::InitProcess(env, exports);
  appliance::InitSocket(env, exports);
  appliance::InitNetlink(env, exports);
  appliance::InitCaps(env, exports);
  appliance::InitNamespaces(env, exports);
  appliance::InitPacket(env, exports);
  appliance::InitModules(env, exports);
  appliance::InitClock(env, exports);
  appliance::InitSeccomp(env, exports);
  appliance::InitBlock(env, exports);
  appliance::InitQuota(env, exports);
  return exports;
}

NODE_API_MODULE(appliance_native, Init)
