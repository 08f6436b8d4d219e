// stage0: the initramfs's /init, and all it does: mounts the system image (a squashfs) read-only at
// /system/image and executes the real init from it as the same PID 1, with the kernel's arguments and
// environment. The image is a file in the initramfs (a live system: ISO, PXE, a kernel and initramfs given to
// QEMU), attached to a loop device; or, when the initramfs holds only the image's superblock, the block device
// whose first bytes are that superblock (a disk's system partition, read uncompressed: no decompression and no
// copy in RAM; ARCHITECTURE.md, "Where the image is read from"). Why not unpacked: what the kernel unpacks stays
// in RAM for the machine's life and is never reclaimable (the executable alone was 87 MB of it); a page of the
// image is read when some process touches it, cached, and may be dropped again.
// Nothing here but syscalls; the TypeScript init does everything else. No C library
// either (x86-64 syscalls made directly, `_start` below): a static glibc was 270 KB of
// the compressed initramfs for six calls.
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/mount.h>
#include <linux/stat.h>

#define IMAGE "/system.squashfs"
// The superblock of the image on a disk (image/system-image.ts, SUPERBLOCK_BYTES): its mkfs time is a hash of the
// image's contents, so it names one build's image, and any copy of it is that image.
#define SUPERBLOCK "/system.superblock"
#define SUPERBLOCK_BYTES 96
#define MOUNT_DIR "/system/image"
#define INIT MOUNT_DIR "/init"
// A private node: devtmpfs is not mounted yet (the real init mounts /dev), and the mount
// keeps the device once the node is gone.
#define LOOP_NODE "/system/.loop0"
#define LOOP_DEVICE ((7u << 8) | 0u) // block 7:0, as the kernel encodes dev_t for mknod

// x86-64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl).
enum { SYS_read = 0, SYS_write = 1, SYS_close = 3, SYS_ioctl = 16, SYS_pread64 = 17, SYS_nanosleep = 35,
  SYS_execve = 59, SYS_mount = 165, SYS_umount2 = 166, SYS_getdents64 = 217, SYS_exit_group = 231, SYS_openat = 257,
  SYS_mknodat = 259, SYS_unlinkat = 263 };
#define MNT_DETACH 2
#define AT_CWD (-100)

// A system call: the result, or -errno as the kernel returns it.
static long sys(long n, long a, long b, long c, long d, long e) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
  return ret;
}

static unsigned long length(const char *s) {
  unsigned long n = 0;
  while (s[n]) n++;
  return n;
}

// The errors these calls can meet, by name; others by number.
static const char *why(long err) {
  switch (err) {
    case ENOENT: return "No such file or directory";
    case EACCES: return "Permission denied";
    case EPERM: return "Operation not permitted";
    case EEXIST: return "File exists";
    case ENXIO: return "No such device or address (is the loop driver in the kernel?)";
    case ENODEV: return "No such device (is squashfs in the kernel?)";
    case EBUSY: return "Device or resource busy";
    case EINVAL: return "Invalid argument";
    case ENOMEM: return "Out of memory";
    case ENOTDIR: return "Not a directory";
    case ENOEXEC: return "Exec format error";
    case EIO: return "Input/output error";
    case ENOTTY: return "Inappropriate ioctl for device";
    default: break;
  }
  static char number[] = "errno 0000";
  char *p = number + sizeof number - 1;
  for (unsigned long v = (unsigned long)err; p > number + 6; v /= 10) *--p = (char)('0' + v % 10);
  return number;
}

// Writes the strings to the console in turn (stops at the first write that fails).
static void write_all(const char *const *parts, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    if (sys(SYS_write, 2, (long)parts[i], (long)length(parts[i]), 0, 0) < 0) break;
  }
}

// One line on the console: "stage0: <what><path>: <why>". PID 1 returning makes the
// kernel panic (and reboot when panic= says so), so this line comes first and names the cause.
static int fail(const char *what, const char *path, long result) {
  const char *parts[] = {"stage0: ", what, path, ": ", why(-result), "\n"};
  write_all(parts, sizeof parts / sizeof *parts);
  return 1;
}

