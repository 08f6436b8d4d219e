// quota.cc: ext4 project quotas, the limit on an extension volume's size. A directory is given a project id
// that its new files inherit (FS_IOC_FSSETXATTR with FS_XFLAG_PROJINHERIT); the filesystem then counts
// and limits each project's blocks (quotactl_fd, Q_SETQUOTA / Q_GETQUOTA on PRJQUOTA). The filesystem must
// have the quota and project features and be mounted with prjquota for a limit to be enforced.
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/quota.h>
#include <napi.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cstring>
#include "errors.h"

#ifndef SYS_quotactl_fd
#define SYS_quotactl_fd 443
#endif

namespace appliance {

// The open file (directory or not) at `path`, or -1 with the error thrown.
static int OpenForQuota(Napi::Env env, const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) ThrowErrno(env, "open", path, errno);
  return fd;
}

// projectOf(path): the project id of the file at `path` (0: none).
static Napi::Value ProjectOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string path = info[0].As<Napi::String>();
  int fd = OpenForQuota(env, path);
  if (fd < 0) return env.Undefined();
  struct fsxattr attr;
  std::memset(&attr, 0, sizeof(attr));
  int r = ::ioctl(fd, FS_IOC_FSGETXATTR, &attr);
  int err = errno;
  ::close(fd);
  if (r != 0) { ThrowErrno(env, "ioctl", "FS_IOC_FSGETXATTR " + path, err); return env.Undefined(); }
  return Napi::Number::New(env, attr.fsx_projid);
}

// setProject(path, id): the directory's project id, inherited by what is made in it from now on.
static Napi::Value SetProject(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string path = info[0].As<Napi::String>();
  __u32 id = info[1].As<Napi::Number>().Uint32Value();
  int fd = OpenForQuota(env, path);
  if (fd < 0) return env.Undefined();
  struct fsxattr attr;
  std::memset(&attr, 0, sizeof(attr));
  int r = ::ioctl(fd, FS_IOC_FSGETXATTR, &attr);
  const char* step = "FS_IOC_FSGETXATTR ";
  if (r == 0) {
    attr.fsx_projid = id;
    attr.fsx_xflags |= FS_XFLAG_PROJINHERIT;
    r = ::ioctl(fd, FS_IOC_FSSETXATTR, &attr);
    step = "FS_IOC_FSSETXATTR ";
  }
  int err = errno;
  ::close(fd);
  if (r != 0) ThrowErrno(env, "ioctl", step + path + " project " + std::to_string(id), err);
  return env.Undefined();
}

// setProjectLimit(path, id, bytes): the hard limit on project `id`'s blocks on the filesystem holding `path`,
// rounded up to whole KiB (the quota unit); 0: no limit.
static Napi::Value SetProjectLimit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string path = info[0].As<Napi::String>();
  __u32 id = info[1].As<Napi::Number>().Uint32Value();
  __u64 bytes = info[2].As<Napi::Number>().Int64Value();
  int fd = OpenForQuota(env, path);
  if (fd < 0) return env.Undefined();
  struct if_dqblk q;
  std::memset(&q, 0, sizeof(q));
  q.dqb_bhardlimit = (bytes + QIF_DQBLKSIZE - 1) / QIF_DQBLKSIZE;
  q.dqb_valid = QIF_BLIMITS;
  long r = ::syscall(SYS_quotactl_fd, fd, QCMD(Q_SETQUOTA, PRJQUOTA), id, &q);
  int err = errno;
  ::close(fd);
  if (r != 0) ThrowErrno(env, "quotactl_fd", "Q_SETQUOTA " + path + " project " + std::to_string(id), err);
  return env.Undefined();
}

// projectUsage(path, id): {usedBytes, limitBytes} of project `id` on the filesystem holding `path` (limit 0: none).
static Napi::Value ProjectUsage(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string path = info[0].As<Napi::String>();
  __u32 id = info[1].As<Napi::Number>().Uint32Value();
  int fd = OpenForQuota(env, path);
  if (fd < 0) return env.Undefined();
  struct if_dqblk q;
  std::memset(&q, 0, sizeof(q));
  long r = ::syscall(SYS_quotactl_fd, fd, QCMD(Q_GETQUOTA, PRJQUOTA), id, &q);
  int err = errno;
  ::close(fd);
  if (r != 0) {
    ThrowErrno(env, "quotactl_fd", "Q_GETQUOTA " + path + " project " + std::to_string(id), err);
    return env.Undefined();
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("usedBytes", Napi::Number::New(env, static_cast<double>(q.dqb_curspace)));
  out.Set("limitBytes", Napi::Number::New(env, static_cast<double>(q.dqb_bhardlimit * QIF_DQBLKSIZE)));
  return out;
}

void InitQuota(Napi::Env env, Napi::Object exports) {
  exports.Set("projectOf", Napi::Function::New(env, ProjectOf));
  exports.Set("setProject", Napi::Function::New(env, SetProject));
  exports.Set("setProjectLimit", Napi::Function::New(env, SetProjectLimit));
  exports.Set("projectUsage", Napi::Function::New(env, ProjectUsage));
}

}  // namespace appliance
