// block.cc: the ioctls that change a disk in place with no tool binaries: BLKPG_RESIZE_PARTITION
// tells the kernel a partition's new size (the GPT itself is written from TypeScript),
// EXT4_IOC_RESIZE_FS grows a mounted ext4, BLKRRPART has the kernel read a freshly written
// partition table (the installer's). LOOP_CONFIGURE makes a file a read-only block device (an
// extension's squashfs) that goes away by itself once nothing holds it (autoclear).
#include <fcntl.h>
#include <linux/blkpg.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/types.h>
#include <napi.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <cstring>
#include "blocking.h"
#include "errors.h"

#ifndef EXT4_IOC_RESIZE_FS
#define EXT4_IOC_RESIZE_FS _IOW('f', 16, __u64)
#endif

namespace appliance {

// resizePartition(disk, number, startBytes, lengthBytes): the kernel's view of partition `number`.
static Napi::Value ResizePartition(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string disk = info[0].As<Napi::String>();
  struct blkpg_partition part;
  std::memset(&part, 0, sizeof(part));
  part.pno = info[1].As<Napi::Number>().Int32Value();
  part.start = info[2].As<Napi::Number>().Int64Value();
  part.length = info[3].As<Napi::Number>().Int64Value();
  struct blkpg_ioctl_arg arg;
  std::memset(&arg, 0, sizeof(arg));
  arg.op = BLKPG_RESIZE_PARTITION;
  arg.datalen = sizeof(part);
  arg.data = &part;
  int fd = ::open(disk.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) { ThrowErrno(env, "open", disk, errno); return env.Undefined(); }
  int r = ::ioctl(fd, BLKPG, &arg);
  int err = errno;
  ::close(fd);
  if (r != 0) {
    ThrowErrno(env, "ioctl", "BLKPG_RESIZE_PARTITION " + disk + " partition " + std::to_string(part.pno), err);
  }
  return env.Undefined();
}

// growExt4(mountPoint, blocks): a mounted ext4 grown online to `blocks` filesystem blocks.
static Napi::Value GrowExt4(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string target = info[0].As<Napi::String>();
  __u64 blocks = info[1].As<Napi::Number>().Int64Value();
  int fd = ::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) { ThrowErrno(env, "open", target, errno); return env.Undefined(); }
  int r = ::ioctl(fd, EXT4_IOC_RESIZE_FS, &blocks);
  int err = errno;
  ::close(fd);
  if (r != 0) {
    ThrowErrno(env, "ioctl", "EXT4_IOC_RESIZE_FS " + target + " to " + std::to_string(blocks) + " blocks", err);
  }
  return env.Undefined();
}

// An ioctl without argument data on `disk`, opened read-only for it: the work of a BlockingCall.
static Failure DiskIoctl(const std::string& disk, unsigned long request, const char* name) {
  int fd = ::open(disk.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;  // before the Failure's strings are made: an allocation may set errno
    return {"open", disk, err};
  }
  int r = ::ioctl(fd, request, 0);
  int err = errno;
  ::close(fd);
  if (r != 0) return {"ioctl", std::string(name) + " " + disk, err};
  return {};
}

// rereadPartitions(disk): Promise; BLKRRPART; EBUSY while a partition of the disk is open or mounted.
static Napi::Value RereadPartitions(const Napi::CallbackInfo& info) {
  std::string disk = info[0].As<Napi::String>();
  return BlockingCall::Start(info.Env(), [disk] { return DiskIoctl(disk, BLKRRPART, "BLKRRPART"); });
}

// flushBuffers(disk): Promise; BLKFLSBUF: the device's dirty buffers written and its cached pages dropped (only
// its own: /proc/sys/vm/drop_caches would drop every program's pages too, and on a small machine they all
// fault back in).
static Napi::Value FlushBuffers(const Napi::CallbackInfo& info) {
  std::string disk = info[0].As<Napi::String>();
  return BlockingCall::Start(info.Env(), [disk] { return DiskIoctl(disk, BLKFLSBUF, "BLKFLSBUF"); });
}

// attachLoop(file): a free loop device made a read-only view of `file`: {device, fd}. Autoclear: the device is
// detached at its last close, so the caller keeps `fd` open until it has mounted the device (the mount then
// holds it) and closes it after, whether the mount worked or not. Another process may take the free device
// between asking and configuring (EBUSY): asked again, a few times.
static Napi::Value AttachLoop(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string file = info[0].As<Napi::String>();
  int image = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (image < 0) { ThrowErrno(env, "open", file, errno); return env.Undefined(); }
  int control = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) {
    int err = errno;
    ::close(image);
    ThrowErrno(env, "open", "/dev/loop-control", err);
    return env.Undefined();
  }
  struct loop_config config;
  std::memset(&config, 0, sizeof(config));
  config.fd = static_cast<__u32>(image);
  config.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
  std::strncpy(reinterpret_cast<char*>(config.info.lo_file_name), file.c_str(), LO_NAME_SIZE - 1);
  std::string device;
  int held = -1;
  std::string syscall = "ioctl";
  std::string failed;
  int err = 0;
  for (int attempt = 0; attempt < 5 && device.empty(); attempt++) {
    int n = ::ioctl(control, LOOP_CTL_GET_FREE);
    if (n < 0) { err = errno; failed = "LOOP_CTL_GET_FREE"; break; }
    std::string path = "/dev/loop" + std::to_string(n);
    int loop = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (loop < 0) { err = errno; syscall = "open"; failed = path; break; }
    int r = ::ioctl(loop, LOOP_CONFIGURE, &config);
    err = errno;
    if (r == 0) { device = path; held = loop; break; }
    ::close(loop);
    if (err != EBUSY) { failed = "LOOP_CONFIGURE " + path + " with " + file; break; }
    else failed = "LOOP_CONFIGURE " + path + " with " + file + " (taken 5 times)";
  }
  ::close(control);
  ::close(image);
  if (device.empty()) { ThrowErrno(env, syscall.c_str(), failed, err); return env.Undefined(); }
  Napi::Object out = Napi::Object::New(env);
  out.Set("device", device);
  out.Set("fd", held);
  return out;
}

void InitBlock(Napi::Env env, Napi::Object exports) {
  exports.Set("attachLoop", Napi::Function::New(env, AttachLoop));
  exports.Set("resizePartition", Napi::Function::New(env, ResizePartition));
  exports.Set("growExt4", Napi::Function::New(env, GrowExt4));
  exports.Set("rereadPartitions", Napi::Function::New(env, RereadPartitions));
  exports.Set("flushBuffers", Napi::Function::New(env, FlushBuffers));
}

}  // namespace appliance