static int run_init(char **argv, char **envp) {
  argv[0] = INIT;
  long r = sys(SYS_execve, (long)INIT, (long)argv, (long)envp, 0, 0);
  return fail("cannot execute ", INIT, r);
}

// A line on the console (the disk the image was found on is worth a line: which one is the machine's business).
static void say(const char *a, const char *b) {
  const char *parts[] = {"stage0: ", a, b, "\n"};
  write_all(parts, sizeof parts / sizeof *parts);
}

static int same(const char *a, const char *b, unsigned long n) {
  for (unsigned long i = 0; i < n; i++) if (a[i] != b[i]) return 0;
  return 1;
}

struct dirent64 { unsigned long long ino; long long off; unsigned short reclen; unsigned char type; char name[]; };

// Whether `text` (n bytes) holds `word` (NUL-terminated) starting at a line's or a word's start.
static int holds(const char *text, long n, const char *word) {
  unsigned long w = length(word);
  for (long i = 0; i + (long)w <= n; i++) {
    if ((i == 0 || text[i - 1] == '\n' || text[i - 1] == ' ') && same(text + i, word, w)) return 1;
  }
  return 0;
}

// Up to `size` - 1 bytes of a small file (sysfs, procfs), NUL-terminated; the count read, or 0.
static long read_small(const char *file, char *buf, long size) {
  long fd = sys(SYS_openat, AT_CWD, (long)file, O_RDONLY | O_CLOEXEC, 0, 0);
  if (fd < 0) return 0;
  long n = sys(SYS_read, fd, (long)buf, size - 1, 0, 0);
  sys(SYS_close, fd, 0, 0, 0, 0);
  if (n < 0) n = 0;
  buf[n] = 0;
  return n;
}

// One look at every block device the kernel has named so far for those whose first bytes are the superblock: the
// one whose GPT name is `own` ("PARTNAME=SYSTEM-B\n": the booted slot's own partition, image/disk/raw.ts) goes into
// `path` ("/dev/<name>"), else the first found. A slot upgraded to the same image as the other (an appliance whose
// system did not change) has two matches, and the other slot's is in use by no one but may be rewritten by the next
// upgrade while mounted. 2 when its own was found; 1 when only another; 0 when none (yet); a negative errno when /sys
// cannot be read.
static long find_image(const char *superblock, const char *own, char *path) {
  long dir = sys(SYS_openat, AT_CWD, (long)"/sys/class/block", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0);
  if (dir < 0) return dir;
  static char entries[8192];
  static char first[5 + 65];
  first[0] = 0;
  long preferred = 0;
  for (long n; !preferred && (n = sys(SYS_getdents64, dir, (long)entries, sizeof entries, 0, 0)) > 0;) {
    for (long at = 0; !preferred && at < n; at += ((struct dirent64 *)(entries + at))->reclen) {
      const char *name = ((struct dirent64 *)(entries + at))->name;
      if (name[0] == '.' || length(name) > 64) continue;
      unsigned long p = 5;
      for (unsigned long i = 0; name[i]; i++) path[p++] = name[i];
      path[p] = 0;
      long dev = sys(SYS_openat, AT_CWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0);
      if (dev < 0) continue; // a device without a medium (an empty CD-ROM drive) or gone again
      char head[SUPERBLOCK_BYTES];
      long match = sys(SYS_pread64, dev, (long)head, SUPERBLOCK_BYTES, 0, 0) == SUPERBLOCK_BYTES
        && same(head, superblock, SUPERBLOCK_BYTES);
      sys(SYS_close, dev, 0, 0, 0, 0);
      if (!match) continue;
      if (!first[0]) for (unsigned long i = 0; i <= p; i++) first[i] = path[i];
      static char uevent[16 + 1 + 64 + 7 + 1] = "/sys/class/block/";
      unsigned long u = 17;
      for (unsigned long i = 0; name[i]; i++) uevent[u++] = name[i];
      for (const char *t = "/uevent"; *t; t++) uevent[u++] = *t;
      uevent[u] = 0;
      static char text[1024];
      preferred = own[0] && holds(text, read_small(uevent, text, sizeof text), own);
    }
  }
  sys(SYS_close, dir, 0, 0, 0, 0);
  if (!preferred && first[0]) {
    unsigned long i = 0;
    do {
      path[i] = first[i];
    } while (first[i++]);
  }
  return preferred ? 2 : first[0] ? 1 : 0;
}

