// packet.cc: AF_PACKET datagram sockets bound to one link, for DHCP before the link
// has an address. SOCK_DGRAM: the kernel adds and strips the Ethernet header; the IP
// and UDP headers are built and parsed in TypeScript (plugins/network/dhcp).
#include <napi.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <sys/socket.h>
#include <cstring>
#include <unistd.h>
#include "errors.h"

namespace appliance {

// packetOpen(ifindex) -> fd receiving IPv4 packets of that link
static Napi::Value PacketOpen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int ifindex = info[0].As<Napi::Number>().Int32Value();
  int fd = ::socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP));
  if (fd < 0) { ThrowErrno(env, "socket", "AF_PACKET", errno); return env.Undefined(); }
  sockaddr_ll sa{};
  sa.sll_family = AF_PACKET;
  sa.sll_protocol = htons(ETH_P_IP);
  sa.sll_ifindex = ifindex;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    int e = errno; ::close(fd); ThrowErrno(env, "bind", "AF_PACKET ifindex " + std::to_string(ifindex), e); return env.Undefined();
  }
  return Napi::Number::New(env, fd);
}

// packetSend(fd, ifindex, ipPacket): sent to the link's broadcast address
static Napi::Value PacketSend(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = info[0].As<Napi::Number>().Int32Value();
  int ifindex = info[1].As<Napi::Number>().Int32Value();
  Napi::Buffer<uint8_t> pkt = info[2].As<Napi::Buffer<uint8_t>>();
  sockaddr_ll sa{};
  sa.sll_family = AF_PACKET;
  sa.sll_protocol = htons(ETH_P_IP);
  sa.sll_ifindex = ifindex;
  sa.sll_halen = ETH_ALEN;
  std::memset(sa.sll_addr, 0xff, ETH_ALEN);
  if (::sendto(fd, pkt.Data(), pkt.Length(), 0, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0) {
    ThrowErrno(env, "sendto", "AF_PACKET ifindex " + std::to_string(ifindex), errno);
  }
  return env.Undefined();
}

void InitPacket(Napi::Env env, Napi::Object exports) {
  exports.Set("packetOpen", Napi::Function::New(env, PacketOpen));
  exports.Set("packetSend", Napi::Function::New(env, PacketSend));
}

}  // namespace appliance
