// clock.cc: the system clock and the RTC. The SNTP client (plugins/time) decides when
// to step or slew; these only carry the result to the kernel.
#include <napi.h>
#include <fcntl.h>
#include <linux/rtc.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <cmath>
#include "errors.h"

namespace appliance {

// clockNow() -> CLOCK_REALTIME in ms with the fraction (Date.now() truncates to whole
// ms, which alone puts up to 1 ms of error into an SNTP offset).
static Napi::Value ClockNow(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return Napi::Number::New(env, static_cast<double>(ts.tv_sec) * 1000 + static_cast<double>(ts.tv_nsec) / 1e6);
}

// clockStep(epochMs): sets CLOCK_REALTIME.
static Napi::Value ClockStep(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  double ms = info[0].As<Napi::Number>().DoubleValue();
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(std::floor(ms / 1000));
  ts.tv_nsec = static_cast<long>((ms - static_cast<double>(ts.tv_sec) * 1000) * 1e6);
  if (::clock_settime(CLOCK_REALTIME, &ts) != 0) ThrowErrno(env, "clock_settime", "CLOCK_REALTIME", errno);
  return env.Undefined();
}

// clockSlew(deltaMs): adjtime(2); the kernel speeds or slows the clock until the
// delta is absorbed (about 2 ms per second), so time never jumps back.
static Napi::Value ClockSlew(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  double ms = info[0].As<Napi::Number>().DoubleValue();
  long long us = std::llround(ms * 1000);
  timeval tv{};
  tv.tv_sec = us / 1000000;
  tv.tv_usec = us % 1000000;
  if (tv.tv_usec < 0) { tv.tv_usec += 1000000; tv.tv_sec -= 1; }
  if (::adjtime(&tv, nullptr) != 0) ThrowErrno(env, "adjtime", std::to_string(ms) + " ms", errno);
  return env.Undefined();
}

// rtcRead(device) -> epoch seconds (the RTC keeps UTC)
static Napi::Value RtcRead(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string dev = info[0].As<Napi::String>();
  int fd = ::open(dev.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) { ThrowErrno(env, "open", dev, errno); return env.Undefined(); }
  rtc_time rt{};
  int r = ::ioctl(fd, RTC_RD_TIME, &rt);
  int e = errno;
  ::close(fd);
  if (r != 0) { ThrowErrno(env, "ioctl", dev + " RTC_RD_TIME", e); return env.Undefined(); }
  tm t{};
  t.tm_sec = rt.tm_sec; t.tm_min = rt.tm_min; t.tm_hour = rt.tm_hour;
  t.tm_mday = rt.tm_mday; t.tm_mon = rt.tm_mon; t.tm_year = rt.tm_year;
  return Napi::Number::New(env, static_cast<double>(::timegm(&t)));
}

// rtcWrite(device, epochSeconds): so the next boot starts from a synced time.
static Napi::Value RtcWrite(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string dev = info[0].As<Napi::String>();
  time_t secs = static_cast<time_t>(info[1].As<Napi::Number>().DoubleValue());
  tm t{};
  gmtime_r(&secs, &t);
  rtc_time rt{};
  rt.tm_sec = t.tm_sec; rt.tm_min = t.tm_min; rt.tm_hour = t.tm_hour;
  rt.tm_mday = t.tm_mday; rt.tm_mon = t.tm_mon; rt.tm_year = t.tm_year;
  int fd = ::open(dev.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) { ThrowErrno(env, "open", dev, errno); return env.Undefined(); }
  int r = ::ioctl(fd, RTC_SET_TIME, &rt);
  int e = errno;
  ::close(fd);
  if (r != 0) ThrowErrno(env, "ioctl", dev + " RTC_SET_TIME", e);
  return env.Undefined();
}

void InitClock(Napi::Env env, Napi::Object exports) {
  exports.Set("clockNow", Napi::Function::New(env, ClockNow));
  exports.Set("clockStep", Napi::Function::New(env, ClockStep));
  exports.Set("clockSlew", Napi::Function::New(env, ClockSlew));
  exports.Set("rtcRead", Napi::Function::New(env, RtcRead));
  exports.Set("rtcWrite", Napi::Function::New(env, RtcWrite));
}

}  // namespace appliance