// The booted slot's SYSTEM partition as its uevent names it ("PARTNAME=SYSTEM-A\n"), from GRUB's appliance.slot=
// on the kernel command line (the kernel hands init no argument with a dot in its name); empty when not booted from a
// slot (a disk image given to QEMU with -kernel) or /proc cannot be read.
static void own_partition(char *own) {
  own[0] = 0;
  if (sys(SYS_mount, (long)"proc", (long)"/proc", (long)"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, 0) < 0) return;
  static char cmdline[4096];
  long n = read_small("/proc/cmdline", cmdline, sizeof cmdline);
  sys(SYS_umount2, (long)"/proc", MNT_DETACH, 0, 0, 0);
  const char *param = "appliance.slot=";
  unsigned long w = length(param);
  for (long i = 0; i + (long)w < n; i++) {
    if ((i == 0 || cmdline[i - 1] == ' ') && same(cmdline + i, param, w)
      && (cmdline[i + w] == 'A' || cmdline[i + w] == 'B')
      && (cmdline[i + w + 1] == ' ' || cmdline[i + w + 1] == '\n' || cmdline[i + w + 1] == 0)) {
      const char *prefix = "PARTNAME=SYSTEM-";
      unsigned long k = 0;
      for (; prefix[k]; k++) own[k] = prefix[k];
      own[k++] = cmdline[i + w];
      own[k++] = '\n';
      own[k] = 0;
    }
  }
}

// How long the disk may take to appear: USB storage waits a second before it scans, and an HBA's disks are
// probed after init has started.
#define DISK_WAIT_SECONDS 30
#define DISK_POLL_NS 20000000L
// How long its own slot's partition may take to be listed once another holding the same image is (a disk's
// partitions are added one by one): 50 polls, a second.
#define OWN_GRACE_POLLS 50

static int from_disk(long superblock_file, char **argv, char **envp) {
  char superblock[SUPERBLOCK_BYTES];
  long r = sys(SYS_read, superblock_file, (long)superblock, SUPERBLOCK_BYTES, 0, 0);
  sys(SYS_close, superblock_file, 0, 0, 0, 0);
  if (r != SUPERBLOCK_BYTES) return fail("cannot read the system image's superblock ", SUPERBLOCK, r < 0 ? r : -EINVAL);
  // The real init mounts /dev and /sys itself: these two go again before it runs.
  r = sys(SYS_mount, (long)"devtmpfs", (long)"/dev", (long)"devtmpfs", MS_NOSUID | MS_NOEXEC, 0);
  if (r < 0) return fail("cannot mount devtmpfs on ", "/dev", r);
  r = sys(SYS_mount, (long)"sysfs", (long)"/sys", (long)"sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, 0);
  if (r < 0) return fail("cannot mount sysfs on ", "/sys", r);
  static char path[5 + 65] = "/dev/";
  static char own[32];
  own_partition(own);
  struct { long sec; long nsec; } pause = {0, DISK_POLL_NS};
  long polls = DISK_WAIT_SECONDS * (1000000000L / DISK_POLL_NS);
  long grace = 0;
  for (long i = 0;; i++) {
    r = find_image(superblock, own, path);
    if (r < 0 || r == 2 || (r == 1 && (!own[0] || grace++ == OWN_GRACE_POLLS)) || i == polls) break;
    if (i == 1000000000L / DISK_POLL_NS) say("waiting for the disk that holds the system image", "");
    sys(SYS_nanosleep, (long)&pause, 0, 0, 0, 0);
  }
  if (r < 0) return fail("cannot list the block devices in ", "/sys/class/block", r);
  if (r == 0) {
    say("no disk holds the system image this initramfs was built with (its superblock: " SUPERBLOCK ")", "");
    return 1;
  }
  r = sys(SYS_mount, (long)path, (long)MOUNT_DIR, (long)"squashfs", MS_RDONLY | MS_NODEV | MS_NOSUID, 0);
  if (r < 0) return fail("cannot mount the system image from ", path, r);
  say("the system image is on ", path);
  sys(SYS_umount2, (long)"/sys", MNT_DETACH, 0, 0, 0);
  sys(SYS_umount2, (long)"/dev", MNT_DETACH, 0, 0, 0);
  return run_init(argv, envp);
}

static int stage0(char **argv, char **envp) {
  long image = sys(SYS_openat, AT_CWD, (long)IMAGE, O_RDONLY | O_CLOEXEC, 0, 0);
  if (image == -ENOENT) {
    long superblock = sys(SYS_openat, AT_CWD, (long)SUPERBLOCK, O_RDONLY | O_CLOEXEC, 0, 0);
    if (superblock >= 0) return from_disk(superblock, argv, envp);
  }
  if (image < 0) return fail("cannot open the system image ", IMAGE, image);
  long r = sys(SYS_mknodat, AT_CWD, (long)LOOP_NODE, S_IFBLK | 0600, LOOP_DEVICE, 0);
  if (r < 0 && r != -EEXIST) return fail("cannot make the loop device node ", LOOP_NODE, r);
  long loop = sys(SYS_openat, AT_CWD, (long)LOOP_NODE, O_RDWR | O_CLOEXEC, 0, 0);
  if (loop < 0) return fail("cannot open the loop device ", LOOP_NODE, loop);
  struct loop_config config = {0};
  config.fd = (unsigned)image;
  config.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
  for (unsigned i = 0; i < sizeof IMAGE && i < LO_NAME_SIZE - 1; i++) config.info.lo_file_name[i] = (__u8)IMAGE[i];
  r = sys(SYS_ioctl, loop, LOOP_CONFIGURE, (long)&config, 0, 0);
  if (r < 0) return fail("cannot attach the system image to ", LOOP_NODE, r);
  // No readahead: a page fault in the executable then decompresses only the squashfs block that holds the
  // page, not the blocks of the 128 KiB window around it. Node's start touches its 104 MB here and there;
  // measured (icount), a two-line program's first line 1.84 -> 1.70 s with 128 KiB blocks, 1.49 s with 32 KiB.
  r = sys(SYS_ioctl, loop, BLKRASET, 0, 0, 0);
  if (r < 0) return fail("cannot turn readahead off on ", LOOP_NODE, r);
  r = sys(SYS_mount, (long)LOOP_NODE, (long)MOUNT_DIR, (long)"squashfs", MS_RDONLY | MS_NODEV | MS_NOSUID, 0);
  if (r < 0) return fail("cannot mount the system image on ", MOUNT_DIR, r);
  // The mount holds the loop device (and, through it, the image): none of these is needed now.
  sys(SYS_close, loop, 0, 0, 0, 0);
  sys(SYS_close, image, 0, 0, 0, 0);
  sys(SYS_unlinkat, AT_CWD, (long)LOOP_NODE, 0, 0, 0);
  return run_init(argv, envp);
}

// The kernel starts us with argc, argv[], NULL, envp[], NULL on the stack.
__attribute__((used)) static void start(long *stack) {
  char **argv = (char **)(stack + 1);
  sys(SYS_exit_group, stage0(argv, argv + stack[0] + 1), 0, 0, 0, 0);
}
__asm__(".text\n.global _start\n_start:\n  xor %ebp, %ebp\n  mov %rsp, %rdi\n  and $-16, %rsp\n  call start\n  hlt\n");
