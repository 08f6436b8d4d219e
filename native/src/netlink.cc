// netlink.cc: raw netlink sockets. Requests are synchronous (send, then read until
// the kernel's answer for that sequence number is complete); multicast groups are
// read on a thread of their own and handed to JS through a thread-safe function.
// Message encoding and decoding stay in TypeScript (plugins/network/rtnetlink).
#include <napi.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <atomic>
#include <thread>
#include <vector>
#include "errors.h"

namespace appliance {

// netlinkOpen(protocol, groups[]) -> fd
static Napi::Value Open(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int protocol = info[0].As<Napi::Number>().Int32Value();
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
  if (fd < 0) { ThrowErrno(env, "socket", "AF_NETLINK " + std::to_string(protocol), errno); return env.Undefined(); }
  int size = 1 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    int e = errno; ::close(fd); ThrowErrno(env, "bind", "AF_NETLINK", e); return env.Undefined();
  }
  if (info.Length() > 1 && info[1].IsArray()) {
    Napi::Array groups = info[1].As<Napi::Array>();
    for (uint32_t i = 0; i < groups.Length(); i++) {
      int g = groups.Get(i).As<Napi::Number>().Int32Value();
      if (::setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) != 0) {
        int e = errno; ::close(fd); ThrowErrno(env, "setsockopt", "NETLINK_ADD_MEMBERSHIP " + std::to_string(g), e); return env.Undefined();
      }
    }
  }
  return Napi::Number::New(env, fd);
}

// netlinkRequest(fd, request, timeoutMs) -> Buffer[] (every datagram until NLMSG_DONE,
// or the NLMSG_ERROR/ack, for the request's sequence number)
static Napi::Value Request(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = info[0].As<Napi::Number>().Int32Value();
  Napi::Buffer<uint8_t> req = info[1].As<Napi::Buffer<uint8_t>>();
  int timeout = info[2].As<Napi::Number>().Int32Value();
  if (req.Length() < sizeof(nlmsghdr)) { Napi::RangeError::New(env, "netlink request shorter than a header").ThrowAsJavaScriptException(); return env.Undefined(); }
  const nlmsghdr* rh = reinterpret_cast<const nlmsghdr*>(req.Data());
  uint32_t seq = rh->nlmsg_seq;
  bool dump = (rh->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
  bool ack = (rh->nlmsg_flags & NLM_F_ACK) != 0;
  sockaddr_nl kernel{}; kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, req.Data(), req.Length(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) < 0) {
    ThrowErrno(env, "sendto", "netlink", errno); return env.Undefined();
  }
  Napi::Array out = Napi::Array::New(env);
  std::vector<uint8_t> buf(1 << 16);
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, timeout);
    if (r == 0) { ThrowErrno(env, "poll", "netlink answer to seq " + std::to_string(seq), ETIMEDOUT); return env.Undefined(); }
    if (r < 0) { if (errno == EINTR) continue; ThrowErrno(env, "poll", "netlink", errno); return env.Undefined(); }
    ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n < 0) { if (errno == EINTR) continue; ThrowErrno(env, "recv", "netlink", errno); return env.Undefined(); }
    out.Set(out.Length(), Napi::Buffer<uint8_t>::Copy(env, buf.data(), n));
    bool done = false;
    for (const nlmsghdr* h = reinterpret_cast<const nlmsghdr*>(buf.data()); NLMSG_OK(h, static_cast<size_t>(n)); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_seq != seq) continue;
      // A dump ends with DONE; a request with NLM_F_ACK ends with its ack (which comes
      // after any reply, e.g. genetlink's GETFAMILY); without either, the first message.
      if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR || (!dump && !ack)) done = true;
    }
    if (done) break;
  }
  return out;
}

struct Subscription {
  int fd;
  std::atomic<bool> stop{false};
  std::thread thread;
  Napi::ThreadSafeFunction tsfn;
};

// subscribeDatagrams(fd, onMessage(Buffer)) -> stop(): reads a datagram socket (netlink
// multicast, AF_PACKET) on a thread of its own.
static Napi::Value Subscribe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* sub = new Subscription();
  sub->fd = info[0].As<Napi::Number>().Int32Value();
  sub->tsfn = Napi::ThreadSafeFunction::New(env, info[1].As<Napi::Function>(), "netlink-subscription", 0, 1);
  sub->thread = std::thread([sub]() {
    std::vector<uint8_t> buf(1 << 16);
    while (!sub->stop.load()) {
      pollfd p{sub->fd, POLLIN, 0};
      int r = ::poll(&p, 1, 200);  // wake up now and then to notice stop
      if (r <= 0) continue;
      ssize_t n = ::recv(sub->fd, buf.data(), buf.size(), MSG_DONTWAIT);
      if (n <= 0) continue;  // ENOBUFS (overrun) included: the status controller re-lists on its own
      auto* copy = new std::vector<uint8_t>(buf.begin(), buf.begin() + n);
      sub->tsfn.BlockingCall(copy, [](Napi::Env env, Napi::Function cb, std::vector<uint8_t>* data) {
        cb.Call({Napi::Buffer<uint8_t>::Copy(env, data->data(), data->size())});
        delete data;
      });
    }
    sub->tsfn.Release();
  });
  return Napi::Function::New(env, [sub](const Napi::CallbackInfo& i) {
    if (!sub->stop.exchange(true)) { sub->thread.join(); delete sub; }
    return i.Env().Undefined();
  });
}

static Napi::Value Close(const Napi::CallbackInfo& info) {
  ::close(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

void InitNetlink(Napi::Env env, Napi::Object exports) {
  exports.Set("netlinkOpen", Napi::Function::New(env, Open));
  exports.Set("netlinkRequest", Napi::Function::New(env, Request));
  exports.Set("subscribeDatagrams", Napi::Function::New(env, Subscribe));
  exports.Set("closeFd", Napi::Function::New(env, Close));
}

}  // namespace appliance
